"""Per-paper tables of models x metrics, assembled from task runs and published rows.

Choices a reader must know about, stated in every rendered table's notes:
- one row per model; when a model has several runs of a task, the newest is used and
  the others are listed;
- ± on run rows is the harness' stderr; on published rows it is what the paper printed
  (GEESE: stderr; RULE: std over the five test splits);
- GEESE explanation effectiveness = acc(task with hint) - acc(geese_noexp) of the same
  model, computed only when both runs exist (no stderr: the two accuracies are paired
  on the same documents, so their stderrs cannot simply be combined);
- runs made with ``--limit`` are flagged: they are not comparable with full-data rows.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Sequence

from custom_metrics.harness_results import Score, TaskRun
from custom_metrics.published import IBE_METHODS, RULE_METRICS, PublishedRow, published_rows


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


@dataclass(frozen=True)
class PaperSpec:
    key: str
    title: str
    pattern: str  # task names of the paper
    task_order: tuple[str, ...]
    metric_order: tuple[str, ...]
    chart_metrics: tuple[str, ...]
    pm_note: str
    metric_names: dict[str, str] = field(default_factory=dict)  # the paper's name, for labels


GEESE_BASELINE = "geese_noexp"
PAPERS = (
    PaperSpec(
        "geese", "GEESE: explanation effectiveness on e-RTE-3-it", r"geese(_|$)",
        ("geese_noexp", "geese_dummy", "geese_human", "geese_llama3", "geese_selfexp", "geese",
         "geese_generate_whyexp", "geese_generate_whynot", "geese_generate_implicit"),
        ("acc", "effectiveness", "f1_macro", "acc_yes", "acc_no", "acc_unknown",
         "words", "masked_terms", "empty"),
        ("acc", "effectiveness"),
        "± on the published row: the stderr printed in GEESE Table 2.",
    ),
    PaperSpec(
        "rule", "RULE: rationale understanding (ReClor main questions and subquestions)",
        r"rule(_|$)", ("rule", "rule_main", "rule_sub"), (*RULE_METRICS, "none_acc", "acc"),
        RULE_METRICS,
        "± on published rows: the std over the five test splits printed in RULE Table 2 "
        "(0.00 where the paper ran once).",
    ),
    PaperSpec(
        "reg", "REG: reconciliatory explanations on ChaosNLI-MNLI contradictions", r"reg(_|$)",
        ("reg_chaos", "reg_judge_select"), ("coherence", "effectiveness", "success", "n", "acc"),
        ("coherence", "effectiveness", "success", "acc"),
        "Published rows print no ± (the paper's bootstrap intervals are in its Appendix J). "
        "Published reg_judge_select acc is REG Table 1 (judge accuracy, non-thinking mode).",
    ),
    PaperSpec(
        "ibe", "IBE-Eval: selecting the best explanation (COPA, e-CARE)", r"ibe(_|$)",
        ("ibe_judge_copa", "ibe_copa_selection", "ibe_copa", "ibe_judge_ecare", "ibe_ecare_selection", "ibe_ecare"),
        ("acc", *IBE_METHODS.values()),
        ("acc", "cum_uncertainty"),
        "Published rows print no ±. Their judge column is GPT 3.5 judging the row model's "
        "explanations; run rows' judge column is the ibe_judge_* task of that model. "
        "ibe_*_selection columns come from `ibe_postprocess report`; cum_uncertainty = all five criteria = IBE-Eval.",
        {**{key: name for name, key in IBE_METHODS.items()}, "cum_uncertainty": "+ Linguistic Uncertainty = IBE-Eval"},
    ),
)
OTHER = PaperSpec(
    "other", "Other tasks", r".*", (), ("acc", "acc_norm", "exact_match", "f1", "mcc", "bleu"),
    (), "",
)
FIRST_METRICS = ("acc", "acc_norm", "exact_match", "f1")


def paper_of(task: str) -> PaperSpec:
    return next((spec for spec in PAPERS if re.match(spec.pattern, task)), OTHER)


def newest_runs(runs: Sequence[TaskRun]) -> tuple[list[TaskRun], dict[str, list[str]]]:
    """One run per (model, task): the newest; notes per task say which files were passed over."""
    by_key: dict[tuple[str, str], list[TaskRun]] = {}
    for run in runs:
        by_key.setdefault((run.model, run.task), []).append(run)
    chosen: list[TaskRun] = []
    notes: dict[str, list[str]] = {}
    for (model, task), group in by_key.items():
        group.sort(key=lambda run: (run.timestamp, str(run.path)), reverse=True)
        chosen.append(group[0])
        if len(group) > 1:
            older = ", ".join(str(run.path) for run in group[1:])
            notes.setdefault(task, []).append(
                f"{model} has {len(group)} runs of {task}: using the newest, {group[0].path}; "
                f"ignoring {older}."
            )
    return chosen, notes


def column_key(task: str, metric: str, filter_name: str | None) -> str:
    suffix = f"[{filter_name}]" if filter_name not in (None, "none") else ""
    return f"{task}/{metric}{suffix}"


def build_tables(runs: Sequence[TaskRun]) -> list[Table]:
    """The four paper tables (always, for their published rows) and "other tasks" if any."""
    chosen, duplicate_notes = newest_runs(runs)
    tables = []
    for spec in (*PAPERS, OTHER):
        mine = [run for run in chosen if paper_of(run.task) is spec]
        if spec is OTHER and not mine:
            continue
        notes = [note for task in sorted({run.task for run in mine}) for note in duplicate_notes.get(task, [])]
        tables.append(_build_table(spec, mine, notes))
    return tables


def _build_table(spec: PaperSpec, runs: list[TaskRun], notes: list[str]) -> Table:
    published = published_rows(spec.key) if spec is not OTHER else []
    if spec.key == "rule":
        runs = rule_settings(runs, notes)
    rows = _run_rows(runs) + [_published_row(row) for row in published]
    columns = _columns(spec, runs, published)
    if spec.key == "geese":
        columns = _add_effectiveness(columns, rows, runs, notes)
    chart_keys = [c.key for c in columns if c.metric in spec.chart_metrics and c.kind != "samples"]
    if spec is OTHER:
        chart_keys = _first_metric_per_task(columns)
    notes += _limit_notes(runs)
    if spec.pm_note:
        notes.append(spec.pm_note)
    if runs:
        notes.append("± on run rows: the harness' stderr, where it reports one.")
    if any(c.value is not None and math.isnan(c.value) for r in rows for c in r.cells.values()):
        notes.append(
            "NaN: the harness (or ibe_postprocess) returned NaN, e.g. a per-label accuracy with "
            "no document of that label among the evaluated ones."
        )
    return Table(spec.key, spec.title, columns, rows, chart_keys, notes)


def _run_rows(runs: list[TaskRun]) -> list[Row]:
    rows: dict[str, Row] = {}
    for run in sorted(runs, key=lambda run: (run.model, run.task)):
        row = rows.setdefault(run.model, Row(run.model, "run", []))
        if str(run.path) not in row.sources:
            row.sources.append(str(run.path))
        for (metric, filter_name), score in run.scores.items():
            row.cells[column_key(run.task, metric, filter_name)] = Cell(score.value, score.stderr)
        if run.n_samples is not None:
            row.cells[f"{run.task}/#samples"] = Cell(float(run.n_samples))
    return list(rows.values())


def _published_row(row: PublishedRow) -> Row:
    cells = {
        key: Cell(float(cell.value), None if cell.pm is None else float(cell.pm),
                  _plain(cell.value), None if cell.pm is None else _plain(cell.pm))
        for key, cell in row.cells.items()
        if not key.endswith("/n")
    }
    cells.update(
        {f"{key[:-2]}/#samples": Cell(float(cell.value), text=_plain(cell.value))
         for key, cell in row.cells.items() if key.endswith("/n")}
    )
    return Row(row.model, "published", [row.source], cells)


def _plain(number: Decimal) -> str:
    return format(number, "f")


def _columns(spec: PaperSpec, runs: list[TaskRun], published: list[PublishedRow]) -> list[Column]:
    found: dict[str, Column] = {}
    for run in runs:
        for metric, filter_name in run.scores:
            key = column_key(run.task, metric, filter_name)
            suffix = f" [{filter_name}]" if filter_name not in (None, "none") else ""
            found.setdefault(key, Column(key, _label(spec, run.task, metric) + suffix, run.task, metric))
    for row in published:
        for key in row.cells:
            task, metric = key.split("/", 1)
            if metric != "n":
                found.setdefault(key, Column(key, _label(spec, task, metric), task, metric))
    tasks = {column.task for column in found.values()}
    for task in tasks:
        key = f"{task}/#samples"
        found[key] = Column(key, f"{task} #samples", task, "#samples", "samples")

    def rank(column: Column) -> tuple:
        task_rank = spec.task_order.index(column.task) if column.task in spec.task_order else len(spec.task_order)
        metric_rank = (
            len(spec.metric_order) + 1 if column.kind == "samples"
            else spec.metric_order.index(column.metric) if column.metric in spec.metric_order
            else len(spec.metric_order)
        )
        return (task_rank, column.task, metric_rank, column.key)

    return sorted(found.values(), key=rank)


def rule_settings(runs: list[TaskRun], notes: list[str]) -> list[TaskRun]:
    """RULE rows per setting, as in the paper's Table 2: zero-shot tasks as they are, and
    the five-shot split runs (``rule_5shot_split{k}``) as one ``rule`` row whose values are
    the mean and ± the population std over the splits (as ``custom_metrics.rule_fewshot``).
    """
    plain, splits = [], {}
    for run in runs:
        if re.fullmatch(r"rule_5shot_split\d+", run.task):
            splits.setdefault(run.model, []).append(run)
        else:
            plain.append(replace(run, model=f"{run.model} (zero-shot)"))
    for model, group in splits.items():
        group.sort(key=lambda run: run.task)
        metrics = sorted({key for run in group for key in run.scores})
        scores = {}
        for key in metrics:
            values = [run.scores[key].value for run in group if key in run.scores]
            finite = [v for v in values if v is not None and math.isfinite(v)]
            scores[key] = Score(statistics.fmean(finite) if finite else None,
                                statistics.pstdev(finite) if len(finite) > 1 else None)
        sizes = [run.n_samples for run in group]
        limits = {run.limit for run in group} - {None}
        label = f"{model} (five-shot on ReClor, {len(group)} of 5 splits)"
        plain.append(TaskRun(label, "rule", scores, sum(sizes) if None not in sizes else None,
                             max(limits) if limits else None, group[0].path,
                             max(run.timestamp for run in group), group[0].harness_version))
        notes.append(
            f"{label}: mean ± population std over {', '.join(f'{run.task} ({run.path})' for run in group)}; the "
            "paper's Consistency and MainQ-wise columns pool the five runs instead "
            "(`python -m custom_metrics.rule_fewshot --summarize-only` computes those)."
        )
    return plain


def _label(spec: PaperSpec, task: str, metric: str) -> str:
    name = spec.metric_names.get(metric)
    return f"{task} {metric} ({name})" if name and metric != "acc" else f"{task} {metric}"


def _add_effectiveness(
    columns: list[Column], rows: list[Row], runs: list[TaskRun], notes: list[str]
) -> list[Column]:
    """GEESE's explanation effectiveness: acc with a hint minus acc with none, same model."""
    baseline = f"{GEESE_BASELINE}/acc"
    hint_tasks = [
        c.task for c in columns
        if c.metric == "acc" and c.key == f"{c.task}/acc" and c.task not in (GEESE_BASELINE, "geese")
    ]
    samples = {(run.model, run.task): (run.n_samples, run.limit) for run in runs}
    derived = []
    for task in hint_tasks:
        key = f"{task}/effectiveness"
        derived.append(Column(key, f"{task} effectiveness (acc − {GEESE_BASELINE} acc)", task,
                              "effectiveness", "derived"))
        for row in rows:
            with_hint, without = row.cells.get(f"{task}/acc"), row.cells.get(baseline)
            if with_hint is None or without is None or with_hint.value is None or without.value is None:
                continue
            if row.kind == "published":
                exact = Decimal(with_hint.text) - Decimal(without.text)
                row.cells[key] = Cell(float(exact), text=_plain(exact))
                continue
            row.cells[key] = Cell(with_hint.value - without.value)
            ours, theirs = samples.get((row.model, task)), samples.get((row.model, GEESE_BASELINE))
            if ours != theirs:
                notes.append(
                    f"{row.model}: {task} effectiveness compares runs of different size "
                    f"(#samples, limit) {ours} vs {GEESE_BASELINE} {theirs}."
                )
    position = {c.key: i for i, c in enumerate(columns)}
    for column in derived:
        position[column.key] = position[f"{column.task}/acc"] + 0.5
    return sorted([*columns, *derived], key=lambda c: position[c.key])


def _first_metric_per_task(columns: list[Column]) -> list[str]:
    chosen: dict[str, str] = {}
    for metric in (*FIRST_METRICS, None):
        for column in columns:
            if column.kind == "metric" and column.task not in chosen and metric in (None, column.metric):
                chosen[column.task] = column.key
    return [key for key in (c.key for c in columns) if key in chosen.values()]


def _limit_notes(runs: list[TaskRun]) -> list[str]:
    limited: dict[str, list[str]] = {}
    for run in runs:
        if run.limit is not None:
            limited.setdefault(run.model, []).append(f"{run.task} (limit {run.limit:g}, #samples {run.n_samples})")
    return [
        f"{model} ran with --limit, not comparable with full-data rows: {', '.join(sorted(items))}."
        for model, items in sorted(limited.items())
    ]
