"""What the fuzz tests share: the time bound, what counts as an error naming its input,
a scratch folder per generated input, and arbitrary JSON."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")

# CPU seconds: far above a linear pass over the largest generated input (a few thousand
# characters or lines), far below what a quadratic or exponential pattern takes. CPU time,
# not wall time, so that other processes on a busy machine do not fail the bound.
SECONDS = 0.5


def within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``, failing if it uses more than ``seconds`` of CPU (exceptions pass through)."""
    start = time.process_time()
    try:
        return call()
    finally:
        used = time.process_time() - start
        assert used < seconds, f"took {used:.2f} CPU seconds (bound {seconds} s)"


def names(error: BaseException, *inputs: object) -> bool:
    """The error's message names every given input (a path, a judge URL ...)."""
    return all(str(item) in str(error) for item in inputs)


@contextmanager
def scratch() -> Iterator[Path]:
    """A fresh folder per generated input (pytest's tmp_path is one per test, not per input)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as name:
        yield Path(name)


def _containers(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)


# Any JSON value, NaN and the infinities included (Python writes them as bare words).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12), _containers, max_leaves=12
)
