"""What a paper tells the leaderboard: its ``Board`` (``PaperSpec.board``), and the table types its hooks fill.

The generic leaderboard builds one table per paper from these; each paper's ``leaderboard.py``
owns what is particular to it (published rows, derived columns, words, how its samples read), so
no shared module branches on a paper's name.
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
    # A standard error a test may use; None where the ± is a spread (RULE's std over the
    # five splits) or there is none. Run rows: the harness' stderr.
    se: float | None = None
    # What a derived number was computed from, in words (GEESE effectiveness: which two
    # runs and files; an IBE selection: explanations and test questions).
    basis: str = ""
    n: int | None = None  # published rows: the items the paper states behind the number


@dataclass
class Row:
    model: str
    kind: str  # run | published
    sources: list[str]
    cells: dict[str, Cell] = field(default_factory=dict)
    setting: str = ""  # prompt setting (shots, chat template) or the paper's setting
    subsets: dict[str, str] = field(default_factory=dict)  # task -> "--limit 4, 4 docs" for cut-short runs
    model_id: str = ""  # run rows: the checkpoint or API model the results record (Hub id, path)
    samples: dict[str, Path] = field(default_factory=dict)  # task -> its --log_samples file
    # task -> how the run's logged task config differs from the suite's ("" = same or unknown)
    config_differences: dict[str, str] = field(default_factory=dict)
    # Published rows: "paper" for a row of a published table, else what it is (a PublishedRow's origin).
    origin: str = ""
    # Run rows: how the results files behind the row differ (batch size, model args, harness
    # version), and the files of its tasks passed over for newer ones; said on the row.
    mixed: list[str] = field(default_factory=list)
    passed_over: list[str] = field(default_factory=list)


@dataclass
class Table:
    key: str
    title: str
    columns: list[Column]
    rows: list[Row]
    chart_keys: list[str]
    notes: list[str]


@dataclass(frozen=True)
class Headline:
    """One column of a paper's summary view: the headline metric of a task.

    ``keys`` are the table columns that hold it, the published rows' key first (RULE's
    MainQ accuracy is ``rule/mainq_acc`` or, from a ``rule_main`` run, ``rule_main/mainq_acc``).
    """

    keys: tuple[str, ...]
    label: str  # the column header, short
    family: str  # a key of ``Board.families``: columns of one family share a chart and unit
    sanity: bool = False  # a check meant to be (near) perfect, e.g. GEESE's hint = gold label: never ranks
    reference: str = ""  # the published row compared with when the paper lacks the run's model


@dataclass(frozen=True)
class Family:
    """Headline columns drawn on one chart: one unit on the axis."""

    title: str
    unit: str  # the axis title, with its unit
    low: float | None = 0.0  # the axis range; None = from the data
    high: float | None = 1.0


# Hooks a paper may provide; each receives the table's notes list to explain what it did.
RunsHook = Callable[[list[TaskRun], list[str]], list[TaskRun]]
DeriveHook = Callable[[list[Column], list[Row], list[TaskRun], list[str]], list[Column]]
ReaderHook = Callable[[Sequence[Path]], tuple[list[TaskRun], list[Problem]]]
# (task, logged sample) -> the document's identity, shared by every run and setting.
DocKeyHook = Callable[[str, dict[str, Any]], str]


def default_doc_key(task: str, sample: dict[str, Any]) -> str:
    """The harness' own document hash, else its position: right for tasks whose docs carry
    no run setting (REG's docs carry the judge, so REG keys on its item id instead)."""
    return str(sample.get("doc_hash") or sample.get("doc_id"))


def doc_field_key(name: str) -> DocKeyHook:
    """A doc key read from the logged doc's own id field ``name``, else the harness' position:
    for tasks whose docs carry a run setting (REG's judge, GEESE's hint)."""
    return lambda task, sample: str((sample.get("doc") or {}).get(name, sample.get("doc_id")))


@dataclass(frozen=True)
class SampleView:
    """How a paper's logged samples (``--log_samples``) read in the sample viewer, and
    which per-document outcomes are compared between runs (paired differences)."""

    # (task, logged sample) -> display fields of the sample viewer, in order (default: the fields
    # every task logs, alone).
    fields: Callable[[str, dict[str, Any]], dict[str, Any]] = lambda task, sample: {}
    facets: tuple[str, ...] = ()  # fields offered as click filters (e.g. "coherent")
    # (task, logged sample) -> per-document outcomes compared between runs (None: not scored).
    outcomes: Callable[[str, dict[str, Any]], dict[str, float | None]] | None = None
    doc_key: DocKeyHook = default_doc_key
    # roots -> {(samples file name, line): extra fields}, e.g. IBE features scored afterwards.
    extras: Callable[[Sequence[Path]], dict[tuple[str, int], dict[str, Any]]] | None = None
    show_filtered: bool = True  # False where ``fields`` already shows what the filter made
    # (task, every viewer row of one run of it) -> those rows reordered and completed with what only
    # the whole run tells, e.g. RULE: each main question followed by its subquestions, with their consistency.
    arrange: Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    # Columns shown side by side, in this order, where the first of them present stands (IBE: an
    # explanation's proof steps beside it, not after every feature column, off-screen).
    together: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comparison:
    """Two tasks of one run over the same documents whose paired difference the paper
    reads, e.g. GEESE's effectiveness = acc with a hint - acc without.

    ``baseline_metric``: the baseline's outcome compared with ``metric`` where it is another
    (RULE: a biased run's ``bias_follow`` against the unbiased run picking the same option), an
    outcome of the paper's ``SampleView`` that no task reports: it is not tested between runs."""

    task: str
    baseline: str
    metric: str
    label: str
    baseline_metric: str = ""

    @property
    def compared(self) -> str:
        return self.baseline_metric or self.metric


@dataclass(frozen=True, kw_only=True)
class Board:
    """What the leaderboard shows of one paper (``PaperSpec.board``), in its ``leaderboard.py``.

    Keyword-only, and all optional: what the task YAMLs already say (the task names, their
    metric lists) is read from ``lm_eval_tasks/<key>/`` by the leaderboard, not restated here.
    """

    # Column order by task (metrics: in their YAMLs' ``metric_list`` order, then ``derived_metrics``).
    # Default: the folder's tasks (then ``extra_tasks``).
    task_order: tuple[str, ...] = ()
    # Columns no task YAML reports: metrics ``derive`` adds to the paper's tasks (GEESE's
    # effectiveness), and tasks whose numbers come from elsewhere (``read_extra``, another
    # tool's task names), each with its metrics.
    derived_metrics: tuple[str, ...] = ()
    extra_tasks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    pm_note: str = ""
    metric_names: Mapping[str, str] = field(default_factory=dict)  # the paper's name, for labels
    # The paper's published rows (read from its table files: ``common.published``); each row says
    # whether its ± is a standard error and each cell the items behind it, where the paper does.
    published: Callable[[], list[PublishedRow]] = list
    adjust_runs: RunsHook = lambda runs, notes: runs  # e.g. RULE: five split runs -> one setting row
    derive: DeriveHook = lambda columns, rows, runs, notes: columns  # e.g. GEESE: explanation effectiveness columns
    read_extra: ReaderHook = lambda roots: ([], [])  # e.g. IBE: selector reports beside the results files
    # What the page shows: tasks and metrics in words, and each metric's definition (from
    # the task README) as the column header's tooltip; "task/metric" keys override "metric".
    # A paper gives them in its ``words.yaml`` (``common.board_words.read_words``).
    task_labels: Mapping[str, str] = field(default_factory=dict)
    metric_labels: Mapping[str, str] = field(default_factory=dict)
    definitions: Mapping[str, str] = field(default_factory=dict)
    samples: SampleView = SampleView()
    comparisons: tuple[Comparison, ...] = ()
    # (task, the row's values of that task by metric) -> what a reader must know ("" if nothing),
    # e.g. REG: why its scores are missing.
    remark: Callable[[str, Mapping[str, float | None]], str] = lambda task, values: ""
    # The summary view: one column per task's headline metric; the first that is not a
    # sanity check ranks the rows. Its charts: one per family.
    headlines: tuple[Headline, ...] = ()
    families: Mapping[str, Family] = field(default_factory=dict)
    # Δ vs paper: the published row a run compares with is the same model's, in the paper
    # setting ``paper_setting(run setting)`` (None: any), else the reference model's.
    reference_model: str = ""
    paper_setting: Callable[[str], str | None] = lambda setting: None
    # (column key, the run's values of that task by metric) -> the items a run's headline number
    # is a share of (None: not a share of a count the results file records), for its exact test and
    # interval when no samples were logged (they give the count themselves). Default: the task's
    # documents (``#samples``); REG's scores are shares of |N|, RULE's combined task mixes question kinds.
    share_of: Callable[[str, Mapping[str, float | None]], float | None] | None = None
    # Checking a run's logged task config against the suite's: dataset paths the suite's
    # loader reads the same rows of, and a rewrite of a logged template into the suite's
    # spelling (the authors' hint field where the suite writes {{hint}}).
    suite_datasets: tuple[str, ...] = ()
    normalize_template: Callable[[str, str], str] = lambda task, template: template

    @property
    def main(self) -> Headline | None:
        return next((headline for headline in self.headlines if not headline.sanity), None)

    def task_label(self, task: str) -> str:
        return self.task_labels.get(task, task)

    def metric_label(self, metric: str) -> str:
        return self.metric_labels.get(metric, self.metric_names.get(metric, metric))

    def definition(self, task: str, metric: str) -> str:
        return self.definitions.get(f"{task}/{metric}") or self.definitions.get(metric, "")
