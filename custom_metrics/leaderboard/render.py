"""Writing leaderboard tables as markdown and CSV (they diff well in git); the numbers and words
in them come from ``numbers`` and ``wording``, as on the page.

CSV cells hold each number exactly (``repr`` of the harness' float, the paper's digits
for published rows) so a script can check them against the results files; markdown and
the page round for reading. Names come from files anyone can write, so both outputs keep
them text: ``csv_cell`` (a spreadsheet would run a formula: the OWASP rule), ``_md``
(escaping only what a renderer acts on, so ``Zaninello & Magnini`` reads as written).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from custom_metrics.common.leaderboard_types import Cell, Column, Table
from custom_metrics.common.results import Problem
from custom_metrics.leaderboard.differences import Difference, row_label
from custom_metrics.leaderboard.display import Paths
from custom_metrics.leaderboard.numbers import cell_text, finite, interval_text, p_digits, signed
from custom_metrics.leaderboard.procedures import ALPHA, USES
from custom_metrics.leaderboard.summary import Summary, SummaryCell, SummaryRow
from custom_metrics.leaderboard.wording import (
    RANK_RULE,
    data_text,
    delta_interval_text,
    rank_text,
    row_flags,
    row_rank_text,
    summary_order,
    versus_text,
)

# Paired differences a markdown table lists at most (every pair of 100 runs is 4,950 lines per
# task: the CSV holds them all).
MARKDOWN_DIFFERENCES = 200


def column_groups(table: Table) -> list[tuple[str, list[Column]]]:
    """The charted columns first, the rest in a second table: one table would be too wide."""
    shown = [c for c in table.columns if any(c.key in row.cells for row in table.rows)]
    main = [c for c in shown if c.key in table.chart_keys or c.kind == "samples"]
    rest = [c for c in shown if c not in main]
    return [(title, columns) for title, columns in (("Main columns", main), ("More metrics", rest)) if columns]


def markdown(
    table: Table, summary: Summary, problems: Sequence[Problem], differences: Sequence[Difference], paths: Paths
) -> str:
    """The paper's tables as markdown, in the page's order (your runs first, in rank order, then
    the published rows)."""
    ordered = summary_order(table, summary)
    lines = [f"## {_md(table.title)}"]
    if summary.headlines:
        lines += ["", "### Summary (your runs first, then the published rows; each in rank order)", ""]
        lines.append(
            "Each number with its 95% interval and its rank on that column among the rows of its group "
            f"({RANK_RULE}; `=` a tie; `ref`: the paper's rows, references, not ranked). "
            f"{summary.tests} Δ-vs-paper test(s), Holm-adjusted within each run row's own family; reproduced: the "
            f"90% interval of Δ inside ±{summary.margin:g}"
            + (f"; {len(differences)} paired test(s), Holm-adjusted within each pair of rows." if differences else ".")
        )
        heads = " | ".join(_md(h.label) for h in summary.headlines)
        lines += ["", f"| rank | model | setting | row | data | {heads} | flags |"]
        lines.append("|---:|---|---|---|---|" + "---:|" * len(summary.headlines) + "---|")
        for entry in summary.rows:
            row = entry.row
            cells = " | ".join(_md(_summary_cell(c)) for c in entry.cells)
            rank = row_rank_text(entry, summary)
            flags = "; ".join(paths.text(flag) for flag in row_flags(row))
            lines.append(
                f"| {rank} | {_md(row.model)} | {_md(row.setting)} | {row.kind} | {_md(data_text(row, entry))} "
                f"| {cells} | {_md(flags)} |"
            )
        deltas = [
            (entry, c) for entry in summary.rows for c in entry.cells if c.delta and c.delta.difference is not None
        ]
        if deltas:
            lines += ["", "### Δ vs paper", ""]
            lines.append(
                "| model | column | Δ | vs | test | 95% interval | p | p (Holm, family) | significant | "
                "reproduced (TOST) |"
            )
            lines.append("|---|---|---:|---|---|---|---:|---:|---|---|")
            for entry, c in deltas:
                d = c.delta
                p_value = p_digits(d.p_value)
                p_holm = f"{p_digits(d.p_adjusted)} ({d.family_name}, {d.family})" if d.p_adjusted is not None else ""
                significant = ("yes" if d.significant else "no") if d.tested else ""
                reproduced = d.equivalence.verdict if d.equivalence is not None else ""
                lines.append(
                    f"| {_md(row_label(entry.row.model, entry.row.setting))} | {_md(c.headline.label)} | "
                    f"{signed(d.difference)} | {_md(versus_text(d))} | {_md(d.test)} | "
                    f"{_md(delta_interval_text(d))} | {p_value} | {_md(p_holm)} | {significant} | "
                    f"{_md(reproduced)} |"
                )
    for title, columns in column_groups(table):
        lines += ["", f"### {title}", ""]
        lines.append("| model | setting | row | data | " + " | ".join(_md(c.label) for c in columns) + " |")
        lines.append("|---|---|---|---|" + "---:|" * len(columns))
        for row, entry in ordered:
            cells = " | ".join(_md(cell_text(row.cells.get(c.key), c.kind)) for c in columns)
            lines.append(
                f"| {_md(row.model)} | {_md(row.setting)} | {row.kind} | {_md(data_text(row, entry))} | {cells} |"
            )
    if differences:
        shown = [d for d in differences if d.kind == "same run" or d.result.significant][:MARKDOWN_DIFFERENCES]
        lines += ["", "### Paired differences (A − B over the same documents)", ""]
        lines.append(
            f"{len(differences)} paired test(s); 95% intervals from each test's own procedure (p < 0.05 exactly "
            "when it excludes 0); significant: Holm-adjusted p < 0.05 within the test's family (every test of the "
            "same two rows, or of one run within itself). Below: the comparisons "
            f"within a run and the significant ones ({len(shown)} shown); every one is in the paired "
            "differences CSV."
        )
        lines += ["", "| comparison | metric | docs | A − B | 95% CI | test | p | p (Holm, family) | significant |"]
        lines.append("|---|---|---:|---:|---|---|---:|---:|---|")
        for d in shown:
            r = d.result
            p_holm = _md(f"{p_digits(r.p_adjusted)} ({r.family_name}, {r.family})") if r.p_adjusted is not None else ""
            lines.append(
                f"| {_md(d.label)} | {_md(d.metric)} | {r.n} | {r.difference:+.4f} | "
                f"{_md(r.interval_text)} | {r.test} | {p_digits(r.p_value)} | {p_holm} | "
                f"{'yes' if r.significant else 'no'} |"
            )
    lines += ["", "Sources:", ""]
    lines += [
        f"- {_md(row.model)}{f' ({_md(row.setting)})' if row.setting else ''} ({row.kind}): "
        f"{_md('; '.join(paths.show(source) for source in row.sources))}"
        for row, _ in ordered
    ]
    if table.notes:
        lines += ["", "Notes:", ""] + [f"- {_md(paths.text(note))}" for note in table.notes]
    if problems:
        lines += ["", "Skipped files:", ""] + [
            f"- {_md(paths.show(p.path))}: {_md(paths.text(p.reason))}" for p in problems
        ]
    return "\n".join(lines) + "\n"


def _summary_cell(cell: SummaryCell) -> str:
    if cell.key is None or cell.cell is None:
        return "–"
    if not finite(cell.value):
        return "NaN"
    interval = cell.interval
    text = cell_text(cell.cell).split(" ± ")[0]
    if interval is not None:
        text += f" {interval_text(interval.low, interval.high)}"
    if cell.rank is not None:
        text += f" #{cell.rank}{'=' if cell.tied else ''}"
    return text


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


def headline_fields(cell: SummaryCell | None, entry: SummaryRow | None) -> dict[str, object]:
    """One summary number as exact values for scripts ("" where there is none, and for no cell)."""
    shown = cell is not None and cell.key is not None and cell.cell is not None
    interval, evidence, delta = (cell.interval, cell.evidence, cell.delta) if shown else (None, None, None)
    adjusted = delta is not None and delta.p_adjusted is not None
    found = delta.equivalence if delta is not None else None
    return {
        "value": _exact(cell.cell, pm=False) if shown else "",
        "ci_low": "" if interval is None else repr(interval.low),
        "ci_high": "" if interval is None else repr(interval.high),
        "interval": (f"none: {evidence.reason}" if evidence is not None and evidence.reason else "")
        if interval is None
        else interval.method,
        "items": "" if evidence is None or evidence.items is None else evidence.items,
        "rank": rank_text(cell, entry) if shown else "",
        "delta": "" if delta is None or delta.difference is None else repr(delta.difference),
        "vs": ""
        if delta is None
        else f"{delta.paper.model} · {delta.paper.setting}" + ("" if delta.same_model else " (reference)"),
        "test": "" if delta is None else delta.test,
        "paper_items": "" if delta is None or delta.paper_items is None else delta.paper_items,
        "p": "" if delta is None or delta.p_value is None else repr(delta.p_value),
        "p_holm": repr(delta.p_adjusted) if adjusted else "",
        "family": delta.family_name if adjusted else "",
        "family_size": delta.family if adjusted else "",
        "significant": "" if delta is None or not delta.tested else delta.significant,
        "interval_of": "" if delta is None or delta.low is None else delta.interval_of,
        "test_low": "" if delta is None or delta.low is None else repr(delta.low),
        "test_high": "" if delta is None or delta.high is None else repr(delta.high),
        "reproduced": "" if found is None else found.equivalent,
        "tost_low": "" if found is None else repr(found.low),
        "tost_high": "" if found is None else repr(found.high),
        "margin": "" if found is None else found.margin,
    }


# Per headline, in the CSV and JSON: the summary's numbers and the test behind each.
HEADLINE_FIELDS = tuple(headline_fields(None, None))


def write_csv(table: Table, summary: Summary, path: Path, paths: Paths) -> None:
    """One row per model and setting, in rank order: the summary's fields, then every metric
    with its ± column where any row has one; files as the page names them."""
    columns = [c for c in table.columns if any(c.key in row.cells for row in table.rows)]
    with_pm = {
        c.key for c in columns if any(c.key in row.cells and row.cells[c.key].pm is not None for row in table.rows)
    }
    header = ["rank", "model", "setting", "row", "data", "flags"]
    for headline in summary.headlines:
        header += [f"{headline.keys[0]} {name}" for name in HEADLINE_FIELDS]
    for column in columns:
        header.append(column.label)
        if column.key in with_pm:
            header.append(f"{column.label} ±")
    header.append("sources")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(map(csv_cell, header))
        for row, entry in summary_order(table, summary):
            rank = row_rank_text(entry, summary)
            flags = "; ".join(paths.text(flag) for flag in row_flags(row))
            line: list[object] = [rank, row.model, row.setting, row.kind, data_text(row, entry), flags]
            for index in range(len(summary.headlines)):
                line += list(headline_fields(entry.cells[index] if entry else None, entry).values())
            for column in columns:
                cell = row.cells.get(column.key)
                line.append(_exact(cell, pm=False))
                if column.key in with_pm:
                    line.append(_exact(cell, pm=True))
            line.append("; ".join(paths.show(source) for source in row.sources))
            writer.writerow(map(csv_cell, line))


def write_json(table: Table, summary: Summary, differences: Sequence[Difference], path: Path, paths: Paths) -> None:
    """The same table as the CSV, for scripts, with the tests' counts and correction."""
    rows = [
        {
            "rank": row_rank_text(entry, summary),
            "model": row.model,
            "setting": row.setting,
            "row": row.kind,
            "origin": row.origin or "run",
            "data": data_text(row, entry),
            "flags": [paths.text(flag) for flag in row_flags(row)],
            "headlines": {h.keys[0]: headline_fields(entry.cells[i], entry) for i, h in enumerate(summary.headlines)}
            if entry is not None
            else {},
            # strict JSON: NaN is null
            "metrics": {
                key: c.value if finite(c.value) else None for key, c in row.cells.items() if c.value is not None
            },
            "sources": [paths.show(source) for source in row.sources],
        }
        for row, entry in summary_order(table, summary)
    ]
    document = {
        "paper": table.key,
        "title": table.title,
        "main": summary.main.keys[0] if summary.main else None,
        "tests": {
            "versus_paper": {
                "count": summary.tests,
                "correction": "holm",
                "family": "each run row: its own tests against the paper",
                "alpha": ALPHA,
                "p": "central: twice the smaller one-sided p",
                "reproduced": f"TOST: the 90% interval of Δ inside ±{summary.margin:g}",
            },
            "paired": {
                "count": len(differences),
                "correction": "holm",
                "family": "each pair of rows (every test of those two), or one run's tests within itself",
                "alpha": ALPHA,
            },
            "rank": RANK_RULE,
            "procedures": [asdict(use) for use in USES],
        },
        "rows": rows,
        "notes": [paths.text(note) for note in table.notes],
    }
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


