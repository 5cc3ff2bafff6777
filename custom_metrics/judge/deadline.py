"""A time by which a judge must have answered, set by the caller and kept by the endpoint client.

REG checks its judge on gold items before any generation; an endpoint that never answered held
the run 20 minutes and more. The check sets one deadline for all its requests (``answers_within``),
and the HTTP client ends every request by it and names it. In-process judges need none.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Deadline:
    """``at`` on the ``time.monotonic`` clock; ``what`` names it in messages (and how to change it)."""

    at: float
    what: str

    def remaining(self) -> float:
        return self.at - time.monotonic()


_CURRENT: ContextVar[Deadline | None] = ContextVar("judge_deadline", default=None)


def current() -> Deadline | None:
    """The deadline set by the innermost ``answers_within`` of this thread, if any. A judge that
    answers in worker threads reads it here and passes it on (context variables stay in their thread)."""
    return _CURRENT.get()


@contextmanager
def answers_within(seconds: float, what: str) -> Iterator[Deadline]:
    """Every endpoint request made inside (this thread) ends ``seconds`` from now at the latest."""
    deadline = Deadline(time.monotonic() + seconds, what)
    outer = _CURRENT.get()
    token = _CURRENT.set(deadline if outer is None or deadline.at < outer.at else outer)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)
