"""Typed reads of JSON fields: one set of rules for every file the suite reads back.

Python's ``json`` gives booleans (a subclass of ``int``), ``NaN``, ``Infinity`` and integers too
large for a float, and lm-eval writes some numbers as strings. What counts as a number, a count
or an accuracy is decided here once; a value that does not fit raises ``FieldError`` naming the
field and value, which the reader turns into its own error with the file (and line).
"""

from __future__ import annotations

import math
import re
from typing import Any


class FieldError(ValueError):
    """A field of the wrong type or range; the message names the field and its value."""


def number(raw: Any, *, strings: bool = False) -> float | None:
    """``raw`` as a float when it is a JSON number (an integer too large for a float is
    infinite); with ``strings``, a numeric string too. None for anything else: booleans,
    null, text, containers."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        try:
            return float(raw)
        except OverflowError:
            return math.inf if raw > 0 else -math.inf
    if strings and isinstance(raw, str):
        try:
            return float(raw)
        except ValueError:
            return None
    return None


def is_number(raw: Any) -> bool:
    """A JSON number (int or float, not a boolean), NaN and the infinities included."""
    return number(raw) is not None


def finite(raw: Any, field: str, *, strings: bool = False, kind: str = "a number") -> float | None:
    """An optional number that must be finite when present (a limit, a date)."""
    if raw is None:
        return None
    value = number(raw, strings=strings)
    if value is None:
        raise FieldError(f"{field} is {raw!r}, not {kind}")
    if not math.isfinite(value):
        raise FieldError(f"{field} is {raw!r}, not a finite number")
    return value


def count(raw: Any, field: str, unit: str = "documents", *, strings: bool = False) -> int | None:
    """An optional count of ``unit``: a finite, whole, non-negative number."""
    value = finite(raw, field, strings=strings, kind=f"a number of {unit}")
    if value is not None and (value < 0 or not value.is_integer()):
        raise FieldError(f"{field} is {raw!r}, not a whole number of {unit}")
    return None if value is None else int(value)


def accuracy(raw: Any, field: str) -> float | None:
    """An optional accuracy in [0, 1]; NaN (undefined, e.g. no test question) is kept as NaN."""
    if raw is None:
        return None
    value = number(raw)
    if value is None:
        raise FieldError(f"{field} is {raw!r}, not a number")
    if math.isnan(value):
        return value
    if not 0.0 <= value <= 1.0:
        raise FieldError(f"{field} is {raw!r}, not an accuracy between 0 and 1")
    return value


def integer(raw: Any, field: str) -> int:
    """A required integer: JSON integers, booleans, integral finite numbers and integer
    strings (``"1"``); never rounded (``1.7`` and ``NaN`` are errors)."""
    value = raw
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
        value = int(value)
    if not isinstance(value, int):
        raise FieldError(f"{field} is {raw!r}, not an integer")
    return value


def text(raw: Any, field: str) -> str | None:
    """An optional string, stripped; null or blank is missing."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise FieldError(f"{field} is {raw!r}, not a string")
    return raw.strip() or None


def _shown(raw: Any) -> str:
    """A value as an error message names it: its repr, cut (a value may be megabytes long)."""
    text = repr(raw)
    return text if len(text) <= 60 else f"{text[:57]}..."


def option(raw: Any, field: str, options: int) -> int:
    """A required option number in [0, ``options``): a JSON integer only (``true``, ``1.0``, ``"1"``
    and ``10**25`` are not option numbers; the harness would index its choices with them)."""
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < options:
        raise FieldError(f"{field} is {_shown(raw)}, not an option number from 0 to {options - 1}")
    return raw


def identifier(raw: Any, field: str) -> str:
    """A required id, as text: a non-empty string or a JSON integer (not a boolean)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or (isinstance(raw, str) and not raw.strip()):
        raise FieldError(f"{field} is {_shown(raw)}, not an id (a string or an integer)")
    return str(raw)


def bounded_text(raw: Any, field: str, max_chars: int) -> str:
    """A required string of at most ``max_chars`` characters (what a reader builds prompts from)."""
    if not isinstance(raw, str):
        raise FieldError(f"{field} is {_shown(raw)}, not a string")
    if len(raw) > max_chars:
        raise FieldError(f"{field} is {len(raw):,} characters long, more than the {max_chars:,} a reader takes")
    return raw
