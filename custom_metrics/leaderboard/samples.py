"""The logged samples of each task run (``--log_samples``), read for the sample viewer and
for paired differences.

The harness writes ``samples_<task>_<timestamp>.jsonl`` beside ``results_<timestamp>.json``;
each line holds the doc, the prompt, the raw and filtered responses and every metric's
per-document value. A generic part shows what every task has (prompt, response, filtered
output, the choice a multiple-choice task picked, scalar per-document metrics); the
paper's ``SampleView`` adds what only it can read (REG's verdicts, RULE's question kinds,
IBE's features). A line that cannot be read becomes a row saying so, never a crash: one
hostile generation must not hide the rest of a run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_metrics.common.classification import predicted_index
from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSONL_MAX_BYTES, iter_regular_lines
from custom_metrics.common.jsonl import loads_strict
from custom_metrics.common.leaderboard_types import SampleView
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.common.results import TaskRun, current_metric_name
from custom_metrics.common.samples import normalised
from custom_metrics.leaderboard.numbers import finite

PROBLEM = "problem"
PROMPT = "prompt"
# Longer texts are cut in the viewer (the samples file keeps them whole): one runaway
# generation must not make a page too heavy to open.
MAX_CHARS = 20_000
# What a paper's hook may raise on a sample of unexpected shape; anything else is a bug.
_SHAPE_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError)


@dataclass(eq=False)  # identity: pages are keyed by the object
class LoggedTask:
    """One task run's logged samples: viewer rows, and outcomes per document for pairing."""

    run: TaskRun
    spec: PaperSpec
    path: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    outcomes: dict[str, dict[str, float]] = field(default_factory=dict)  # metric -> doc key -> value
    keys: list[str | None] = field(default_factory=list)  # each row's document key (None: unreadable line)

    @property
    def facets(self) -> list[str]:
        present = {name for row in self.rows for name in row}
        return [name for name in (*self.spec.board.samples.facets, PROBLEM) if name in present]

    @property
    def columns(self) -> list[str]:
        """Every row's names in their first order, the view's ``together`` columns beside the
        first of them, the prompt last (hidden by default)."""
        names = list(dict.fromkeys(name for row in self.rows for name in row))
        together = [name for name in self.spec.board.samples.together if name in names]
        if together:
            at = names.index(together[0])
            before, after = names[:at], names[at:]
            names = [n for n in before if n not in together] + together + [n for n in after if n not in together]
        return [name for name in names if name != PROMPT] + ([PROMPT] if PROMPT in names else [])

    @property
    def problems(self) -> int:
        return sum(1 for row in self.rows if row.get(PROBLEM))


def read_logged_tasks(runs: Sequence[TaskRun], specs: Sequence[PaperSpec], roots: Sequence[Path]) -> list[LoggedTask]:
    """The logged samples of every run that has a samples file beside its results file."""
    extras_cache: dict[int, dict[tuple[str, int], dict[str, Any]]] = {}
    logged = []
    for run, spec in zip(runs, specs):
        path = run.samples_file
        if path is None:
            continue
        view = spec.board.samples
        if view.extras is not None and id(view) not in extras_cache:
            extras_cache[id(view)] = view.extras(roots)
        logged.append(read_logged_task(run, spec, path, extras_cache.get(id(view))))
    return logged


def read_logged_task(
    run: TaskRun, spec: PaperSpec, path: Path, extras: dict[tuple[str, int], dict[str, Any]] | None = None
) -> LoggedTask:
    logged = LoggedTask(run, spec, path)
    try:  # JSONL lines end at \n only; only a regular file within the bound is opened
        for number, raw in enumerate(iter_regular_lines(path, JSONL_MAX_BYTES, "samples file"), start=1):
            line = raw.decode("utf-8", errors="replace")
            if line.strip():
                row, key = _row(logged, line, number, (extras or {}).get((path.name, number), {}))
                logged.rows.append(row)
                logged.keys.append(key)
    except DataError as error:
        logged.rows.append({"#": None, PROBLEM: str(error)})
        logged.keys.append(None)
    view = spec.board.samples
    if view.arrange is not None:
        key_of = {id(row): key for row, key in zip(logged.rows, logged.keys)}  # arrange moves the rows themselves
        try:
            arranged = view.arrange(run.task, logged.rows)
            logged.keys = [key_of.get(id(row)) for row in arranged]
            logged.rows = [{name: cell_value(v) for name, v in row.items()} for row in arranged]
        except _SHAPE_ERRORS as error:
            logged.rows.append({"#": None, PROBLEM: f"rows not grouped ({type(error).__name__}: {error})"})
            logged.keys.append(None)
    return logged


