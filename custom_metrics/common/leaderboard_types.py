"""What a paper tells the leaderboard and the sweep: its ``PaperSpec``, and the table types its hooks fill.

The generic leaderboard (``custom_metrics.leaderboard``) reads results files and builds
one table per paper from these specs; each paper's ``leaderboard.py`` owns what is
particular to it (published rows, derived columns, extra result sources, the words and
definitions shown in column headers, how its logged samples read), so no shared module
branches on a paper's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_metrics.common.published import PublishedRow
from custom_metrics.common.results import Problem, TaskRun


@dataclass(frozen=True)
class Column:
    key: str  # "task/metric" or "task/metric[filter]"; published rows use the same keys
    label: str  # as in the CSV and markdown headers (stable for scripts)
    task: str
    metric: str
    kind: str = "metric"  # metric | derived | samples


@dataclass(frozen=True)
class Cell:
    value: float | None
    pm: float | None = None
    text: str | None = None  # the number as printed in a paper (published rows)
    pm_text: str | None = None
    source: str | None = None  # the results file (run rows) or paper table it came from


@dataclass
class Row:
    model: str
    kind: str  # run | published
    sources: list[str]
    cells: dict[str, Cell] = field(default_factory=dict)
    setting: str = ""  # prompt setting (shots, chat template) or the paper's setting
    subsets: dict[str, str] = field(default_factory=dict)  # task -> "--limit 4, 4 docs" for cut-short runs


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
# (task, logged sample) -> display fields of the sample viewer, in order.
SampleFieldsHook = Callable[[str, dict[str, Any]], dict[str, Any]]
# (task, logged sample) -> per-document outcomes compared between runs (None: not scored).
OutcomesHook = Callable[[str, dict[str, Any]], dict[str, float | None]]
# (task, logged sample) -> the document's identity, shared by every run and setting.
DocKeyHook = Callable[[str, dict[str, Any]], str]
# roots -> {(samples file name, line): extra fields}, e.g. IBE features scored afterwards.
SampleExtrasHook = Callable[[Sequence[Path]], dict[tuple[str, int], dict[str, Any]]]
# (task, the row's values for that task by metric) -> what a reader must know ("" if nothing).
RemarkHook = Callable[[str, Mapping[str, float | None]], str]


def default_doc_key(task: str, sample: dict[str, Any]) -> str:
    """The harness' own document hash, else its position: right for tasks whose docs carry
    no run setting (REG's docs carry the judge, so REG keys on its item id instead)."""
    return str(sample.get("doc_hash") or sample.get("doc_id"))


@dataclass(frozen=True)
class SampleView:
    """How a paper's logged samples (``--log_samples``) read in the sample viewer, and
    which per-document outcomes are compared between runs (paired differences)."""

    fields: SampleFieldsHook
    facets: tuple[str, ...] = ()  # fields offered as click filters (e.g. "coherent")
    outcomes: OutcomesHook | None = None
    doc_key: DocKeyHook = default_doc_key
    extras: SampleExtrasHook | None = None
    show_filtered: bool = True  # False where ``fields`` already shows what the filter made


@dataclass(frozen=True)
class Comparison:
    """Two tasks of one run over the same documents whose paired difference the paper
    reads, e.g. GEESE's effectiveness = acc with a hint - acc without."""

    task: str
    baseline: str
    metric: str
    label: str


@dataclass(frozen=True)
class PostRun:
    """A step that a sweep runs in a finished pair's folder after ``lm_eval``, for some of a
    paper's tasks (e.g. scoring the logged explanations), marked done only when the commands
    exit 0 and leave their outputs."""

    name: str  # in the sweep's messages
    tasks: tuple[str, ...]
    # (the pair's newest samples file, the pair folder) -> command lines, run in order
    commands: Callable[[Path, Path], list[list[str]]]
    outputs: Callable[[Path], list[Path]]  # the pair folder -> files the commands must leave


@dataclass(frozen=True)
class SamplesInput:
    """Tasks that read the logged samples of another task of the same model (e.g. a judge of
    its explanations): a sweep runs them after that task and passes its samples file as
    ``--metadata {metadata_key: path}``."""

    source: Callable[[str], str | None]  # task -> the task whose samples it reads, or None
    metadata_key: str


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
    # What the page shows: tasks and metrics in words, and each metric's definition (from
    # the task README) as the column header's tooltip; "task/metric" keys override "metric".
    task_labels: Mapping[str, str] = field(default_factory=dict)
    metric_labels: Mapping[str, str] = field(default_factory=dict)
    definitions: Mapping[str, str] = field(default_factory=dict)
    samples: SampleView | None = None
    comparisons: tuple[Comparison, ...] = ()
    remark: RemarkHook | None = None  # e.g. REG: why its scores are missing
    # What a sweep does for the paper beyond lm_eval (the sweep itself names no paper).
    post_run: PostRun | None = None  # e.g. IBE: score the explanations and write the report
    samples_input: SamplesInput | None = None  # e.g. IBE: a judge task reads its generation task's samples

    def task_label(self, task: str) -> str:
        return self.task_labels.get(task, task)

    def metric_label(self, metric: str) -> str:
        return self.metric_labels.get(metric, self.metric_names.get(metric, metric))

    def definition(self, task: str, metric: str) -> str:
        return self.definitions.get(f"{task}/{metric}") or self.definitions.get(metric, "")
