"""What the shared tests need to know of IBE-Eval (``tests.helpers.paper_tests``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custom_metrics.ibe import data as ibe_data
from custom_metrics.ibe.prompts import JUDGE_INSTRUCTION
from tests.helpers import LEADERBOARD_FIXTURES, write_samples

EXPECTED_TASKS = {
    "ibe_copa", "ibe_ecare", "ibe_judge_copa", "ibe_judge_ecare", "ibe_judge_copa_chat", "ibe_judge_ecare_chat",
    "ibe_judge_copa_position", "ibe_judge_ecare_position",
}  # fmt: skip
MULTIPLE_CHOICE = 4  # the judges scored by log-likelihood (in the paper's order, and in both orders)
LEADERBOARD_RUNS = (LEADERBOARD_FIXTURES / "ibe-report",)  # a scored run with its selector report
# The fixture mirror holds 6 e-CARE rows per split; the paper samples 500.
SMALL_DATA = {"ecare_train_size": 2, "ecare_test_size": 2, "ecare_seed": 1}


def expected_choices(task: str, choices: list[str]) -> list[str]:
    """The judge's choices are the answers its instruction asks for."""
    return [choice for choice in choices if f'"{choice}"' in JUDGE_INSTRUCTION]


def reading_tasks(folder: Path, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The judges read an explanation run of their dataset (its docs drawn with the run's e-CARE sizes)."""
    sizes = [data[key] for key in ("ecare_train_size", "ecare_test_size", "ecare_seed") if key in data]
    reading = {}
    for dataset in ("copa", "ecare"):
        docs = ibe_data.copa_docs() if dataset == "copa" else ibe_data.ecare_docs(*sizes)
        rows = [{"doc": doc, "filtered_resps": ["Step 1: IF a, THEN b."]} for doc in docs]
        run = write_samples(folder / f"samples_ibe_{dataset}_x.jsonl", rows)
        reading |= {f"ibe_judge_{dataset}{kind}": {"explanations": run} for kind in ("", "_chat", "_position")}
    return reading
