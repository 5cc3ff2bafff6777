"""GEESE's derived columns on the leaderboard (``Board.derive``): explanation effectiveness and
label leakage (LAS).

Effectiveness = acc(task with hint) - acc(geese_noexp) of the same model (no stderr: the two
accuracies are paired on the same documents; the leaderboard's paired differences test it from
the logged samples). LAS: ``leakage``.
"""

from __future__ import annotations

import math
from decimal import Decimal

from custom_metrics.common.errors import DataError
from custom_metrics.common.leaderboard_types import Cell, Column, Row
from custom_metrics.common.published import plain
from custom_metrics.common.results import TaskRun
from custom_metrics.geese.leakage import doc_outcomes, leakage

BASELINE = "geese_noexp"
# The explanation sources with an explanation-only task ``<task>_only`` (the hint without the
# sentence pair): Hase et al.'s explanation-only simulator, whose correctness marks a leaking document.
ALONE = "_only"
EXPLANATION_TASKS = ("geese_human", "geese_llama3", "geese_llama3_whynot", "geese_llama3_implicit", "geese_selfexp")
LAS = "las"


def add_effectiveness(columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]) -> list[Column]:
    baseline = f"{BASELINE}/acc"
    hint_tasks = [
        c.task
        for c in columns
        if c.metric == "acc"
        and c.key == f"{c.task}/acc"
        and c.task not in (BASELINE, "geese")
        and not c.task.endswith(ALONE)
    ]
    samples = {(run.model, run.task): (run.n_samples, run.limit) for run in runs}
    files = {(run.model, run.task): run.path for run in runs}
    docs = lambda counts: f"{counts[0]} docs" if counts and counts[0] is not None else "docs not recorded"
    derived = []
    for task in hint_tasks:
        key = f"{task}/effectiveness"
        derived.append(Column(key, f"{task} effectiveness (acc − {BASELINE} acc)", task, "effectiveness", "derived"))
        for row in rows:
            with_hint, without = row.cells.get(f"{task}/acc"), row.cells.get(baseline)
            if with_hint is None or without is None or with_hint.value is None or without.value is None:
                continue
            if row.kind == "published":
                exact = Decimal(with_hint.text) - Decimal(without.text)
                row.cells[key] = Cell(float(exact), text=plain(exact))
                continue
            # The basis: the two runs' documents, and their files when two
            ours, theirs = samples.get((row.model, task)), samples.get((row.model, BASELINE))
            our_file, their_file = files.get((row.model, task)), files.get((row.model, BASELINE))
            basis = f"acc of {task} ({docs(ours)}) − acc of {BASELINE} ({docs(theirs)})"
            if our_file != their_file:
                basis += f", from two results files: {our_file} and {their_file}"
            row.cells[key] = Cell(with_hint.value - without.value, basis=basis)
            if ours != theirs:
                notes.append(
                    f"{row.model}: {task} effectiveness compares runs of different size "
                    f"(#samples, limit) {ours} vs {BASELINE} {theirs}."
                )
    return _placed_after(columns, derived, ("acc",))


def _placed_after(columns: list[Column], derived: list[Column], metrics: tuple[str, ...]) -> list[Column]:
    """``derived`` placed right after the last of their task's ``metrics`` columns the table has."""
    position = {c.key: float(i) for i, c in enumerate(columns)}
    for column in derived:
        anchor = [position[key] for metric in metrics if (key := f"{column.task}/{metric}") in position]
        position[column.key] = anchor[-1] + 0.5
    return sorted([*columns, *derived], key=lambda c: position[c.key])


def add_leakage(columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]) -> list[Column]:
    """Leakage-adjusted simulatability per explanation source, from the logged samples of the
    same model's three runs: no hint, the hint with the pair, the hint alone."""

    def inputs(task: str) -> tuple[str, str, str]:  # the three runs a source's LAS needs
        return BASELINE, task, task + ALONE

    def ran(row: Row, task: str) -> bool:
        return row.kind == "run" and all(f"{name}/acc" in row.cells for name in inputs(task))

    sources = [task for task in EXPLANATION_TASKS if any(ran(row, task) for row in rows)]
    derived = [
        Column(f"{task}/{LAS}", f"{task} LAS (leakage-adjusted simulatability)", task, LAS, "derived")
        for task in sources
    ]
    for row in rows:
        mine = [task for task in sources if ran(row, task)]
        outcomes: dict[str, dict[str, float]] = {}
        for name in dict.fromkeys(name for task in mine for name in inputs(task)):
            path = row.samples.get(name)
            if path is None:
                continue
            try:
                outcomes[name] = doc_outcomes(path)
            except DataError as error:
                notes.append(f"{row.model}: LAS not computed from {name}'s samples: {error}")
        for task in mine:
            if not all(name in outcomes for name in inputs(task)):
                needed = ", ".join(inputs(task))
                notes.append(f"{row.model}: {task} LAS needs the logged samples (--log_samples) of {needed}.")
                continue
            found = leakage(*(outcomes[name] for name in inputs(task)))
            if found.n == 0:
                notes.append(f"{row.model}: {task} LAS: the three runs share no document.")
                continue
            value = found.value
            row.cells[f"{task}/{LAS}"] = Cell(math.nan if value is None else value, basis=found.describe())
    return _placed_after(columns, derived, ("acc", "effectiveness"))


def derive_columns(columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]) -> list[Column]:
    return add_leakage(add_effectiveness(columns, rows, runs, notes), rows, runs, notes)
