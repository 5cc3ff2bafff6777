"""What the leaderboard shows of REG runs judged again (``explain-eval rejudge``): every
``reg_chaos`` number names its judge and the other judges' numbers (``judge_of_each_number``),
each judge is a row of its own (``rejudged_runs``), and the sample viewer shows every judge's
calls (``judge_calls``).

Each judge asked again gets a folder ``<dir>/rejudge/<judge>-<hash>/`` holding what its run would
have written: ``samples_<task>_<stamp>.jsonl`` and ``rejudge_results_<stamp>.json`` (what was judged
again under ``"rejudge"``), not named ``results_*.json`` so that readers of harness runs never take
it for the run itself; they are named and read here once (``explain-eval rejudge`` writes them).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSONL_MAX_BYTES, RESULTS_MAX_BYTES, iter_regular_lines
from custom_metrics.common.jsonl import loads_strict
from custom_metrics.common.leaderboard_types import Column, Row
from custom_metrics.common.rejudging import FOLDER, told_apart
from custom_metrics.common.results import (
    Problem,
    ResultsFileError,
    TaskRun,
    find_named_files,
    friendly_spec,
    left_out_problems,
    read_json_object,
    read_results_file,
    sweep_label,
)
from custom_metrics.common.samples import numbered_samples
from custom_metrics.reg.sample_view import calls_field, calls_text, logged_record

PREFIX = "rejudge_"
GLOB = f"{PREFIX}results_*.json"
BLOCK = "rejudge"  # the key of the rejudged results file that says what was judged again


@dataclass(frozen=True)
class Rejudged:
    path: Path
    judge: str  # canonical spec
    display: str
    original: Path  # the run's results file
    run_judges: tuple[str, ...] = ()  # the display names of the run's own judges (one per task, mostly one)

    def block(self) -> dict[str, object]:
        return {
            "judge": self.judge,
            "judge_display": self.display,
            "results_file": f"../../{self.original.name}",
            "run_judges": list(self.run_judges),
        }


def read_rejudged(path: Path) -> Rejudged:
    """What a rejudged results file says it is; ResultsFileError naming the field otherwise."""
    data = read_json_object(path, "rejudged results file", RESULTS_MAX_BYTES)
    block = data.get(BLOCK)
    if not isinstance(block, dict):
        raise ResultsFileError(f'no "{BLOCK}" object: not written by explain-eval rejudge')
    for key in ("judge", "judge_display", "results_file"):
        if not isinstance(block.get(key), str) or not block[key]:
            raise ResultsFileError(f'"{BLOCK}.{key}" must be a non-empty string')
    original = (path.parent / block["results_file"]).resolve()
    if original.parent != path.parent.parent.parent.resolve():
        raise ResultsFileError(f'"{BLOCK}.results_file" must name the run\'s results file two folders up')
    run_judges = block.get("run_judges", [])
    if not isinstance(run_judges, list) or not all(isinstance(name, str) for name in run_judges):
        raise ResultsFileError(f'"{BLOCK}.run_judges" must be a list of judge names')
    return Rejudged(path, block["judge"], block["judge_display"], original, tuple(run_judges))


def labels(items: Sequence[Rejudged]) -> dict[Path, str]:
    """Each rejudged file's judge as tables and pages name it: its display name, with its hash where
    another judge of the same run (its own, or another judged again) reads the same (two local
    checkpoints both called ``final``)."""
    judges: dict[tuple[Path, str], set[str]] = defaultdict(set)
    for item in items:
        judges[item.original, item.display].add(item.judge)
        for own in item.run_judges:
            judges[item.original, own].add(f"the run's own {own}")
    return {
        item.path: item.display
        if len(judges[item.original, item.display]) == 1
        else told_apart(item.display, item.judge)
        for item in items
    }


def find_rejudged(paths: Iterable[Path]) -> tuple[list[Rejudged], list[Problem]]:
    files, problems = find_named_files([Path(p).resolve() for p in paths], GLOB, RESULTS_MAX_BYTES)
    found = []
    for path in files:
        if path.parent.parent.name != FOLDER:
            continue
        try:
            found.append(read_rejudged(path))
        except ResultsFileError as error:
            problems.append(Problem(path, str(error)))
    return found, problems


def rejudged_beside(results_file: Path) -> tuple[list[Rejudged], list[Problem]]:
    """The judges a run was judged again by (its rejudged results files), and the unreadable ones."""
    folder = results_file.parent / FOLDER
    found, problems = find_rejudged([folder]) if folder.is_dir() else ([], [])
    return [item for item in found if item.original == results_file.resolve()], problems


def judge_calls(roots: Sequence[Path]) -> dict[tuple[str, int], dict[str, Any]]:
    """Every judge's calls on the items of a run judged again (``explain-eval rejudge``), by samples file
    name and line: the run's samples page and each judge's show the calls of all of them."""
    found, _ = find_rejudged(roots)
    shown = labels(found)
    files: dict[Path, str | None] = {}  # samples file -> its judge's label (None: the run's own, as recorded)
    for item in found:
        for path in sorted(item.path.parent.glob("samples_reg_chaos*.jsonl")):
            files.setdefault(item.original.parent / path.name, None)
            files[path] = shown[item.path]
    calls: dict[tuple[str, int], dict[str, Any]] = {}
    for path, label in sorted(files.items(), key=lambda entry: entry[1] is not None):  # the run's own first
        try:
            for line, sample in numbered_samples(path):
                record = logged_record(sample)
                if record is not None and isinstance(sample.get("doc"), dict):
                    field = calls_field(record) if label is None else f"judge calls: {label}"
                    calls.setdefault((path.name, line), {})[field] = calls_text(record, sample["doc"])
        except (DataError, ValueError):  # its own page names the problem; the others keep their calls
            continue
    return calls


JUDGED_AGAIN = "judged again by"


def rejudged_runs(paths: Sequence[Path]) -> tuple[list[TaskRun], list[Problem]]:
    """Each judge a REG run was judged again by: the run's row again, its setting naming the judge."""
    roots = [Path(p).resolve() for p in paths]
    found, problems = find_rejudged(roots)
    shown = labels(found)
    runs = []
    for item in found:
        judged = f"{JUDGED_AGAIN} {shown[item.path]}"
        try:
            read = read_results_file(item.path, label=sweep_label(item.original, roots))
        except ResultsFileError as error:
            problems.append(Problem(item.path, str(error)))
            continue
        runs += [replace(run, setting=", ".join(part for part in (run.setting, judged) if part)) for run in read]
        problems += left_out_problems(read)
    return runs, problems


