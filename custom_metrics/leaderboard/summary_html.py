"""The summary view of a paper's tab as HTML: ranked rows, Δ vs paper, paired verdicts.

A plain table, drawn by the server and sorted by ``assets/leaderboard.js`` (a few dozen
rows need no DataTables): one ``<tbody>`` per group of your runs (ranked, limited,
unranked), then one of the published rows, so sorting by any column never mixes runs on part
of the data with full ones, nor the paper's rows with yours. The model column is the row
header (pinned on a phone); columns after the first two headlines are ``secondary``
(collapsed on a phone, one button away).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.leaderboard_types import Headline, Table
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard.differences import Difference
from custom_metrics.leaderboard.display import Paths, hub_url
from custom_metrics.leaderboard.numbers import cell_text, finite, format_number, interval_text, p_digits, p_text, signed
from custom_metrics.leaderboard.procedures import ALPHA, BOOTSTRAP, EXACT_SHARE, FISHER
from custom_metrics.leaderboard.summary import LIMITED, RANKED, UNRANKED, Summary, SummaryCell, SummaryRow
from custom_metrics.leaderboard.wording import RANK_RULE, delta_words, rank_text, reference_value, row_flags

SHOWN_ON_PHONE = 2  # headline columns kept on a narrow screen; the rest collapse
VERDICTS_SHOWN = 8
SHORT_TESTS = {FISHER: "Fisher", EXACT_SHARE: "binomial", BOOTSTRAP: "bootstrap"}
PUBLISHED = "published"
GROUP_TITLES = {
    RANKED: "Your runs on full data, ranked (the published rows below are their references)",
    LIMITED: "Runs on part of the data (--limit, --samples), ranked apart: not comparable with the full runs",
    UNRANKED: "Runs without the ranking metric",
    PUBLISHED: "Published rows: the paper's numbers and other published ones, references (not ranked)",
}
RANKED_PUBLISHED = "Published rows, ranked with the full runs (--rank-published)"


@dataclass(frozen=True)
class SummaryContext:
    paths: Paths
    sample_pages: dict[Path, str]  # samples file -> page name under samples/
    # model -> the setting of its first published row: a Δ against another row of the same
    # model (GEESE's authors' repository run beside Table 2) names that row's setting.
    first_paper_setting: dict[str, str] = field(default_factory=dict)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _title(text: str) -> str:
    return f' title="{_e(text)}"' if text else ""


def summary_section(table: Table, spec: PaperSpec, summary: Summary, context: SummaryContext) -> str:
    if summary.main is None and not summary.rows:
        return ""
    return "\n".join(
        [_controls(table.key, spec, summary), _table(table.key, spec, summary, context), _definitions(spec, summary)]
    )


def lead(spec: PaperSpec, summary: Summary) -> str:
    """Who is best, in one or two sentences."""
    main = summary.main
    if main is None or not summary.rows:
        return "No summary: this table has no headline metric."
    index = summary.headlines.index(main)
    ranked = [r for r in summary.rows if r.group == RANKED and r.contender and r.rank is not None]
    ranked = [r for r in ranked if r.rank_index == index]
    runs = [r for r in summary.rows if r.row.kind == "run"]
    text = []
    if ranked:
        best = [r for r in ranked if r.rank == 1]
        names = ", ".join(f"{_row_name(r)} ({cell_text(r.cells[index].cell).split(' ± ')[0]})" for r in best[:3])
        more = f" and {len(best) - 3} more" if len(best) > 3 else ""
        tie = " (tied: their 95% intervals overlap)" if len(best) > 1 else ""
        text.append(f"Rank 1 by {main.label}: {names}{more}{tie}.")
        mine = ranked[0]
        delta = mine.cells[index].delta
        if delta is not None and delta.difference is not None:
            verdict = ("significant" if delta.significant else "not significant") if delta.tested else delta.test
            text.append(
                f"{_row_name(mine)}: Δ {signed(delta.difference)} vs {delta.paper.model} in the paper, {verdict}."
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


def _controls(key: str, spec: PaperSpec, summary: Summary) -> str:
    limited = sum(1 for r in summary.rows if r.group == LIMITED)
    hide = summary.full_runs and limited > 0
    checkbox = (
        f'<label class="toggle"><input type="checkbox" class="hide-limited" data-default="{int(hide)}"'
        f"{' checked' if hide else ''}> hide runs on part of the data ({limited})</label>"
        if limited
        else ""
    )
    picker = "".join(
        f'<label><input type="checkbox" class="column-toggle" value="h{i}" checked> {_e(h.label)}</label>'
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
    shown_on_phone = set([i for i, h in enumerate(summary.headlines) if not h.sanity][:SHOWN_ON_PHONE])
    unit = summary.families[main.family].unit if main and main.family in summary.families else ""
    caption = (
        f"{spec.key.upper()} summary: one row per model and setting, ranked by {main.label}"
        f"{f' — {unit}' if unit else ''}. Each number with its 95% interval and its rank (#) on that "
        f"column: {RANK_RULE}; rows no test separates share a rank (=). Your runs first; the paper's rows below them "
        "are references (ref). Δ: your number − the same model's in the paper, with the test it used (p: twice "
        "the smaller one-sided p) "
        f"and Holm's p within the run row's own tests; ✱ significant at p < {ALPHA:g} after that correction; "
        f"✓ reproduced: the 90% interval of Δ inside ±{summary.margin:g}."
        if main
        else f"{spec.key.upper()} summary"
    )
    head = [
        '<th scope="col" class="rank" data-col="rank"><button type="button" class="sort">Rank</button></th>',
        '<th scope="col" class="model" data-col="model"><button type="button" class="sort">Model · setting</button>'
        "</th>",
    ]
    for index, headline in enumerate(summary.headlines):
        classes = _column_classes(index, headline, shown_on_phone, main_index)
        definition = spec.board.definition(*headline.keys[0].split("/", 1))
        head.append(
            f'<th scope="col" class="{" ".join(classes)}" data-col="h{index}"'
            f"{_title(definition)}>"
            f'<button type="button" class="sort">{_e(headline.label)}{" (sanity check)" if headline.sanity else ""}'
            f"</button>"
            f'<button type="button" class="define" aria-label="What is {_e(headline.label)}?" '
            f'aria-controls="define-{key}" data-definition="{_e(definition or "No definition recorded.")}">?</button>'
            "</th>"
        )
    head.append('<th scope="col" class="notes secondary" data-col="notes">Docs and notes</th>')
    width = len(head)
    bodies = []
    runs = [entry for entry in summary.rows if entry.row.kind == "run"]
    blocks = [(group, [entry for entry in runs if entry.group == group]) for group in (RANKED, LIMITED, UNRANKED)]
    blocks.append((PUBLISHED, [entry for entry in summary.rows if entry.row.kind != "run"]))
    for group, members in blocks:
        if not members:
            continue
        title = RANKED_PUBLISHED if group == PUBLISHED and summary.rank_published else GROUP_TITLES[group]
        lines = [
            f'<tbody class="{group}" data-group="{group}">'
            f'<tr class="group"><th scope="rowgroup" colspan="{width}">{_e(title)} ({len(members)})</th></tr>'
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


def _column_classes(index: int, headline: Headline, shown_on_phone: set[int], main_index: int) -> list[str]:
    """A headline column's classes, on its header and on its cells alike."""
    flags = (("secondary", index not in shown_on_phone), ("sanity", headline.sanity), ("main", index == main_index))
    return ["num", f"h{index}", *(name for name, on in flags if on)]


