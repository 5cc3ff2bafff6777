"""What the shared tests need to know of REG (``tests.helpers.paper_tests``)."""

from __future__ import annotations

import json
from typing import Any

from custom_metrics.judge.prompt import LABEL_WORDS
from tests.helpers import LEADERBOARD_FIXTURES

EXPECTED_TASKS = {
    "reg_chaos", "reg_chaos_thinking", "reg_chaos_served", "reg_chaos_thinking_served", "reg_chaos_reasoning_served",
    "reg_judge_select", "reg_judge_select_loglik", "reg_judge_select_reasoning_served", "reg_judge_humans",
}  # fmt: skip
MULTIPLE_CHOICE = 2  # reg_judge_select_loglik, reg_judge_humans
LEADERBOARD_RUNS = (LEADERBOARD_FIXTURES / "harness-0.4.0",)  # with reg_chaos in its "groups"


def expected_choices(task: str, choices: list[str]) -> list[str]:
    """The label words the REG judge's parser maps back to labels."""
    return list(LABEL_WORDS)


def fake_result(task: str, doc: dict[str, Any]) -> list[str] | None:
    """What REG's filter hands ``process_results`` for a reg_chaos doc: the judged record (None: the default)."""
    if not task.startswith("reg_chaos"):
        return None
    verdict = {"label": "contradiction", "probs": {"entailment": 0.1, "neutral": 0.1, "contradiction": 0.8}}
    record = {"explanation": "e", "flag": "", "initial": verdict, "coherence": verdict, "effectiveness": verdict}
    lengths = {"thinking_words": 0, "output_tokens": 3, "thinking_tokens": 0}
    return [json.dumps({**record, **lengths})]
