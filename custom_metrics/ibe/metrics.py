"""Format statistics of IBE explanations, the only metrics computed inside the harness.

The IBE features and the selector run afterwards in ``explain-eval ibe score/report``,
because they need every explanation of the task at once (a selector fitted on the
training questions) and tools (Prolog, NLI, certainty models) that do not belong inside
an lm-eval metric.
"""

from __future__ import annotations

from typing import Any

from custom_metrics.common.classification import choice_accuracy
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
    return {"acc": float(choice == doc["gold"]), "unparsed": float(choice is None)}