def _row(
    entry: SummaryRow, summary: Summary, shown_on_phone: set[int], main_index: int, context: SummaryContext
) -> str:
    row = entry.row
    classes = [row.kind]
    if entry.limited:
        classes.append("limited")
    if entry.config_differences:
        classes.append("other-config")
    main = entry.cells[entry.rank_index] if entry.rank_index is not None else None
    rank = rank_text(main, entry)
    own = entry.rank_index != main_index  # ranked on another column: sorts after the ranked rows
    if rank and rank != "ref" and own:
        rank += f" ({main.headline.label})"
    sort = "" if main is None or main.rank is None or not entry.contender or own else str(main.rank)
    title = _rank_title(main, entry)
    cells = [
        f'<td class="rank" data-sort="{sort}"{_title(title)}>{_e(rank) or "–"}</td>',
        _model_cell(entry, context.paths),
    ]
    for index, cell in enumerate(entry.cells):
        extra = _column_classes(index, cell.headline, shown_on_phone, main_index)
        if cell.delta is not None and cell.delta.significant:
            extra.append("significant")
        sort = repr(cell.value) if finite(cell.value) else ""
        ranked = rank_text(cell, entry)
        rank_attrs = f' data-rank="{_e(ranked)}" data-rank-sort="{cell.rank if cell.rank and entry.contender else ""}"'
        cells.append(
            f'<td class="{" ".join(extra)}" data-sort="{sort}"{rank_attrs}>{_score(cell, entry, context)}</td>'
        )
    cells.append(f'<td class="notes secondary">{_notes(entry, main_index, context)}</td>')
    return f'<tr class="{" ".join(classes)}">{"".join(cells)}</tr>'


