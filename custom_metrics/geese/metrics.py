"""GEESE metrics: M2 accuracy, macro-F1 and per-label accuracy; M1 explanation statistics; and the
M1 task's filter, the paper's anonymization (``geese.anonymize``) of every generated explanation."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from lm_eval.api.filter import Filter

from custom_metrics.common.classification import Pair, label_accuracy, macro_f1, predicted_index
from custom_metrics.common.harness_api import filter_output
from custom_metrics.geese.anonymize import ANON_TOKEN, anonymize
from custom_metrics.geese.data import LABELS

YES, NO, UNKNOWN = (LABELS.index(label) for label in ("YES", "NO", "UNKNOWN"))


def process_prediction(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
    gold = LABELS.index(doc["label"])
    pred = predicted_index(results, f"GEESE doc {doc.get('id')}")
    pair = (gold, pred)
    return {"acc": float(gold == pred), "f1_macro": pair, "acc_yes": pair, "acc_no": pair, "acc_unknown": pair}


def f1_macro(items: list[Pair]) -> float:
    return macro_f1(items)


def acc_yes(items: list[Pair]) -> float:
    return label_accuracy(items, YES)


def acc_no(items: list[Pair]) -> float:
    return label_accuracy(items, NO)


def acc_unknown(items: list[Pair]) -> float:
    return label_accuracy(items, UNKNOWN)


def process_generation(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Describe an anonymized M1 explanation; an empty one is flagged, not dropped."""
    text = results[0]
    return {
        "words": float(len(text.split())),
        "masked_terms": float(len(re.findall(rf"\b{ANON_TOKEN}\b", text))),
        "empty": float(not text.strip()),
    }


class AnonymizeFilter(Filter):
    """Apply the paper's anonymization to every M1 explanation, so the logged ``filtered_resps`` *is*
    the anonymized explanation that ``geese_selfexp`` feeds to M2."""

    def apply(self, resps: Iterable[list[str]], docs: list[dict]) -> list:
        return filter_output(anonymize(responses[0]) for responses in resps)
