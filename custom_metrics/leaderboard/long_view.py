"""The "All metrics" view of a paper's tab: the long table (one line per row and task, every
metric), the paired differences, the links to the logged samples, notes and sources.

The long table is a DataTable (sort, search, a filter box under each column, a column
picker); its docs column holds whole numbers; its Note column says what the row rests
on (a derived number's inputs, a cut-short run, a task config that is not the suite's)
and links the row's samples.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.leaderboard_types import Column, Table
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard import charts, datatable
from custom_metrics.leaderboard.datatable import TableColumn, number_cell
from custom_metrics.leaderboard.differences import Difference, row_label
from custom_metrics.leaderboard.display import Paths
from custom_metrics.leaderboard.numbers import cell_text, format_number, p_digits, signed
from custom_metrics.leaderboard.pair_shards import FOLDER
from custom_metrics.leaderboard.samples import LoggedTask
from custom_metrics.leaderboard.tables import task_values

DOCS_TOOLTIP = (
    "Documents evaluated: the harness' effective count (IBE selection rows: test questions; "
    "published rows: the paper's)."
)


def score_table(table: Table, spec: PaperSpec, paths: Paths, sample_pages: dict[Path, str]) -> str:
    metrics: dict[str, list[Column]] = {}  # each metric (with its filter): the task columns that report it
    for column in table.columns:
        if column.kind != "samples":
            metrics.setdefault(column.key.split("/", 1)[1], []).append(column)
    tasks = list(dict.fromkeys(column.task for column in table.columns))
    columns = [
        TableColumn("Model", "The model (run rows: as named by --name, the sweep, or its checkpoint)."),
        TableColumn("Setting", "Prompt setting: shots, chat template; published rows: the paper's setting."),
        TableColumn("Task", "The task (its name in the suite: see the Note column and the notes below)."),
        TableColumn("Row", "run = your results; published = the paper's table."),
        TableColumn("Data", "Full data, or ⚠ how the run was cut short (--limit / --samples)."),
    ]
    for key, group in metrics.items():
        metric, _, suffix = key.partition("[")
        title = spec.board.metric_label(metric) + (f" [{suffix}" if suffix else "")
        tooltip = next(filter(None, (spec.board.definition(c.task, metric) for c in group)), "")
        columns.append(TableColumn(title, tooltip or f"{metric} as the harness reports it.", kind="number"))
    columns.append(TableColumn("docs", DOCS_TOOLTIP, kind="number"))
    columns.append(TableColumn("Samples", "The logged samples behind this line.", kind="link"))
    columns.append(TableColumn("Note", "What a reader should know about this line: what it rests on."))
    lines, classes = [], []
    for task in tasks:
        for row in table.rows:
            values = {key.split("/", 1)[1]: cell for key, cell in row.cells.items() if key.startswith(f"{task}/")}
            if not values or all(name == "#samples" for name in values):
                continue
            subset = row.subsets.get(task)
            data = "published" if row.kind == "published" else f"⚠ {subset}" if subset else "all docs"
            line: list = [row.model, row.setting, spec.board.task_label(task), row.kind, data]
            for key in metrics:
                cell = values.get(key)
                line.append(number_cell(None) if cell is None else number_cell(cell.value, cell_text(cell)))
            docs = values.get("#samples")
            line.append(
                number_cell(None) if docs is None else number_cell(docs.value, format_number(docs.value, "samples"))
            )
            page = sample_pages.get(row.samples[task]) if task in row.samples else None
            line.append(["samples", f"samples/{page}"] if page else None)
            line.append(_note(spec, row, task, values, paths))
            lines.append(line)
            classes.append("published" if row.kind == "published" else "limited" if subset else "")
    return datatable.datatable(
        f"table-{table.key}", columns, lines, page_length=50, row_classes=classes, columns_button=True
    )


def _note(spec: PaperSpec, row, task: str, values: dict, paths: Paths) -> str:
    notes = [spec.board.remark(task, {name: cell.value for name, cell in task_values(row, task).items()})]
    notes += [f"{name}: {cell.basis}" for name, cell in values.items() if cell.basis]
    if row.config_differences.get(task):
        notes.append(f"⚑ not this suite's task config: {row.config_differences[task]}")
    return paths.text("; ".join(note for note in dict.fromkeys(notes) if note))


def differences_block(
    key: str, spec: PaperSpec, differences: list[Difference], pair_rows: Sequence[str], paths: Paths
) -> str:
    """The paired tests: a run's comparisons within itself as a table, the tests between two
    runs through a picker of two rows (``pair_shards``: one file per row, loaded when picked),
    and the forest chart of the smallest p."""
    within = [d for d in differences if d.kind == "same run"]
    between = len(differences) - len(within)
    intro = (
        "<h3>Paired differences</h3><p>Where two runs, or two settings of one run, logged samples of the "
        "same documents: the difference A − B over those documents, McNemar's exact test for 0/1 outcomes "
        "(its 95% interval: the conditional Clopper-Pearson one), else a paired bootstrap over documents; "
        "p &lt; 0.05 exactly when the interval excludes 0. Significant: Holm-adjusted p &lt; 0.05 within the "
        "test's family (every test of the same two rows, or of one run within itself; named in the Family "
        f"column), never over the {len(differences)} test(s) of the tab together.</p>"
    )
    if not differences:
        return intro + "<p><em>None here: no two runs or settings logged samples of the same documents.</em></p>"
    parts = [intro, _within_table(key, spec, within), _pair_picker(key, between, pair_rows)]
    figure = charts.difference_chart(differences, spec, paths)
    if figure is not None:  # a labelled figure whose plot ``leaderboard.js`` draws
        shown = min(len(differences), charts.FOREST_SHOWN)
        title = f"Paired differences A − B with their 95% intervals ({shown} of {len(differences)}, smallest p first)"
        parts.append(
            f'<figure class="chart"><figcaption>{html.escape(title)}</figcaption><div class="plot" id="forest-{key}">'
            f'</div><script type="application/json" class="chart-data" data-for="forest-{key}">'
            f"{datatable.safe_json(figure)}</script></figure>"
        )
    return "".join(parts)


def _within_table(key: str, spec: PaperSpec, within: Sequence[Difference]) -> str:
    """Each run's comparisons within itself (the paper's own, e.g. GEESE's effectiveness): a
    few per run, so the table grows with the runs."""
    if not within:
        return "<h4>Within a run</h4><p><em>None: no run logged both tasks of one of the paper's comparisons.</em></p>"
    columns = [
        TableColumn("Comparison", "What is compared (A − B), naming the model."),
        TableColumn("Task"),
        TableColumn("Metric", "The per-document outcome compared."),
        TableColumn("docs", "Documents both sides logged (matched by document id).", kind="number"),
        TableColumn("mean A", kind="number"),
        TableColumn("mean B", kind="number"),
        TableColumn("A − B", "Mean of the per-document differences.", kind="number"),
        TableColumn("95% CI", "From the test's own procedure: it excludes 0 exactly when p < 0.05."),
        TableColumn("Test", "McNemar (exact) for 0/1 outcomes, else the paired bootstrap."),
        TableColumn("p", "The test's two-sided p-value.", kind="number"),
        TableColumn("p (Holm)", "Holm-adjusted within the run's own comparisons.", kind="number"),
        TableColumn("Family", "The tests adjusted together: one run's comparisons within itself."),
        TableColumn("Significant", "Holm-adjusted p < 0.05."),
    ]
    lines = [
        [
            d.label,
            spec.board.task_label(d.task),
            spec.board.metric_label(d.metric),
            d.result.n,
            number_cell(d.result.mean_a),
            number_cell(d.result.mean_b),
            number_cell(d.result.difference, signed(d.result.difference)),
            d.result.interval_text,
            d.result.test,
            number_cell(d.result.p_value, p_digits(d.result.p_value)),
            number_cell(d.result.p_adjusted, p_digits(d.result.p_adjusted)),
            f"{d.result.family_name} ({d.result.family})",
            "yes ✱" if d.result.significant else "no",
        ]
        for d in within
    ]
    classes = ["significant" if d.result.significant else "" for d in within]
    table = datatable.datatable(f"differences-{key}", columns, lines, page_length=25, row_classes=classes)
    return "<h4>Within a run</h4>" + table


def _pair_picker(key: str, count: int, rows: Sequence[str]) -> str:
    """Two row menus; the tests of the picked pair are drawn from the earlier row's file."""
    if not rows:
        return "<h4>Two runs</h4><p><em>None: no two rows logged samples of the same documents.</em></p>"
    options = "".join(f'<option value="{i}">{html.escape(label)}</option>' for i, label in enumerate(rows))
    return (
        f"<h4>Two runs</h4><p>{count} test(s) between {len(rows)} rows, each pair of rows its own Holm family. "
        "Pick two rows: their tests on every task and outcome both logged (A − B; picking them the other way "
        f"round swaps the sides). The differences CSV lists them all when built with --all-pairs.</p>"
        f'<div class="pair-picker" data-key="{html.escape(key)}" '
        f'data-src="panels/{html.escape(FOLDER.format(key=key))}/">'
        f'<label>A <select class="pair-a">{options}</select></label> '
        f'<label>B <select class="pair-b">{options}</select></label>'
        '<div class="pair-table" aria-live="polite"></div></div>'
    )


