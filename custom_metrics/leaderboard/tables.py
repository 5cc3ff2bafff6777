"""Per-paper tables of models x metrics, assembled from task runs and published rows.

Choices a reader must know about, stated in every rendered table's notes:
- one row per model and setting (shots, chat template; a paper's own settings such as
  RULE's five-shot protocol); a run whose results file names no setting (an old harness,
  an IBE report) joins its model's row when that model has one setting;
- when a model has several runs of a task in one setting, the newest is used and the
  others are listed;
- runs of one model and setting made differently that would meet in one row are kept apart
  (``separate_batches``), so no row's numbers mix documents or harnesses;
- ± on run rows is the harness' stderr; on published rows it is what the paper printed;
- runs cut short with ``--limit`` or ``--samples`` are flagged: they are not comparable
  with full-data rows.
What is particular to a paper (its published rows, derived columns such as GEESE's
effectiveness, RULE's five-shot rows) comes from the paper's spec (``registry``).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from custom_metrics.common.leaderboard_types import Cell, Column, Row, Table
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.common.published import PublishedRow, plain
from custom_metrics.common.results import TaskRun
from custom_metrics.leaderboard.lineage import other_model, read_words
from custom_metrics.leaderboard.registry import OTHER, PAPERS, paper_of
from custom_metrics.leaderboard.task_configs import config_difference, paper_metrics, suite_configs

# The metric charted for a task of no paper: the first of these it reports.
FIRST_METRICS = ("acc", "acc_norm", "exact_match", "f1")
OTHER_METRICS = (*FIRST_METRICS, "mcc", "bleu")  # the column order of "Other tasks" (then by name)


@dataclass
class Chosen:
    """The run used per (model, setting, task), and what was passed over for it."""

    runs: list[TaskRun]
    notes: dict[str, list[str]]  # task -> notes naming the files passed over
    passed: dict[tuple[str, str], list[str]]  # (results file, task in it) of a chosen run -> older files


def _batch(run: TaskRun) -> tuple[str, str]:
    """How a run was made, as far as its numbers can differ by it: its documents (all, or cut
    short how) and its harness. A task config that is not the suite's is a task's own, flagged
    on it (``config_differences``), not a batch's."""
    if run.subset is None:
        documents = "full data"
    else:
        documents = f"--limit {run.limit:g}" if run.limit is not None else "part of the data"
    return documents, f"harness {run.harness_version}" if run.harness_version else "harness version not recorded"


def separate_batches(runs: Sequence[TaskRun]) -> list[TaskRun]:
    """Runs of one model and setting made differently, renamed apart where they would meet in
    one row: each batch's model name gets how it differs from the others (``org/m [--limit 24;
    harness version not recorded]``); ``model_id`` keeps the model, so each batch still meets
    the paper's row of its model."""
    shown = [_as_shown(run) for run in runs]
    only = only_settings(shown)
    groups: dict[tuple[str, str], list[tuple[TaskRun, str]]] = {}
    for original, run in zip(runs, shown):  # as ``run_rows`` makes rows
        groups.setdefault((run.model, run.setting or only.get(run.model, "")), []).append((original, run.task))
    renamed: dict[int, TaskRun] = {}
    for group in groups.values():
        batches: dict[tuple[str, str], set[str]] = {}
        for run, task in group:
            batches.setdefault(_batch(run), set()).add(task)
        if len(batches) < 2 or not _would_meet(list(batches.values())):
            continue
        differing = [i for i in range(2) if len({key[i] for key in batches}) > 1]
        for run, _ in group:
            words = "; ".join(part for i, part in enumerate(_batch(run)) if i in differing)
            renamed[id(run)] = replace(run, model=f"{run.model} [{words}]", model_id=run.model_id or run.model)
    return [renamed.get(id(run), run) for run in runs]


def _as_shown(run: TaskRun) -> TaskRun:
    """The run as its paper's ``adjust_runs`` hook shows it (REG's mode in the setting, the GEESE
    authors' task names read as ours): the row and task it will land in."""
    found = paper_of(run.task).board.adjust_runs([run], [])
    return found[0] if found else run


def _would_meet(batches: list[set[str]]) -> bool:
    """Whether tasks of different batches would share a row's numbers: one task in two batches,
    or a paper comparison's two tasks (GEESE effectiveness) in two."""
    for first, second in itertools.combinations(batches, 2):
        pairs = ({c.task, c.baseline} for task in first | second for c in paper_of(task).board.comparisons)
        if first & second or any(pair & first and pair & second for pair in pairs):
            return True
    return False


def newest_runs(runs: Sequence[TaskRun]) -> Chosen:
    """One run per (model, setting, task): the newest; notes per task say which files were passed over."""
    by_key: dict[tuple[str, str, str], list[TaskRun]] = {}
    for run in runs:
        by_key.setdefault((run.model, run.setting, run.task), []).append(run)
    chosen = Chosen([], {}, {})
    for (model, _, task), group in by_key.items():
        group.sort(key=lambda run: (run.timestamp, str(run.path)), reverse=True)
        chosen.runs.append(group[0])
        if len(group) > 1:
            older = ", ".join(str(run.path) for run in group[1:])
            chosen.notes.setdefault(task, []).append(
                f"{model} has {len(group)} runs of {task}: using the newest, {group[0].path}; ignoring {older}."
            )
            chosen.passed[(str(group[0].path), task)] = [str(run.path) for run in group[1:]]
    return chosen


