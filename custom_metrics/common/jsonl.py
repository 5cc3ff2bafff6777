"""JSONL (and whole-JSON) reading that reports every bad line by file, line and field.

Parsing is strict where Python's ``json`` is lenient: a key given twice in one object (the
parser keeps the last) and a number too large for a float (``1e999``: shown as "accuracy ∞")
are errors naming the line. The bare ``NaN`` and ``Infinity`` that Python writes stay readable
(lm-eval logs NaN metrics and infinite log-likelihoods); where a number must be finite, the
field's check says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import JSON_MAX_BYTES, JSONL_MAX_BYTES, iter_regular_lines, read_regular_bytes

# Raises ValueError with a message about the offending field; the reader adds the location.
RowCheck = Callable[[dict[str, Any]], None]


class StrictJSONError(ValueError):
    """Valid JSON that must not be read: a duplicate key, or a number no float can hold."""

    def __init__(self, msg: str, lineno: int) -> None:
        super().__init__(f"{msg} at line {lineno}")
        self.msg, self.lineno = msg, lineno


class _Refused(Exception):
    """Raised by the parser's hooks; the slow pass then finds the line."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Refused
    return obj


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):
        raise _Refused
    return value


def _bounded_int(text: str) -> int:
    try:
        value = int(text)
        if len(text) > 308:  # at most 308 digits always fit a float
            float(value)
    except (OverflowError, ValueError):  # ValueError: beyond Python's digit limit
        raise _Refused from None
    return value


_INF = float("inf")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"-?Infinity|NaN|true|false|null")
_SPACE = re.compile(r"[ \t\n\r]*")


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses a key twice in one object and a number that overflows a
    float (``StrictJSONError`` with the line); ``json.JSONDecodeError`` for invalid JSON."""
    try:
        return json.loads(text, object_pairs_hook=_unique_object, parse_float=_finite_float, parse_int=_bounded_int)
    except _Refused:
        _locate_refusal(text)
        raise AssertionError("the second pass found nothing the first refused") from None


def _locate_refusal(text: str) -> None:
    """Walk valid JSON token by token and raise StrictJSONError at the first duplicate key or
    overflowing number. Run only after the fast parse refused something, so it may be slow."""
    keys: list[set[str] | None] = []  # per open container: the keys seen (object) or None (list)
    expect_key, pos = False, 0
    while (pos := _SPACE.match(text, pos).end()) < len(text):
        char = text[pos]
        if char == '"':
            value, end = scanstring(text, pos + 1)
            seen = keys[-1] if expect_key and keys else None
            if seen is not None:
                if value in seen:
                    raise StrictJSONError(f"key {value!r} appears twice in one object", _line(text, pos))
                seen.add(value)
            expect_key, pos = False, end
        elif char in ",:{[}]":
            if char in "{[":
                keys.append(set() if char == "{" else None)
            elif char in "}]":
                keys.pop()
            expect_key = char == "{" or (char == "," and bool(keys) and keys[-1] is not None)
            pos += 1
        else:
            word = _WORD.match(text, pos) or _NUMBER.match(text, pos)
            if word is None:
                return  # not JSON at all: the fast parse reports it
            if word.re is _NUMBER and abs(float(word.group())) == _INF:
                raise StrictJSONError(f"number {word.group()[:40]} is too large for a float", _line(text, pos))
            expect_key, pos = False, word.end()


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def numbered_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; a path that is not a regular file
    of at most ``JSONL_MAX_BYTES``, a line that is not UTF-8 or not valid JSON, a duplicate key or
    an overflowing number raises DataError naming the file (and line)."""
    for lineno, raw in enumerate(iter_regular_lines(path, JSONL_MAX_BYTES, ""), start=1):
        where = f"{path}:{lineno}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            bad = raw[err.start : err.start + 1]
            raise DataError(f"{where}: not UTF-8 text (byte {bad!r} at byte offset {err.start} of the line).") from err
        if not line.strip():
            continue
        row = _loaded(line, lambda _, where=where: where, " to be a row")
        if not isinstance(row, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(row).__name__}.")
        yield lineno, row


def _loaded(text: str, where: Callable[[int | None], str], nested: str) -> Any:
    """``loads_strict``, each refusal a DataError naming ``where`` (of the line, when known)."""
    try:
        return loads_strict(text)
    except StrictJSONError as err:
        raise DataError(f"{where(err.lineno)}: {err.msg}.") from err
    except json.JSONDecodeError as err:
        raise DataError(f"{where(err.lineno)}: not valid JSON ({err.msg}).") from err
    except RecursionError as err:
        raise DataError(f"{where(None)}: JSON nested too deeply{nested}.") from err


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
    shape: Callable[[Any], Any] | None = None,
) -> list[dict[str, Any]]:
    """Read a JSONL file, failing with file, line and field on the first bad row.

    ``unique`` names what identifies a row (e.g. "doc_id 3"; None: not checked); a second
    row with the same name is an error naming both lines, never a silent duplicate.
    ``shape`` rewrites each row before it is checked (a samples file's ``normalised``).
    """
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for lineno, raw in numbered_jsonl(path):
        where = f"{path}:{lineno}"
        row = shape(raw) if shape is not None else raw
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
        text = read_regular_bytes(path, JSON_MAX_BYTES).decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(f"{path}: not UTF-8 text (byte offset {err.start}).") from err
    return _loaded(text, lambda line: f"{path}:{line}" if line else str(path), "")