def _rank_title(cell: SummaryCell | None, entry: SummaryRow) -> str:
    if cell is None or cell.key is None:
        return ""
    if not entry.contender:
        return "a reference row (the paper's), not ranked; --rank-published ranks it"
    if cell.rank is None:
        return cell.unranked or "not ranked"
    above = cell.rank - 1
    tie = f"; tied with {cell.tied} other row(s)" if cell.tied else ""
    return (
        f"{above} row(s) of this group significantly better on this column, of {cell.compared} a test "
        f"compared it with (paired test, else Fisher's on the counts; Holm within each pair){tie}"
    )


def _model_cell(entry: SummaryRow, paths: Paths) -> str:
    row = entry.row
    url = hub_url(row.model_id) if row.kind == "run" else None
    name = f'<a href="{_e(url)}" rel="noopener">{_e(row.model)}</a>' if url else _e(row.model)
    badges = []
    if row.kind == "published" and row.origin == "paper":
        badges.append('<span class="badge paper" title="a row of a table the paper prints">paper</span>')
    elif row.kind == "published":
        badges.append(f'<span class="badge origin" title="not a row of the paper\'s tables">{_e(row.origin)}</span>')
    if entry.limited:
        badges.append('<span class="badge limited" title="ran on part of the data">⚠ part of the data</span>')
    if entry.config_differences:
        title = "its logged task config differs from the suite's (see the notes column)"
        badges.append(f'<span class="badge config" title="{_e(title)}">⚑ other task config</span>')
    if row.mixed:
        title = paths.text("built from results files that differ: " + "; ".join(row.mixed))
        badges.append(f'<span class="badge config mixed" title="{_e(title)}">⚑ mixed files</span>')
    setting = f'<span class="setting">{_e(row.setting)}</span>' if row.setting else ""
    return f'<th scope="row" class="model" data-sort="{_e(row.model.lower())}">{name} {setting} {"".join(badges)}</th>'


