"""The leaderboard as one self-contained folder: opens from disk, needs no network, zips.

Its files, and what loads when: docs/comparing-models.md (the folder's table) and
docs/leaderboard.md ("Load"). What grows with the runs squared (every pair's paired test) is in
no page: it is in one file per row (``pair_shards``), loaded when its row is picked; the index
holds the summary table and the long view a row per run and task (``bench/leaderboard_scale.py``
measures them at 10 to 300 runs). Every text that comes from a file (model names, paths,
generations) is HTML-escaped here or drawn as text by the tables; the tests open the pages in
Chromium with hostile names to keep it that way. No page shows a machine's absolute path
(``display``). Scripts are deferred, so the first paint waits for none of them. The URL's
fragment holds the state: ``#rule&sort=h1:asc&q=llama&limited=shown&view=long&cols=h2.h3&lsort=5:asc``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from custom_metrics.common.leaderboard_types import Table
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.common.results import Problem
from custom_metrics.leaderboard import charts, datatable, long_view, sample_pages, summary_html
from custom_metrics.leaderboard.differences import Difference
from custom_metrics.leaderboard.display import Paths
from custom_metrics.leaderboard.pair_shards import write_pair_shards
from custom_metrics.leaderboard.samples import LoggedTask
from custom_metrics.leaderboard.script_data import write_script_data
from custom_metrics.leaderboard.summary import Summary

ASSETS = Path(__file__).with_name("assets")
PANELS = "panels"  # each tab's charts and long view, loaded on demand
OWN_ASSETS = ("leaderboard.css", "leaderboard.js", charts.ASSET)


def write_site(
    out: Path,
    tables: Sequence[Table],
    specs: Sequence[PaperSpec],
    summaries: Sequence[Summary],
    problems: Sequence[Problem],
    logged: Sequence[LoggedTask],
    differences: dict[str, list[Difference]],
    inputs: Sequence[Path],
) -> list[Path]:
    """Write the folder; returns the pages written (index first, then the sample viewer)."""
    paths = Paths(inputs)
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    (assets / datatable.ASSET).write_text(datatable.loader_script(), encoding="utf-8")
    for name in OWN_ASSETS:
        (assets / name).write_bytes((ASSETS / name).read_bytes())
    samples_dir = out / "samples"
    samples_dir.mkdir(exist_ok=True)
    pages = sample_pages.page_names(logged)
    written = []
    for task, task_pages in pages.items():
        head = _head(f"Samples: {task.spec.board.task_label(task.run.task)}", "../")
        for name, text in sample_pages.sample_pages(task, task_pages, head, paths):
            (samples_dir / name).write_text(text, encoding="utf-8")
            written.append(samples_dir / name)
    index_head = _head("explain-eval sample viewer", "../")
    (samples_dir / "index.html").write_text(sample_pages.samples_index(logged, pages, index_head), encoding="utf-8")
    document = samples_dir / sample_pages.DOCUMENT_PAGE
    document.write_text(sample_pages.document_page(_head("Document across runs", "../")), encoding="utf-8")
    sample_pages.write_document_data(samples_dir / "docs", logged, pages)
    # The index: a tab per paper, its summary in the page, its charts and long view in files beside it.
    by_file = {task.path: task_pages.names[0] for task, task_pages in pages.items()}
    runs = sorted({(row.model, row.setting) for table in tables for row in table.rows if row.kind == "run"})
    # The checked tab's panel shows from the first paint, before any script ran.
    shown = ", ".join(f".tabs:has(#tab-{table.key}:checked) #panel-{table.key}" for table in tables)
    names = ", ".join(paths.show(Path(p).resolve()) for p in inputs)
    parts = [
        _head("explain-eval leaderboard", "", charts_too=True, style=f"{shown} {{ display: block; }}"),
        "<body><header><h1>explain-eval leaderboard</h1>",
        f"<p>{len(runs)} model setting(s) from {html.escape(names)}; written "
        f"{datetime.now().strftime('%Y-%m-%d %H:%M')}. Published rows come from the papers' tables. "
        f'<a href="samples/index.html">Sample viewer</a> ({len(logged)} logged task run(s)).</p></header>',
        "<main>",
    ]
    if problems:
        parts.append('<section class="problems" aria-labelledby="problems"><h2 id="problems">Skipped files</h2><ul>')
        parts += [
            f"<li><code>{html.escape(paths.show(p.path))}</code>: {html.escape(paths.text(p.reason))}</li>"
            for p in problems
        ]
        parts.append(
            "</ul><p>Everything else was read; the tables below leave these files (or numbers) out.</p></section>"
        )
    parts.append('<div class="tabs"><div class="tablist" role="radiogroup" aria-label="Paper">')
    for i, table in enumerate(tables):
        checked = " checked" if i == 0 else ""
        parts.append(
            f'<input type="radio" name="tabs" id="tab-{table.key}" value="{table.key}"{checked}>'
            f'<label for="tab-{table.key}">{html.escape(table.title.split(":", 1)[0])}</label>'
        )
    parts.append("</div>")
    for table, spec, summary in zip(tables, specs, summaries):
        mine = [task for task in logged if task.spec is spec]
        parts.append(_panel(table, spec, summary, mine, by_file, differences.get(table.key, []), paths, out))
    parts.append("</div></main></body></html>")
    index = out / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    return [index, samples_dir / "index.html", *written, document]


def _head(title: str, prefix: str, charts_too: bool = False, style: str = "") -> str:
    """The page head: every script deferred (the first paint waits for none), ours last; plotly.js
    is named, not loaded: ``leaderboard.js`` adds it after the load event, when it draws."""
    scripts = [f"{prefix}assets/{datatable.ASSET}", f"{prefix}assets/leaderboard.js"]
    plotly = f'<meta name="explain-eval-plotly" content="{prefix}assets/{charts.ASSET}">' if charts_too else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>"
        f'<link rel="stylesheet" href="{prefix}assets/leaderboard.css">{plotly}'
        + (f"<style>{style}</style>" if style else "")
        + "".join(f'<script defer src="{src}"></script>' for src in scripts)
        + "</head>"
    )


def _panel(
    table: Table,
    spec: PaperSpec,
    summary: Summary,
    logged: list[LoggedTask],
    by_file: dict[Path, str],
    differences: list[Difference],
    paths: Paths,
    out: Path,
) -> str:
    """One paper's tab: the summary in the page; its charts and long view in files beside it."""
    key = table.key
    runs = sum(row.kind == "run" for row in table.rows)
    first = {row.model: row.setting for row in reversed(table.rows) if row.kind == "published"}  # the first wins
    context = summary_html.SummaryContext(paths, by_file, first)
    downloads = [(f"{key}.csv", "CSV"), (f"{key}.md", "markdown"), (f"{key}.json", "JSON")]
    if differences:
        downloads.append((f"{key}_differences.csv", "paired differences (CSV)"))
    links = " · ".join(f'<a href="{name}" download>{label}</a>' for name, label in downloads)
    # Runs on part of the data start hidden when a full run exists (the toggle says so), from the first paint.
    hidden = " limited-hidden" if summary.full_runs and any(entry.limited for entry in summary.rows) else ""
    figures = charts.family_charts(summary, spec, paths, f"chart-{key}")
    write_script_data(out / PANELS / f"{key}.charts.js", f"charts:{key}", {div: fig for div, _, fig in figures})
    pair_rows = write_pair_shards(key, spec, differences, out / PANELS)
    long_html = "\n".join(
        [
            long_view.score_table(table, spec, paths, by_file),
            long_view.differences_block(key, spec, differences, pair_rows, paths),
            long_view.sample_links(logged, by_file),
            long_view.notes_and_sources(table, paths),
        ]
    )
    write_script_data(out / PANELS / f"{key}.long.js", f"long:{key}", long_html)
    tests = (
        f"This tab tests {summary.tests} Δ vs paper (Holm-adjusted within each run row's own tests) and "
        f"{len(differences)} paired difference(s) (Holm-adjusted within each pair of rows); ✱ marks an adjusted "
        "p &lt; 0.05."
    )
    parts = [
        f'<section class="panel{hidden}" id="panel-{key}" aria-labelledby="title-{key}" data-key="{key}">',
        f'<h2 id="title-{key}">{html.escape(table.title)}</h2>',
        f'<p class="lead">{html.escape(summary_html.lead(spec, summary))}</p>',
        f'<p class="meta">{runs} run row(s) and {len(table.rows) - runs} published row(s). {tests} '
        f"Downloads: {links}.</p>",
        f'<div class="views" role="radiogroup" aria-label="{html.escape(spec.key.upper())} view">'
        f'<input type="radio" name="view-{key}" id="view-{key}-summary" value="summary" checked>'
        f'<label for="view-{key}-summary">Summary</label>'
        f'<input type="radio" name="view-{key}" id="view-{key}-long" value="long">'
        f'<label for="view-{key}-long">All metrics, paired differences, samples</label></div>',
        '<div class="view-summary">',
        summary_html.summary_section(table, spec, summary, context),
        summary_html.verdicts(differences, spec),
    ]
    parts += [  # each chart's place: ``leaderboard.js`` draws it from the tab's charts file once it shows
        f'<figure class="chart"><figcaption>{html.escape(title)}</figcaption>'
        f'<div class="plot" id="{div_id}" data-chart="{div_id}"></div></figure>'
        for div_id, title, _ in figures
    ]
    parts += [
        "</div>",
        f'<div class="view-long" data-load="long:{key}" data-src="{PANELS}/{key}.long.js">'
        '<p class="loading">Loading every metric and paired difference…</p></div>',
        "</section>",
    ]
    return "\n".join(parts)
