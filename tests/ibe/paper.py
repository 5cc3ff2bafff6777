"""What the shared tests need to know of IBE-Eval (``tests.helpers.paper_tests``)."""

from __future__ import annotations

from custom_metrics.ibe.prompts import JUDGE_INSTRUCTION
from tests.helpers import LEADERBOARD_FIXTURES

EXPECTED_TASKS = {
    "ibe_copa", "ibe_ecare", "ibe_judge_copa", "ibe_judge_ecare", "ibe_judge_copa_chat", "ibe_judge_ecare_chat",
    "ibe_judge_copa_position", "ibe_judge_ecare_position",
}  # fmt: skip
MULTIPLE_CHOICE = 4  # the judges scored by log-likelihood (in the paper's order, and in both orders)
LEADERBOARD_RUNS = (LEADERBOARD_FIXTURES / "ibe-report",)  # a scored run with its selector report


def expected_choices(task: str, choices: list[str]) -> list[str]:
    """The judge's choices are the answers its instruction asks for."""
    return [choice for choice in choices if f'"{choice}"' in JUDGE_INSTRUCTION]
