"""Agreement between two raters (``custom_metrics.judge.agreement``): scikit-learn's numbers,
an exact interval for raw agreement, a bootstrap for kappa and MCC, and "undefined" where a
statistic divides by zero (scikit-learn's MCC would read 0.0 there)."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score, confusion_matrix, matthews_corrcoef

from custom_metrics.judge.agreement import RESAMPLES, agreement, confusion_matrices, exact_interval, kappa_of, mcc_of

LABELS = ("entailment", "neutral", "contradiction", "unparsed")


def _raters(seed: int, n: int, labels=LABELS, same: float = 0.6) -> tuple[dict[str, str], dict[str, str]]:
    rng = random.Random(seed)
    a = {f"item{i}": rng.choice(labels) for i in range(n)}
    b = {item: label if rng.random() < same else rng.choice(labels) for item, label in a.items()}
    return a, b


@pytest.mark.parametrize(
    "seed, n, labels", [(0, 40, LABELS), (1, 7, LABELS), (2, 25, ("yes", "no")), (3, 3, ("yes", "no"))]
)
def test_numbers_are_scikit_learns_on_the_items_both_decided(seed: int, n: int, labels) -> None:
    a, b = _raters(seed, n, labels)
    b["only-b"] = labels[0]  # an item one rater never decided is left out
    result = agreement(a, b, order=LABELS)
    items = sorted(a)
    first, second = [a[i] for i in items], [b[i] for i in items]
    assert result.n == n
    assert result.raw == sum(x == y for x, y in zip(first, second)) / n
    seen = set(first) | set(second)
    assert list(result.labels) == [label for label in LABELS if label in seen] + sorted(seen - set(LABELS))
    assert [list(row) for row in result.matrix] == confusion_matrix(first, second, labels=list(result.labels)).tolist()
    if len(set(first)) > 1 and len(set(second)) > 1:
        assert result.kappa == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)
        assert result.mcc == pytest.approx(matthews_corrcoef(first, second), abs=1e-12)
        assert result.undefined == ""


def test_the_bootstrap_statistics_are_scikit_learns_on_every_resample() -> None:
    a, b = _raters(5, 30)
    labels = sorted(set(a.values()) | set(b.values()))
    codes = {label: i for i, label in enumerate(labels)}
    first, second = np.array([codes[a[i]] for i in sorted(a)]), np.array([codes[b[i]] for i in sorted(a)])
    draws = np.random.default_rng(7).integers(0, 30, size=(50, 30))
    matrices = confusion_matrices(first[draws], second[draws], len(labels))
    kappas, mccs = kappa_of(matrices), mcc_of(matrices)
    for row, draw in enumerate(draws):
        x, y = [labels[c] for c in first[draw]], [labels[c] for c in second[draw]]
        assert matrices[row].tolist() == confusion_matrix(x, y, labels=labels).tolist()
        assert kappas[row] == pytest.approx(cohen_kappa_score(x, y, labels=labels), abs=1e-12)
        assert mccs[row] == pytest.approx(matthews_corrcoef(x, y), abs=1e-12)


def test_intervals_exact_for_raw_agreement_bootstrap_for_kappa_and_mcc() -> None:
    a, b = _raters(11, 60, ("yes", "no"), same=0.8)
    result = agreement(a, b)
    agreed = round(result.raw * result.n)
    exact = binomtest(agreed, result.n).proportion_ci(method="exact")
    assert result.raw_interval == pytest.approx((exact.low, exact.high))
    assert result.kappa_interval[0] < result.kappa < result.kappa_interval[1]
    assert result.mcc_interval[0] < result.mcc < result.mcc_interval[1]
    assert agreement(a, b) == result  # seeded: the same interval every time
    # Clopper-Pearson by hand: 0 of 2 agreed -> [0, 1 - 0.025 ** (1 / 2)]
    assert exact_interval(0, 2) == pytest.approx((0.0, 1 - 0.025**0.5))
    assert exact_interval(0, 0) is None


def test_a_rater_with_one_label_for_everything_makes_mcc_undefined_never_zero() -> None:
    a = {"x": "entailment", "y": "entailment", "z": "entailment"}
    b = {"x": "entailment", "y": "contradiction", "z": "neutral"}
    assert matthews_corrcoef(list(a.values()), list(b.values())) == 0.0  # what scikit-learn says
    result = agreement(a, b)
    assert result.mcc is None and result.mcc_interval is None and "MCC: A gave every item one label" in result.undefined
    assert result.kappa == pytest.approx(cohen_kappa_score(list(a.values()), list(b.values())))  # kappa is defined
    same = agreement(a, dict(a))
    assert same.raw == 1.0 and same.kappa is None and same.mcc is None
    assert "kappa: both gave every item the label 'entailment'" in same.undefined
    with warnings.catch_warnings():  # scikit-learn warns that it is undefined, and returns NaN
        warnings.simplefilter("ignore")
        assert math.isnan(cohen_kappa_score(list(a.values()), list(a.values())))


def test_undefined_resamples_are_left_out_of_the_interval_and_counted() -> None:
    # one disagreement in 12 items: resamples without it have one label each (MCC undefined there)
    a = {f"i{k}": "yes" for k in range(12)}
    b = dict(a)
    a["i0"], b["i1"] = "no", "no"
    result = agreement(a, b)
    assert 0 < result.mcc_undefined < RESAMPLES and result.mcc_interval is not None
    assert agreement({}, {"x": "yes"}).n == 0 and agreement({}, {}).undefined == "no item was decided by both"


def test_no_interval_of_zero_width_from_resampling_two_items() -> None:
    """Two items, A labels them apart, B alike: kappa is 0 and every resample on which it is
    defined gives 0 again, so the bootstrap printed "0.000 [0.000, 0.000]": now no interval,
    and why; the raw agreement keeps its exact interval, and a wider sample keeps its bootstrap."""
    result = agreement({"x": "yes", "y": "no"}, {"x": "yes", "y": "yes"})
    assert result.kappa == 0.0 and result.kappa_interval is None
    assert "kappa: no interval: its bootstrap over 2 item(s) has no spread" in result.undefined
    assert result.raw_interval == pytest.approx(exact_interval(1, 2))
    assert result.as_dict()["kappa_interval"] is None
    a = {f"i{k}": "yes" if k % 3 else "no" for k in range(30)}
    b = {f"i{k}": "yes" if k % 4 else "no" for k in range(30)}
    wide = agreement(a, b)
    assert wide.kappa_interval[0] < wide.kappa_interval[1] and "no interval" not in wide.undefined
