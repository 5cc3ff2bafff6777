"""Charts of the leaderboard page (plotly.js): one per metric family, with its unit on the axis.

What a chart shows (which rows, its error bars, one colour per model): docs/leaderboard.md,
"Charts". Each chart is a figure dict written as JSON into the page and drawn by
``assets/leaderboard.js`` once its tab shows, with the smallest plotly.js bundle that draws
bars and points (``plotly.js-basic-dist-min``, committed as ``assets/plotly-basic.min.js``;
1.2 MB against the full bundle's 4.8 MB); on a narrow screen the script turns the bars
horizontal. Plotly reads labels as a small HTML dialect, so every name is HTML-escaped before
it becomes a label, and LaTeX typesetting is off (``typesetMath``): a ``$`` stays a dollar.
"""

from __future__ import annotations

import hashlib
import html
import math
import textwrap
from collections.abc import Sequence

from custom_metrics.common.leaderboard_types import Headline, Row
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard.differences import Difference, row_label
from custom_metrics.leaderboard.display import Paths
from custom_metrics.leaderboard.numbers import cell_text, finite, format_number, interval_text, p_digits, signed
from custom_metrics.leaderboard.summary import Summary, SummaryRow
from custom_metrics.leaderboard.versus_paper import model_key
from custom_metrics.leaderboard.wording import delta_words

ASSET = "plotly-basic.min.js"
CONFIG = {"displaylogo": False, "responsive": True, "typesetMath": False, "modeBarButtonsToRemove": ["select2d"]}
LAYOUT = {
    "paper_bgcolor": "white",
    "plot_bgcolor": "white",
    "font": {"family": "system-ui, sans-serif", "size": 12, "color": "#222"},
    "hoverlabel": {"align": "left"},
}
AXIS = {"gridcolor": "#e5e8ef", "zerolinecolor": "#888", "automargin": True}
BEST_PAPER_ROWS = 4
ALL_PAPER_ROWS = 6  # up to this many, a chart shows every paper row
# Runs: a hue of a qualitative palette (30° apart) picked by the model's name, at a fixed
# saturation, lightness from the setting; the paper's rows: greys, lightness from the name.
HUES = tuple(range(0, 360, 30))
RUN_SATURATION = 62
RUN_LIGHTNESS = (36, 44, 52)
PAPER_LIGHTNESS = (38, 48, 58, 68)
HATCH = {"shape": "/", "fillmode": "overlay", "fgcolor": "rgba(255, 255, 255, 0.85)", "size": 7, "solidity": 0.35}


def _label(text: str) -> str:
    """Text for a plotly label: its tags and entities escaped (plotly knows no ``&quot;``)."""
    return html.escape(text, quote=False)


def _wrap(text: str, width: int = 16) -> str:
    """An axis label broken into lines of about ``width`` characters (escaped)."""
    lines = textwrap.wrap(" ".join(text.split()), width, break_long_words=False, break_on_hyphens=False)
    return "<br>".join(_label(line) for line in lines)


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def model_hues(models: Sequence[str]) -> dict[str, int]:
    """The hue of each model drawn on one page: its name's slot of ``HUES``, or, where two names
    want one slot, the next free one (names in order of their hash, so the first keeps its
    own), so no two models on a page share a hue or sit within 30° while slots remain."""
    hues: dict[str, int] = {}
    free = list(HUES)
    for model in sorted(set(models), key=lambda name: (_hash(name), name)):
        wanted = _hash(model) % len(HUES)
        if not free:  # more models than slots: a hue from the name alone
            hues[model] = _hash(model) % 360
            continue
        slot = next(hue for hue in HUES[wanted:] + HUES[:wanted] if hue in free)
        free.remove(slot)
        hues[model] = slot
    return hues


def colour(row: Row, hues: dict[str, int] | None = None) -> str:
    """A row's colour, from its names alone (a model keeps its hue on every page and in every
    build unless another model on the page wants the same slot: ``model_hues``)."""
    if row.kind == "published":
        lightness = PAPER_LIGHTNESS[_hash(row_label(row.model, row.setting)) % len(PAPER_LIGHTNESS)]
        return f"hsl(215, 8%, {lightness}%)"
    hue = (hues or {}).get(row.model, HUES[_hash(row.model) % len(HUES)])
    lightness = RUN_LIGHTNESS[_hash(row.setting) % len(RUN_LIGHTNESS)] if row.setting else RUN_LIGHTNESS[1]
    return f"hsl({hue}, {RUN_SATURATION}%, {lightness}%)"


