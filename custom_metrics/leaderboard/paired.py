"""Paired differences between two runs (or two settings of one run) over the same documents.

Two accuracies measured on the same documents are correlated; their stderrs cannot be
combined as if independent, and the difference of two means hides how many documents
actually changed. So the difference A - B is taken per document, over the documents both
logged (matched by each paper's document key, not by position), and tested as ``procedures``
says: McNemar's exact test for 0/1 outcomes, else a paired bootstrap; where either gives no
interval, ``no_interval`` says why.

``paired_matrix`` does every pair of many runs of one task at once (a matrix product per
outcome), so a page of 100 runs costs milliseconds per task, not a test per pair in Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.numbers import interval_text
from custom_metrics.leaderboard.procedures import ALPHA, BOOTSTRAP, MCNEMAR, NO_CHANGE, NO_SPREAD


@dataclass(frozen=True)
class PairedResult:
    n: int  # documents both sides logged
    mean_a: float
    mean_b: float
    difference: float  # mean of A - B
    low: float | None  # 95% interval of the difference, from the test's own procedure (None: no_interval)
    high: float | None
    test: str  # procedures.MCNEMAR or procedures.BOOTSTRAP
    p_value: float
    a_only: int | None = None  # documents right in A and wrong in B (0/1 outcomes)
    b_only: int | None = None
    p_adjusted: float | None = None  # Holm within its family (``differences.family_of``)
    family: int = 0  # how many tests that adjustment was over
    family_name: str = ""  # which family, in words
    no_interval: str = ""  # why there is no interval (procedures.NO_CHANGE, NO_SPREAD)

    @property
    def significant(self) -> bool:
        return (self.p_adjusted if self.p_adjusted is not None else self.p_value) < ALPHA

    @property
    def interval_text(self) -> str:
        """The interval as every output prints it (signed), or why there is none."""
        return interval_text(self.low, self.high, signed_values=True) or f"none: {self.no_interval}"


def paired_difference(a: Mapping[str, float], b: Mapping[str, float]) -> PairedResult | None:
    """A - B over the documents in both (None when they share none)."""
    return paired_matrix([a, b]).get((0, 1))


def paired_matrix(runs: Sequence[Mapping[str, float]]) -> dict[tuple[int, int], PairedResult]:
    """Every pair ``(i, j)``, i < j, of ``runs`` (doc key -> outcome) that shares a document."""
    docs = sorted({doc for run in runs for doc in run})
    if len(runs) < 2 or not docs:
        return {}
    position = {doc: i for i, doc in enumerate(docs)}
    values = np.zeros((len(runs), len(docs)))
    present = np.zeros((len(runs), len(docs)))
    for row, run in enumerate(runs):
        columns = [position[doc] for doc in run]
        values[row, columns] = list(run.values())
        present[row, columns] = 1.0
    shared = present @ present.T
    sums = (values * present) @ present.T  # sums[i, j]: A = i's sum over the docs j logged too
    first, second = np.triu_indices(len(runs), k=1)
    keep = shared[first, second] > 0
    first, second = first[keep], second[keep]
    n = shared[first, second]
    mean_a, mean_b = sums[first, second] / n, sums[second, first] / n
    if np.isin(values[present == 1], (0.0, 1.0)).all():
        right, wrong = values * present, (1 - values) * present
        a_only = (right @ wrong.T)[first, second]
        b_only = (wrong @ right.T)[first, second]
        p_value, low, high = procedures.mcnemar(a_only, b_only, n)
        changed = a_only + b_only > 0
        return {
            (int(i), int(j)): PairedResult(
                int(n[x]),
                float(mean_a[x]),
                float(mean_b[x]),
                float((a_only[x] - b_only[x]) / n[x]),
                float(low[x]) if changed[x] else None,
                float(high[x]) if changed[x] else None,
                MCNEMAR,
                float(p_value[x]),
                int(a_only[x]),
                int(b_only[x]),
                no_interval="" if changed[x] else NO_CHANGE,
            )
            for x, (i, j) in enumerate(zip(first, second))
        }
    found = {}
    for x, (i, j) in enumerate(zip(first, second)):
        both = (present[i] == 1) & (present[j] == 1)
        diffs = values[i, both] - values[j, both]
        outcome = procedures.bootstrap_test(diffs)
        found[(int(i), int(j))] = PairedResult(
            int(n[x]),
            float(mean_a[x]),
            float(mean_b[x]),
            float(diffs.mean()),
            None if outcome is None else outcome.interval.low,
            None if outcome is None else outcome.interval.high,
            BOOTSTRAP,
            1.0 if outcome is None else outcome.p_value,
            no_interval=NO_SPREAD.format(n=len(diffs), value=float(diffs.mean())) if outcome is None else "",
        )
    return found
