"""Which paired differences a paper's page shows, computed from the logged samples.

- Within one run (same model and setting): the paper's own comparisons of two tasks
  over the same documents (``PaperSpec.comparisons``), e.g. GEESE's effectiveness =
  accuracy with a hint - accuracy without.
- Between runs: every two model/setting rows that logged the same task, on each
  per-document outcome the paper defines (``SampleView.outcomes``), over the documents
  both logged.
The statistics are in ``paired``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from custom_metrics.common.leaderboard_types import PaperSpec
from custom_metrics.leaderboard.paired import PairedResult, paired_difference
from custom_metrics.leaderboard.samples import LoggedTask


@dataclass(frozen=True)
class Difference:
    kind: str  # "same run" | "two runs"
    label: str  # what is compared, in words
    a: str  # the left side (model and setting, or task)
    b: str
    task: str
    metric: str
    result: PairedResult
    sources: tuple[str, str]  # the two samples files


def row_label(model: str, setting: str) -> str:
    return f"{model} · {setting}" if setting else model


def paired_differences(spec: PaperSpec, logged: Sequence[LoggedTask]) -> list[Difference]:
    mine = [task for task in logged if task.spec is spec]
    by_row: dict[tuple[str, str], dict[str, LoggedTask]] = {}
    for task in mine:
        by_row.setdefault((task.run.model, task.run.setting), {})[task.run.task] = task
    found: list[Difference] = []
    for (model, setting), tasks in sorted(by_row.items()):
        for comparison in spec.comparisons:
            left, right = tasks.get(comparison.task), tasks.get(comparison.baseline)
            if left is None or right is None:
                continue
            result = _compare(left, right, comparison.metric)
            if result is not None:
                found.append(
                    Difference(
                        "same run",
                        f"{comparison.label}: {spec.task_label(comparison.task)} − "
                        f"{spec.task_label(comparison.baseline)}",
                        row_label(model, setting),
                        row_label(model, setting),
                        comparison.task,
                        comparison.metric,
                        result,
                        (str(left.path), str(right.path)),
                    )
                )
    by_task: dict[str, list[LoggedTask]] = {}
    for task in mine:
        by_task.setdefault(task.run.task, []).append(task)
    for task_name, runs in sorted(by_task.items()):
        runs.sort(key=lambda task: row_label(task.run.model, task.run.setting))
        for left, right in combinations(runs, 2):
            for metric in sorted(set(left.outcomes) & set(right.outcomes)):
                result = _compare(left, right, metric)
                if result is None:
                    continue
                a, b = row_label(left.run.model, left.run.setting), row_label(right.run.model, right.run.setting)
                found.append(
                    Difference(
                        "two runs",
                        f"{spec.task_label(task_name)}: {a} − {b}",
                        a,
                        b,
                        task_name,
                        metric,
                        result,
                        (str(left.path), str(right.path)),
                    )
                )
    return found


def _compare(left: LoggedTask, right: LoggedTask, metric: str) -> PairedResult | None:
    return paired_difference(left.outcomes.get(metric, {}), right.outcomes.get(metric, {}))
