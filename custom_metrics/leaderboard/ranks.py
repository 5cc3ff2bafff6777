"""Ranks from the tests the page shows: 1 + the rows of a group significantly better.

A rank says "no row is shown to beat this one more often than ..."; it must agree with the
tests printed beside it, so it is read from them, per column, among the rows of one group:

- two rows that logged the same documents of the column's task: their paired test on that
  outcome (McNemar's exact test, or the paired bootstrap), with its adjusted p from the
  pair's family (every paired test of those two rows on the tab: ``differences``);
- else, when both numbers are k of n items: Fisher's exact test of the two counts
  (independent samples; on the same documents it is conservative), Holm-adjusted within a
  family of its own per pair, those two rows' count tests across the columns;
- else no test: the pair does not count.

A number no such test can take (a derived one, GEESE's effectiveness, with no count of items
and no per-document outcome compared between rows) is not ranked, and says why; any other
is ranked, rank 1 when no row is shown better (also when it is alone), so a newcomer can
only move it by being significantly better.

A row is significantly better when the adjusted p is below 0.05 and its number is the larger.
Every family belongs to one pair of rows, so a row joining the page changes another row's
rank only by being significantly better than it, never by making a family larger.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.differences import Difference
from custom_metrics.leaderboard.procedures import ALPHA

NO_TEST = (
    "not ranked: no test compares it with another row of its group (no shared logged documents, no count of items)"
)


def count_family(a: str, b: str) -> str:
    """The family of two rows' count tests (Fisher's), in words."""
    return f"{a} vs {b}, by counts"


def rank_group(labels: Sequence[str], cells: Sequence[Sequence[Any]], differences: Sequence[Difference]) -> None:
    """Rank every cell of a group in place: ``cells[row][column]`` are summary cells (their
    ``key``, ``value``, ``evidence``; ``rank``, ``tied``, ``compared``, ``unranked`` are set)."""
    if not cells:
        return
    paired = _paired_index(differences)
    verdicts: list[tuple[int, int, int, int]] = []  # (column, i, j, +1: i better, -1: j better, 0: neither)
    counts: list[tuple[int, int, int, int, int, int, int]] = []  # (column, i, j, k_i, n_i, k_j, n_j)
    compared = np.zeros((len(cells), len(cells[0])), dtype=int)
    tested = np.zeros_like(compared, dtype=bool)  # by a paired test, or countable for Fisher's
    for column in range(len(cells[0])):
        present = [i for i, row in enumerate(cells) if _finite(row[column].value)]
        for x, i in enumerate(present):
            left = cells[i][column]
            for j in present[x + 1 :]:
                right = cells[j][column]
                found = (
                    paired.get((left.task, _metric(left.key), labels[i], labels[j]))
                    if left.task == right.task
                    else None
                )
                if found is not None:
                    p_adjusted, difference = found
                    verdicts.append((column, i, j, _direction(p_adjusted, difference)))
                    tested[i, column] = tested[j, column] = True
                elif _counted(left) and _counted(right):
                    a, b = left.evidence, right.evidence
                    counts.append((column, i, j, a.k, a.n, b.k, b.n))
                else:
                    continue
                compared[i, column] += 1
                compared[j, column] += 1
    if counts:
        table = np.array(counts, dtype=float)
        raw = procedures.fisher_p(table[:, 3], table[:, 4], table[:, 5], table[:, 6])
        adjusted = procedures.holm_groups(raw, [(i, j) for _, i, j, *_ in counts])
        for (column, i, j, k_i, n_i, k_j, n_j), p in zip(counts, adjusted):
            verdicts.append((column, i, j, _direction(float(p), k_i / n_i - k_j / n_j)))
    beaten = np.zeros_like(compared)
    for column, i, j, direction in verdicts:
        if direction > 0:
            beaten[j, column] += 1
        elif direction < 0:
            beaten[i, column] += 1
    for column in range(len(cells[0])):
        present = [i for i, row in enumerate(cells) if _finite(row[column].value)]
        for i in present:
            cell = cells[i][column]
            cell.compared = int(compared[i, column])
            if not (tested[i, column] or _counted(cell)):
                cell.rank, cell.unranked = None, NO_TEST
            else:
                cell.rank = 1 + int(beaten[i, column])
        ranks = [cells[i][column].rank for i in present if cells[i][column].rank is not None]
        for i in present:
            cell = cells[i][column]
            cell.tied = ranks.count(cell.rank) - 1 if cell.rank is not None else 0


def _paired_index(differences: Sequence[Difference]) -> dict[tuple[str, str, str, str], tuple[float, float]]:
    """(task, metric, A, B) -> (pair-family adjusted p, A − B), both orders."""
    index: dict[tuple[str, str, str, str], tuple[float, float]] = {}
    for d in differences:
        if d.kind != "two runs":
            continue
        r = d.result
        p = r.p_adjusted if r.p_adjusted is not None else r.p_value
        index[(d.task, d.metric, d.a, d.b)] = (p, r.difference)
        index[(d.task, d.metric, d.b, d.a)] = (p, -r.difference)
    return index


def _direction(p_value: float, difference: float) -> int:
    if p_value >= ALPHA or difference == 0:
        return 0
    return 1 if difference > 0 else -1


def _metric(key: str) -> str:
    return key.split("/", 1)[1].split("[", 1)[0]


def _counted(cell: Any) -> bool:
    evidence = cell.evidence
    return evidence is not None and evidence.k is not None and evidence.n is not None and evidence.n > 0


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)
