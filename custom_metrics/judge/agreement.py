"""How much two raters of the same items agree: two judges, or a judge and the gold labels.

REG's Appendix H reports raw agreement, Cohen's kappa and the Matthews correlation coefficient
(scikit-learn's numbers). Intervals: raw agreement, a share, gets the exact Clopper-Pearson 95%
interval (right for the handful of items of a ``--limit`` run); kappa and MCC a 95% percentile
bootstrap over items (``RESAMPLES``, seed ``SEED``), recomputed from each resample's confusion
matrix (``kappa_of``, ``mcc_of``; tested against scikit-learn).

A statistic is undefined, never a number, where its formula divides by zero (kappa: both raters
gave one and the same label to every item; MCC: either did, where scikit-learn's 0.0 would read
as "no better than chance"). Resamples where it is undefined are left out and counted
(``kappa_undefined``, ``mcc_undefined``). An interval of zero width (a handful of items giving
one value on every resample) would read as certainty: it is None, and ``undefined`` says why.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


@dataclass(frozen=True)
class Agreement:
    """Two raters on the items both decided. Intervals are (low, high) or None."""

    n: int
    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]  # rows: rater A's label, columns: rater B's, in ``labels`` order
    raw: float | None
    raw_interval: tuple[float, float] | None
    kappa: float | None
    kappa_interval: tuple[float, float] | None
    mcc: float | None
    mcc_interval: tuple[float, float] | None
    undefined: str = ""  # why kappa or MCC, or its interval, is missing ("" when all are there)
    kappa_undefined: int = 0  # bootstrap resamples on which kappa was undefined
    mcc_undefined: int = 0

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "labels": list(self.labels),
            "confusion_matrix": [list(row) for row in self.matrix],
            "raw_agreement": self.raw,
            "raw_agreement_interval": list(self.raw_interval) if self.raw_interval else None,
            "kappa": self.kappa,
            "kappa_interval": list(self.kappa_interval) if self.kappa_interval else None,
            "mcc": self.mcc,
            "mcc_interval": list(self.mcc_interval) if self.mcc_interval else None,
            "undefined": self.undefined,
            "bootstrap": {
                "resamples": RESAMPLES,
                "seed": SEED,
                "kappa_undefined": self.kappa_undefined,
                "mcc_undefined": self.mcc_undefined,
            },
        }


def exact_interval(successes: int, trials: int) -> tuple[float, float] | None:
    """The exact (Clopper-Pearson) 95% interval of a share; None for no trials."""
    if trials <= 0:
        return None
    from scipy.stats import binomtest

    interval = binomtest(successes, trials).proportion_ci(confidence_level=LEVEL, method="exact")
    return float(interval.low), float(interval.high)


def agreement(a: Mapping[str, str], b: Mapping[str, str], order: Sequence[str] = ()) -> Agreement:
    """Agreement of rater ``a`` and rater ``b`` (item -> label) on the items both decided.

    ``order`` lists the labels in the order the matrix shows them; labels it lacks follow, sorted.
    """
    import numpy as np
    from sklearn.metrics import cohen_kappa_score, confusion_matrix, matthews_corrcoef

    items = sorted(set(a) & set(b))
    seen = {a[item] for item in items} | {b[item] for item in items}
    labels = tuple([label for label in order if label in seen] + sorted(seen - set(order)))
    n = len(items)
    if n == 0:
        return Agreement(0, labels, (), None, None, None, None, None, None, "no item was decided by both")
    first, second = [a[item] for item in items], [b[item] for item in items]
    with warnings.catch_warnings():  # one label in all: the labels given make the shape right
        warnings.filterwarnings("ignore", message="A single label was found")
        matrix = confusion_matrix(first, second, labels=list(labels))
    agreed = int(np.trace(matrix))
    constant_a, constant_b = len(set(first)) == 1, len(set(second)) == 1
    reasons = []
    kappa = None
    if constant_a and constant_b and first[0] == second[0]:
        reasons.append(f"kappa: both gave every item the label {first[0]!r} (chance agreement 1)")
    else:
        kappa = float(cohen_kappa_score(first, second, labels=list(labels)))
    mcc = None
    if constant_a or constant_b:
        which = "both" if constant_a and constant_b else "A" if constant_a else "B"
        reasons.append(f"MCC: {which} gave every item one label (no variance)")
    else:
        mcc = float(matthews_corrcoef(first, second))
    # one draw of ``RESAMPLES`` resamples of the items for both statistics
    index = {label: i for i, label in enumerate(labels)}
    codes_a, codes_b = np.array([index[label] for label in first]), np.array([index[label] for label in second])
    draws = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    matrices = confusion_matrices(codes_a[draws], codes_b[draws], len(labels))
    bootstrapped = []
    for name, value, statistic in (("kappa", kappa, kappa_of), ("MCC", mcc, mcc_of)):
        interval, undefined = percentile_interval(statistic(matrices)) if value is not None else (None, 0)
        if interval is not None and interval[0] == interval[1]:  # no width: no interval
            interval = None
        if value is not None and interval is None:
            reasons.append(f"{name}: no interval: its bootstrap over {n} item(s) has no spread (too few or too alike)")
        bootstrapped.append((interval, undefined))
    (kappa_interval, kappa_undefined), (mcc_interval, mcc_undefined) = bootstrapped
    return Agreement(
        n,
        labels,
        tuple(tuple(int(count) for count in row) for row in matrix),
        agreed / n,
        exact_interval(agreed, n),
        kappa,
        kappa_interval,
        mcc,
        mcc_interval,
        "; ".join(reasons),
        kappa_undefined,
        mcc_undefined,
    )


def confusion_matrices(codes_a, codes_b, size: int):
    """One confusion matrix per row of the label-code arrays ``codes_a``/``codes_b`` (resamples x items)."""
    import numpy as np

    resamples = codes_a.shape[0]
    flat = codes_a * size + codes_b + (np.arange(resamples) * size * size)[:, None]
    return np.bincount(flat.ravel(), minlength=resamples * size * size).reshape(resamples, size, size)


def kappa_of(matrices):
    """Cohen's kappa of each confusion matrix (NaN where chance agreement is 1), as scikit-learn computes it."""
    import numpy as np

    total = matrices.sum(axis=(1, 2)).astype(float)
    observed = np.trace(matrices, axis1=1, axis2=2) / total
    chance = (matrices.sum(axis=2) * matrices.sum(axis=1)).sum(axis=1) / total**2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)


def mcc_of(matrices):
    """The multiclass Matthews correlation (Gorodkin's R_K) of each matrix, NaN where a rater is constant."""
    import numpy as np

    total = matrices.sum(axis=(1, 2)).astype(float)
    correct = np.trace(matrices, axis1=1, axis2=2).astype(float)
    true, predicted = matrices.sum(axis=2).astype(float), matrices.sum(axis=1).astype(float)
    covariance = correct * total - (true * predicted).sum(axis=1)
    denominator = (total**2 - (true**2).sum(axis=1)) * (total**2 - (predicted**2).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, covariance / np.sqrt(denominator), np.nan)


def percentile_interval(values) -> tuple[tuple[float, float] | None, int]:
    """The percentile interval of a statistic's bootstrap values, and how many were undefined (NaN, left out)."""
    import numpy as np

    defined = values[~np.isnan(values)]
    tail = (1 - LEVEL) / 2 * 100
    interval = (
        (float(np.percentile(defined, tail)), float(np.percentile(defined, 100 - tail))) if defined.size else None
    )
    return interval, int(values.size - defined.size)
