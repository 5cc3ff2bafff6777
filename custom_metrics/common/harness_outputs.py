"""Whether an ``lm_eval --log_samples`` run finished, judged from the files it left.

lm_eval writes the results file first, then each task's samples files line by line; a kill in
between leaves a whole results file beside a cut samples file. A run is done only when every
samples line is whole and, per task and filter, as many as the results count as ``effective``.
RULE's split protocol and the sweep judge runs by this one rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import numbered_jsonl
from custom_metrics.common.results import ResultsFileError, read_json_object

INCOMPLETE_SUFFIX = ".incomplete"  # an unfinished run's files, kept for inspection, read by nothing


class IncompleteRun(DataError):
    """A run that does not count as done; ``leftovers`` are its files, set aside before a rerun."""

    def __init__(self, message: str, leftovers: Sequence[Path] = ()) -> None:
        super().__init__(message)
        self.leftovers = tuple(leftovers)


def finished_samples(folder: Path, task: str) -> tuple[list[tuple[str, dict]], dict]:
    """The samples (with their "file:line") of the newest run of ``task`` in ``folder`` and its
    ``n-samples`` entry; IncompleteRun says why there is none."""
    found = sorted(folder.glob("**/results_*.json"), key=lambda path: path.name)
    if not found:
        leftovers = sorted(folder.glob(f"**/samples_{task}_*.jsonl"))
        raise IncompleteRun(f"{folder}: no results file (not run yet, or stopped before lm_eval finished)", leftovers)
    return task_samples(found[-1], task)


def samples_file(results: Path, task: str) -> Path:
    """The samples file lm-eval writes for ``task`` beside its ``results`` file (same timestamp)."""
    return results.with_name(f"samples_{task}_{results.name[len('results_') : -len('.json')]}.jsonl")


def logged_samples_file(results: Path, task: str, kept: str) -> Path:
    """``samples_file``, refused in one line when the run did not log it (``kept``: what only it holds)."""
    path = samples_file(results, task)
    if not path.is_file():
        raise DataError(
            f"{results}: task {task} has no samples file {path.name} beside it; {kept} only kept there: "
            "rerun with --log_samples"
        )
    return path


def _results_data(results: Path, leftovers: Sequence[Path]) -> dict:
    try:
        return read_json_object(results, "lm-eval results file")
    except ResultsFileError as err:
        raise IncompleteRun(f"{results}: not a whole results file ({err})", leftovers) from err


def task_samples(results: Path, task: str) -> tuple[list[tuple[str, dict]], dict]:
    """The samples of ``task`` beside the results file ``results``, if they are all there."""
    samples = samples_file(results, task)
    leftovers = [path for path in (results, samples) if path.exists()]
    data = _results_data(results, leftovers)
    try:
        counts, scores = data["n-samples"][task], data["results"][task]
        effective = counts["effective"]
        filters = {str(key).partition(",")[2] for key in scores if "," in str(key)} or {"none"}
    except (KeyError, TypeError) as err:
        raise IncompleteRun(f"{results}: no results or n-samples count for {task} (field {err})", leftovers) from err
    if isinstance(effective, bool) or not isinstance(effective, int) or effective < 1:
        raise IncompleteRun(f"{results}: n-samples {task} effective is {effective!r}, not a sample count", leftovers)
    if not samples.is_file():
        raise IncompleteRun(f"{samples}: missing beside {results.name} (lm_eval stopped before writing it)", leftovers)
    try:
        rows = [(f"{samples}:{line}", sample) for line, sample in numbered_jsonl(samples)]
    except DataError as err:
        raise IncompleteRun(f"{err} The samples file is cut short or damaged.", leftovers) from err
    per_filter = Counter(str(sample.get("filter", "none")) for _, sample in rows)
    for name in sorted(filters | set(per_filter)):
        count = per_filter[name]
        if count != effective:
            held = f"{count} samples" + ("" if name == "none" else f" for filter {name!r}")
            raise IncompleteRun(
                f"{samples}: {held} where {results.name} counts {effective}: cut short "
                "(lm_eval stopped while writing it?)",
                leftovers,
            )
    return rows, counts


def check_finished(results: Path) -> None:
    """Every task of the results file has all its samples beside it, or IncompleteRun says which not."""
    data = _results_data(results, [results])
    tasks = data.get("n-samples")
    if not isinstance(tasks, dict) or not tasks:
        raise IncompleteRun(f"{results}: no n-samples counts (not a whole lm-eval 0.4 results file)", [results])
    for task in sorted(tasks):
        task_samples(results, task)


def set_aside(files: Sequence[Path]) -> list[Path]:
    """Rename an unfinished run's files to ``*.incomplete``: kept for inspection, never read as a run."""
    return [path.replace(path.with_name(path.name + INCOMPLETE_SUFFIX)) for path in files]
