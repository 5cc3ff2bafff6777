"""Multiple-choice scoring and label-wise aggregations reused by classification tasks.

The harness' built-in ``acc`` only averages; macro-F1 and per-label accuracy need all
(gold, prediction) pairs of a task at once, so per-doc values are pairs and the
aggregations below see the whole list.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Sequence

log = logging.getLogger(__name__)

Pair = tuple[int, int]  # (gold index, predicted index)
# The prediction of a doc whose log-likelihoods cannot be compared: never equal to a gold index.
NO_PREDICTION = -1


def predicted_index(results: Sequence[tuple[float, bool]], where: str = "a document") -> int:
    """Index of the choice with the highest log-likelihood (first one on ties, like ``acc``).

    A NaN or +inf log-likelihood (float16 overflow, a broken API answer) would make a choice the
    argmax by accident: such a doc gets ``NO_PREDICTION`` (wrong, never right by chance) and a
    warning names it (``where``). -inf is a real log-likelihood (probability zero).
    """
    logliks = [float(loglik) for loglik, _ in results]
    if any(math.isnan(value) or value == math.inf for value in logliks):
        log.warning(
            "%s: log-likelihoods %s are not all comparable numbers; no choice is predicted and the doc counts as "
            "wrong (a float16 overflow? try dtype=bfloat16 or float32)",
            where,
            logliks,
        )
        return NO_PREDICTION
    return max(range(len(logliks)), key=logliks.__getitem__)


def choice_accuracy(results: Sequence[tuple[float, bool]], gold: int, where: str) -> dict[str, float]:
    """``acc`` of a multiple-choice doc, as the harness' own but with ``predicted_index``:
    the built-in takes numpy's argmax, for which a NaN log-likelihood is the maximum."""
    return {"acc": float(predicted_index(results, where) == gold)}


def macro_f1(items: Sequence[Pair]) -> float:
    """Macro-F1 over the labels that occur in gold or predictions; NaN when there are none.

    ``NO_PREDICTION`` is no label: it lowers the recall of the doc's gold label only. Equal to
    scikit-learn's ``f1_score(average="macro", zero_division=0)`` to the bit (a test holds them
    equal), without its per-call checks: 4 ms a call, where lm-eval 0.5's bootstrap makes 100,000.
    """
    pairs = Counter(items)
    golds, predictions = Counter(), Counter()
    for (gold, predicted), count in pairs.items():
        golds[gold] += count
        predictions[predicted] += count
    labels = sorted((golds.keys() | predictions.keys()) - {NO_PREDICTION})
    scores = [2 * pairs[label, label] / (golds[label] + predictions[label]) for label in labels]
    return sum(scores) / len(scores) if scores else math.nan


def label_accuracy(items: Sequence[Pair], label: int) -> float:
    """Accuracy on the docs whose gold label is ``label`` (its recall); NaN if there are none."""
    hits = [gold == pred for gold, pred in items if gold == label]
    return sum(hits) / len(hits) if hits else float("nan")
