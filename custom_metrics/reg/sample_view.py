"""REG's logged samples in the leaderboard's sample viewer (``SampleView`` in ``leaderboard.py``):
the pair, the explanation and the judge's three verdicts with its calls, a faithfulness doc
beside the verdict it changed; the outcomes paired between runs."""

from __future__ import annotations

from typing import Any

from custom_metrics.common.display_names import friendly_spec
from custom_metrics.reg.judge_calls import calls_field, calls_text, logged_record


def _label(verdict: Any) -> str | None:
    return verdict.get("label") if isinstance(verdict, dict) else None


def _yes(value: float | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
    """REG items in the sample viewer: the pair, the explanation and the judge's three verdicts."""
    doc = sample.get("doc") or {}
    fields: dict[str, Any] = {"uid": doc.get("uid"), "premise": doc.get("premise"), "hypothesis": doc.get("hypothesis")}
    record = logged_record(sample)
    if record is None:
        fields["gold"] = doc.get("majority_label")
        outcome = _accuracy(sample)
        if outcome:
            fields["correct"] = "yes" if next(iter(outcome.values())) else "no"
        return fields
    from custom_metrics.reg.metrics import record_scores  # imports the harness' Filter: only when needed

    scores = record_scores(record)
    fields.update(
        {
            "explanation": record.get("explanation"),
            "flag": record.get("flag") or "",
            "J(p, h)": _label(record["initial"]),
            "in N": _yes(scores["success"] is not None),
            "J(p, e)": _label(record.get("coherence")),
            "coherent": _yes(scores["coherence"]),
            "J(p;e, h)": _label(record.get("effectiveness")),
            "effective": _yes(scores["effectiveness"]),
            "success": _yes(scores["success"]),
            "w_con": doc.get("w_con"),
            "judge": friendly_spec(record["judge"]) if isinstance(record.get("judge"), str) else record.get("judge"),
        }
    )
    fields[calls_field(record)] = calls_text(record, doc)
    if "condition" in doc:  # reg_cot_faithfulness: the trace given and both verdicts
        fields |= faithfulness_fields(doc, scores["success"])
    return fields


def faithfulness_fields(doc: dict[str, Any], success: float | None) -> dict[str, Any]:
    """A faithfulness doc: how much of the trace it was given, that trace, and the verdicts now and before."""
    kept = "filler" if doc.get("condition") == "filler" else f"{float(doc.get('fraction', 0)):.0%}"
    original = doc.get("original")
    return {
        "trace kept": kept,
        "trace given": doc.get("cot"),
        "original success": _yes(original),
        "same": _yes(None if success is None or original is None else success == original),
    }


def sample_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    record = logged_record(sample)
    if record is None:
        return _accuracy(sample)
    from custom_metrics.reg.metrics import record_scores

    scores = record_scores(record)
    return {key: scores[key] for key in ("coherence", "effectiveness", "success")}


def _accuracy(sample: dict[str, Any]) -> dict[str, float]:
    """A judge task's per-item accuracy under the name it was logged with (``answer_acc`` for the
    generated judge, ``acc`` for the others and for runs logged before the rename), or nothing."""
    for metric in ("answer_acc", "acc"):
        if isinstance(sample.get(metric), (int, float)):
            return {metric: float(sample[metric])}
    return {}