def _score(cell: SummaryCell, entry: SummaryRow, context: SummaryContext) -> str:
    if cell.key is None or cell.cell is None:
        return '<span class="na" title="not run">–</span>'
    if not finite(cell.value):
        return '<span class="na" title="the harness returned NaN: undefined on these documents">NaN</span>'
    value, _, pm = cell_text(cell.cell).partition(" ± ")
    shown = _e(value) + (f'<span class="pm"> ± {_e(pm)}</span>' if pm else "")
    page = context.sample_pages.get(cell.samples) if cell.samples is not None else None
    if page:
        shown = f'<a href="samples/{_e(page)}" title="the logged samples behind this number">{shown}</a>'
    parts = [shown]
    interval = cell.interval
    if interval is not None:
        items = cell.evidence.items if cell.evidence is not None else None
        title = f"95% interval ({interval.method}" + (f", {items:,} items)" if items else ")")
        parts.append(f'<span class="ci" title="{_e(title)}">{_e(interval_text(interval.low, interval.high))}</span>')
    elif entry.row.kind == "run" and cell.evidence is not None and cell.evidence.reason:
        parts.append(f'<span class="ci none" title="{_e(cell.evidence.reason)}">no interval</span>')
    ranked = rank_text(cell, entry)
    if ranked and ranked != "ref" and not cell.headline.sanity:
        title = f"its rank on this column: {_rank_title(cell, entry)}"
        parts.append(f'<span class="col-rank" title="{_e(title)}">#{_e(ranked)}</span>')
    if cell.delta is not None:
        parts.append(_delta(cell, context))
    return "".join(parts)


