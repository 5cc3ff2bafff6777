"""What an aggregation does when lm-eval resamples it: its warnings are the run's alone, and a
metric over groups of documents gives no resampled value.

lm-eval estimates a standard error by calling the aggregation again on 100,000 resamples of a
task's values (``lm_eval.api.metrics.bootstrap_stderr``). A warning about the run belongs to
the first call; a resample's is about a random draw (one run printed it 93,702 times). So an
aggregation warns through ``warn``, which is quiet while lm-eval resamples (``in_bootstrap``,
the one place that knows how a resample looks; a test fails if lm-eval resamples elsewhere).
Not "once per message": another task's first call may say the same words and must be said.

A metric over groups of documents (RULE's consistency, a chain of thought's early answers) has
no standard error from resampling single documents (a resample of 943 main questions held 137
whole): such an aggregation is marked ``over_groups`` and returns NaN on a resample at once.
The leaderboard's own intervals resample whole groups.
"""

from __future__ import annotations

import functools
import inspect
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any


def warn(logger: logging.Logger, message: str, *args: object) -> None:
    """``logger.warning(message, *args)`` for the run's values; nothing during lm-eval's bootstrap."""
    if not in_bootstrap():
        logger.warning(message, *args, stacklevel=2)


def in_bootstrap() -> bool:
    """Whether lm-eval's bootstrap is on the call stack: a frame of the module that defines
    ``bootstrap_stderr`` (``lm_eval.api.metrics`` on 0.4, ``lm_eval.api.metrics.stderr`` on 0.5),
    whose resampling loops call the aggregation. Walked only when there is something to warn."""
    module = _bootstrap_module()
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_globals.get("__name__") == module:
            return True
        frame = frame.f_back
    return False


def over_groups(aggregation: Callable[[Sequence[Any]], float]) -> Callable[[Sequence[Any]], float]:
    """An aggregation over groups of documents: NaN on lm-eval's resamples (module docstring), its
    value on the run's own. The wrapper keeps the function's module and name, so the harness's
    worker pool can still pickle it by name."""

    @functools.wraps(aggregation)
    def grouped(values: Sequence[Any]) -> float:
        return math.nan if in_bootstrap() else aggregation(values)

    return grouped


@functools.cache
def _bootstrap_module() -> str:
    from lm_eval.api.metrics import bootstrap_stderr

    return bootstrap_stderr.__module__