def family_charts(summary: Summary, spec: PaperSpec, paths: Paths, prefix: str) -> list[tuple[str, str, dict]]:
    """(div id, title, figure) for each family with a number to draw."""
    charts = []
    for index, (family_key, family) in enumerate(summary.families.items()):
        columns = [h for h in summary.headlines if h.family == family_key and not h.sanity]
        figure = _family_figure(summary, spec, columns, family, paths)  # None without a number to draw
        if figure is not None:
            charts.append((f"{prefix}-{index}", family.title, figure))
    return charts


def _chosen_rows(summary: Summary, spec: PaperSpec, columns: Sequence[Headline]) -> list[SummaryRow]:
    positions = [summary.headlines.index(h) for h in columns]
    has = lambda entry: any(entry.cells[i].key for i in positions)
    runs = [entry for entry in summary.rows if entry.row.kind == "run" and has(entry)]
    papers = [entry for entry in summary.rows if entry.row.kind == "published" and has(entry)]
    if len(papers) > ALL_PAPER_ROWS:
        first = positions[0]
        by_value = sorted(
            (e for e in papers if finite(e.cells[first].value)), key=lambda e: -(e.cells[first].value or 0.0)
        )
        keep = {id(e) for e in by_value[:BEST_PAPER_ROWS]}
        run_models = {model_key(e.row.model_id or e.row.model) for e in runs}
        compared = {id(cell.delta.paper) for e in runs for cell in e.cells if cell.delta is not None}
        references = {h.reference or spec.board.reference_model for h in columns}
        wanted = {spec.board.paper_setting(e.row.setting) for e in runs}
        keep |= {
            id(e)
            for e in papers
            if model_key(e.row.model) in run_models
            or id(e.row) in compared
            or (e.row.model in references and (None in wanted or e.row.setting in wanted))
        }
        papers = [e for e in papers if id(e) in keep]
    return runs + papers


