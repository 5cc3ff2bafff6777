"""IBE's selector accuracies on the leaderboard, read from the ``report.json`` files of
``explain-eval ibe report`` through ``ibe_postprocess.report_file``.

They are computed after the harness run, from logged samples, so they are in no
``results_*.json``. The accuracies of dataset D become task ``ibe_D_selection`` (beside the
``ibe_D`` harness task, whose metrics describe the explanations' format) in the row of the
model that wrote the explanations: the sweep's name for it (the pair file one or two
folders up, as for harness results), else the report's ``model``; for a report of plain
JSONL explanations, put a ``sweep_pair.json`` with ``{"model": ...}`` beside it. A judge
accuracy goes in the ``ibe_judge_D`` column of the judging model's row (``ibe_judge_D_chat``
for a judge that generated its answers).

A selection row says what it was computed from (``TaskRun.derived``: the explanations the
selector was fitted on, the test questions, the samples files scored) and is cut short
(``TaskRun.cut``) when the report's generation runs covered part of their task
(``Report.subset``: ``--limit``/``--samples``) or the test questions are fewer than a full
run's (the paper: 500 COPA test questions, 500 e-CARE items).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from custom_metrics.common.files import JSONL_MAX_BYTES, REPORT_MAX_BYTES
from custom_metrics.common.results import (
    PAIR_FILE,
    Problem,
    Score,
    TaskRun,
    current_metric_name,
    find_named_files,
    sweep_label,
)
from custom_metrics.ibe.published import method_key
from ibe_postprocess import report_file
from ibe_postprocess.folder import FEATURES, REPORT
from ibe_postprocess.questions import DATASETS

# The test questions of a full run (the paper: COPA's 500 test questions, 500 e-CARE dev
# items, ``custom_metrics.ibe.data.ECARE_TEST_SIZE``: not imported, the data module loads
# pandas and the leaderboard reads reports without it); a report on fewer comes from a run
# cut short.
FULL_TEST_QUESTIONS = {"copa": 500, "ecare": 500}


def load_ibe_tables(paths: Iterable[Path]) -> tuple[list[TaskRun], list[Problem]]:
    """Every IBE report under ``paths`` (one beside a ``features.jsonl``), and the unusable ones."""
    runs: list[TaskRun] = []
    roots = [Path(p).resolve() for p in paths]
    folders = [root for root in roots if root.is_dir()]
    # A FIFO, device or oversized file bearing either name is named, never opened.
    files, problems = find_named_files(folders, REPORT, REPORT_MAX_BYTES)
    problems += find_named_files(folders, FEATURES, JSONL_MAX_BYTES)[1]  # features are read by the sample viewer
    for path in files:
        if not (path.parent / FEATURES).exists():
            continue  # another tool's report.json
        try:
            runs.extend(selection_runs(report_file.read(path), roots))
        except report_file.ReportError as error:
            problems.append(Problem(path, error.reason))
    return runs, problems


def selection_runs(report: report_file.Report, roots: Iterable[Path] = ()) -> list[TaskRun]:
    """The selector (and judge) accuracies of one report as task runs, in the sweep's row for the
    pair (its harness rows carry the same name); NaN stays NaN, a missing accuracy is missing."""
    path = report.path or Path(REPORT)
    model = sweep_label(path, roots) or report.model
    if not model:
        raise report_file.ReportError(
            path,
            f"cannot tell which model wrote the explanations of this report: put a {PAIR_FILE} "
            'with {"model": ...} beside it or one folder up',
        )
    stamp = path.stat().st_mtime if path.exists() else 0.0
    runs = []
    for dataset, entry in sorted(report.datasets.items()):
        if dataset not in DATASETS:
            continue  # plain JSONL questions of no known dataset
        scores = {(method_key(row.row), None): Score(row.accuracy, None) for row in entry.table1}
        derived, cut = _basis(report, dataset, entry)
        runs.append(
            TaskRun(
                model,
                f"ibe_{dataset}_selection",
                scores,
                entry.test_questions,
                None,
                path,
                stamp,
                None,
                derived=derived,
                cut=cut,
            )
        )
        judge = entry.judge
        if judge is None or judge.accuracy is None:
            continue
        # A model judging its own explanations gets the same row name as the explanations.
        judge_row = model if judge.model == report.model else judge.model or f"unknown judge of {model}"
        task = judge.task(dataset)  # the chat judge's accuracy is answer_acc
        scores = {(current_metric_name(task, "acc"), None): Score(judge.accuracy, None)}
        if judge.method == "generated" and judge.unparsed is not None and judge.questions:
            scores[("unparsed", None)] = Score(judge.unparsed / judge.questions, None)
        runs.append(TaskRun(judge_row, task, scores, judge.questions, None, path, stamp, None))
    return runs


def _basis(report: report_file.Report, dataset: str, entry: report_file.DatasetReport) -> tuple[str, str]:
    """What a selection row rests on, in words, and how its inputs were cut short ("" if not)."""
    fits = report.selector.get("fits") if isinstance(report.selector.get("fits"), dict) else {}
    fit = fits.get(dataset)
    trained = fit.get("train_explanations") if isinstance(fit, dict) else None
    questions = entry.test_questions
    parts = [
        f"selector fitted on {trained if isinstance(trained, int) else 'an unrecorded number of'} explanations",
        f"tested on {questions if questions is not None else 'an unrecorded number of'} questions",
    ]
    scored = sorted({run.samples for run in report.runs})
    if scored:
        parts.append(f"explanations scored from {', '.join(scored)}")
    cut = report.subset or ""
    full = FULL_TEST_QUESTIONS.get(dataset)
    if not cut and questions is not None and full and questions < full:
        cut = f"{questions} of {full} test questions"
    return "; ".join(parts), f"from a run cut short: {cut}" if cut else ""


def note_scorers(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """Say which coherence judge and uncertainty model scored each run's explanations.

    Offline, the paper's NLI and certainty models are replaced by the embedded LM and a
    lexicon (``ibe_postprocess``); selector accuracies from such a run are not the paper's
    measure, so the table must tell, per model, what its report recorded.
    """
    for run in runs:
        if not run.task.endswith("_selection"):
            continue
        try:
            report = report_file.read(run.path, check_features=False)
        except report_file.ReportError:
            continue  # read once already; a file changed since is reported on the next build
        judges = "; ".join(report.coherence_judges or ("not recorded",))
        certainty = "; ".join(report.uncertainty_sources or ("not recorded",))
        notes.append(f"{run.model} {run.task}: coherence judge {judges}; uncertainty {certainty}.")
    return runs
