"""The number formatting every leaderboard output shares (markdown, CSV text, the HTML page):
one module, so a value reads the same in each and the page's modules need not reach into the
markdown writer for it.
"""

from __future__ import annotations

import math

from custom_metrics.common.leaderboard_types import Cell


def finite(value: float | None) -> bool:
    """A number to show, rank or draw: neither missing nor NaN nor infinite."""
    return value is not None and math.isfinite(value)


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
    return text if text is not None and len(text.partition(".")[2]) <= 5 else None


def p_digits(p_value: float | None) -> str:
    """A p-value in a table of tests: three significant digits ("" for none)."""
    return "" if p_value is None else f"{p_value:.3g}"


def p_text(p_value: float) -> str:
    """A p-value as read in a cell: two decimals, or "p < 0.001"."""
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.2f}" if p_value >= 0.01 else f"p = {p_value:.3f}"


def interval_text(low: float | None, high: float | None, signed_values: bool = False) -> str:
    """A 95% interval as read: ``[0.7500, 0.8100]``; "" when there is none."""
    if low is None or high is None:
        return ""
    shown = signed if signed_values else format_number
    return f"[{shown(low)}, {shown(high)}]"
