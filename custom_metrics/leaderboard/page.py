"""The leaderboard as one self-contained folder: opens from disk, needs no network, zips.

::

    index.html            one tab per paper: table, chart, paired differences, sample links
    samples/index.html    every run and task whose samples were logged
    samples/<run-task>.html  the logged samples of one task of one run (loaded per task)
    assets/               DataTables (itables' offline bundle), plotly.js, the page's CSS/JS

Every text that comes from a file (model names, paths, generations) is HTML-escaped
here or drawn as text by the tables; the tests open the pages in Chromium with hostile
names to keep it that way.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from custom_metrics.common.leaderboard_types import Column, PaperSpec, Table
from custom_metrics.common.results import Problem
from custom_metrics.leaderboard import charts, datatable
from custom_metrics.leaderboard.datatable import TableColumn, number_cell
from custom_metrics.leaderboard.differences import Difference, row_label
from custom_metrics.leaderboard.render import cell_text, format_number
from custom_metrics.leaderboard.samples import PROBLEM, PROMPT, LoggedTask
from custom_metrics.leaderboard.tables import task_values

ASSETS = Path(__file__).with_name("assets")
DOCS_TOOLTIP = (
    "Documents evaluated: the harness' effective count (IBE selection rows: test questions; "
    "published rows: the paper's)."
)


def write_site(
    out: Path,
    tables: Sequence[Table],
    specs: Sequence[PaperSpec],
    problems: Sequence[Problem],
    logged: Sequence[LoggedTask],
    differences: dict[str, list[Difference]],
    inputs: Sequence[Path],
) -> list[Path]:
    """Write the folder; returns the pages written (index first, then the sample viewer)."""
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    (assets / datatable.ASSET).write_text(datatable.loader_script(), encoding="utf-8")
    (assets / charts.ASSET).write_text(charts.plotly_script(), encoding="utf-8")
    for name in ("leaderboard.css", "leaderboard.js"):
        (assets / name).write_text((ASSETS / name).read_text(encoding="utf-8"), encoding="utf-8")
    samples_dir = out / "samples"
    samples_dir.mkdir(exist_ok=True)
    for stale in samples_dir.glob("*.html"):
        stale.unlink()  # pages of runs no longer given must not linger
    pages = _sample_pages(logged)
    for task, name in pages.items():
        (samples_dir / name).write_text(_sample_page(task), encoding="utf-8")
    (samples_dir / "index.html").write_text(_samples_index(logged, pages), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_index(tables, specs, problems, logged, pages, differences, inputs), encoding="utf-8")
    return [index, samples_dir / "index.html", *(samples_dir / name for name in pages.values())]


def _head(title: str, prefix: str, plotly: bool, style: str = "") -> str:
    scripts = [f'<script src="{prefix}assets/leaderboard.js"></script>']
    scripts.append(f'<script src="{prefix}assets/{datatable.ASSET}"></script>')
    if plotly:
        scripts.append(f'<script src="{prefix}assets/{charts.ASSET}"></script>')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>"
        f'<link rel="stylesheet" href="{prefix}assets/leaderboard.css">'
        + (f"<style>{style}</style>" if style else "")
        + "".join(scripts)
        + "</head>"
    )


def _index(
    tables: Sequence[Table],
    specs: Sequence[PaperSpec],
    problems: Sequence[Problem],
    logged: Sequence[LoggedTask],
    pages: dict[LoggedTask, str],
    differences: dict[str, list[Difference]],
    inputs: Sequence[Path],
) -> str:
    runs = sorted({(row.model, row.setting) for table in tables for row in table.rows if row.kind == "run"})
    # The checked tab's panel shows from the first paint: a chart drawn in a hidden panel
    # gets plotly's default width.
    shown = ", ".join(f"#tab-{table.key}:checked ~ #panel-{table.key}" for table in tables)
    parts = [
        _head("explain-eval leaderboard", "", plotly=True, style=f"{shown} {{ display: block; }}"),
        "<body><header><h1>explain-eval leaderboard</h1>",
        f"<p>{len(runs)} model setting(s) from {html.escape(', '.join(map(str, inputs)))}; written "
        f"{datetime.now().strftime('%Y-%m-%d %H:%M')}. Published rows come from the papers' tables. "
        f'<a href="samples/index.html">Sample viewer</a> ({len(logged)} logged task run(s)).</p></header>',
    ]
    if problems:
        parts.append('<div class="problems"><h2>Skipped files</h2><ul>')
        parts += [f"<li><code>{html.escape(str(p.path))}</code>: {html.escape(p.reason)}</li>" for p in problems]
        parts.append("</ul><p>Everything else was read; the tables below leave these files out.</p></div>")
    parts.append('<div class="tabs">')
    for i, table in enumerate(tables):
        checked = " checked" if i == 0 else ""
        parts.append(
            f'<input type="radio" name="tabs" id="tab-{table.key}"{checked}>'
            f'<label for="tab-{table.key}">{html.escape(_short_title(table))}</label>'
        )
    for table, spec in zip(tables, specs):
        mine = [task for task in logged if task.spec is spec]
        parts.append(_panel(table, spec, mine, pages, differences.get(table.key, [])))
    parts.append("</div>")
    parts.append("<script>explainEvalTabs();</script></body></html>")
    return "\n".join(parts)


def _short_title(table: Table) -> str:
    return table.title.split(":", 1)[0]


def _panel(
    table: Table, spec: PaperSpec, logged: list[LoggedTask], pages: dict[LoggedTask, str], differences: list[Difference]
) -> str:
    runs = sum(row.kind == "run" for row in table.rows)
    parts = [
        f'<section class="panel" id="panel-{table.key}"><h2>{html.escape(table.title)}</h2>',
        f'<p class="lead">{runs} run row(s) and {len(table.rows) - runs} published row(s). Sort by clicking a '
        "column header, filter with the search box or the boxes under the columns; hover a header for the "
        "metric's definition. Rows marked ⚠ ran on part of the data.</p>",
        _score_table(table, spec),
    ]
    chart = charts.score_chart(table, spec, f"chart-{table.key}")
    if chart:
        parts.append(f'<div class="chart">{chart}</div>')
    parts.append(_differences(table.key, spec, differences))
    parts.append(_sample_links(logged, pages))
    parts.append("<details><summary>Notes and sources</summary>")
    if table.notes:
        parts.append("<ul>" + "".join(f"<li>{html.escape(note)}</li>" for note in table.notes) + "</ul>")
    parts.append(
        "<ul>"
        + "".join(
            f"<li>{html.escape(row_label(row.model, row.setting))} ({row.kind}): "
            f"{html.escape('; '.join(row.sources))}</li>"
            for row in table.rows
        )
        + "</ul></details></section>"
    )
    return "\n".join(parts)


def _metric_columns(table: Table) -> list[tuple[str, list[Column]]]:
    """The table's metrics (with filter), each with the task columns that report it."""
    metrics: dict[str, list[Column]] = {}
    for column in table.columns:
        if column.kind != "samples":
            metrics.setdefault(column.key.split("/", 1)[1], []).append(column)
    return list(metrics.items())