# Each column of the paired differences CSV with its exact value; then the two samples files.
DIFFERENCE_FIELDS: dict[str, Callable[[Difference], object]] = {
    "kind": lambda d: d.kind,
    "comparison": lambda d: d.label,
    "a": lambda d: d.a,
    "b": lambda d: d.b,
    "task": lambda d: d.task,
    "metric": lambda d: d.metric,
    "docs": lambda d: d.result.n,
    "mean_a": lambda d: repr(d.result.mean_a),
    "mean_b": lambda d: repr(d.result.mean_b),
    "difference": lambda d: repr(d.result.difference),
    "ci_low": lambda d: "" if d.result.low is None else repr(d.result.low),
    "ci_high": lambda d: "" if d.result.high is None else repr(d.result.high),
    "no_interval": lambda d: d.result.no_interval,
    "test": lambda d: d.result.test,
    "p_value": lambda d: repr(d.result.p_value),
    "p_holm": lambda d: "" if d.result.p_adjusted is None else repr(d.result.p_adjusted),
    "family": lambda d: d.result.family_name,
    "family_size": lambda d: d.result.family,
    "significant": lambda d: d.result.significant,
}


def write_differences_csv(differences: Sequence[Difference], path: Path, paths: Paths) -> None:
    """Every paired difference with its exact numbers, for scripts (files as the page names them)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*DIFFERENCE_FIELDS, "samples_a", "samples_b"])
        for d in differences:
            values = [value(d) for value in DIFFERENCE_FIELDS.values()]
            writer.writerow(csv_cell(value) for value in [*values, *(paths.show(source) for source in d.sources)])


def _exact(cell: Cell | None, pm: bool) -> str:
    if cell is None:
        return ""
    text, value = (cell.pm_text, cell.pm) if pm else (cell.text, cell.value)
    if text is not None:
        return text
    return "" if value is None else repr(value)
