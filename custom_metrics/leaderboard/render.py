"""Writing leaderboard tables as markdown, CSV, self-contained HTML and PNG bar charts.

CSV cells hold each number exactly (``repr`` of the harness' float, the paper's digits
for published rows) so a script can check them against the results files; markdown and
HTML round for reading. The HTML embeds its charts as base64 PNGs, so one file can be
mailed or attached to a paper review without its folder.
"""

from __future__ import annotations

import base64
import csv
import html
import math
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.leaderboard_types import Cell, Column, Table
from custom_metrics.common.results import Problem


def write_outputs(tables: Sequence[Table], problems: Sequence[Problem], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    charts: dict[str, Path | None] = {}
    for table in tables:
        charts[table.key] = write_chart(table, out / f"{table.key}.png")
        (out / f"{table.key}.md").write_text(markdown(table, problems), encoding="utf-8")
        write_csv(table, out / f"{table.key}.csv")
        (out / f"{table.key}.html").write_text(page([table], problems, charts), encoding="utf-8")
        written += [out / f"{table.key}.{ext}" for ext in ("md", "csv", "html")]
        if charts[table.key]:
            written.append(charts[table.key])
    index_md = "\n\n".join(markdown(table, problems if i == 0 else ()) for i, table in enumerate(tables))
    (out / "index.md").write_text(index_md, encoding="utf-8")
    (out / "index.html").write_text(page(tables, problems, charts), encoding="utf-8")
    return [*written, out / "index.md", out / "index.html"]


def format_number(value: float | None, column_kind: str = "metric") -> str:
    if value is None:
        return ""
    if math.isnan(value):
        return "NaN"
    if column_kind == "samples" or (value.is_integer() and abs(value) >= 100):
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.4f}"


def cell_text(cell: Cell | None, column: Column) -> str:
    if cell is None:
        return ""
    text = cell.text or format_number(cell.value, column.kind)
    pm = cell.pm_text or (format_number(cell.pm) if cell.pm is not None else "")
    return f"{text} ± {pm}" if pm else text


def column_groups(table: Table) -> list[tuple[str, list[Column]]]:
    """The charted columns first, the rest in a second table: one table would be too wide."""
    shown = [c for c in table.columns if any(c.key in row.cells for row in table.rows)]
    main = [c for c in shown if c.key in table.chart_keys or c.kind == "samples"]
    rest = [c for c in shown if c not in main]
    groups = [("Main columns", main), ("More metrics", rest)]
    return [(title, columns) for title, columns in groups if columns]


def markdown(table: Table, problems: Sequence[Problem]) -> str:
    lines = [f"## {table.title}"]
    for title, columns in column_groups(table):
        lines += ["", f"### {title}", ""]
        lines.append("| model | row | " + " | ".join(_md(c.label) for c in columns) + " |")
        lines.append("|---|---|" + "---:|" * len(columns))
        for row in table.rows:
            cells = " | ".join(_md(cell_text(row.cells.get(c.key), c)) for c in columns)
            lines.append(f"| {_md(row.model)} | {row.kind} | {cells} |")
    lines += ["", "Sources:", ""]
    lines += [f"- {_md(row.model)} ({row.kind}): {'; '.join(row.sources)}" for row in table.rows]
    if table.notes:
        lines += ["", "Notes:", ""] + [f"- {note}" for note in table.notes]
    if problems:
        lines += ["", "Skipped files:", ""] + [f"- {p.path}: {p.reason}" for p in problems]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_csv(table: Table, path: Path) -> None:
    """One row per model; each column has its value and, where any row has one, its ± column."""
    columns = [c for c in table.columns if any(c.key in row.cells for row in table.rows)]
    with_pm = {c.key for c in columns if any(_has_pm(row.cells.get(c.key)) for row in table.rows)}
    header = ["model", "row", "sources"]
    for column in columns:
        header.append(column.label)
        if column.key in with_pm:
            header.append(f"{column.label} ±")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for row in table.rows:
            line = [row.model, row.kind, "; ".join(row.sources)]
            for column in columns:
                cell = row.cells.get(column.key)
                line.append(_exact(cell, pm=False))
                if column.key in with_pm:
                    line.append(_exact(cell, pm=True))
            writer.writerow(line)


def _has_pm(cell: Cell | None) -> bool:
    return cell is not None and cell.pm is not None