def _score_table(table: Table, spec: PaperSpec) -> str:
    metrics = _metric_columns(table)
    tasks = list(dict.fromkeys(column.task for column in table.columns))
    columns = [
        TableColumn("Model", "The model (run rows: as named by --name, the sweep, or its checkpoint)."),
        TableColumn("Setting", "Prompt setting: shots, chat template; published rows: the paper's setting."),
        TableColumn("Task", "The task (hover the tab's notes for its source)."),
        TableColumn("Row", "run = your results; published = the paper's table."),
        TableColumn("Data", "Full data, or ⚠ how the run was cut short (--limit / --samples)."),
    ]
    for key, group in metrics:
        metric, _, suffix = key.partition("[")
        title = spec.metric_label(metric) + (f" [{suffix}" if suffix else "")
        tooltip = next((spec.definition(c.task, metric) for c in group if spec.definition(c.task, metric)), "")
        columns.append(TableColumn(title, tooltip or f"{metric} as the harness reports it.", kind="number"))
    columns.append(TableColumn("docs", DOCS_TOOLTIP, kind="number"))
    columns.append(TableColumn("Note", "What a reader should know about this row."))
    lines, classes = [], []
    for task in tasks:
        for row in table.rows:
            if not any(key.startswith(f"{task}/") for key in row.cells):
                continue
            values = {key.split("/", 1)[1]: cell for key, cell in row.cells.items() if key.startswith(f"{task}/")}
            if all(name == "#samples" for name in values):
                continue
            subset = row.subsets.get(task)
            data = "published" if row.kind == "published" else f"⚠ {subset}" if subset else "all docs"
            line: list = [row.model, row.setting, spec.task_label(task), row.kind, data]
            for key, _ in metrics:
                cell = values.get(key)
                line.append(number_cell(None) if cell is None else number_cell(cell.value, cell_text(cell)))
            docs = values.get("#samples")
            line.append(number_cell(None) if docs is None else number_cell(docs.value, docs.text))
            named = {name: cell.value for name, cell in task_values(row, task).items()}
            line.append(spec.remark(task, named) if spec.remark else "")
            lines.append(line)
            classes.append("published" if row.kind == "published" else "limited" if subset else "")
    return datatable.datatable(f"table-{table.key}", columns, lines, page_length=50, row_classes=classes)


