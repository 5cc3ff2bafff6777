"""Every test and interval the leaderboard prints, each test with the interval it inverts.

Which test each number gets, why, and under which assumption: docs/leaderboard.md, "The
statistics"; ``USES`` says the same to the code (the JSON export prints it, the docs' test
holds every procedure the docs name to it). The papers' numbers are shares of items, so the
procedures are exact binomial ones where one exists: valid at any n, needing no standard error
(an all-right run of 8 documents has a stderr of 0 and is still testable). Every two-sided p is
**central**, twice the smaller one-sided p: the p the printed 95% interval inverts (scipy's
default "minlike" p can be smaller), so p < 0.05 exactly when the interval excludes the null.
No interval has zero width: where the procedure gives none, the result says why. Holm's
adjustment runs within each family of tests that answers one question (``holm_groups``),
never over the whole tab. The pairwise procedures take arrays, so every pair of 100 runs is
one vectorised call.
"""

from __future__ import annotations

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
EXACT_SHARE = "exact binomial test, central (Clopper-Pearson interval): the paper's number taken as fixed"
FISHER = "Fisher's exact test, central (conditional exact interval of the odds ratio)"
EQUIVALENCE = "TOST within ±δ by the inclusion principle (Newcombe's hybrid score 90% interval)"
# The default δ: within 5 points of the paper's share. An 800-document rerun against a paper's
# 800 items has a 90% interval of Δ about ±0.035 wide even when both shares are equal, so a
# margin of 0.03 could never be shown there; 0.05 can, and is a gap the papers' tables resolve.
EQUIVALENCE_MARGIN = 0.05
MCNEMAR = "McNemar's exact test (conditional Clopper-Pearson interval)"
BOOTSTRAP = "paired bootstrap (percentile interval)"
CLOPPER_PEARSON = "Clopper-Pearson"
ODDS_RATIO = "conditional exact, odds ratio run/paper"
NORMAL = "normal, from the printed standard error"
HOLM = "Holm's step-down adjustment within each family"
# Why a paired test has no interval (``PairedResult.no_interval``).
NO_CHANGE = "no document changed between the two: McNemar's test conditions on the changed ones (p = 1)"
NO_SPREAD = "the resampled means of the {n} item(s) are all {value:g}: too few or too alike to bootstrap (p = 1)"

# The numbers the page gives a test or an interval, in words (``Use.number``).
DELTA = "Δ vs paper"
REPRODUCED = "reproduction verdict"
SHARE = "a share's 95% interval"
STATED_SE = "a paper's number with a standard error and no count of items"
COMPARISON = "a difference of two tasks on the same documents (GEESE's effectiveness)"
PAIRED = "a paired difference between two rows on the same documents"
RANK = "a rank"


@dataclass(frozen=True)
class Use:
    """Which procedure gives one kind of number, and where it does when it is not the only one."""

    number: str
    procedure: str
    where: str = ""


# Every procedure behind a number on the page and in the exports (see the module docstring).
USES = (
    Use(DELTA, FISHER, "the paper states the items its number is a share of"),
    Use(DELTA, EXACT_SHARE, "the paper states no count of items: its number taken as fixed"),
    Use(DELTA, CLOPPER_PEARSON, "the paper states no count of items: the exact binomial test's interval"),
    Use(DELTA, HOLM),
    Use(REPRODUCED, EQUIVALENCE),
    Use(SHARE, CLOPPER_PEARSON),
    Use(STATED_SE, NORMAL),
    Use(COMPARISON, MCNEMAR),
    Use(COMPARISON, BOOTSTRAP, "outcomes other than 0/1"),
    Use(PAIRED, MCNEMAR),
    Use(PAIRED, BOOTSTRAP, "outcomes other than 0/1"),
    Use(PAIRED, HOLM),
    Use(RANK, MCNEMAR),
    Use(RANK, BOOTSTRAP, "outcomes other than 0/1"),
    Use(RANK, FISHER),
    Use(RANK, HOLM),
)


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
    """The smallest two-sided p any outcome of ``n`` items can reach against ``p0`` (1 for no item):
    at ``ALPHA`` or more, the run is too small to test."""
    return float(min(1.0, 2 * min((1 - p0) ** n, p0**n)))


