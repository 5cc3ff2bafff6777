"""What an aggregation does when lm-eval resamples it: its warnings are the run's alone, and a
metric over groups of documents gives no resampled value.

lm-eval 0.5 estimates the standard error of every aggregation but its own ``mean`` by
bootstrap (0.4.13 only of the aggregations it registers itself): after the one call on a
task's values, ``lm_eval.api.metrics.bootstrap_stderr`` calls the aggregation on 100,000
resamples of them, in a pool of worker processes or, with multiprocessing disabled, in this
one. A warning about the run (RULE's groups cut by ``--limit``, generations with no readable
answer) belongs to that first call; a resample's is about a random draw (it drops and repeats
documents, so even a full run's resamples have incomplete groups) and was printed 93,702 times
in one run. So an aggregation warns through ``warn``, which is quiet while lm-eval resamples and
only then: each task's own call warns, two tasks of one process each once, whatever their values.

Why not "once per message": the first call of another task may say the same words and must
still be said, and a resample may warn where the run's call did not. The harness says nowhere
that a call is a resample; ``in_bootstrap`` is the one place that knows how it looks (a test
fails, naming the harness change, if lm-eval resamples elsewhere).

A metric over groups of documents (RULE's consistency: a main question with all its
subquestions; a chain of thought's early answers) has no standard error from resampling single
documents: a resample keeps a group's members by chance (of a full run's 943 main questions, one
resample held 137 whole), so the harness would print a number about its own resampling. Such an
aggregation is marked ``over_groups``: on a resample it returns NaN at once, the harness's
standard error is NaN (no number), and the bootstrap costs nothing. The leaderboard's own
intervals resample whole groups.
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
