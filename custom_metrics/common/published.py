"""Published numbers as leaderboard rows: the types, and the one reader of the papers' table files.

Each paper keeps the tables it transcribed in its own package (``custom_metrics/<key>/tables/
*.csv``; IBE-Eval's in ``ibe_postprocess/tables/``): one CSV per printed table, every cell exactly
as printed (``71.8±1.0``), so a file can be checked against the paper line by line. Percentages
become fractions (as the harness reports) with ``Decimal``, so no digit is invented or lost.
Column keys are ``task/metric`` as in the harness results, so a published row lines up with runs.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from custom_metrics.common.errors import DataError


@dataclass(frozen=True)
class PublishedCell:
    """A published number as a fraction, its ± term (stderr or spread) if printed, and the
    items behind it where the paper states them (its interval is then exact)."""

    value: Decimal
    pm: Decimal | None = None
    n: int | None = None


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
    pm_is_se: bool = False  # the ± is a standard error (a test may use it), not a spread


def number(text: str, percent: bool) -> Decimal:
    value = Decimal(text.strip())
    if not value.is_finite():
        raise InvalidOperation(text)
    return value.scaleb(-2) if percent else value


def plain(value: Decimal) -> str:
    """A published number as printed (no exponent, no rounding)."""
    return format(value, "f")


@dataclass(frozen=True)
class TableRow:
    """One printed row of a table file: its cells as printed, by column, and the line it is on."""

    path: Path
    line: int
    cells: Mapping[str, str]

    def __getitem__(self, column: str) -> str:
        return self.cells[column]

    def printed(self, *added: str) -> str:
        """The row as the paper prints it, cells joined by `` | ``, less the columns the suite
        ``added`` (where a row lands: its setting, its task)."""
        return " | ".join(text for name, text in self.cells.items() if name not in added)

    def cell(self, column: str, percent: bool = False) -> PublishedCell:
        """The cell as a number and its ± (``"71.8±1.0"``; both fractions when ``percent``)."""
        value, _, pm = self[column].partition("±")
        try:
            return PublishedCell(number(value, percent), number(pm, percent) if pm else None)
        except InvalidOperation:
            raise self.error(column, "is not a number (or number±number)") from None

    def number(self, column: str, percent: bool = False, leading: bool = False) -> Decimal:
        """The cell as a number; ``leading``: the number it starts with, before a count or a gap
        printed after it (``"89.7 (784)"``, ``"41.0_-23.0"``)."""
        text = re.split(r"[ _]", self[column].strip())[0] if leading else self[column]
        try:
            return number(text, percent)
        except InvalidOperation:
            raise self.error(column, "does not start with a number" if leading else "is not a number") from None

    def error(self, column: str, problem: str) -> DataError:
        return DataError(f"{self.path}:{self.line}: field {column!r}: {self[column]!r} {problem}")


def read_table(path: Path) -> list[TableRow]:
    """A table file's rows: the header names the columns, each later line is one printed row
    with a cell for every column (none empty: a dash is printed as a dash)."""
    rows: list[TableRow] = []
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            lines = csv.reader(handle)
            header = next(lines, [])
            if not header or not all(name.strip() for name in header) or len(set(header)) < len(header):
                raise DataError(f"{path}:1: the header must name every column once, got {header}")
            for values in lines:
                row = TableRow(path, lines.line_num, dict(zip(header, values)))
                if len(values) != len(header):
                    raise DataError(f"{path}:{row.line}: {len(values)} cells, but the header names {len(header)}")
                empty = next((name for name, text in row.cells.items() if not text.strip()), None)
                if empty is not None:
                    raise row.error(empty, "is empty")
                rows.append(row)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise DataError(f"{path}: cannot read this published table: {error}") from None
    return rows
