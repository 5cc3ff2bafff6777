"""Which paired differences a paper's page shows, computed from the logged samples.

- Within one run (same model and setting): the paper's own comparisons of two tasks
  over the same documents (``Board.comparisons``), e.g. GEESE's effectiveness =
  accuracy with a hint - accuracy without; each line names its model.
- Between runs: every two model/setting rows that logged the same task, on each
  per-document outcome the paper defines (``SampleView.outcomes``), over the documents
  both logged (all pairs of a task at once: ``paired.paired_matrix``).
The statistics are in ``paired``. The p-values are Holm-adjusted within families
(``family_of``: docs/leaderboard.md, "Families"), so a pair's verdict never depends on which
other runs sit on the page; the page and the exports name each difference's family.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.paired import PairedResult, paired_difference, paired_matrix
from custom_metrics.leaderboard.samples import LoggedTask


@dataclass(frozen=True)
class Difference:
    kind: str  # "same run" | "two runs"
    label: str  # what is compared, in words, naming the model(s)
    a: str  # the left side (model and setting, or task)
    b: str
    task: str
    metric: str
    result: PairedResult
    sources: tuple[str, str]  # the two samples files


def row_label(model: str, setting: str) -> str:
    return f"{model} · {setting}" if setting else model


def family_of(difference: Difference) -> str:
    """The family a difference is Holm-adjusted in, in words: its pair of rows, or its run."""
    return f"within {difference.a}" if difference.kind == "same run" else f"{difference.a} vs {difference.b}"


def paired_differences(spec: PaperSpec, logged: Sequence[LoggedTask]) -> list[Difference]:
    """Every paired difference of the paper's tab, its p-values Holm-adjusted within its family."""
    mine = [task for task in logged if task.spec is spec]
    found = _within_runs(spec, mine) + _between_runs(spec, mine)
    families = [family_of(d) for d in found]
    adjusted = procedures.holm_groups([d.result.p_value for d in found], families)
    sizes = Counter(families)
    return [
        replace(d, result=replace(d.result, p_adjusted=float(p), family=sizes[name], family_name=name))
        for d, p, name in zip(found, adjusted, families)
    ]


def _within_runs(spec: PaperSpec, mine: Sequence[LoggedTask]) -> list[Difference]:
    by_row: dict[tuple[str, str], dict[str, LoggedTask]] = {}
    for task in mine:
        by_row.setdefault((task.run.model, task.run.setting), {})[task.run.task] = task
    found = []
    for (model, setting), tasks in sorted(by_row.items()):
        for comparison in spec.board.comparisons:
            left, right = tasks.get(comparison.task), tasks.get(comparison.baseline)
            if left is None or right is None:
                continue
            result = paired_difference(
                left.outcomes.get(comparison.metric, {}), right.outcomes.get(comparison.compared, {})
            )
            if result is None:
                continue
            who = row_label(model, setting)
            found.append(
                Difference(
                    "same run",
                    f"{who}: {comparison.label}, {spec.board.task_label(comparison.task)} − "
                    f"{spec.board.task_label(comparison.baseline)}",
                    who,
                    who,
                    comparison.task,
                    comparison.metric,
                    result,
                    (str(left.path), str(right.path)),
                )
            )
    return found


def _between_runs(spec: PaperSpec, mine: Sequence[LoggedTask]) -> list[Difference]:
    by_task: dict[str, list[LoggedTask]] = {}
    for task in mine:
        by_task.setdefault(task.run.task, []).append(task)
    baseline_only = {c.baseline_metric for c in spec.board.comparisons} - {""}  # no metric of a task
    found = []
    for task_name, runs in sorted(by_task.items()):
        runs.sort(key=lambda task: row_label(task.run.model, task.run.setting))
        labels = [row_label(task.run.model, task.run.setting) for task in runs]
        for metric in sorted({name for task in runs for name in task.outcomes} - baseline_only):
            having = [i for i, task in enumerate(runs) if task.outcomes.get(metric)]
            pairs = paired_matrix([runs[i].outcomes[metric] for i in having])
            for (x, y), result in sorted(pairs.items()):
                left, right = runs[having[x]], runs[having[y]]
                a, b = labels[having[x]], labels[having[y]]
                found.append(
                    Difference(
                        "two runs",
                        f"{spec.board.task_label(task_name)}: {a} − {b}",
                        a,
                        b,
                        task_name,
                        metric,
                        result,
                        (str(left.path), str(right.path)),
                    )
                )
    return found