# The numbers of a reg_chaos row that its judge decides, and those shown with the other judges' numbers.
JUDGED = ("n", "coherence", "effectiveness", "success")
TASK = "reg_chaos"


def _recorded_judge(row: Row, results: Path, runs: Mapping[tuple[str, str], TaskRun]) -> str:
    """The judge of an original run's row: the one its samples record, else its --metadata judge."""
    samples = row.samples.get(TASK)
    if samples is not None:
        try:
            first = next(iter_regular_lines(samples, JSONL_MAX_BYTES, "samples file"), b"")
            record = logged_record(loads_strict(first.decode("utf-8"))) if first.strip() else None
        except (DataError, ValueError):
            record = None
        if record is not None and isinstance(record.get("judge"), str):
            return friendly_spec(record["judge"])
    run = runs.get((str(results), TASK))
    metadata = (run.task_config or {}).get("metadata") if run is not None else None
    judge = metadata.get("judge") if isinstance(metadata, dict) else None
    return friendly_spec(judge) if isinstance(judge, str) and judge else "not recorded (its samples file names it)"


def judge_of_each_number(columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]) -> list[Column]:
    """Name the judge of every ``reg_chaos`` number (the cell's basis), and where the same generations
    were judged by several judges, the others' numbers and the spread (largest minus smallest)."""
    by_file = {(str(run.path), run.task): run for run in runs}
    groups: dict[tuple[str, str], list[tuple[Row, str]]] = {}
    for row in rows:
        cells = [c for key, c in row.cells.items() if key.split("/", 1)[0] == TASK and c.source]
        if row.kind != "run" or not cells:
            continue
        results = Path(str(cells[0].source))
        if results.name.startswith(PREFIX):
            try:
                item = read_rejudged(results)
            except ResultsFileError:
                continue  # named once already, by the reader of these rows
            beside, _ = rejudged_beside(item.original)
            judge, results = labels(beside).get(item.path, item.display), item.original
        else:
            judge = _recorded_judge(row, results, by_file)
        samples = row.samples.get(TASK)
        groups.setdefault((str(results), samples.name if samples else ""), []).append((row, judge))
    for group in groups.values():
        for row, judge in group:
            for metric in JUDGED:
                key = next((k for k in row.cells if k.split("[", 1)[0] == f"{TASK}/{metric}"), None)
                if key is None:
                    continue
                others = [(j, _value(r, metric)) for r, j in group if r is not row]
                basis = f"judge {judge}"
                if others:
                    values = [v for v in (_value(row, metric), *(v for _, v in others)) if v is not None]
                    listed = ", ".join(f"{j} {_shown(metric, v)}" for j, v in others)
                    basis += f"; other judges of these generations: {listed}"
                    if len(values) > 1:  # a spread needs two numbers (a CPU judge may give none: all NaN)
                        basis += f"; spread over {len(values)} judges {_shown(metric, max(values) - min(values))}"
                row.cells[key] = replace(row.cells[key], basis=basis)
    if any(len(group) > 1 for group in groups.values()):
        notes.append(
            f"reg_chaos rows '{JUDGED_AGAIN} J': the same logged generations judged by J (explain-eval rejudge, no "
            "new generation); each number names its judge, the other judges' numbers and their spread."
        )
    return columns


def _value(row: Row, metric: str) -> float | None:
    cell = next((c for k, c in row.cells.items() if k.split("[", 1)[0] == f"{TASK}/{metric}"), None)
    return cell.value if cell is not None and cell.value is not None and math.isfinite(cell.value) else None


def _shown(metric: str, value: float | None) -> str:
    return "NaN" if value is None else f"{value:.0f}" if metric == "n" else f"{value:.4f}"