def _family_figure(summary: Summary, spec: PaperSpec, columns: Sequence[Headline], family, paths: Paths) -> dict | None:
    rows = _chosen_rows(summary, spec, columns)
    positions = [summary.headlines.index(h) for h in columns]
    if not any(finite(entry.cells[i].value) for entry in rows for i in positions):
        return None
    categories = [_wrap(h.label) for h in columns]
    hues = model_hues([entry.row.model for entry in summary.rows if entry.row.kind == "run"])
    data = []
    for entry in rows:
        fill = colour(entry.row, hues)
        cells = [entry.cells[i] for i in positions]
        values = [cell.value if finite(cell.value) else None for cell in cells]
        row = entry.row
        name = _label(row_label(row.model, row.setting))
        if row.kind == "published":
            name += " (paper)" if row.origin == "paper" else f" ({_label(row.origin)})"
        if entry.limited:
            name += " ⚠ part of the data"
        intervals = [cell.interval if finite(cell.value) else None for cell in cells]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": categories,
                "y": values,  # a missing value is no bar (None), never a bar of height 0
                "text": ["n/a" if value is None else "0" if value == 0 else "" for value in values],
                "textposition": "outside",
                "cliponaxis": False,
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": [None if i is None else max(0.0, i.high - v) for i, v in zip(intervals, values)],
                    "arrayminus": [None if i is None else max(0.0, v - i.low) for i, v in zip(intervals, values)],
                    "visible": any(i is not None for i in intervals),
                    "thickness": 1.2,
                    "width": 3,
                },
                "customdata": [_hover(cell, paths) for cell in cells],
                "hovertemplate": "<b>%{fullData.name}</b><br>%{customdata}<extra></extra>",
                "marker": {
                    "color": fill,
                    "opacity": 0.8 if entry.limited else 1.0,
                    "pattern": HATCH if entry.limited else {"shape": ""},
                    "line": {"color": fill, "width": 1},
                },
            }
        )
    axis = {**AXIS, "title": {"text": _label(family.unit)}}
    if family.low is not None and family.high is not None:
        axis["range"] = [family.low, family.high * 1.08]
    layout = {
        **LAYOUT,
        "barmode": "group",
        "height": 380 + 22 * ((len(rows) + 1) // 2),
        "margin": {"l": 60, "r": 10, "t": 20, "b": 10},
        "legend": {"orientation": "h", "x": 0, "y": -0.18, "yanchor": "top", "font": {"size": 11}},
        "yaxis": axis,
        "xaxis": {**AXIS, "tickangle": 0},
        "uniformtext": {"minsize": 9, "mode": "show"},
    }
    return {"data": data, "layout": layout, "config": CONFIG}


def _hover(cell, paths: Paths) -> str:
    if cell.key is None:
        return f"{_label(cell.headline.label)}: n/a (not run)"
    lines = [f"{_label(cell.headline.label)}: {_label(cell_text(cell.cell)) if finite(cell.value) else 'NaN'}"]
    if cell.interval is not None and finite(cell.value):
        interval = cell.interval
        lines.append(f"95% interval {interval_text(interval.low, interval.high)} ({_label(interval.method)})")
    if cell.rank is not None:
        lines.append(f"rank {cell.rank}{' (tied)' if cell.tied else ''} on this column")
    if cell.delta is not None and cell.delta.difference is None:
        lines.append(_label(delta_words(cell.delta)))
    elif cell.delta is not None:
        delta = cell.delta
        holm = f", Holm {p_digits(delta.p_adjusted)}" if delta.p_adjusted is not None else ""
        tested = (
            f", {_label(delta.test)}, p = {p_digits(delta.p_value)}{holm}"
            if delta.tested
            else f" ({_label(delta.test)})"
        )
        lines.append(f"Δ vs {_label(delta.paper.model)} (paper): {signed(delta.difference)}{tested}")
    if cell.limited:
        lines.append(f"⚠ {_label(cell.limited)}")
    if cell.cell and cell.cell.source:
        lines.append(f"source: {_label(paths.show(cell.cell.source))}")
    return "<br>".join(lines)


FOREST_SHOWN = 40


def difference_chart(differences: Sequence[Difference], spec: PaperSpec, paths: Paths) -> dict | None:
    """A forest plot: the paired differences (the ``FOREST_SHOWN`` smallest p first, so a page of
    many runs stays readable; the table holds every one) with their 95% intervals; significant
    ones (Holm-adjusted) in colour."""
    finite = [d for d in differences if math.isfinite(d.result.difference)]
    shown = sorted(finite, key=lambda d: (not d.result.significant, d.result.p_value))[:FOREST_SHOWN]
    if not shown:
        return None
    labels = [_label(f"{d.label} · {spec.board.metric_label(d.metric)} ({i + 1})") for i, d in enumerate(shown)]
    data = []
    for significant in (True, False):
        subset = [(label, d) for label, d in zip(labels, shown) if d.result.significant is significant]
        if not subset:
            continue
        data.append(
            {
                "type": "scatter",
                "name": "significant (Holm-adjusted p < 0.05)" if significant else "not significant",
                "x": [d.result.difference for _, d in subset],
                "y": [label for label, _ in subset],
                "mode": "markers",
                "marker": {"size": 10, "color": "#c0392b" if significant else "#6e6e6e"},
                "error_x": {
                    "type": "data",
                    "symmetric": False,
                    "array": [_bar(d.result.high, d.result.difference) for _, d in subset],
                    "arrayminus": [_bar(d.result.difference, d.result.low) for _, d in subset],
                },
                "customdata": [_difference_hover(d, paths) for _, d in subset],
                "hovertemplate": "%{y}<br>%{customdata}<extra></extra>",
            }
        )
    layout = {
        **LAYOUT,
        "height": max(220, 60 + 34 * len(shown)),
        "margin": {"l": 10, "r": 10, "t": 20, "b": 30},
        "yaxis": {**AXIS, "autorange": "reversed"},
        "xaxis": {**AXIS, "title": {"text": "difference A − B (per-document outcome)"}, "zeroline": True},
        "legend": {"orientation": "h", "x": 0, "y": -0.2, "yanchor": "top"},
    }
    return {"data": data, "layout": layout, "config": CONFIG}


def _bar(upper: float | None, lower: float | None) -> float | None:
    """One side of an error bar (None: the difference has no interval, so no bar)."""
    return None if upper is None or lower is None else max(0.0, upper - lower)


def _difference_hover(difference: Difference, paths: Paths) -> str:
    result = difference.result
    interval = result.interval_text
    p_value = f", p = {p_digits(result.p_value)}" + (
        f", Holm {p_digits(result.p_adjusted)}" if result.p_adjusted is not None else ""
    )
    lines = [
        f"difference {signed(result.difference)}, 95% CI {interval}",
        f"{result.test}{p_value}, {result.n} paired docs",
        f"A: {difference.a} ({format_number(result.mean_a)})",
        f"B: {difference.b} ({format_number(result.mean_b)})",
        f"source: {paths.show(difference.sources[0])}",
    ]
    if difference.sources[1] != difference.sources[0]:
        lines.append(f"and {paths.show(difference.sources[1])}")
    return "<br>".join(_label(line) for line in lines)