def _row(logged: LoggedTask, line: str, number: int, extra: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """One viewer row of a samples line, and its document's key (shared by every run of the task)."""
    task, view = logged.run.task, logged.spec.board.samples
    try:
        sample = normalised(loads_strict(line))
    except (ValueError, RecursionError) as error:
        return {"#": None, PROBLEM: f"line {number}: not valid JSON ({error})"}, None
    if not isinstance(sample, dict) or not isinstance(sample.get("doc"), dict):
        return {"#": None, PROBLEM: f"line {number}: not a logged sample (no 'doc' object)"}, None
    row: dict[str, Any] = {"#": sample.get("doc_id")}
    key: str | None = None
    try:
        key = view.doc_key(task, sample)
        row.update(view.fields(task, sample))
        for name, value in _generic(sample, row, view).items():
            row.setdefault(name, value)
        row.update(extra)
        if view.outcomes is not None:
            for metric, value in view.outcomes(task, sample).items():
                if finite(value):
                    logged.outcomes.setdefault(current_metric_name(task, metric), {})[key] = float(value)
    except _SHAPE_ERRORS as error:
        row[PROBLEM] = f"line {number}: unexpected sample content ({type(error).__name__}: {error})"
    row[PROMPT] = _prompt(sample)
    return {name: cell_value(value) for name, value in row.items()}, key


def _generic(sample: dict[str, Any], shown: dict[str, Any], view: SampleView) -> dict[str, Any]:
    """What every task logs: the response (or the chosen option), the filtered output,
    the target, and the scalar per-document metrics."""
    fields: dict[str, Any] = {}
    already = {value for value in shown.values() if isinstance(value, str)}  # e.g. an "explanation" field
    responses, filtered = sample.get("resps"), sample.get("filtered_resps")
    choices = _choices(sample)
    logliks = _loglikelihoods(filtered)
    if logliks is not None:
        best = predicted_index([(value, False) for value in logliks])
        fields["prediction"] = choices[best].strip() if best < len(choices) else best
        fields["log-likelihoods"] = " | ".join(
            f"{(choices[i].strip() if i < len(choices) else i)} {value:.2f}" for i, value in enumerate(logliks)
        )
    else:
        response = _first_text(responses, 2)
        if response not in already:
            fields["response"] = response
        text = _first_text(filtered, 1)
        if text is not None and text != response and text not in already and view.show_filtered:
            fields["filtered output"] = text
    target = sample.get("target")
    if isinstance(target, (str, int)) and str(target).strip() and "gold" not in shown:
        fields["target"] = target
    metrics = sample.get("metrics") if isinstance(sample.get("metrics"), list) else []
    for name in metrics:
        value = sample.get(name)
        if isinstance(name, str) and name not in shown and isinstance(value, (int, float)):
            fields[name] = value
    return fields


def _first_text(value: Any, depth: int) -> str | None:
    """``value[0]``, ``depth`` lists deep, where each is a non-empty list and it is a text; else None."""
    for _ in range(depth):
        if not (isinstance(value, list) and value):
            return None
        value = value[0]
    return value if isinstance(value, str) else None


def _choices(sample: dict[str, Any]) -> list[str]:
    arguments = sample.get("arguments")
    if not isinstance(arguments, dict):
        return []
    return [str(args.get("arg_1", "")) for args in arguments.values() if isinstance(args, dict)]


def _loglikelihoods(filtered: Any) -> list[float] | None:
    """The per-choice log-likelihoods of a multiple-choice sample, else None."""
    items = filtered if isinstance(filtered, list) else []
    if not items or not all(
        isinstance(item, list) and item and isinstance(item[0], (str, int, float)) for item in items
    ):
        return None
    try:
        return [float(item[0]) for item in items]
    except ValueError:
        return None


def _prompt(sample: dict[str, Any]) -> str | None:
    arguments = sample.get("arguments")
    first = next(iter(arguments.values()), None) if isinstance(arguments, dict) and arguments else None
    prompt = first.get("arg_0") if isinstance(first, dict) else None
    return prompt if isinstance(prompt, str) else None


def cell_value(value: Any) -> str | int | float | None:
    """A value the viewer can show and sort: text (cut at ``MAX_CHARS``), a number (NaN
    kept), or None; booleans read yes/no and anything else as compact JSON."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or isinstance(value, (int, float)):
        return value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_CHARS:
        return f"{text[:MAX_CHARS]} … [{len(text) - MAX_CHARS:,} more characters in the samples file]"
    return text
