"""A judge's label distribution held against a crowd's, as ChaosNLI (Nie et al., EMNLP 2020)
scores models against its 100 human labels per item.

A judge right on the majority label can still be wrong about how clear-cut an item is; REG's
verdicts rest on one judge, so agreement with the human *distribution* is the validity question
accuracy alone does not answer. The definitions are the ChaosNLI authors' (``src/evaluation/
tools.py``): per item the Jensen-Shannon *distance* (natural log; their column "JSD") and
KL(human || judge), the judge's probabilities floored at 1e-15 and renormalised; accuracy
against the majority label; each the mean over items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial import distance
from scipy.stats import entropy

from custom_metrics.judge.types import NLI_LABELS, UNPARSED

# ChaosNLI's floor on model probabilities, so that KL stays finite for one-hot answers.
PROBABILITY_FLOOR = 1e-15


@dataclass(frozen=True)
class ItemAgreement:
    """One item: the judge against the crowd. ``unparsed``: the judge's answer named no label
    (its distribution is uniform and its label never the majority's, counted, not hidden)."""

    jsd: float
    kl: float
    correct: bool
    unparsed: bool


@dataclass(frozen=True)
class Agreement:
    """Means over ``n`` items, in ChaosNLI's columns, and how many answers named no label."""

    n: int
    jsd: float
    kl: float
    acc: float
    unparsed: int


def floored(probs: Sequence[float]) -> np.ndarray:
    """A judge's distribution as ChaosNLI scores it: values under the floor raised to it, renormalised."""
    values = np.asarray(probs, dtype=float)
    if values.shape != (len(NLI_LABELS),) or not np.all(np.isfinite(values)) or np.any(values < 0) or values.sum() <= 0:
        raise ValueError(f"a distribution over {NLI_LABELS} must be 3 finite non-negative numbers, got {list(probs)}")
    values = np.where(np.abs(values) < PROBABILITY_FLOOR, PROBABILITY_FLOOR, values)
    return values / values.sum()


def item_agreement(counts: Sequence[int], majority: str, probs: Mapping[str, float], label: str) -> ItemAgreement:
    """One item's JS distance, KL(human || judge) and whether the judge's label is the majority's;
    ``counts``: the crowd's labels in NLI_LABELS order (ChaosNLI's [E, N, C])."""
    human = np.asarray(counts, dtype=float)
    if human.shape != (len(NLI_LABELS),) or np.any(human < 0) or human.sum() <= 0:
        raise ValueError(f"human label counts must be 3 non-negative counts [E, N, C], got {list(counts)}")
    human = human / human.sum()
    judge = floored([probs[name] for name in NLI_LABELS])
    jsd = float(distance.jensenshannon(human, judge))
    # scipy returns NaN for two identical one-hot vectors under rounding; the distance is 0 there.
    return ItemAgreement(
        jsd=0.0 if math.isnan(jsd) else jsd,
        kl=float(entropy(human, judge)),
        correct=label == majority,
        unparsed=label == UNPARSED,
    )


def summarize(items: Sequence[ItemAgreement]) -> Agreement:
    """Means over the items (NaN for none: no number stands for an empty set)."""
    if not items:
        return Agreement(0, math.nan, math.nan, math.nan, 0)
    return Agreement(
        n=len(items),
        jsd=float(np.mean([item.jsd for item in items])),
        kl=float(np.mean([item.kl for item in items])),
        acc=sum(item.correct for item in items) / len(items),
        unparsed=sum(item.unparsed for item in items),
    )
