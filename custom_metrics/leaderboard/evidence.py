"""What each summary number rests on, statistically: its items and its 95% interval
(docs/leaderboard.md, "Every number with its 95% interval").

A run's number is a share of items whose count comes, in order of trust, from its logged
samples (the per-item 0/1 outcomes, when their mean is the number), else from the results file
(the count the paper's ``share_of`` names, the task's documents by default). A difference of two
tasks on the same documents (a paper ``Comparison``) gets its paired test's own interval, the
one the paired differences show, so the number has one interval wherever it is printed. A
published number is a share of the items the paper states, else gets a normal interval from its
standard error; without either there is no interval, and the reason is kept for the page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from custom_metrics.common.leaderboard_types import Cell, Comparison, Row
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.numbers import finite
from custom_metrics.leaderboard.paired import PairedResult, paired_difference
from custom_metrics.leaderboard.procedures import Interval
from custom_metrics.leaderboard.registry import GENERIC_OUTCOMES, OTHER
from custom_metrics.leaderboard.tables import task_values

Outcomes = Mapping[Path, Mapping[str, Mapping[str, float]]]
Z95 = 1.959963984540054
# A number read back as a count of n items may be off by float rounding, never by a whole item.
_WHOLE = 1e-6


@dataclass(frozen=True)
class Evidence:
    """A number's items and interval: ``k`` of ``n`` for a share, or the ``paired`` test of a
    difference of two tasks on the same documents."""

    interval: Interval | None
    k: int | None = None
    n: int | None = None
    paired: PairedResult | None = None
    basis: str = ""  # where the count came from, in words ("logged samples", "results file")
    reason: str = ""  # why there is no interval

    @property
    def items(self) -> int | None:
        return self.n if self.n is not None else (self.paired.n if self.paired is not None else None)


def run_evidence(spec: PaperSpec, row: Row, key: str, cell: Cell, outcomes: Outcomes) -> Evidence:
    """The items behind a run's ``key`` cell and its interval."""
    value = cell.value
    if not finite(value):
        return Evidence(None, reason="no number")
    task, metric = key.split("/", 1)
    metric = metric.split("[", 1)[0]
    found = outcomes.get(row.samples.get(task), {}).get(metric)
    logged = np.fromiter(found.values(), dtype=float, count=len(found)) if found else None
    if logged is not None and np.isin(logged, (0.0, 1.0)).all() and abs(float(np.mean(logged)) - value) <= _WHOLE:
        k, n = int(logged.sum()), len(logged)
        return Evidence(procedures.share_interval(k, n), k, n, basis="logged samples")
    comparison = _comparison(spec, task, metric)
    if comparison is not None:  # its paired test: ``task`` − its baseline over the documents both logged
        a = outcomes.get(row.samples.get(comparison.task), {}).get(comparison.metric, {})
        b = outcomes.get(row.samples.get(comparison.baseline), {}).get(comparison.compared, {})
        paired = paired_difference(a, b)  # None: a task without logged samples, or no document shared
        if paired is None:
            return Evidence(None, reason="a difference of two tasks: needs both tasks' logged samples")
        if abs(paired.difference - value) <= _WHOLE:
            interval = None if paired.low is None else Interval(paired.low, paired.high, paired.test)
            return Evidence(interval, paired=paired, basis="logged samples of both tasks", reason=paired.no_interval)
    if cell.pm is not None and cell.se is None:
        return Evidence(None, reason="a mean over runs (its ± is their spread): no count of items behind it")
    values = {name: cell.value for name, cell in task_values(row, task).items()}
    if spec.board.share_of is not None:
        count = spec.board.share_of(key, values)
    else:  # another harness task's f1 or bleu is no share of its documents
        count = None if spec is OTHER and metric not in GENERIC_OUTCOMES else values.get("#samples")
    if count is None:
        return Evidence(None, reason="neither logged samples nor the results file give the items it is a share of")
    n = round(count) if math.isfinite(count) else 0
    k = value * n
    if not 0 <= value <= 1 or n <= 0 or abs(count - n) > _WHOLE or abs(k - round(k)) > _WHOLE * max(1, n):
        return Evidence(None, reason=f"not a whole count of the {count:g} items the results file records")
    return Evidence(procedures.share_interval(round(k), n), round(k), n, basis="results file")


def paper_evidence(spec: PaperSpec, row: Row, key: str, cell: Cell) -> Evidence:
    """The items the paper states behind its ``key`` number, and the interval they give."""
    value = cell.value
    if not finite(value):
        return Evidence(None, reason="no number")
    task, metric = key.split("/", 1)
    if _comparison(spec, task, metric) is not None:
        return Evidence(None, reason="a difference of two of the paper's numbers: the paper gives no interval")
    n = cell.n
    docs = row.cells.get(f"{task}/#samples")
    if n is None and docs is not None and docs.value and 0 <= value <= 1:
        n = int(docs.value)
    if n and 0 <= value <= 1:
        k = round(value * n)
        return Evidence(procedures.share_interval(k, n), k, n, basis="the documents the paper states")
    if cell.se is not None and cell.se > 0:
        return Evidence(Interval(value - Z95 * cell.se, value + Z95 * cell.se, procedures.NORMAL), basis="stderr")
    return Evidence(None, reason="the paper states neither its items nor a standard error")


def _comparison(spec: PaperSpec, task: str, metric: str) -> Comparison | None:
    """The paper comparison whose difference ``task``'s ``metric`` is (GEESE's effectiveness), named by its label."""
    return next((c for c in spec.board.comparisons if c.task == task and c.label == metric), None)
