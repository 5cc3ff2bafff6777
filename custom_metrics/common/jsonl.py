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
    """Yield ("file:line", object) for each non-blank line; an unreadable file, a line that is
    not UTF-8 or not valid JSON raises DataError naming the file (and line)."""
    for lineno, row in numbered_jsonl(path):
        yield f"{path}:{lineno}", row


def numbered_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``iter_jsonl`` with the line number (1-based) as a number, for readers that record
    where each row came from."""
    try:
        with open(path, "rb") as handle:
            yield from _rows(path, handle)
    except OSError as err:
        raise DataError(f"{path}: cannot be read ({err.strerror or err}).") from err


def _rows(path: Path, lines: Iterable[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, raw in enumerate(lines, start=1):
        where = f"{path}:{lineno}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            bad = raw[err.start : err.start + 1]
            raise DataError(f"{where}: not UTF-8 text (byte {bad!r} at byte offset {err.start} of the line).") from err
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{where}: not valid JSON ({err.msg}).") from err
        except RecursionError as err:
            raise DataError(f"{where}: JSON nested too deeply to be a row.") from err
        if not isinstance(row, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(row).__name__}.")
        yield lineno, row


def check_row(row: dict[str, Any], required: Iterable[str], check: RowCheck | None, where: str) -> None:
    missing = [field for field in required if field not in row]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}.")
    if check is not None:
        try:
            check(row)
        except ValueError as err:
            raise DataError(f"{where}: {err}") from err


def read_jsonl(
    path: Path,
    required: Sequence[str] = (),
    check: RowCheck | None = None,
    unique: Callable[[dict[str, Any]], str | None] | None = None,
) -> list[dict[str, Any]]:
    """Read a JSONL file, failing with file, line and field on the first bad row.

    ``unique`` names what identifies a row (e.g. "doc_id 3"; None: not checked); a second
    row with the same name is an error naming both lines, never a silent duplicate.
    """
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for where, row in iter_jsonl(path):
        check_row(row, required, check, where)
        key = unique(row) if unique is not None else None
        if key is not None:
            if key in seen:
                raise DataError(f"{where}: {key} was already read at {seen[key]}.")
            seen[key] = where
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
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text (byte offset {err.start}).") from err
    except RecursionError as err:
        raise DataError(f"{path}: JSON nested too deeply.") from err
    except OSError as err:
        raise DataError(f"{path}: cannot be read ({err.strerror or err}).") from err