def _differences(key: str, spec: PaperSpec, differences: list[Difference]) -> str:
    intro = (
        "<h3>Paired differences</h3><p>Where two runs, or two settings of one run, logged samples of the "
        "same documents: the difference A − B over those documents, a 95% interval from a paired bootstrap "
        "over documents, and for 0/1 outcomes McNemar's exact test on the documents that changed "
        "(significant: p &lt; 0.05; otherwise when the interval excludes 0).</p>"
    )
    if not differences:
        return intro + "<p><em>None here: no two runs or settings logged samples of the same documents.</em></p>"
    columns = [
        TableColumn("Comparison", "What is compared (A − B)."),
        TableColumn("Task"),
        TableColumn("Metric", "The per-document outcome compared."),
        TableColumn("A", "The left side."),
        TableColumn("B", "The right side."),
        TableColumn("docs", "Documents both sides logged (matched by document id).", kind="number"),
        TableColumn("mean A", kind="number"),
        TableColumn("mean B", kind="number"),
        TableColumn("A − B", "Mean of the per-document differences.", kind="number"),
        TableColumn("95% CI", "Paired bootstrap over documents (percentile, 9,999 resamples, seed 0)."),
        TableColumn("Test", "McNemar (exact) for 0/1 outcomes, else the bootstrap interval."),
        TableColumn("p", "McNemar's exact p-value.", kind="number"),
        TableColumn("Significant", "p < 0.05, or the interval excludes 0."),
    ]
    lines = []
    for difference in differences:
        result = difference.result
        interval = f"[{format_number(result.low)}, {format_number(result.high)}]" if result.low is not None else "n/a"
        lines.append(
            [
                difference.label,
                spec.task_label(difference.task),
                spec.metric_label(difference.metric),
                difference.a,
                difference.b,
                result.n,
                number_cell(result.mean_a),
                number_cell(result.mean_b),
                number_cell(result.difference, f"{result.difference:+.4f}"),
                interval,
                result.test,
                number_cell(result.p_value, f"{result.p_value:.3g}" if result.p_value is not None else ""),
                "yes ✱" if result.significant else "no",
            ]
        )
    classes = ["significant" if d.result.significant else "" for d in differences]
    table = datatable.datatable(f"differences-{key}", columns, lines, page_length=25, row_classes=classes)
    chart = charts.difference_chart(differences, spec, f"forest-{key}")
    return intro + table + (f'<div class="chart">{chart}</div>' if chart else "")


def _sample_links(logged: list[LoggedTask], pages: dict[LoggedTask, str]) -> str:
    parts = ["<h3>Logged samples</h3>"]
    if not logged:
        return parts[0] + "<p><em>No samples file beside these results (run lm_eval with --log_samples).</em></p>"
    parts.append("<ul class='samples'>")
    for task in sorted(logged, key=lambda t: (t.run.model, t.run.setting, t.run.task)):
        problems = f", {task.problems} unreadable" if task.problems else ""
        parts.append(
            f"<li>{html.escape(row_label(task.run.model, task.run.setting))}: "
            f'<a href="samples/{pages[task]}">{html.escape(task.spec.task_label(task.run.task))}</a> '
            f"({len(task.rows)} doc{'' if len(task.rows) == 1 else 's'}{problems})</li>"
        )
    parts.append("</ul>")
    return "\n".join(parts)


