"""The summary view of a paper's tab as HTML: ranked rows, Δ vs paper, paired verdicts.

A plain table, drawn by the server and sorted by ``assets/leaderboard.js`` (a few dozen
rows need no DataTables): one ``<tbody>`` per rank group (ranked, limited, unranked), so
sorting by any column never mixes runs on part of the data with full ones. The model
column is the row header (pinned on a phone); columns after the first two headlines are
``secondary`` (collapsed on a phone, one button away). Every number from a logged run
links to its sample page; Δ and its test sit under the number they qualify.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.leaderboard_types import PaperSpec, Table
from custom_metrics.leaderboard.differences import Difference
from custom_metrics.leaderboard.display import Paths, hub_url
from custom_metrics.leaderboard.render import cell_text, format_number, signed
from custom_metrics.leaderboard.summary import LIMITED, RANKED, UNRANKED, Summary, SummaryCell, SummaryRow
from custom_metrics.leaderboard.versus_paper import ALPHA, Z_TEST

SHOWN_ON_PHONE = 2  # headline columns kept on a narrow screen; the rest collapse
VERDICTS_SHOWN = 8
GROUP_TITLES = {
    RANKED: "Full runs and the paper's rows, ranked",
    LIMITED: "Runs on part of the data (--limit, --samples), ranked apart: not comparable with the rows above",
    UNRANKED: "Without the ranking metric",
}


@dataclass(frozen=True)
class SummaryContext:
    paths: Paths
    sample_pages: dict[Path, str]  # samples file -> page name under samples/
    # model -> the setting of its first published row: a Δ against another row of the same
    # model (GEESE's authors' repository run beside Table 2) names that row's setting.
    first_paper_setting: dict[str, str] = field(default_factory=dict)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def column_id(index: int) -> str:
    return f"h{index}"


def summary_section(table: Table, spec: PaperSpec, summary: Summary, context: SummaryContext) -> str:
    key = table.key
    main = summary.main
    parts = [_controls(key, spec, summary, table), _table(key, spec, summary, context)]
    parts.append(_definitions(key, spec, summary))
    return "\n".join(parts) if main is not None or summary.rows else ""


def lead(spec: PaperSpec, summary: Summary) -> str:
    """Who is best, in one or two sentences."""
    main = summary.main
    if main is None or not summary.rows:
        return "No summary: this table has no headline metric."
    index = summary.headlines.index(main)
    ranked = [r for r in summary.rows if r.group == RANKED]
    runs = [r for r in summary.rows if r.row.kind == "run"]
    text = []
    if ranked:
        best = ranked[0]
        who = _row_name(best) + (" (paper)" if best.row.kind == "published" else "")
        text.append(f"Rank 1 by {main.label}: {who}, {cell_text(best.cells[index].cell)}.")
    full = [r for r in runs if r.group == RANKED]
    if full:
        mine = full[0]
        cell = mine.cells[index]
        delta = cell.delta
        versus = ""
        if delta is not None:
            verdict = (
                "significant" if delta.significant else "not significant" if delta.p_value is not None else delta.test
            )
            versus = f" (Δ {signed(delta.difference)} vs {delta.paper.model} in the paper, {verdict})"
        text.append(
            f"Your best full run: {_row_name(mine)}, rank {mine.rank} of {len(ranked)}, {cell_text(cell.cell)}{versus}."
        )
    elif runs:
        text.append(
            f"Your {len(runs)} run row(s) ran on part of the data or lack {main.label}: "
            "they are ranked apart, below the full rows."
        )
    return " ".join(text)


def _row_name(entry: SummaryRow) -> str:
    row = entry.row
    return f"{row.model} · {row.setting}" if row.setting else row.model


def _controls(key: str, spec: PaperSpec, summary: Summary, table: Table) -> str:
    limited = sum(1 for r in summary.rows if r.group == LIMITED)
    hide = summary.full_runs and limited > 0
    checkbox = (
        f'<label class="toggle"><input type="checkbox" class="hide-limited" data-default="{int(hide)}"'
        f"{' checked' if hide else ''}> hide runs on part of the data ({limited})</label>"
        if limited
        else ""
    )
    picker = "".join(
        f'<label><input type="checkbox" class="column-toggle" value="{column_id(i)}" checked> {_e(h.label)}</label>'
        for i, h in enumerate(summary.headlines)
    )
    return (
        f'<div class="controls" role="group" aria-label="{_e(spec.key.upper())} summary controls">'
        f'<label class="filter">Filter rows <input type="search" class="row-filter" id="filter-{key}" '
        f'placeholder="model or setting"></label>{checkbox}'
        f'<details class="picker"><summary>Columns</summary><div class="picker-list">{picker}</div></details>'
        f'<button type="button" class="more-columns" aria-pressed="false">All columns</button>'
        "</div>"
    )


def _table(key: str, spec: PaperSpec, summary: Summary, context: SummaryContext) -> str:
    main = summary.main
    main_index = summary.headlines.index(main) if main else -1
    shown_on_phone = {i for i, h in enumerate(summary.headlines) if not h.sanity}
    shown_on_phone = set(sorted(shown_on_phone)[:SHOWN_ON_PHONE])
    unit = summary.families[main.family].unit if main and main.family in summary.families else ""
    caption = (
        f"{spec.key.upper()} summary: one row per model and setting, ranked by {main.label}"
        f"{f' — {unit}' if unit else ''}. Δ: your number − the paper's; ✱ significant at p < {ALPHA:g}."
        if main
        else f"{spec.key.upper()} summary"
    )
    head = [
        '<th scope="col" class="rank" data-col="rank"><button type="button" class="sort">Rank</button></th>',
        '<th scope="col" class="model" data-col="model"><button type="button" class="sort">Model · setting</button>'
        "</th>",
    ]
    for index, headline in enumerate(summary.headlines):
        classes = ["num", column_id(index)]
        if index not in shown_on_phone:
            classes.append("secondary")
        if headline.sanity:
            classes.append("sanity")
        if index == main_index:
            classes.append("main")
        definition = _definition(spec, headline)
        head.append(
            f'<th scope="col" class="{" ".join(classes)}" data-col="{column_id(index)}"'
            f"{f' title={_quoted(definition)}' if definition else ''}>"
            f'<button type="button" class="sort">{_e(headline.label)}{" (sanity check)" if headline.sanity else ""}'
            f"</button>"
            f'<button type="button" class="define" aria-label="What is {_e(headline.label)}?" '
            f'aria-controls="define-{key}" data-definition="{_e(definition or "No definition recorded.")}">?</button>'
            "</th>"
        )
    head.append('<th scope="col" class="notes secondary" data-col="notes">Docs and notes</th>')
    width = len(head)
    bodies = []
    for group in (RANKED, LIMITED, UNRANKED):
        members = [entry for entry in summary.rows if entry.group == group]
        if not members:
            continue
        lines = [
            f'<tbody class="{group}" data-group="{group}">'
            f'<tr class="group"><th scope="rowgroup" colspan="{width}">{_e(GROUP_TITLES[group])}</th></tr>'
        ]
        lines += [_row(entry, summary, shown_on_phone, main_index, context) for entry in members]
        lines.append("</tbody>")
        bodies.append("".join(lines))
    # The caption is read by screen readers; the same words show above the scrolling box,
    # where a phone shows them whole (a caption scrolls with its table).
    return (
        f'<p class="caption" aria-hidden="true">{_e(caption)}</p>'
        f'<div class="table-scroll" role="region" aria-label="{_e(spec.key.upper())} summary table" tabindex="0">'
        f'<table class="summary" id="summary-{key}"><caption class="visually-hidden">{_e(caption)}</caption>'
        f"<thead><tr>{''.join(head)}</tr></thead>{''.join(bodies)}</table></div>"
        f'<p class="definition" id="define-{key}" aria-live="polite"></p>'
    )


def _quoted(text: str) -> str:
    return f'"{_e(text)}"'


def _definition(spec: PaperSpec, headline) -> str:
    task, metric = headline.keys[0].split("/", 1)
    return spec.definition(task, metric)


def _row(
    entry: SummaryRow, summary: Summary, shown_on_phone: set[int], main_index: int, context: SummaryContext
) -> str:
    row = entry.row
    classes = [row.kind]
    if entry.limited:
        classes.append("limited")
    if entry.config_differences:
        classes.append("other-config")
    rank = "" if entry.rank is None else str(entry.rank)
    cells = [f'<td class="rank" data-sort="{rank}">{rank or "–"}</td>', _model_cell(entry)]
    for index, cell in enumerate(entry.cells):
        extra = ["num", column_id(index)]
        if index not in shown_on_phone:
            extra.append("secondary")
        if cell.headline.sanity:
            extra.append("sanity")
        if index == main_index:
            extra.append("main")
        if cell.delta is not None and cell.delta.significant:
            extra.append("significant")
        sort = "" if cell.value is None or not math.isfinite(cell.value) else repr(cell.value)
        cells.append(f'<td class="{" ".join(extra)}" data-sort="{sort}">{_score(cell, context)}</td>')
    cells.append(f'<td class="notes secondary">{_notes(entry, main_index, context)}</td>')
    return f'<tr class="{" ".join(classes)}">{"".join(cells)}</tr>'


def _model_cell(entry: SummaryRow) -> str:
    row = entry.row
    url = hub_url(row.model_id) if row.kind == "run" else None
    name = f'<a href="{_e(url)}" rel="noopener">{_e(row.model)}</a>' if url else _e(row.model)
    badges = []
    if row.kind == "published":
        badges.append('<span class="badge paper">paper</span>')
    if entry.limited:
        badges.append('<span class="badge limited" title="ran on part of the data">⚠ part of the data</span>')
    if entry.config_differences:
        title = "its logged task config differs from the suite's (see the notes column)"
        badges.append(f'<span class="badge config" title="{_e(title)}">⚑ other task config</span>')
    setting = f'<span class="setting">{_e(row.setting)}</span>' if row.setting else ""
    return f'<th scope="row" class="model" data-sort="{_e(row.model.lower())}">{name} {setting} {"".join(badges)}</th>'


def _score(cell: SummaryCell, context: SummaryContext) -> str:
    if cell.key is None or cell.cell is None:
        return '<span class="na" title="not run">–</span>'
    if cell.value is None or not math.isfinite(cell.value):
        return '<span class="na" title="the harness returned NaN: undefined on these documents">NaN</span>'
    value, _, pm = cell_text(cell.cell).partition(" ± ")
    shown = _e(value) + (f'<span class="pm"> ± {_e(pm)}</span>' if pm else "")
    page = context.sample_pages.get(cell.samples) if cell.samples is not None else None
    if page:
        shown = f'<a href="samples/{_e(page)}" title="the logged samples behind this number">{shown}</a>'
    parts = [shown]
    if cell.delta is not None:
        parts.append(_delta(cell, context))
    return "".join(parts)


def _delta(cell: SummaryCell, context: SummaryContext) -> str:
    delta = cell.delta
    assert delta is not None
    versus = "paper" if delta.same_model else f"{delta.paper.model} (reference)"
    if context.first_paper_setting.get(delta.paper.model, delta.paper.setting) != delta.paper.setting:
        versus += f" ({delta.paper.setting})"
    if delta.p_value is not None:
        verdict = f"{p_text(delta.p_value)}{' ✱' if delta.significant else ''}"
        detail = (
            f"{Z_TEST}: run {format_number(delta.se_run)}, paper {format_number(delta.se_paper)}; "
            f"p = {delta.p_value:.3g}{', significant' if delta.significant else ', not significant'}"
        )
    else:
        verdict, detail = "no test", delta.test
    title = (
        f"Δ vs {delta.paper.model} · {delta.paper.setting} in the paper ({delta.paper.cells[delta.key].text}); {detail}"
    )
    return (
        f'<span class="delta{" sig" if delta.significant else ""}" title="{_e(title)}">'
        f'Δ {signed(delta.difference)}<span class="versus"> vs {_e(versus)}</span>'
        f'<span class="test">{_e(verdict)}</span></span>'
    )


def _notes(entry: SummaryRow, main_index: int, context: SummaryContext) -> str:
    """Docs of the ranking number (or how it was cut short) in the cell, and what the row's
    numbers rest on (derived numbers' inputs, other cut-short tasks, foreign task configs)
    one click away: a ``<details>`` opens by keyboard and touch alike."""
    row = entry.row
    first = []
    main = entry.cells[main_index] if main_index >= 0 else None
    anchor = main if main is not None and main.key else next((c for c in entry.cells if c.key), None)
    if anchor is not None and anchor.task:
        docs = row.cells.get(f"{anchor.task}/#samples")
        if anchor.limited:
            first.append(f"⚠ {anchor.limited}")
        elif docs is not None and docs.value is not None:
            first.append(f"{format_number(docs.value, 'samples')} docs")
    more = []
    for cell in entry.cells:
        if cell.limited and cell is not anchor:
            more.append(f"⚠ {cell.headline.label}: {cell.limited}")
        if cell.cell is not None and cell.cell.basis:
            more.append(f"{cell.headline.label}: {cell.cell.basis}")
    configs = entry.config_differences
    if configs:
        first.append(f"⚑ not this suite's task config: {', '.join(sorted(configs))}")
        more += [f"⚑ {task}: {difference}" for task, difference in sorted(configs.items())]
    text = "<br>".join(_e(context.paths.text(note)) for note in first)
    if more:
        items = "".join(f"<li>{_e(context.paths.text(note))}</li>" for note in dict.fromkeys(more))
        text += f'<details class="rests-on"><summary>what these numbers rest on</summary><ul>{items}</ul></details>'
    return text


def p_text(p_value: float) -> str:
    """A p-value as read in a cell: two decimals, or "p < 0.001"."""
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.2f}" if p_value >= 0.01 else f"p = {p_value:.3f}"


def _definitions(key: str, spec: PaperSpec, summary: Summary) -> str:
    items = "".join(
        f"<dt>{_e(h.label)}{' (sanity check: never ranked)' if h.sanity else ''}</dt>"
        f"<dd>{_e(_definition(spec, h) or 'No definition recorded.')} <code>{_e(' or '.join(h.keys))}</code></dd>"
        for h in summary.headlines
    )
    return (
        '<details class="definitions"><summary>What the columns mean, and how Δ is tested</summary>'
        f"<dl>{items}<dt>Δ</dt><dd>Your number minus the paper's, for the same model where the paper has it, "
        "else the paper's reference model (named). Test: a two-sided z-test with the two standard errors "
        "(the harness' stderr, else the one of the logged per-document outcomes; the paper's printed "
        "stderr, else the binomial one from the documents it states); ✱ p &lt; 0.05. "
        "Where either is missing, the cell says “no test”.</dd></dl></details>"
    )


def verdicts(differences: Sequence[Difference], spec: PaperSpec) -> str:
    """The paired run-vs-run (and within-run) tests, significant first, under the summary."""
    if not differences:
        return ""
    ordered = sorted(
        differences, key=lambda d: (not d.result.significant, d.result.p_value if d.result.p_value is not None else 1)
    )
    items = []
    for difference in ordered[:VERDICTS_SHOWN]:
        result = difference.result
        interval = f"[{format_number(result.low)}, {format_number(result.high)}]" if result.low is not None else "n/a"
        p_value = f", p = {result.p_value:.3g}" if result.p_value is not None else ""
        mark = "✱ significant" if result.significant else "not significant"
        items.append(
            f'<li class="{"sig" if result.significant else ""}"><strong>{_e(mark)}</strong>: '
            f"{_e(difference.label)} · {_e(spec.metric_label(difference.metric))}: "
            f"{signed(result.difference)} {_e(interval)} ({_e(result.test)}{_e(p_value)}, {result.n} docs)</li>"
        )
    more = len(ordered) - VERDICTS_SHOWN
    tail = f"<p>{more} more under All metrics, Paired differences.</p>" if more > 0 else ""
    return (
        '<section class="verdicts"><h3>Paired tests on the same documents</h3>'
        "<p>Two runs (or two settings of one run) that logged the same documents, compared document by "
        "document: McNemar's exact test for 0/1 outcomes, else a paired bootstrap interval.</p>"
        f"<ul>{''.join(items)}</ul>{tail}</section>"
    )
