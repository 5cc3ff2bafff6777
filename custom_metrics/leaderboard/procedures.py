"""Every test and interval the leaderboard prints, each test with the interval it inverts.

The numbers the papers report are shares of items (documents, questions, the judge's |N|),
so the procedures are exact binomial ones, valid at any n, and need no standard error (an
all-right run of 8 documents has a stderr of 0 and is still testable):

- **a share against a fixed number** (a run's accuracy against the paper's): the exact
  binomial test, two-sided as twice the smaller one-sided p (scipy ``binomtest``), whose
  inversion is the Clopper-Pearson interval: p < 0.05 exactly when the fixed number lies
  outside the 95% interval. A run of ``n`` items whose most extreme outcome could not reach
  p < 0.05 is too small to test, and is said to be;
- **two shares on the same items** (two runs, or two tasks of one run, per document):
  McNemar's exact test (the binomial test of the changed items) and its conditional
  Clopper-Pearson interval, scaled to a difference over all items: p < 0.05 exactly when the
  interval excludes 0;
- **a mean that is not a share**, or a paired difference against a number other than 0
  (GEESE's effectiveness against the paper's): a paired bootstrap over items (scipy
  ``bootstrap``, fixed seed); its interval is read from the resampled means' order statistics
  and its p counts them, so again p < 0.05 exactly when the number is outside the interval;
- **many tests on one page**: Holm's step-down adjustment (statsmodels ``multipletests``),
  per family of tests on a tab; a star means the adjusted p is below 0.05.

The pairwise procedures take arrays, so every pair of 100 runs is one vectorised call.
"""

from __future__ import annotations

import gc
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

ALPHA = 0.05
LEVEL = 1 - ALPHA
RESAMPLES = 9999
SEED = 0
EXACT_SHARE = "exact binomial test (Clopper-Pearson interval)"
MCNEMAR = "McNemar's exact test (conditional Clopper-Pearson interval)"
BOOTSTRAP = "paired bootstrap (percentile interval)"
CLOPPER_PEARSON = "Clopper-Pearson"
NORMAL = "normal, from the printed standard error"


@dataclass(frozen=True)
class Interval:
    """A 95% interval and the procedure it comes from."""

    low: float
    high: float
    method: str

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass(frozen=True)
class Outcome:
    """A test: its two-sided p and the 95% interval of the tested quantity that inverts it."""

    p_value: float
    interval: Interval


def _stats() -> Any:
    """``scipy.stats``, imported on first use: it takes seconds to import, and a command's
    ``--help`` or a page with no test never needs it."""
    from scipy import stats

    return stats


@lru_cache(maxsize=65536)
def share_interval(k: int, n: int) -> Interval:
    """Clopper-Pearson 95% interval of a share ``k`` of ``n``: the beta quantiles that scipy's
    ``binomtest(...).proportion_ci(method="exact")`` finds by root search (the same numbers,
    checked in the tests), read directly; the paper's rows repeat, so they are cached."""
    low = float(_stats().beta.ppf(ALPHA / 2, k, n - k + 1)) if k > 0 else 0.0
    high = float(_stats().beta.ppf(1 - ALPHA / 2, k + 1, n - k)) if k < n else 1.0
    return Interval(low, high, CLOPPER_PEARSON)


def central_p(k: np.ndarray | int, n: np.ndarray | int, p0: np.ndarray | float) -> np.ndarray:
    """Two-sided exact binomial p: twice the smaller one-sided p (the test Clopper-Pearson inverts)."""
    k, n, p0 = np.asarray(k, dtype=float), np.asarray(n, dtype=float), np.asarray(p0, dtype=float)
    lower = _stats().binom.cdf(k, n, p0)
    upper = _stats().binom.sf(k - 1, n, p0)
    return np.minimum(1.0, 2 * np.minimum(lower, upper))


def smallest_p(n: int, p0: float) -> float:
    """The smallest two-sided p any outcome of ``n`` items can reach against ``p0``."""
    return float(min(1.0, 2 * min((1 - p0) ** n, p0**n)))


