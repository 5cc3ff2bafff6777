"""What a paper tells the leaderboard: its ``PaperSpec``, and the table types its hooks fill.

The generic leaderboard (``custom_metrics.leaderboard``) reads results files and builds
one table per paper from these specs; each paper's ``leaderboard.py`` owns what is
particular to it (published rows, derived columns, extra result sources), so no shared
module branches on a paper's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.published import PublishedRow
from custom_metrics.common.results import Problem, TaskRun


@dataclass(frozen=True)
class Column:
    key: str  # "task/metric" or "task/metric[filter]"; published rows use the same keys
    label: str
    task: str
    metric: str
    kind: str = "metric"  # metric | derived | samples


@dataclass(frozen=True)
class Cell:
    value: float | None
    pm: float | None = None
    text: str | None = None  # the number as printed in a paper (published rows)
    pm_text: str | None = None


@dataclass
class Row:
    model: str
    kind: str  # run | published
    sources: list[str]
    cells: dict[str, Cell] = field(default_factory=dict)


@dataclass
class Table:
    key: str
    title: str
    columns: list[Column]
    rows: list[Row]
    chart_keys: list[str]
    notes: list[str]


# Hooks a paper may provide; each receives the table's notes list to explain what it did.
RunsHook = Callable[[list[TaskRun], list[str]], list[TaskRun]]
DeriveHook = Callable[[list[Column], list[Row], list[TaskRun], list[str]], list[Column]]
ReaderHook = Callable[[Sequence[Path]], tuple[list[TaskRun], list[Problem]]]


@dataclass(frozen=True)
class PaperSpec:
    key: str
    title: str
    pattern: str  # regex matching the paper's task names
    task_order: tuple[str, ...]
    metric_order: tuple[str, ...]
    chart_metrics: tuple[str, ...]
    pm_note: str
    metric_names: dict[str, str] = field(default_factory=dict)  # the paper's name, for labels
    published: Callable[[], list[PublishedRow]] = list
    adjust_runs: RunsHook | None = None  # e.g. RULE: five split runs -> one setting row
    derive: DeriveHook | None = None  # e.g. GEESE: explanation effectiveness columns
    read_extra: ReaderHook | None = None  # e.g. IBE: selector reports beside the results files