def _delta(cell: SummaryCell, context: SummaryContext) -> str:
    """Δ and its test under a number; against another model's row, that row's number as a
    reference line, with no Δ (the legend defines Δ against the same model's number)."""
    delta = cell.delta
    assert delta is not None
    if delta.difference is None:
        return (
            f'<span class="delta reference" title="{_e(delta_words(delta))}">'
            f'<span class="versus">reference: {_e(delta.paper.model)} {_e(reference_value(delta))}</span>'
            '<span class="test">another model: no Δ</span></span>'
        )
    versus = "paper"
    if context.first_paper_setting.get(delta.paper.model, delta.paper.setting) != delta.paper.setting:
        versus += f" ({delta.paper.setting})"
    if delta.tested:
        holm = f", Holm {p_text(delta.p_adjusted)[2:]}" if delta.p_adjusted is not None and delta.family > 1 else ""
        verdict = (
            f"{SHORT_TESTS.get(delta.test, delta.test)} {p_text(delta.p_value)}{holm}"
            f"{' ✱' if delta.significant else ''}"
        )
    else:
        verdict = "no test"
    title = f"{delta_words(delta)} (the paper's number: {delta.paper.cells[delta.key].text})"
    reproduced = ""
    if delta.equivalence is not None:
        within = f"within ±{delta.equivalence.margin:g}"
        mark = f"✓ {within}" if delta.equivalence.equivalent else f"not shown {within}"
        reproduced = f'<span class="reproduced">{_e(mark)}</span>'
    return (
        f'<span class="delta{" sig" if delta.significant else ""}" title="{_e(title)}">'
        f'Δ {signed(delta.difference)}<span class="versus"> vs {_e(versus)}</span>'
        f'<span class="test">{_e(verdict)}</span>{reproduced}</span>'
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
    if entry.config_differences:
        first.append(f"⚑ not this suite's task config: {', '.join(sorted(entry.config_differences))}")
    if row.mixed:
        first.append("⚑ built from results files that differ: " + "; ".join(row.mixed))
    more += row_flags(row)
    text = "<br>".join(_e(context.paths.text(note)) for note in first)
    if more:
        items = "".join(f"<li>{_e(context.paths.text(note))}</li>" for note in dict.fromkeys(more))
        text += f'<details class="rests-on"><summary>what these numbers rest on</summary><ul>{items}</ul></details>'
    return text


def _definitions(spec: PaperSpec, summary: Summary) -> str:
    items = "".join(
        f"<dt>{_e(h.label)}{' (sanity check: never ranked)' if h.sanity else ''}</dt>"
        f"<dd>{_e(spec.board.definition(*h.keys[0].split('/', 1)) or 'No definition recorded.')} "
        f"<code>{_e(' or '.join(h.keys))}</code></dd>"
        for h in summary.headlines
    )
    return (
        '<details class="definitions"><summary>What the columns mean, and how Δ is tested</summary>'
        f"<dl>{items}<dt>95% interval</dt><dd>Of a share (accuracy, consistency, success over |N|): the exact "
        "Clopper-Pearson interval of its k of n items, n counted from the logged samples or the results file; of "
        "a difference of two tasks on the same documents (effectiveness): its paired test's own interval, the "
        "one under Paired tests (McNemar's conditional Clopper-Pearson for 0/1 outcomes, else a paired bootstrap). "
        "The paper's rows: from the items the paper states. None where neither is known, or where the procedure "
        "gives none (no document changed, resampled means all alike): “no interval” says why.</dd>"
        f"<dt>Rank</dt><dd>Per column: {_e(RANK_RULE)}. Rows no test separates share a rank (=); a row no test "
        "compares with another is not ranked. Runs on part of the data are ranked apart; the paper's rows are "
        "references (ref) unless the page was built with --rank-published.</dd>"
        "<dt>Δ</dt><dd>Your number minus the paper's. Tested only against the same model's row, the paper's "
        "number being an estimate from the items it states: Fisher's exact test of your k of n against the "
        "paper's k of n, with the conditional exact 95% interval of their odds ratio (p &lt; 0.05 exactly when "
        "it excludes 1); where the paper states no n, the exact binomial test against its number taken as "
        "fixed; a difference of two tasks gets no test (the paper's gives no count of the documents that "
        "changed). Every p is central: twice the smaller "
        "one-sided p (scipy's default two-sided p, “minlike”, can be smaller). A run whose n could not reach "
        "p &lt; 0.05, or whose items are unknown, says “no test” and why. Another model's row (the paper's "
        "reference model) is a reference line: its number, with no Δ and no test. ✱: significant after Holm's "
        "correction within the run row's own tests against the paper (its family), so other runs on the page "
        "never move it.</dd>"
        f"<dt>Reproduced (✓)</dt><dd>Equivalence within ±{summary.margin:g} of the paper's share "
        "(--equivalence-margin): two one-sided tests at level 0.05, read as the 90% interval of the difference "
        "(Newcombe's hybrid score interval) lying inside ±δ. “Not shown within” is no evidence of a "
        "difference: the run or the paper may have too few items.</dd>"
        "</dl></details>"
    )


def verdicts(differences: Sequence[Difference], spec: PaperSpec) -> str:
    """The paired run-vs-run (and within-run) tests, significant first, under the summary."""
    if not differences:
        return ""
    ordered = sorted(differences, key=lambda d: (not d.result.significant, d.result.p_value))
    items = []
    for difference in ordered[:VERDICTS_SHOWN]:
        result = difference.result
        holm = (
            f", Holm {p_digits(result.p_adjusted)} (family: {result.family_name}, {result.family} test(s))"
            if result.p_adjusted is not None
            else ""
        )
        mark = "✱ significant" if result.significant else "not significant"
        items.append(
            f'<li class="{"sig" if result.significant else ""}"><strong>{_e(mark)}</strong>: '
            f"{_e(difference.label)} · {_e(spec.board.metric_label(difference.metric))}: "
            f"{signed(result.difference)}, 95% CI {_e(result.interval_text)} ({_e(result.test)}, "
            f"p = {p_digits(result.p_value)}{_e(holm)}, {result.n} docs)</li>"
        )
    more = len(ordered) - VERDICTS_SHOWN
    tail = f"<p>{more} more under All metrics, Paired differences.</p>" if more > 0 else ""
    return (
        '<section class="verdicts"><h3>Paired tests on the same documents</h3>'
        f"<p>{len(differences)} test(s): two runs (or two settings of one run) that logged the same documents, "
        "compared document by document: McNemar's exact test for 0/1 outcomes, else a paired bootstrap; each 95% "
        "interval comes from its test's own procedure (p &lt; 0.05 exactly when it excludes 0). Significant: "
        "Holm-adjusted p &lt; 0.05 within the test's family: every test of the same two rows, or of one run "
        "within itself.</p>"
        f"<ul>{''.join(items)}</ul>{tail}</section>"
    )