def sample_links(logged: Sequence[LoggedTask], pages: dict[Path, str]) -> str:
    parts = ["<h3>Logged samples</h3>"]
    if not logged:
        return parts[0] + "<p><em>No samples file beside these results (run lm_eval with --log_samples).</em></p>"
    parts.append("<ul class='samples'>")
    for task in sorted(logged, key=lambda t: (t.run.model, t.run.setting, t.run.task)):
        problems = f", {task.problems} unreadable" if task.problems else ""
        parts.append(
            f"<li>{html.escape(row_label(task.run.model, task.run.setting))}: "
            f'<a href="samples/{pages[task.path]}">{html.escape(task.spec.board.task_label(task.run.task))}</a> '
            f"({len(task.rows)} doc{'' if len(task.rows) == 1 else 's'}{problems})</li>"
        )
    parts.append("</ul>")
    return "\n".join(parts)


def notes_and_sources(table: Table, paths: Paths) -> str:
    parts = ["<details><summary>Notes and sources</summary>"]
    if table.notes:
        parts.append("<ul>" + "".join(f"<li>{html.escape(paths.text(note))}</li>" for note in table.notes) + "</ul>")
    parts.append(
        "<ul>"
        + "".join(
            f"<li>{html.escape(row_label(row.model, row.setting))} ({row.kind}): "
            f"{html.escape('; '.join(paths.show(source) for source in row.sources))}</li>"
            for row in table.rows
        )
        + "</ul></details>"
    )
    return "\n".join(parts)