def column_key(task: str, metric: str, filter_name: str | None) -> str:
    suffix = f"[{filter_name}]" if filter_name not in (None, "none") else ""
    return f"{task}/{metric}{suffix}"


def shown_filter(run: TaskRun, filter_name: str | None) -> str | None:
    """The filter a column names: none when the run's task has a single filter (REG's
    ``judged``, GEESE M1's ``anonymized``), so its columns line up with the papers' rows
    and with older layouts; the filter's name where one task reports several."""
    return filter_name if len({name for _, name in run.scores}) > 1 else None


def build_tables(runs: Sequence[TaskRun], papers: Sequence[str] = ()) -> list[Table]:
    """A table per paper with a run, or whose published rows were asked for (``papers``), and
    "other tasks" when a run is of no paper's task."""
    chosen = newest_runs(runs)
    tables = []
    for spec in (*PAPERS, OTHER):
        mine = [run for run in chosen.runs if paper_of(run.task) is spec]
        if not mine and spec.key not in papers:
            continue
        notes = [note for task in sorted({run.task for run in mine}) for note in chosen.notes.get(task, [])]
        tables.append(build_table(spec, mine, notes, chosen.passed))
    return tables


def build_table(
    spec: PaperSpec, runs: list[TaskRun], notes: list[str], passed: dict[tuple[str, str], list[str]]
) -> Table:
    published = spec.board.published()
    runs = spec.board.adjust_runs(runs, notes)
    rows = run_rows(runs, spec, passed) + [_published_row(row) for row in published]
    columns = _columns(spec, runs, published)
    columns = spec.board.derive(columns, rows, runs, notes)
    charted = {key.split("/", 1)[1] for headline in spec.board.headlines for key in headline.keys}
    chart_keys = [c.key for c in columns if c.metric in charted and c.kind != "samples"]
    if spec is OTHER:
        chart_keys = _first_metric_per_task(columns)
    notes += _subset_notes(runs)
    if spec.board.pm_note:
        notes.append(spec.board.pm_note)
    if runs:
        notes.append("± on run rows: the harness' stderr, where it reports one (none where it is 0 by construction).")
    notes += [
        f"{row.model}{f' ({row.setting})' if row.setting else ''}, {task}: not this suite's task config: {difference}."
        for row in rows
        for task, difference in sorted(row.config_differences.items())
    ]
    if any(c.value is not None and math.isnan(c.value) for r in rows for c in r.cells.values()):
        notes.append(
            "NaN: the harness (or ibe_postprocess) returned NaN, e.g. a per-label accuracy with "
            "no document of that label among the evaluated ones."
        )
    return Table(spec.key, spec.title, columns, rows, chart_keys, notes)


def only_settings(runs: Sequence[TaskRun]) -> dict[str, str]:
    """Each model's setting where its runs name exactly one: a run naming none joins its row."""
    settings: dict[str, set[str]] = {}
    for run in runs:
        if run.setting:
            settings.setdefault(run.model, set()).add(run.setting)
    return {model: next(iter(found)) for model, found in settings.items() if len(found) == 1}


def run_rows(runs: list[TaskRun], spec: PaperSpec, passed: dict[tuple[str, str], list[str]]) -> list[Row]:
    """One row per (model, setting); a run without a setting joins its model's only row. A row
    also keeps what a reader must be told of its files (``wording.row_flags``)."""
    only = only_settings(runs)
    rows: dict[tuple[str, str], Row] = {}
    how: dict[tuple[str, str], list[TaskRun]] = {}
    for run in sorted(runs, key=lambda run: (run.model, run.setting, run.task)):
        setting = run.setting or only.get(run.model, "")
        row = rows.setdefault((run.model, setting), Row(run.model, "run", [], setting=setting, model_id=run.model_id))
        how.setdefault((run.model, setting), []).append(run)
        row.passed_over += passed.get((str(run.path), run.source_task or run.task), [])
        source = str(run.path)
        if source not in row.sources:
            row.sources.append(source)
        for (metric, filter_name), score in run.scores.items():
            key = column_key(run.task, metric, shown_filter(run, filter_name))
            se = None if run.derived else score.stderr  # a derived run's ± is a spread
            basis = run.derived or (read_words(run.lineage) if run.lineage else "")
            row.cells[key] = Cell(score.value, score.stderr, source=source, se=se, basis=basis)
        if run.n_samples is not None:
            row.cells[f"{run.task}/#samples"] = Cell(float(run.n_samples), text=str(run.n_samples), source=source)
        if run.subset:
            row.subsets[run.task] = run.subset
        if run.samples_file is not None:
            row.samples[run.task] = run.samples_file
        # Checked as the suite's task of that name: the file's own (REG's reg_chaos_thinking read
        # as reg_chaos) where the suite has it, else the one it was read as (the GEESE authors' tasks).
        checked = run.source_task if run.source_task in suite_configs() else run.task
        difference = config_difference(spec, checked, run.task_config, run.task_version)
        if difference:
            row.config_differences[run.task] = difference
    for key, row in rows.items():
        row.mixed = mixed_files(how[key])
    return list(rows.values())


