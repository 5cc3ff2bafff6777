"""The range each metric of a results file can take, checked where the file is read.

A value outside its metric's range is no measurement: ``acc: 1e308`` stopped the leaderboard (an
OverflowError), ``acc: 1.5`` was shown as "accuracy 1.5000" and a stderr of -0.1 as "± -0.1000".
``out_of_range`` says what is wrong so the reader leaves the value out and names it.

Each paper declares its metrics' ranges (``METRIC_RANGES`` in its package's ``__init__.py``;
``explain-eval check`` names a metric without one), so this module names no paper. A task of no
paper gets lm-eval's common proportions (``acc``, ``f1``, ``*_acc``, ``acc_*``) in [0, 1]; any
other metric need only be finite. NaN stays undefined.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from custom_metrics.common.task_folders import paper_packages


@dataclass(frozen=True)
class Range:
    """The values a metric can take: ``low`` to ``high``, whole numbers alone when ``whole``;
    ``outside`` says what a value beyond them is not (the reader's message)."""

    low: float
    high: float
    outside: str
    whole: bool = False

    def refuses(self, value: float) -> bool:
        return not self.low <= value <= self.high or (self.whole and not value.is_integer())


SHARE = Range(0.0, 1.0, "not a share between 0 and 1")
COUNT = Range(0.0, math.inf, "not a whole, non-negative count", whole=True)
MEAN_LENGTH = Range(0.0, math.inf, "negative, for a mean length")  # of words, tokens, steps per item
DIFFERENCE = Range(-1.0, 1.0, "not a difference of two shares, between -1 and 1")
DIVERGENCE = Range(0.0, math.inf, "negative, for a divergence")
_STDERR = Range(0.0, math.inf, "a negative standard error")
# lm-eval's common proportions, for the tasks of no paper.
_HARNESS_SHARES = frozenset({"acc", "acc_norm", "exact_match", "f1", "f1_macro"})


@lru_cache(maxsize=1)
def declared() -> dict[str, Mapping[str, Range]]:
    """Each paper's ``METRIC_RANGES``, by its key (its package's name)."""
    return {package.__name__.rpartition(".")[2]: getattr(package, "METRIC_RANGES", {}) for package in paper_packages()}


def out_of_range(task: str, metric: str, value: float) -> str | None:
    """Why ``value`` cannot be a value of ``task``'s ``metric`` (one ending in ``_stderr``: a standard
    error), in words, or None when it can; NaN can (undefined, or no stderr computed). A metric's
    range is its paper's (the key, then ``_`` or the end, as a paper's tasks are named), else a
    harness proportion's; any other metric need only be finite."""
    if math.isnan(value):
        return None
    allowed, infinite = _STDERR, "not a finite standard error"
    if not metric.endswith("_stderr"):
        papers = (ranges for key, ranges in declared().items() if task == key or task.startswith(f"{key}_"))
        allowed = next((ranges[metric] for ranges in papers if metric in ranges), None)
        if allowed is None and (metric in _HARNESS_SHARES or metric.endswith("_acc") or metric.startswith("acc_")):
            allowed = SHARE
        infinite = "not a finite number"
    if not math.isfinite(value):
        return infinite
    return allowed.outside if allowed is not None and allowed.refuses(value) else None
