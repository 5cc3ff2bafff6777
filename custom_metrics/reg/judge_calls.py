"""A REG item's judge calls as the sample viewer shows them, one text per judge.

``reg_chaos`` asks its judge twice (``judging.judge_outputs``); each verdict shows its input
pair, label, probabilities or raw answer, and why call 2 was not made where it was not.
"""

from __future__ import annotations

import json
from typing import Any

from custom_metrics.common.display_names import friendly_spec
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
    """The viewer's column of a judge's calls, named by the judge the record names."""
    judge = record.get("judge")
    return f"judge calls: {friendly_spec(judge) if isinstance(judge, str) else 'judge not recorded'}"
