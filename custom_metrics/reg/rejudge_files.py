"""The files ``explain-eval rejudge`` writes beside a REG run, named and read here once.

Each judge asked again gets a folder ``<dir>/rejudge/<judge>-<hash>/`` holding what its run would
have written: ``samples_<task>_<stamp>.jsonl`` and ``rejudge_results_<stamp>.json`` (what was judged
again under ``"rejudge"``), not named ``results_*.json`` so that readers of harness runs never take
it for the run itself; the REG tab reads it as a row of its own (``leaderboard.rejudged_runs``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from custom_metrics.common.files import RESULTS_MAX_BYTES
from custom_metrics.common.rejudging import FOLDER, told_apart
from custom_metrics.common.results import Problem, ResultsFileError, find_named_files, read_json_object

PREFIX = "rejudge_"
GLOB = f"{PREFIX}results_*.json"
BLOCK = "rejudge"  # the key of the rejudged results file that says what was judged again


@dataclass(frozen=True)
class Rejudged:
    """One rejudged results file: which judge, of which run."""

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
    """Every rejudged results file under ``paths``, and the unreadable ones."""
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