def _sample_pages(logged: Sequence[LoggedTask]) -> dict[LoggedTask, str]:
    pages: dict[LoggedTask, str] = {}
    used: set[str] = set()
    for task in logged:
        stem = _slug(f"{task.spec.key}-{task.run.model}-{task.run.setting}-{task.run.task}")[:120]
        name, counter = f"{stem}.html", 1
        while name in used:
            counter += 1
            name = f"{stem}-{counter}.html"
        used.add(name)
        pages[task] = name
    return pages


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.") or "run"


def _sample_page(task: LoggedTask) -> str:
    run = task.run
    title = f"{task.spec.task_label(run.task)} — {row_label(run.model, run.setting)}"
    names = task.columns
    kinds = {name: _kind([row.get(name) for row in task.rows]) for name in names}
    columns = [
        TableColumn(
            name,
            "The prompt the model saw (shown with the Columns button)." if name == PROMPT else "",
            kind=kinds[name],
            visible=name != PROMPT,
        )
        for name in names
    ]
    facets = [names.index(name) for name in task.facets]
    rows = [[row.get(name) for name in names] for row in task.rows]
    classes = ["problem" if row.get(PROBLEM) else "" for row in task.rows]
    meta = [
        ("task", f"{run.task} ({task.spec.title})"),
        ("model", row_label(run.model, run.setting)),
        ("results file", str(run.path)),
        ("samples file", str(task.path)),
        ("documents", f"{len(task.rows)}" + (f" (⚠ {run.subset})" if run.subset else "")),
    ]
    if task.problems:
        meta.append(("unreadable lines", f"{task.problems} (shown as rows with a problem)"))
    return "\n".join(
        [
            _head(f"Samples: {title}", "../", plotly=False),
            f"<body><header><h1>Samples: {html.escape(title)}</h1>",
            f'<p><a href="../index.html#{task.spec.key}">← leaderboard</a> · '
            '<a href="index.html">all logged runs</a></p></header>',
            "<dl class='meta'>"
            + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in meta)
            + "</dl>",
            "<p class='lead'>The search box matches every column, the hidden prompt included; click values in "
            "the panes to filter (e.g. coherent: no, flagged: yes); the Columns button shows the prompt.</p>",
            datatable.datatable("samples", columns, rows, page_length=10, facets=facets, row_classes=classes),
            "</body></html>",
        ]
    )


def _kind(values: list) -> str:
    """A column sorts as numbers when every value it holds is one (cells cannot be booleans)."""
    present = [value for value in values if value is not None]
    return "number" if present and all(isinstance(value, (int, float)) for value in present) else "text"


def _samples_index(logged: Sequence[LoggedTask], pages: dict[LoggedTask, str]) -> str:
    parts = [
        _head("explain-eval sample viewer", "../", plotly=False),
        "<body><header><h1>Sample viewer</h1>",
        '<p><a href="../index.html">← leaderboard</a>. One page per logged task run, loaded on its own so '
        "large runs stay usable.</p></header>",
    ]
    if not logged:
        parts.append("<p><em>No samples files were found beside the results files (lm_eval --log_samples).</em></p>")
    parts.append(
        "<table class='plain'><thead><tr><th>paper</th><th>model</th><th>task</th><th>docs</th>"
        "<th>data</th></tr></thead><tbody>"
    )
    for task in sorted(logged, key=lambda t: (t.spec.key, t.run.model, t.run.setting, t.run.task)):
        parts.append(
            f"<tr><td>{html.escape(task.spec.key.upper())}</td>"
            f"<td>{html.escape(row_label(task.run.model, task.run.setting))}</td>"
            f'<td><a href="{pages[task]}">{html.escape(task.spec.task_label(task.run.task))}</a> '
            f"<code>{html.escape(task.run.task)}</code></td><td>{len(task.rows)}</td>"
            f"<td>{html.escape('⚠ ' + task.run.subset if task.run.subset else 'all docs')}</td></tr>"
        )
    parts.append("</tbody></table></body></html>")
    return "\n".join(parts)
