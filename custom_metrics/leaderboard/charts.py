"""Interactive charts (plotly) for the leaderboard page: hover shows the value and its source.

plotly.js is written once per output folder (``assets/plotly.min.js``) and each figure
is a ``<div>`` plus its JSON, which plotly escapes for use inside ``<script>``. Plotly
reads labels as a small HTML dialect (``<b>``, ``<br>``, ``<a href>``...), so every name
is HTML-escaped before it becomes a label, and LaTeX typesetting is switched off
(``typesetMath``), so a ``$`` in a model name stays a dollar sign.

Figures are plain dicts rendered without plotly's validation (``validate=False``): the
validated figure objects cost about two seconds per chart, most of a leaderboard build,
for dicts this module writes itself.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import plotly.io

from custom_metrics.common.leaderboard_types import Cell, PaperSpec, Row, Table
from custom_metrics.leaderboard.differences import Difference, row_label
from custom_metrics.leaderboard.render import cell_text, format_number

ASSET = "plotly.min.js"
CONFIG = {"displaylogo": False, "responsive": True, "typesetMath": False}
# plotly's "plotly_white" look, spelled out (the template object is part of what is slow).
LAYOUT = {
    "paper_bgcolor": "white",
    "plot_bgcolor": "white",
    "font": {"family": "system-ui, sans-serif", "size": 12},
    "colorway": ["#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692", "#b6e880"],
    "hoverlabel": {"align": "left"},
}
AXIS = {"gridcolor": "#ebf0f8", "zerolinecolor": "#ebf0f8", "automargin": True}


def _html(data: list[dict], layout: dict, div_id: str) -> str:
    figure = {"data": data, "layout": {**LAYOUT, **layout}}
    return plotly.io.to_html(
        figure, include_plotlyjs=False, full_html=False, div_id=div_id, config=CONFIG, validate=False
    )


# Published rows beyond this many start hidden (a click on the legend shows them).
VISIBLE_PUBLISHED = 4


def _label(text: str) -> str:
    """Text for a plotly label: its tags and entities escaped (plotly knows no ``&quot;``)."""
    return html.escape(text, quote=False)


def plotly_script() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _finite(cell: Cell | None) -> bool:
    return cell is not None and cell.value is not None and math.isfinite(cell.value)


def score_chart(table: Table, spec: PaperSpec, div_id: str) -> str | None:
    """Grouped bars: one group per charted column, one bar per row (run or published)."""
    by_key = {column.key: column for column in table.columns}
    columns = [by_key[key] for key in table.chart_keys if any(_finite(row.cells.get(key)) for row in table.rows)]
    rows = [row for row in table.rows if any(_finite(row.cells.get(c.key)) for c in columns)]
    if not columns or not rows:
        return None
    categories = [f"{_label(spec.task_label(c.task))}<br>{_label(spec.metric_label(c.metric))}" for c in columns]
    published = [row for row in rows if row.kind == "published"]
    data = []
    for row in rows:
        cells = [row.cells.get(column.key) for column in columns]
        values = [cell.value if _finite(cell) else None for cell in cells]
        errors = [cell.pm if _finite(cell) and cell.pm is not None else None for cell in cells]
        extra = [_note(row, column.task) for column in columns]
        data.append(
            {
                "type": "bar",
                "name": _label(row_label(row.model, row.setting)) + (" (paper)" if row.kind == "published" else ""),
                "x": categories,
                "y": values,
                "error_y": {"type": "data", "array": errors, "visible": any(e is not None for e in errors)},
                "customdata": [
                    [
                        _label(cell_text(cell)) if _finite(cell) else "",
                        _label(cell.source or "") if cell else "",
                        note,
                    ]
                    for cell, note in zip(cells, extra)
                ],
                "hovertemplate": "<b>%{fullData.name}</b><br>%{x}: %{customdata[0]}<br>source: %{customdata[1]}"
                "%{customdata[2]}<extra></extra>",
                "marker": {"opacity": 0.55 if row.kind == "published" else 1.0},
                "visible": "legendonly" if row.kind == "published" and len(published) > VISIBLE_PUBLISHED else True,
            }
        )
    layout = {
        "barmode": "group",
        "height": 460,
        "margin": {"l": 50, "r": 10, "t": 40, "b": 10},
        "title": {"text": _label(f"{spec.key.upper()}: headline metrics (hover a bar for value and source)")},
        "legend": {"orientation": "v", "x": 1.01, "y": 1, "font": {"size": 11}},
        "yaxis": {**AXIS, "title": {"text": "score"}},
        "xaxis": {**AXIS, "tickangle": 0},
    }
    return _html(data, layout, div_id)


def _note(row: Row, task: str) -> str:
    subset = row.subsets.get(task)
    return f"<br>⚠ {_label(subset)}" if subset else ""


def difference_chart(differences: Sequence[Difference], spec: PaperSpec, div_id: str) -> str | None:
    """A forest plot: each paired difference with its 95% interval; significant ones in colour."""
    shown = [d for d in differences if math.isfinite(d.result.difference)]
    if not shown:
        return None
    labels = [_label(f"{d.label} · {spec.metric_label(d.metric)} ({i + 1})") for i, d in enumerate(shown)]
    data = []
    for significant in (True, False):
        subset = [(label, d) for label, d in zip(labels, shown) if d.result.significant is significant]
        if not subset:
            continue
        data.append(
            {
                "type": "scatter",
                "name": "significant (p < 0.05)" if significant else "not significant",
                "x": [d.result.difference for _, d in subset],
                "y": [label for label, _ in subset],
                "mode": "markers",
                "marker": {"size": 10, "color": "#c0392b" if significant else "#7f8c8d"},
                "error_x": {
                    "type": "data",
                    "symmetric": False,
                    "array": [
                        d.result.high - d.result.difference if d.result.high is not None else 0 for _, d in subset
                    ],
                    "arrayminus": [
                        d.result.difference - d.result.low if d.result.low is not None else 0 for _, d in subset
                    ],
                },
                "customdata": [_difference_hover(d) for _, d in subset],
                "hovertemplate": "%{y}<br>%{customdata}<extra></extra>",
            }
        )
    layout = {
        "height": max(220, 60 + 34 * len(shown)),
        "margin": {"l": 10, "r": 10, "t": 40, "b": 30},
        "title": {"text": "Paired differences A − B with 95% bootstrap intervals"},
        "yaxis": {**AXIS, "autorange": "reversed"},
        "xaxis": {**AXIS, "title": {"text": "difference"}, "zeroline": True, "zerolinecolor": "black"},
        "legend": {"orientation": "h", "y": -0.2},
    }
    return _html(data, layout, div_id)


def _difference_hover(difference: Difference) -> str:
    result = difference.result
    interval = (
        f"[{format_number(result.low)}, {format_number(result.high)}]" if result.low is not None else "n/a (1 doc)"
    )
    p_value = f", p = {result.p_value:.3g}" if result.p_value is not None else ""
    lines = [
        f"difference {result.difference:+.4f}, 95% CI {interval}",
        f"{result.test}{p_value}, {result.n} paired docs",
        f"A: {difference.a} ({format_number(result.mean_a)})",
        f"B: {difference.b} ({format_number(result.mean_b)})",
        f"source: {difference.sources[0]}",
    ]
    if difference.sources[1] != difference.sources[0]:
        lines.append(f"and {difference.sources[1]}")
    return "<br>".join(_label(line) for line in lines)