def mcnemar(a_only: np.ndarray, b_only: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """McNemar's exact test for paired 0/1 outcomes, vectorised over pairs.

    ``a_only``/``b_only``: items right in A only / in B only; ``n``: items both logged.
    Returns (p, low, high): the binomial test of the changed items against 1/2, and its
    Clopper-Pearson interval for the share of changed items that went A's way, scaled to the
    difference A − B over all ``n`` items. With no changed item the test conditions on nothing:
    p = 1 and the interval NaN (none: ``NO_CHANGE``), never a zero-width [0, 0]."""
    a_only, b_only, n = (np.asarray(x, dtype=float) for x in (a_only, b_only, n))
    changed = a_only + b_only
    p_value = np.where(changed > 0, central_p(a_only, np.maximum(changed, 1), 0.5), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(a_only > 0, _stats().beta.ppf(ALPHA / 2, a_only, changed - a_only + 1), 0.0)
        high = np.where(a_only < changed, _stats().beta.ppf(1 - ALPHA / 2, a_only + 1, changed - a_only), 1.0)
        scale = np.where(n > 0, changed / np.maximum(n, 1), 0.0)
    low_d = np.where(changed > 0, scale * (2 * low - 1), np.nan)
    high_d = np.where(changed > 0, scale * (2 * high - 1), np.nan)
    return p_value, low_d, high_d


def fisher_p(k1: np.ndarray | int, n1: np.ndarray | int, k2: np.ndarray | int, n2: np.ndarray | int) -> np.ndarray:
    """Fisher's exact test of ``k1`` of ``n1`` against ``k2`` of ``n2``, central (twice the
    smaller one-sided p, as ``fisher_exact(alternative="less"/"greater")``), vectorised: the
    hypergeometric law of the first sample's successes given both margins. The tables of a
    page share few margins (every full run has the same n), so each margin's law is computed
    once and every test of it is a lookup: 45,000 pairs of runs in well under a second."""
    k1, n1, k2, n2 = np.broadcast_arrays(*(np.asarray(x, dtype=np.int64) for x in (k1, n1, k2, n2)))
    shape = k1.shape
    k1, n1, k2, n2 = (x.ravel() for x in (k1, n1, k2, n2))
    margins, which = np.unique(np.stack([n1, n2, k1 + k2]), axis=1, return_inverse=True)
    order = np.argsort(which.ravel(), kind="stable")
    bounds = np.searchsorted(which.ravel()[order], np.arange(margins.shape[1] + 1))
    found = np.empty(len(k1))
    for index, (first, second, right) in enumerate(margins.T):
        mine = order[bounds[index] : bounds[index + 1]]
        lower, upper = _hypergeometric_tails(int(first), int(second), int(right))
        x = k1[mine] - max(0, int(right) - int(second))
        found[mine] = np.minimum(1.0, 2 * np.minimum(lower[x], upper[x]))
    return found.reshape(shape)


@lru_cache(maxsize=4096)
def _hypergeometric_tails(first: int, second: int, right: int) -> tuple[np.ndarray, np.ndarray]:
    """P(X <= x) and P(X >= x) over the support of X, the first sample's successes when
    ``right`` of ``first + second`` items are right (each tail summed from its small end)."""
    from scipy.special import gammaln  # scipy's hypergeom.pmf takes ~40 ms per margin here

    support = np.arange(max(0, right - second), min(first, right) + 1, dtype=float)
    wrong = first + second - right

    def log_choose(n: float, k: np.ndarray | float) -> np.ndarray:
        return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)

    log_pmf = log_choose(right, support) + log_choose(wrong, first - support) - log_choose(first + second, first)
    pmf = np.exp(log_pmf)
    return np.cumsum(pmf), np.cumsum(pmf[::-1])[::-1]


@lru_cache(maxsize=65536)
def fisher_test(k1: int, n1: int, k2: int, n2: int) -> Outcome:
    """A run's ``k1`` of ``n1`` against the paper's ``k2`` of ``n2``: Fisher's central p and the
    conditional exact 95% interval of the odds ratio (run over paper) that inverts it, so
    p < 0.05 exactly when the interval excludes 1."""
    from scipy.stats.contingency import odds_ratio

    found = odds_ratio([[k1, n1 - k1], [k2, n2 - k2]], kind="conditional").confidence_interval(LEVEL)
    return Outcome(float(fisher_p(k1, n1, k2, n2)), Interval(float(found.low), float(found.high), ODDS_RATIO))


def wilson(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval of ``k`` of ``n`` at normal quantile ``z``."""
    share = k / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@dataclass(frozen=True)
class Equivalence:
    """Whether a run's share is within ±``margin`` of the paper's (TOST at level 0.05)."""

    margin: float
    low: float  # 90% interval of run − paper (Newcombe)
    high: float
    equivalent: bool

    @property
    def verdict(self) -> str:
        inside = f"90% interval of Δ [{self.low:+.4f}, {self.high:+.4f}]"
        if self.equivalent:
            return f"reproduced: within ±{self.margin:g} of the paper ({inside} inside ±{self.margin:g})"
        return f"not shown within ±{self.margin:g} of the paper ({inside} not inside ±{self.margin:g})"


def equivalence(k1: int, n1: int, k2: int, n2: int, margin: float = EQUIVALENCE_MARGIN) -> Equivalence:
    """TOST of |p1 − p2| < ``margin`` by the inclusion principle: the two one-sided tests at
    level 0.05 both reject exactly when the 90% interval of p1 − p2 lies inside ±margin.
    Newcombe's hybrid score interval (his method 10, statsmodels ``method="newcomb"``)."""
    z = float(_stats().norm.ppf(1 - ALPHA))
    (l1, u1), (l2, u2) = wilson(k1, n1, z), wilson(k2, n2, z)
    p1, p2 = k1 / n1, k2 / n2
    low = p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = p1 - p2 + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return Equivalence(margin, low, high, -margin < low and high < margin)


def bootstrap_test(values: Sequence[float]) -> Outcome | None:
    """The mean of paired differences ``values`` against 0 by a paired bootstrap (scipy
    ``bootstrap``, seed 0): the interval is the resampled means' order statistics (the 2.5% cut
    from each side), p twice the share of resampled means on the far side of 0, so p < 0.05
    exactly when 0 lies outside the interval. None where that interval has no width (the
    items' resampled means all coincide: ``NO_SPREAD``): no spread is no evidence."""
    values = np.asarray(values, dtype=float)
    if np.ptp(values) == 0:  # every resample has the same mean
        return None
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
    means = np.sort(result.bootstrap_distribution)
    tail = math.ceil(ALPHA / 2 * len(means)) - 1  # resamples cut from each side
    low, high = float(means[tail]), float(means[len(means) - 1 - tail])
    if low == high:
        return None
    below = int(np.searchsorted(means, 0.0, side="right"))  # resampled means <= 0
    above = len(means) - int(np.searchsorted(means, 0.0, side="left"))  # >= 0
    return Outcome(min(1.0, 2 * min(below, above) / len(means)), Interval(low, high, BOOTSTRAP))


def holm_groups(p_values: Sequence[float] | np.ndarray, groups: Sequence[object] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values within each group (a family), in the given order:
    in a family of m tests the i-th smallest p (from 0) is multiplied by m − i, the running
    maximum taken and capped at 1 (statsmodels ``multipletests(method="holm")`` per family,
    vectorised: a page of 300 runs has 45,000 pair families)."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return p
    import pandas as pd  # a dependency of statsmodels; its grouped running maximum is exact

    codes = pd.factorize(np.asarray(groups))[0]  # family names or codes -> 0, 1, ... in order of appearance
    order = np.lexsort((p, codes))
    sorted_codes = codes[order]
    position = pd.Series(sorted_codes).groupby(sorted_codes).cumcount().to_numpy()
    size = np.bincount(sorted_codes)[sorted_codes]
    scaled = pd.Series(np.minimum(1.0, (size - position) * p[order]))
    adjusted = np.empty_like(p)
    adjusted[order] = scaled.groupby(sorted_codes).cummax().to_numpy()
    return adjusted