def _exact(cell: Cell | None, pm: bool) -> str:
    if cell is None:
        return ""
    text, value = (cell.pm_text, cell.pm) if pm else (cell.text, cell.value)
    if text is not None:
        return text
    return "" if value is None else repr(value)


def write_chart(table: Table, path: Path) -> Path | None:
    """Horizontal bars per charted column (one panel each), every row a bar; None if empty."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_key = {c.key: c for c in table.columns}
    panels = [by_key[key] for key in table.chart_keys if any(_finite(row.cells.get(key)) for row in table.rows)]
    if not panels:
        return None
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    labels = [f"{row.model}{' (paper)' if row.kind == 'published' else ''}" for row in table.rows]
    # Fixed margins instead of tight_layout, which draws the figure twice: room for the
    # longest row label (7 pt text is about 0.055 in per character) and the titles.
    label_width = 0.3 + 0.055 * max(len(label) for label in labels)
    panel_height = 0.22 * len(table.rows) + 0.8
    width, height = label_width + 3.4 * ncols, panel_height * nrows + 0.9
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, sharey=True)
    fig.subplots_adjust(
        left=label_width / width,
        right=1 - 0.2 / width,
        top=1 - 0.75 / height,
        bottom=0.35 / height,
        wspace=0.08,
        hspace=0.8 / panel_height,
    )
    for ax, column in zip(axes.flat, panels):
        values = [_value(row.cells.get(column.key)) for row in table.rows]
        errors = [
            (row.cells[column.key].pm or 0.0) if row.kind == "run" and _finite(row.cells.get(column.key)) else 0.0
            for row in table.rows
        ]
        colors = ["tab:blue" if row.kind == "run" else "0.7" for row in table.rows]
        positions = list(range(len(table.rows)))
        ax.barh(positions, values, xerr=errors, color=colors, error_kw={"elinewidth": 0.8})
        ax.set_yticks(positions, labels, fontsize=7)
        ax.set_title(column.label, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.axvline(0, color="black", linewidth=0.5)
    axes.flat[0].invert_yaxis()  # shared: inverting once puts the first row on top everywhere
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(f"{table.title}\n(blue: runs, ± harness stderr; grey: published)", fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _finite(cell: Cell | None) -> bool:
    return cell is not None and cell.value is not None and math.isfinite(cell.value)


def _value(cell: Cell | None) -> float:
    return cell.value if _finite(cell) else 0.0  # type: ignore[union-attr]


def page(tables: Sequence[Table], problems: Sequence[Problem], charts: dict[str, Path | None]) -> str:
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>explain-eval leaderboard</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 6px}td.n{text-align:right}tr.published{color:#555;"
        "background:#f4f4f4}.problems{color:#a00}img{max-width:100%}</style></head><body>",
        "<h1>explain-eval leaderboard</h1>",
    ]
    if problems:
        parts.append("<div class='problems'><h3>Skipped files</h3><ul>")
        parts += [f"<li>{html.escape(str(p.path))}: {html.escape(p.reason)}</li>" for p in problems]
        parts.append("</ul></div>")
    for table in tables:
        parts.append(_html_table(table))
        chart = charts.get(table.key)
        if chart:
            data = base64.b64encode(chart.read_bytes()).decode("ascii")
            parts.append(f"<p><img alt='{html.escape(table.title)}' src='data:image/png;base64,{data}'></p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _html_table(table: Table) -> str:
    out = [f"<h2>{html.escape(table.title)}</h2>"]
    for title, columns in column_groups(table):
        out.append(f"<h3>{html.escape(title)}</h3><table><tr><th>model</th><th>row</th>")
        out += [f"<th>{html.escape(c.label)}</th>" for c in columns]
        out.append("</tr>")
        for row in table.rows:
            tip = html.escape("; ".join(row.sources), quote=True)
            out.append(f"<tr class='{row.kind}'><td title='{tip}'>{html.escape(row.model)}</td><td>{row.kind}</td>")
            out += [f"<td class='n'>{html.escape(cell_text(row.cells.get(c.key), c))}</td>" for c in columns]
            out.append("</tr>")
        out.append("</table>")
    out.append("<p>Sources:</p><ul>")
    out += [
        f"<li>{html.escape(row.model)} ({row.kind}): {html.escape('; '.join(row.sources))}</li>" for row in table.rows
    ]
    out.append("</ul>")
    if table.notes:
        out.append("<p>Notes:</p><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in table.notes) + "</ul>")
    return "".join(out)
