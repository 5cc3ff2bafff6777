"""REG's logged samples in the leaderboard's sample viewer (``SampleView`` in ``leaderboard.py``):
the pair, the explanation and the judge's three verdicts with its calls, a faithfulness doc
beside the verdict it changed; the outcomes paired between runs.

A judge's calls on an item are one text: ``reg_chaos`` asks its judge twice
(``judging.judge_outputs``); each verdict shows its input pair, label, probabilities or raw
answer, and why call 2 was not made where it was not.
"""

from __future__ import annotations

import json
from typing import Any

from custom_metrics.common.results import friendly_spec
from custom_metrics.reg.outputs import combine

SHORT = {"entailment": "e", "neutral": "n", "contradiction": "c"}


def _verdict(name: str, call: int, verdict: dict[str, Any], first: str, second: str) -> str:
    parts = [verdict.get("label", "?")]
    probs = verdict.get("probs")
    method = verdict.get("method", "")
    if isinstance(probs, dict) and method == "scores":
        parts.append(" ".join(f"{SHORT.get(k, k)} {v:.2f}" for k, v in probs.items() if isinstance(v, (int, float))))
    if verdict.get("answer"):
        parts.append(f"answer {verdict['answer']!r}")
    if method:
        parts.append(method)
    return f"call {call}, {name}: {' · '.join(parts)}\n  input: «{first}» → «{second}»"


def calls_text(record: dict[str, Any], doc: dict[str, Any]) -> str:
    """Both calls of one judge on one item (``record``: what ``reg_chaos`` logs as its filtered response)."""
    if record.get("judge_error"):
        return f"no verdicts: the judge failed after generation ({record['judge_error']})"
    premise, hypothesis = str(doc.get("premise", "")), str(doc.get("hypothesis", ""))
    explanation = str(record.get("explanation") or "")
    initial = record.get("initial")
    if not isinstance(initial, dict):
        return "no verdicts recorded"
    lines = [_verdict("J(p, h)", 1, initial, premise, hypothesis)]
    effect, cohere = record.get("effectiveness"), record.get("coherence")
    if isinstance(effect, dict) and isinstance(cohere, dict):
        lines.append(_verdict("J(p;e, h)", 2, effect, combine(premise, explanation), hypothesis))
        lines.append(_verdict("J(p, e)", 2, cohere, premise, explanation))
    elif initial.get("label") != "contradiction":
        lines.append("call 2 not made: J(p, h) is not contradiction, so the item is outside N")
    else:
        lines.append(f"call 2 not made: the output holds no explanation ({record.get('flag') or 'flagged'})")
    return "\n".join(lines)


def logged_record(sample: dict[str, Any]) -> dict[str, Any] | None:
    """The judge record ``reg_chaos`` logs as its filtered response (None for other tasks)."""
    filtered = sample.get("filtered_resps")
    text = filtered[0] if isinstance(filtered, list) and filtered else filtered
    if not isinstance(text, str) or not text.startswith("{"):
        return None
    record = json.loads(text)
    return record if isinstance(record, dict) and isinstance(record.get("initial"), dict) else None


def calls_field(record: dict[str, Any]) -> str:
    judge = record.get("judge")
    return f"judge calls: {friendly_spec(judge) if isinstance(judge, str) else 'judge not recorded'}"


def _label(verdict: Any) -> str | None:
    return verdict.get("label") if isinstance(verdict, dict) else None


def _yes(value: float | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def sample_fields(task: str, sample: dict[str, Any]) -> dict[str, Any]:
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
        kept = "filler" if doc.get("condition") == "filler" else f"{float(doc.get('fraction', 0)):.0%}"
        original, success = doc.get("original"), scores["success"]
        fields |= {
            "trace kept": kept,
            "trace given": doc.get("cot"),
            "original success": _yes(original),
            "same": _yes(None if success is None or original is None else success == original),
        }
    return fields


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