def testable(n: int, p0: float) -> bool:
    """Whether ``n`` items can reject ``p0`` at all: else the run is too small to test."""
    return n > 0 and smallest_p(n, p0) < ALPHA


def share_test(k: int, n: int, p0: float) -> Outcome:
    """The run's share ``k``/``n`` against a fixed ``p0``; the interval is the share's, so the
    test rejects exactly when ``p0`` is outside it."""
    p_value = float(central_p(k, n, p0))
    # scipy's one-sided tests give the same numbers (checked in the tests); binom is vectorised.
    return Outcome(p_value, share_interval(k, n))


def mcnemar(a_only: np.ndarray, b_only: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """McNemar's exact test for paired 0/1 outcomes, vectorised over pairs.

    ``a_only``/``b_only``: items right in A only / in B only; ``n``: items both logged.
    Returns (p, low, high): the binomial test of the changed items against 1/2, and its
    Clopper-Pearson interval for the share of changed items that went A's way, scaled to the
    difference A − B over all ``n`` items. With no changed item the difference is 0 exactly."""
    a_only, b_only, n = (np.asarray(x, dtype=float) for x in (a_only, b_only, n))
    changed = a_only + b_only
    p_value = np.where(changed > 0, central_p(a_only, np.maximum(changed, 1), 0.5), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(a_only > 0, _stats().beta.ppf(ALPHA / 2, a_only, changed - a_only + 1), 0.0)
        high = np.where(a_only < changed, _stats().beta.ppf(1 - ALPHA / 2, a_only + 1, changed - a_only), 1.0)
        scale = np.where(n > 0, changed / np.maximum(n, 1), 0.0)
    low_d = np.where(changed > 0, scale * (2 * low - 1), 0.0)
    high_d = np.where(changed > 0, scale * (2 * high - 1), 0.0)
    return p_value, low_d, high_d


def bootstrap_means(values: np.ndarray) -> np.ndarray:
    """The resampled means of ``values`` (scipy ``bootstrap``, seed 0), sorted."""
    if np.ptp(values) == 0:  # every resample has the same mean
        return np.full(RESAMPLES, float(values[0]))
    with warnings.catch_warnings():
        # With a handful of items the resampled means take few values; scipy warns about
        # that, and the page says how many items each interval rests on.
        warnings.simplefilter("ignore")
        result = _stats().bootstrap(
            (values,),
            np.mean,
            n_resamples=RESAMPLES,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(SEED),
        )
    return np.sort(result.bootstrap_distribution)


def bootstrap_test(values: Sequence[float], null: float) -> Outcome:
    """The mean of ``values`` against ``null`` by a paired bootstrap (``bootstrap_outcome``)."""
    return bootstrap_outcome(bootstrap_means(np.asarray(values, dtype=float)), null)


def bootstrap_outcome(means: np.ndarray, null: float) -> Outcome:
    """A test of ``null`` from sorted resampled means: the interval is their order statistics
    (the 2.5% cut from each side), p twice the share of resampled means on the far side of
    ``null``; so p < 0.05 exactly when ``null`` lies outside the interval."""
    tail = math.ceil(ALPHA / 2 * len(means)) - 1  # resamples cut from each side
    interval = Interval(float(means[tail]), float(means[len(means) - 1 - tail]), BOOTSTRAP)
    below = int(np.searchsorted(means, null, side="right"))  # resampled means <= null
    above = len(means) - int(np.searchsorted(means, null, side="left"))  # >= null
    return Outcome(min(1.0, 2 * min(below, above) / len(means)), interval)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the given order."""
    if not p_values:
        return []
    from statsmodels.stats.multitest import multipletests  # only a page with tests needs it

    # statsmodels' Holm ends with a full gc.collect(), which walks every object of a build of
    # a hundred runs (seconds): the objects are frozen out of the collector around it.
    gc.freeze()
    try:
        return [float(p) for p in multipletests(list(p_values), alpha=ALPHA, method="holm")[1]]
    finally:
        gc.unfreeze()
