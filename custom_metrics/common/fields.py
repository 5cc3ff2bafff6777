"""Typed reads of JSON fields: one set of rules for every file the suite reads back.

Python's ``json`` gives ``int``, ``float``, ``bool`` (a subclass of ``int``), the bare words
``NaN`` and ``Infinity``, and integers too large for a float; lm-eval writes some numbers as
strings. Each reader (results files, IBE inputs, features and reports) used to decide for
itself what counts as a number, a count or an accuracy; here the decision is made once, and
a value that does not fit raises ``FieldError`` naming the field and the value, which the
reader turns into its own error with the file (and line).
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


def finite(raw: Any, field: str, *, strings: bool = False) -> float | None:
    """An optional number that must be finite when present (a limit, a date)."""
    if raw is None:
        return None
    value = number(raw, strings=strings)
    if value is None:
        raise FieldError(f"{field} is {raw!r}, not a number")
    if not math.isfinite(value):
        raise FieldError(f"{field} is {raw!r}, not a finite number")
    return value


def count(raw: Any, field: str, unit: str = "documents", *, strings: bool = False) -> int | None:
    """An optional count of ``unit``: a finite, whole, non-negative number."""
    if raw is None:
        return None
    value = number(raw, strings=strings)
    if value is None:
        raise FieldError(f"{field} is {raw!r}, not a number of {unit}")
    if not math.isfinite(value):
        raise FieldError(f"{field} is {raw!r}, not a finite number")
    if value < 0 or not value.is_integer():
        raise FieldError(f"{field} is {raw!r}, not a whole number of {unit}")
    return int(value)


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
