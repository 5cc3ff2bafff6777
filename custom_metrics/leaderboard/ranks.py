"""Ranks from the tests the page shows: 1 + the rows of a group significantly better.

A rank must agree with the tests printed beside it, so it is read from them, per column, among
the rows of one group (docs/leaderboard.md, "Ranks from the tests shown"): two rows' paired
test on the column's outcome where both logged its documents, with its adjusted p from the
pair's family (``differences``); else, when both numbers are k of n items, Fisher's exact test
of the two counts, Holm-adjusted within a family of its own per pair (those two rows' count
tests across the columns); else no test. A number no such test can take is not ranked, and
says why. Every family belongs to one pair of rows, so a row joining the page changes another
row's rank only by being significantly better than it, never by making a family larger.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.differences import Difference
from custom_metrics.leaderboard.numbers import finite
from custom_metrics.leaderboard.procedures import ALPHA

NO_TEST = (
    "not ranked: no test compares it with another row of its group (no shared logged documents, no count of items)"
)


def rank_group(labels: Sequence[str], cells: Sequence[Sequence[Any]], differences: Sequence[Difference]) -> None:
    """Rank every cell of a group in place: ``cells[row][column]`` are summary cells (their
    ``key``, ``value``, ``evidence``; ``rank``, ``tied``, ``compared``, ``unranked`` are set).
    Vectorised over the pairs of a column: 300 rows are 45,000 pairs per column."""
    if not cells:
        return
    rows, columns = len(cells), len(cells[0])
    paired = _paired_by_outcome(labels, differences)
    beaten = np.zeros((rows, columns), dtype=int)
    compared = np.zeros((rows, columns), dtype=int)
    tested = np.zeros((rows, columns), dtype=bool)  # by a paired test
    first, second = np.triu_indices(rows, k=1)
    found: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []  # (column, i, j, [k_i, n_i, k_j, n_j])
    for column in range(columns):
        col = [row[column] for row in cells]
        present = np.array([finite(cell.value) for cell in col])
        counted = present & np.array([_counted(cell) for cell in col])
        tasks = [cell.task for cell in col]
        by_test = np.zeros((rows, rows), dtype=bool)
        for task, metric in {(cell.task, _metric(cell.key)) for cell, shown in zip(col, present) if shown}:
            for i, j, p_adjusted, difference in paired.get((task, metric), ()):
                if present[i] and present[j] and tasks[i] == task == tasks[j]:
                    by_test[i, j] = by_test[j, i] = True
                    tested[[i, j], column] = True
                    compared[[i, j], column] += 1
                    if p_adjusted < ALPHA and difference != 0:  # the worse of the two is beaten
                        beaten[j if difference > 0 else i, column] += 1
        keep = counted[first] & counted[second] & ~by_test[first, second]
        i, j = first[keep], second[keep]
        np.add.at(compared[:, column], np.concatenate([i, j]), 1)
        k = np.array([cell.evidence.k if ok else 0 for cell, ok in zip(col, counted)], dtype=np.int64)
        n = np.array([cell.evidence.n if ok else 1 for cell, ok in zip(col, counted)], dtype=np.int64)
        if len(i):
            found.append((column, i, j, np.stack([k[i], n[i], k[j], n[j]])))
    if found:
        counts = np.concatenate([c for *_, c in found], axis=1)
        i = np.concatenate([x for _, x, _, _ in found])
        j = np.concatenate([x for _, _, x, _ in found])
        column = np.concatenate([np.full(len(x), c) for c, x, _, _ in found])
        adjusted = procedures.holm_groups(procedures.fisher_p(*counts), i * rows + j)  # a family per pair
        difference = counts[0] / counts[1] - counts[2] / counts[3]
        better, worse = (adjusted < ALPHA) & (difference > 0), (adjusted < ALPHA) & (difference < 0)
        np.add.at(beaten, (j[better], column[better]), 1)
        np.add.at(beaten, (i[worse], column[worse]), 1)
    for column in range(columns):
        present = [x for x, row in enumerate(cells) if finite(row[column].value)]
        for x in present:
            cell = cells[x][column]
            cell.compared = int(compared[x, column])
            ranked = tested[x, column] or _counted(cell)
            cell.rank, cell.unranked = (1 + int(beaten[x, column]), "") if ranked else (None, NO_TEST)
        ranks = [cells[x][column].rank for x in present if cells[x][column].rank is not None]
        for cell in (cells[x][column] for x in present):
            cell.tied = ranks.count(cell.rank) - 1 if cell.rank is not None else 0


def _paired_by_outcome(
    labels: Sequence[str], differences: Sequence[Difference]
) -> dict[tuple[str, str], list[tuple[int, int, float, float]]]:
    """(task, metric) -> the group's paired tests between runs: (row i, row j, the pair
    family's adjusted p, mean of i − j)."""
    position = {label: index for index, label in enumerate(labels)}
    found: dict[tuple[str, str], list[tuple[int, int, float, float]]] = {}
    for d in differences:
        if d.kind != "two runs" or d.a not in position or d.b not in position:
            continue
        r = d.result
        p = r.p_adjusted if r.p_adjusted is not None else r.p_value
        found.setdefault((d.task, d.metric), []).append((position[d.a], position[d.b], p, r.difference))
    return found


def _metric(key: str) -> str:
    return key.split("/", 1)[1].split("[", 1)[0]


def _counted(cell: Any) -> bool:
    evidence = cell.evidence
    return evidence is not None and evidence.k is not None and evidence.n is not None and evidence.n > 0
