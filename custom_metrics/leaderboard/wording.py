"""The words every leaderboard output uses for a row, a Δ vs paper and a rank (markdown, CSV,
the page), so the page's modules need not reach into the markdown writer for them; the
numbers inside them come from ``numbers``.
"""

from __future__ import annotations

from custom_metrics.common.leaderboard_types import Row, Table
from custom_metrics.leaderboard.numbers import cell_text, interval_text, p_digits, signed
from custom_metrics.leaderboard.summary import Summary, SummaryCell, SummaryRow
from custom_metrics.leaderboard.versus_paper import PaperDelta


def data_text(row: Row, entry: SummaryRow | None) -> str:
    """ "full data", or how the row's numbers were cut short (``⚠ part of the data: --limit 8, 8 docs``)."""
    if row.kind == "published":
        return "published" if row.origin == "paper" else row.origin
    cut = {c.task: c.limited for c in (entry.cells if entry else ()) if c.limited} or dict(sorted(row.subsets.items()))
    if not cut:
        return "full data"
    if len(set(cut.values())) == 1:
        return f"⚠ part of the data: {next(iter(cut.values()))}"
    return "⚠ part of the data: " + "; ".join(f"{task}: {subset}" for task, subset in sorted(cut.items()))


def row_flags(row: Row) -> list[str]:
    """What a reader must know about how a row was built: foreign task configs, mixed files,
    files passed over for newer ones."""
    flags = [
        f"⚑ {task}: not this suite's task config: {difference}"
        for task, difference in sorted(row.config_differences.items())
    ]
    if row.mixed:
        flags.append("⚑ built from results files that differ: " + "; ".join(row.mixed))
    if row.passed_over:
        flags.append("newer run used; passed over: " + ", ".join(dict.fromkeys(row.passed_over)))
    return flags


def versus_text(delta: PaperDelta) -> str:
    """The paper row a Δ is against, and the items behind its number where the test used them."""
    text = f"{delta.paper.model} · {delta.paper.setting}" + ("" if delta.same_model else " (reference)")
    return text + (f", {delta.paper_items} items" if delta.paper_items else "")


def delta_interval_text(delta: PaperDelta) -> str:
    """The 95% interval a Δ test inverts, named by what it is of."""
    if delta.low is None or delta.high is None:
        return ""
    if delta.interval_of == "odds ratio":
        return f"95% interval of the odds ratio run/paper [{delta.low:.3f}, {delta.high:.3f}] (1: no difference)"
    return f"95% interval of Δ {interval_text(delta.low, delta.high, signed_values=True)}"


def reference_value(delta: PaperDelta) -> str:
    """The number of the paper row a Δ is against, as the paper prints it (no ±)."""
    return cell_text(delta.paper.cells[delta.key]).split(" ± ")[0]


def delta_words(delta: PaperDelta) -> str:
    """A Δ vs paper as one line of text; against another model's row, that row's number as a
    reference line (no Δ)."""
    if delta.difference is None:
        return f"reference line: {versus_text(delta)}, {reference_value(delta)}; {delta.test}"
    text = f"Δ {signed(delta.difference)} vs {versus_text(delta)}"
    reproduced = f"; {delta.equivalence.verdict}" if delta.equivalence is not None else ""
    if not delta.tested:
        return f"{text}; {delta.test}{reproduced}"
    holm = (
        f", Holm-adjusted p = {p_digits(delta.p_adjusted)} (family: {delta.family_name}, {delta.family} test(s))"
        if delta.p_adjusted is not None
        else ""
    )
    verdict = "significant" if delta.significant else "not significant"
    return (
        f"{text}; {delta.test}: {delta_interval_text(delta)}, p = {p_digits(delta.p_value)} (twice the smaller "
        f"one-sided p){holm}: {verdict}{reproduced}"
    )


def summary_order(table: Table, summary: Summary) -> list[tuple[Row, SummaryRow | None]]:
    """Every row of the table in the summary's order (rank groups, best first), then the rest."""
    ordered = [(entry.row, entry) for entry in summary.rows]
    seen = {id(entry.row) for entry in summary.rows}
    return ordered + [(row, None) for row in table.rows if id(row) not in seen]


def rank_text(cell: SummaryCell | None, entry: SummaryRow | None) -> str:
    if entry is None or cell is None or cell.key is None:
        return ""
    if not entry.contender:
        return "ref"
    return "" if cell.rank is None else f"{cell.rank}{'=' if cell.tied else ''}"


def row_rank_text(entry: SummaryRow | None, summary: Summary) -> str:
    """A row's rank: on the main metric, else on the headline it is ranked on, named."""
    if entry is None or entry.rank_index is None:
        return ""
    text = rank_text(entry.cells[entry.rank_index], entry)
    main = summary.headlines.index(summary.main) if summary.main else None
    if text and text != "ref" and entry.rank_index != main:
        text += f" ({summary.headlines[entry.rank_index].label})"
    return text


# How a rank is read, in the words every output uses.
RANK_RULE = (
    "1 + the rows of its group significantly better on that column: by their paired test on the same "
    "documents where both logged samples, else Fisher's exact test of the two counts, Holm-adjusted within "
    "the pair's family"
)
