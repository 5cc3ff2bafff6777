"""Paired differences between two runs (or two settings of one run) over the same documents.

Two accuracies measured on the same documents are correlated; their stderrs cannot be
combined as if independent, and the difference of two means hides how many documents
actually changed. Researchers compute the right test by hand; the leaderboard does it
from the logged samples:

- the difference A - B of the per-document outcomes, on the documents both logged
  (matched by each paper's document key, not by position);
- a 95% confidence interval from a paired bootstrap over those documents (scipy's
  ``bootstrap``, percentile method, 9,999 resamples, fixed seed: reproducible pages);
- for 0/1 outcomes (accuracies, success, well-formed) McNemar's exact test on the
  discordant documents (a binomial test, scipy's ``binomtest``), significant at p < 0.05;
  for other outcomes the difference is significant when the interval excludes 0.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

ALPHA = 0.05
RESAMPLES = 9999
SEED = 0


@dataclass(frozen=True)
class PairedResult:
    n: int  # documents both sides logged
    mean_a: float
    mean_b: float
    difference: float  # mean of A - B
    low: float | None  # 95% bootstrap interval; None with fewer than 2 documents
    high: float | None
    test: str  # "McNemar (exact)" or "paired bootstrap"
    p_value: float | None  # McNemar's p for 0/1 outcomes
    a_only: int | None = None  # documents right in A and wrong in B (0/1 outcomes)
    b_only: int | None = None

    @property
    def significant(self) -> bool:
        if self.p_value is not None:
            return self.p_value < ALPHA
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


def paired_difference(a: Mapping[str, float], b: Mapping[str, float]) -> PairedResult | None:
    """A - B over the documents in both (None when they share none)."""
    keys = sorted(set(a) & set(b))
    if not keys:
        return None
    left = np.array([a[key] for key in keys], dtype=float)
    right = np.array([b[key] for key in keys], dtype=float)
    diffs = left - right
    low, high = _interval(diffs)
    binary = bool(np.isin(left, (0.0, 1.0)).all() and np.isin(right, (0.0, 1.0)).all())
    p_value = a_only = b_only = None
    if binary:
        a_only, b_only = int(((left == 1) & (right == 0)).sum()), int(((left == 0) & (right == 1)).sum())
        discordant = a_only + b_only
        p_value = float(stats.binomtest(a_only, discordant, 0.5).pvalue) if discordant else 1.0
    return PairedResult(
        n=len(keys),
        mean_a=float(left.mean()),
        mean_b=float(right.mean()),
        difference=float(diffs.mean()),
        low=low,
        high=high,
        test="McNemar (exact)" if binary else "paired bootstrap",
        p_value=p_value,
        a_only=a_only,
        b_only=b_only,
    )


def _interval(diffs: np.ndarray) -> tuple[float | None, float | None]:
    if len(diffs) < 2:
        return None, None
    if np.ptp(diffs) == 0:  # every resample has the same mean
        return float(diffs[0]), float(diffs[0])
    with warnings.catch_warnings():
        # With a handful of documents the resampled means take few values; scipy warns
        # about that, and the page says how many documents each interval rests on.
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (diffs,),
            np.mean,
            n_resamples=RESAMPLES,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(SEED),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return (low, high) if math.isfinite(low) and math.isfinite(high) else (None, None)
