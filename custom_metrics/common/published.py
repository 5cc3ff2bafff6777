"""Published numbers as leaderboard rows: the types, and the parser of transcribed tables.

Each paper keeps its tables in its own ``leaderboard.py`` as the text they were copied
from (one paper row per line, cells joined by ``|``, numbers exactly as printed), so a
reader can check them against the paper line by line; ``tests/leaderboard`` does that
automatically when the papers are at hand. Percentages are converted to fractions (the
harness reports fractions) with ``Decimal``, so no digit is invented or lost.

Column keys are ``task/metric`` as in the harness results of the suite's tasks, so a
published row lines up with the runs of the same task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class PublishedCell:
    """A published number as a fraction, and its ± term (stderr or spread) if printed."""

    value: Decimal
    pm: Decimal | None = None


@dataclass(frozen=True)
class PublishedRow:
    paper: str
    model: str
    source: str
    cells: dict[str, PublishedCell] = field(default_factory=dict)
    setting: str = ""  # the paper's setting of the row (e.g. "zero-shot", "thinking")
    # "paper": a row of a table the paper prints; else what the row is instead (the
    # authors' repository run), shown as its badge: such a row is never labelled "paper".
    origin: str = "paper"


def number(text: str, percent: bool) -> Decimal:
    value = Decimal(text.strip())
    return value.scaleb(-2) if percent else value


def cell(text: str, percent: bool) -> PublishedCell:
    """``"71.8±1.0"`` as value and ± (both fractions when ``percent``)."""
    value, _, pm = text.partition("±")
    return PublishedCell(number(value, percent), number(pm, percent) if pm else None)


def table_lines(block: str) -> list[list[str]]:
    """A transcribed table's rows as lists of stripped cells."""
    return [[item.strip() for item in line.split("|")] for line in block.strip().splitlines()]


def plain(value: Decimal) -> str:
    """A published number as printed (no exponent, no rounding)."""
    return format(value, "f")
