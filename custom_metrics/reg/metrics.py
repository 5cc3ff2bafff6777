"""REG metrics (section 4.3): coherence, effectiveness and success over N, the items the
judge called a contradiction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from custom_metrics.reg.judging import read_record

Scored = tuple[bool, float | None]  # (item in N, value when in N)


def record_scores(record: dict[str, Any]) -> dict[str, float | None]:
    """Per-item verdict logic of section 4.3; None outside N.

    An item in N whose output holds no explanation (empty, or thinking never closed)
    fails all three criteria rather than leaving N: the judge, not the generator,
    decides N, and a missing explanation reconciles nothing.
    """
    in_n = record["initial"]["label"] == "contradiction"
    if not in_n:
        return {"coherence": None, "effectiveness": None, "success": None, "malformed": None}
    if record["flag"]:
        return {"coherence": 0.0, "effectiveness": 0.0, "success": 0.0, "malformed": 1.0}
    coherent = record["coherence"]["label"] != "contradiction"
    effective = record["effectiveness"]["label"] == "entailment"
    return {
        "coherence": float(coherent),
        "effectiveness": float(effective),
        "success": float(coherent and effective),
        "malformed": 0.0,
    }


def process_results(doc: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    record = read_record(results[0])
    scores = record_scores(record)
    in_n = scores["success"] is not None
    metrics: dict[str, Any] = {name: (in_n, value) for name, value in scores.items()}
    metrics["n"] = float(in_n)
    metrics["thinking_words"] = float(record["thinking_words"])
    return metrics


def mean_over_n(items: Sequence[Scored]) -> float:
    """Mean over the items in N (NaN when the judge called no item a contradiction)."""
    values = [value for in_n, value in items if in_n]
    return sum(values) / len(values) if values else float("nan")


def size_of_n(items: Sequence[float]) -> int:
    """|N|: how many items the judge called a contradiction (the paper's 195 for Gemma-4-31B-it)."""
    return int(sum(items))
