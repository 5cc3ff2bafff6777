"""What the shared tests need to know of GEESE (``tests.helpers.paper_tests``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custom_metrics.geese.data import LABELS, load_docs
from tests.helpers import LEADERBOARD_FIXTURES, write_samples

EXPECTED_TASKS = {
    *(f"geese_{s}" for s in ("noexp", "dummy", "human", "llama3", "llama3_whynot", "llama3_implicit", "selfexp")),
    *(f"geese_{s}_only" for s in ("human", "llama3", "llama3_whynot", "llama3_implicit", "selfexp")),
    *(f"geese_{k}" for k in ("generate_whyexp", "generate_whynot", "generate_implicit")),
}
MULTIPLE_CHOICE = 7 + 5  # M2 and its explanation-only tasks
LEADERBOARD_RUNS = (LEADERBOARD_FIXTURES / "harness-0.3",)  # an lm-eval 0.3 run of geese_noexp and geese_human


def expected_choices(task: str, choices: list[str]) -> list[str]:
    """The label words GEESE's metrics map back to labels."""
    return list(LABELS)


def reading_tasks(folder: Path, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """M2 with the model's own explanations reads an M1 run: one stand-in explanation per doc."""
    rows = [{"doc": doc, "filtered_resps": ["An explanation."]} for doc in load_docs()]
    m1 = write_samples(folder / "samples_geese_generate_whyexp_x.jsonl", rows)
    return {task: {"explanations": m1} for task in ("geese_selfexp", "geese_selfexp_only")}