def task_values(row: Row, task: str) -> dict[str, Cell]:
    """A row's cells of one task by metric name (a filter suffix such as ``[judged]`` dropped)."""
    values: dict[str, Cell] = {}
    for key, cell in row.cells.items():
        if key.startswith(f"{task}/"):
            values.setdefault(key.split("/", 1)[1].split("[", 1)[0], cell)
    return values


def _published_row(row: PublishedRow) -> Row:
    cells = {
        key: Cell(
            float(cell.value),
            None if cell.pm is None else float(cell.pm),
            plain(cell.value),
            None if cell.pm is None else plain(cell.pm),
            source=row.source,
            se=float(cell.pm) if row.pm_is_se and cell.pm is not None else None,
            n=cell.n,
        )
        for key, cell in row.cells.items()
        if not key.endswith("/n")
    }
    cells |= {  # the items behind the numbers, after them all (the JSON export keeps this order)
        f"{key[:-2]}/#samples": Cell(float(cell.value), text=plain(cell.value), source=row.source)
        for key, cell in row.cells.items()
        if key.endswith("/n")
    }
    return Row(row.model, "published", [row.source], cells, setting=row.setting, origin=row.origin)


def _columns(spec: PaperSpec, runs: list[TaskRun], published: list[PublishedRow]) -> list[Column]:
    found: dict[str, Column] = {}
    for run in runs:
        for metric, raw_filter in run.scores:
            filter_name = shown_filter(run, raw_filter)
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

    task_order, metric_order = (), OTHER_METRICS
    if spec is not OTHER:  # tasks in the spec's order, else file order; metrics in metric_list order
        tasks = paper_metrics(spec)
        task_order = spec.board.task_order or tuple(tasks)
        metric_order = (*(m for listed in tasks.values() for m in listed), *spec.board.derived_metrics)

    def rank(column: Column) -> tuple:  # by task; within it, by metric, the #samples column last
        task_rank = task_order.index(column.task) if column.task in task_order else len(task_order)
        metric_rank = metric_order.index(column.metric) if column.metric in metric_order else len(metric_order)
        return (task_rank, column.task, column.kind == "samples", metric_rank, column.key)

    return sorted(found.values(), key=rank)


def _label(spec: PaperSpec, task: str, metric: str) -> str:
    name = spec.board.metric_names.get(metric)
    return f"{task} {metric} ({name})" if name and metric != "acc" else f"{task} {metric}"


def _first_metric_per_task(columns: list[Column]) -> list[str]:
    chosen: dict[str, str] = {}
    for metric in (*FIRST_METRICS, None):
        for column in columns:
            if column.kind == "metric" and column.task not in chosen and metric in (None, column.metric):
                chosen[column.task] = column.key
    return [key for key in (c.key for c in columns) if key in chosen.values()]


def _subset_notes(runs: list[TaskRun]) -> list[str]:
    cut: dict[str, list[str]] = {}
    for run in runs:
        if run.subset:
            cut.setdefault(run.model, []).append(f"{run.task} ({run.subset})")
    return [
        f"{model} ran on part of the data (--limit or --samples), not comparable with full-data rows: "
        f"{', '.join(sorted(items))}."
        for model, items in sorted(cut.items())
    ]


# What the harness records of how it ran, compared between the results files of one row.
_HOW = (("batch size", "batch_size"), ("harness", "harness_version"))


def mixed_files(runs: Sequence[TaskRun]) -> list[str]:
    """How the results files behind one row differ, in words: one entry per setting that
    differs, naming each value's tasks (``batch size 24 (geese_noexp); 1 (geese_human)``);
    model args by the arguments that differ; a task that read another model's outputs."""
    found = [_differing(label, [(getattr(run, name) or "", run.task) for run in runs]) for label, name in _HOW]
    found += [f"{run.task} read a run of another model, {model}" for run in runs if (model := other_model(run))]
    arguments = [(_arguments(run.model_args), run.task) for run in runs]
    for name in sorted({key for args, _ in arguments for key in args}):
        found.append(_differing(f"model arg {name}", [(args.get(name, ""), task) for args, task in arguments]))
    return [entry for entry in found if entry]


def _differing(label: str, values: Sequence[tuple[str, str]]) -> str:
    """Two or more recorded values of one setting ("" is not recorded: an IBE report, an old layout)."""
    tasks: dict[str, set[str]] = {}
    for value, task in values:
        if value:
            tasks.setdefault(value, set()).add(task)
    if len(tasks) < 2:
        return ""
    return f"{label} " + "; ".join(f"{value} ({', '.join(sorted(names))})" for value, names in tasks.items())


def _arguments(text: str) -> dict[str, str]:
    try:
        args = json.loads(text) if text else {}
    except ValueError:
        return {"": text}
    return {str(k): str(v) for k, v in args.items()} if isinstance(args, dict) else {"": text}
