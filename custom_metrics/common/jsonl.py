"""JSONL (and whole-JSON) reading that reports every bad line by file, line and field."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError

# Raises ValueError with a message about the offending field; the reader adds the location.
RowCheck = Callable[[dict[str, Any]], None]


def iter_jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ("file:line", object) for each non-blank line; malformed lines raise DataError."""
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{where}: not valid JSON ({err.msg}).") from err
            if not isinstance(row, dict):
                raise DataError(f"{where}: expected a JSON object, got {type(row).__name__}.")
            yield where, row


def check_row(row: dict[str, Any], required: Iterable[str], check: RowCheck | None, where: str) -> None:
    missing = [field for field in required if field not in row]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}.")
    if check is not None:
        try:
            check(row)
        except ValueError as err:
            raise DataError(f"{where}: {err}") from err


def read_jsonl(path: Path, required: Sequence[str] = (), check: RowCheck | None = None) -> list[dict[str, Any]]:
    """Read a JSONL file, failing with file, line and field on the first bad row."""
    rows: list[dict[str, Any]] = []
    for where, row in iter_jsonl(path):
        check_row(row, required, check, where)
        rows.append(row)
    if not rows:
        raise DataError(f"{path}: the file holds no rows.")
    return rows


def read_json(path: Path) -> Any:
    """A whole JSON document (not JSONL), such as RULE's prompts.json."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataError(f"{path}:{err.lineno}: not valid JSON ({err.msg}).") from err
