"""Format statistics of IBE explanations, the only metrics computed inside the harness.

The IBE features and the selector run afterwards in ``explain-eval ibe score/report``,
because they need every explanation of the task at once (a selector fitted on the
training questions) and tools (Prolog, NLI, certainty models) that do not belong inside
an lm-eval metric.
"""

from __future__ import annotations

from typing import Any

from custom_metrics.common.classification import NO_PREDICTION, choice_accuracy, predicted_index
from custom_metrics.ibe.prompts import judge_target
from ibe_postprocess.judge_answer import parse_choice
from ibe_postprocess.parsing import parse_explanation


def process_generation(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """Format statistics of one explanation; IBE scoring happens in ibe_postprocess."""
    parsed = parse_explanation(results[0])
    return {
        "steps": float(len(parsed.steps)),
        "well_formed": float(bool(parsed.steps) and parsed.summary is not None and not parsed.flags),
        "no_steps": float(not parsed.steps),
    }


def judge_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    """The LLM-as-a-judge baseline's accuracy: the harness' own, but a NaN log-likelihood is no choice."""
    return choice_accuracy(results, judge_target(doc), f"IBE judge question {doc.get('qid')}")


def judge_chat_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """The chat judge's accuracy: its generated answer read by ``judge_answer.parse_choice``; an
    answer that names no single explanation is a wrong choice, counted in ``unparsed``."""
    choice = parse_choice(results[0])
    return {"answer_acc": float(choice == doc["gold"]), "unparsed": float(choice is None)}


# One doc's choice for the position control: (question, order shown, slot picked: 0 first, 1 second,
# NO_PREDICTION when its log-likelihoods are not comparable).
Slot = tuple[str, str, int]


def judge_position_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, Any]:
    """``ibe_judge_*_position``: every question twice, its explanations in both orders. ``acc`` is
    over both (position-balanced); the slot picked goes to the aggregations that pair the two."""
    slot = predicted_index(results, f"IBE judge question {doc.get('qid')} (order {doc.get('order')})")
    picked: Slot = (doc["qid"], doc["order"], slot)
    return {"acc": float(slot == judge_target(doc)), "position_bias": picked, "first_slot": picked}


def position_bias_share(items: list[Slot]) -> float:
    """Share of the questions, judged in both orders, on which the judge picked the same slot both
    times: it followed the position, not the explanation (0 for a judge that reads content only;
    a judge that always picks one slot scores 1). NaN when no question has both choices."""
    slots: dict[str, dict[str, int]] = {}
    for qid, order, slot in items:
        if slot != NO_PREDICTION:
            slots.setdefault(qid, {})[order] = slot
    pairs = [tuple(orders.values()) for orders in slots.values() if len(orders) == 2]
    return sum(first == second for first, second in pairs) / len(pairs) if pairs else float("nan")


def first_slot_share(items: list[Slot]) -> float:
    """Share of all choices that went to the first slot (0.5 for a judge without a position preference
    on this position-balanced set). NaN when no choice was made."""
    slots = [slot for _, _, slot in items if slot != NO_PREDICTION]
    return sum(slot == 0 for slot in slots) / len(slots) if slots else float("nan")
