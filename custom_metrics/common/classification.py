"""Multiple-choice scoring and label-wise aggregations reused by classification tasks.

The harness' built-in ``acc`` only averages; macro-F1 and per-label accuracy need all
(gold, prediction) pairs of a task at once, so per-doc values are pairs and the
aggregations below see the whole list.
"""

from __future__ import annotations

from collections.abc import Sequence

from sklearn.metrics import f1_score

Pair = tuple[int, int]  # (gold index, predicted index)


def predicted_index(results: Sequence[tuple[float, bool]]) -> int:
    """Index of the choice with the highest log-likelihood (first one on ties, like ``acc``)."""
    logliks = [float(loglik) for loglik, _ in results]
    return max(range(len(logliks)), key=logliks.__getitem__)


def macro_f1(items: Sequence[Pair]) -> float:
    """Macro-F1 over the labels that occur in gold or predictions (all of them on full runs)."""
    golds, preds = zip(*items)
    return float(f1_score(golds, preds, average="macro", zero_division=0))


def label_accuracy(items: Sequence[Pair], label: int) -> float:
    """Accuracy on the docs whose gold label is ``label`` (its recall); NaN if there are none."""
    hits = [gold == pred for gold, pred in items if gold == label]
    return sum(hits) / len(hits) if hits else float("nan")
