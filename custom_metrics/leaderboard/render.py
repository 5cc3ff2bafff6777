"""Writing leaderboard tables as markdown and CSV (they diff well in git), and the number
formatting every output shares.

CSV cells hold each number exactly (``repr`` of the harness' float, the paper's digits
for published rows) so a script can check them against the results files; markdown and
the page round for reading. Names come from files anyone can write, so both outputs keep
them text: a CSV cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return
that is not a number gets a leading apostrophe (a spreadsheet would run it as a formula,
the OWASP rule); markdown backslash-escapes what a renderer would act on (``<`` of raw
HTML, ``[`` and ``]`` of links and images, emphasis, code, ``|``, ``$`` of math, ``&`` of
an entity), and nothing else, so ``Zaninello & Magnini`` reads as written.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.leaderboard_types import Cell, Column, Table
from custom_metrics.common.results import Problem
from custom_metrics.leaderboard.differences import Difference


def format_number(value: float | None, column_kind: str = "metric") -> str:
    if value is None:
        return ""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if column_kind == "samples" or (value.is_integer() and abs(value) >= 100):
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.4f}"


def signed(value: float) -> str:
    """A difference with its sign, four decimals; one that rounds to zero reads +0.0000, not -0.0000."""
    return f"{value if round(value, 4) != 0 else 0.0:+.4f}"


def cell_text(cell: Cell | None, column_kind: str = "metric") -> str:
    """A cell as read: the paper's digits or the rounded value, with ± only where a spread
    exists: a ± of 0 is 0 by construction here (the stderr of an all-right or all-wrong run,
    the std of RULE's zero-shot main questions that the five splits share), so none shows."""
    if cell is None:
        return ""
    text = _printed(cell.text) or format_number(cell.value, column_kind)
    pm = (_printed(cell.pm_text) or format_number(cell.pm)) if cell.pm else ""
    return f"{text} ± {pm}" if pm else text


def _printed(text: str | None) -> str | None:
    """A published number as printed, unless it carries more digits than anyone reads (a
    stderr copied from a results file, 0.014564428416311686): then None, and it is rounded."""
    if text is None:
        return None
    decimals = len(text.partition(".")[2])
    return text if decimals <= 5 else None


def column_groups(table: Table) -> list[tuple[str, list[Column]]]:
    """The charted columns first, the rest in a second table: one table would be too wide."""
    shown = [c for c in table.columns if any(c.key in row.cells for row in table.rows)]
    main = [c for c in shown if c.key in table.chart_keys or c.kind == "samples"]
    rest = [c for c in shown if c not in main]
    groups = [("Main columns", main), ("More metrics", rest)]
    return [(title, columns) for title, columns in groups if columns]


def markdown(table: Table, problems: Sequence[Problem], differences: Sequence[Difference] = ()) -> str:
    lines = [f"## {_md(table.title)}"]
    for title, columns in column_groups(table):
        lines += ["", f"### {title}", ""]
        lines.append("| model | setting | row | " + " | ".join(_md(c.label) for c in columns) + " |")
        lines.append("|---|---|---|" + "---:|" * len(columns))
        for row in table.rows:
            cells = " | ".join(_md(cell_text(row.cells.get(c.key), c.kind)) for c in columns)
            lines.append(f"| {_md(row.model)} | {_md(row.setting)} | {row.kind} | {cells} |")
    if differences:
        lines += ["", "### Paired differences (A − B over the same documents)", ""]
        lines.append("| comparison | metric | docs | A − B | 95% CI | test | p | significant |")
        lines.append("|---|---|---:|---:|---|---|---:|---|")
        for d in differences:
            r = d.result
            interval = f"[{format_number(r.low)}, {format_number(r.high)}]" if r.low is not None else "n/a"
            p_value = f"{r.p_value:.3g}" if r.p_value is not None else ""
            lines.append(
                f"| {_md(d.label)} | {_md(d.metric)} | {r.n} | {r.difference:+.4f} | {interval} | {r.test} | "
                f"{p_value} | {'yes' if r.significant else 'no'} |"
            )
    lines += ["", "Sources:", ""]
    lines += [
        f"- {_md(row.model)}{f' ({_md(row.setting)})' if row.setting else ''} ({row.kind}): "
        f"{_md('; '.join(row.sources))}"
        for row in table.rows
    ]
    if table.notes:
        lines += ["", "Notes:", ""] + [f"- {_md(note)}" for note in table.notes]
    if problems:
        lines += ["", "Skipped files:", ""] + [f"- {_md(str(p.path))}: {_md(p.reason)}" for p in problems]
    return "\n".join(lines) + "\n"


# What a markdown renderer acts on in running text: raw HTML and autolinks (<), links and
# images ([ ]), emphasis (* and _ at a word's edge), code (`), strikethrough (~), math ($),
# table cells (|), escapes themselves (\\), and & only where it starts an entity (&lt;).
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<>|~$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|&(?=#?[0-9A-Za-z]+;)")


def _md(text: str) -> str:
    """``text`` as markdown that renders as exactly that text, on one line."""
    return _MARKDOWN_SPECIAL.sub(lambda match: "\\" + match.group(), " ".join(text.splitlines()))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A CSV value a spreadsheet shows as text: a string starting like a formula gets a leading
    apostrophe, unless it is a number (``-0.25`` stays numeric)."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def write_csv(table: Table, path: Path) -> None:
    """One row per model and setting; each column has its value and, where any row has one, its ± column."""
    columns = [c for c in table.columns if any(c.key in row.cells for row in table.rows)]
    with_pm = {c.key for c in columns if any(_has_pm(row.cells.get(c.key)) for row in table.rows)}
    header = ["model", "setting", "row", "sources"]
    for column in columns:
        header.append(column.label)
        if column.key in with_pm:
            header.append(f"{column.label} ±")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(map(csv_cell, header))
        for row in table.rows:
            line = [row.model, row.setting, row.kind, "; ".join(row.sources)]
            for column in columns:
                cell = row.cells.get(column.key)
                line.append(_exact(cell, pm=False))
                if column.key in with_pm:
                    line.append(_exact(cell, pm=True))
            writer.writerow(map(csv_cell, line))


DIFFERENCE_COLUMNS = (
    "kind",
    "comparison",
    "a",
    "b",
    "task",
    "metric",
    "docs",
    "mean_a",
    "mean_b",
    "difference",
    "ci_low",
    "ci_high",
    "test",
    "p_value",
    "significant",
    "samples_a",
    "samples_b",
)


def write_differences_csv(differences: Sequence[Difference], path: Path) -> None:
    """Every paired difference with its exact numbers, for scripts."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(DIFFERENCE_COLUMNS)
        for d in differences:
            r = d.result
            optional = ("" if value is None else repr(value) for value in (r.low, r.high))
            writer.writerow(
                csv_cell(value)
                for value in [
                    d.kind,
                    d.label,
                    d.a,
                    d.b,
                    d.task,
                    d.metric,
                    r.n,
                    repr(r.mean_a),
                    repr(r.mean_b),
                    repr(r.difference),
                    *optional,
                    r.test,
                    "" if r.p_value is None else repr(r.p_value),
                    r.significant,
                    *d.sources,
                ]
            )


def _has_pm(cell: Cell | None) -> bool:
    return cell is not None and cell.pm is not None


def _exact(cell: Cell | None, pm: bool) -> str:
    if cell is None:
        return ""
    text, value = (cell.pm_text, cell.pm) if pm else (cell.text, cell.value)
    if text is not None:
        return text
    return "" if value is None else repr(value)
