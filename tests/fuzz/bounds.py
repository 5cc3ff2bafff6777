"""What every fuzz test asserts besides its own property: a time bound, and errors that
name their input. Shared so that "bounded" and "clear" mean the same in every area."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Far above a linear pass over the largest generated input (a few thousand characters or
# lines) on a busy 2-core machine, far below what a quadratic or exponential pattern takes.
SECONDS = 0.5


def within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``, failing if it takes longer than ``seconds`` (exceptions pass through)."""
    start = time.perf_counter()
    try:
        return call()
    finally:
        elapsed = time.perf_counter() - start
        assert elapsed < seconds, f"took {elapsed:.2f} s (bound {seconds} s)"


def names(error: BaseException, *inputs: object) -> bool:
    """The error's message names every given input (a path, a judge URL ...)."""
    return all(str(item) in str(error) for item in inputs)
