"""What the shared tests need to know of RULE (``tests.helpers.paper_tests``)."""

from __future__ import annotations

from tests.helpers import LEADERBOARD_FIXTURES

EXPECTED_TASKS = {
    "rule", "rule_main", "rule_sub", "rule_noctx", "rule_5shot_noctx", "rule_cot_faithfulness",
    "rule_cot_edits", "rule_cot_faithfulness_edits",
    "rule_zeroshot_cot_reasoning", "rule_zeroshot_cot",
    "rule_alignment", "rule_alignment_noinstr", "rule_5shot_alignment", "rule_5shot_alignment_noinstr",
    *(
        f"rule_{shots}shot{demos}_split{k}"
        for shots in (1, 5)
        for demos in ("", "_rule", "_cot", "_cot_complex", "_cot_incorrect")
        for k in range(1, 6)
    ),
    *(f"rule_{shots}rationale_{s}" for shots in ("", "5shot_") for s in ("none", "selective", "eliminative", "both")),
}  # fmt: skip
MULTIPLE_CHOICE = 39
LEADERBOARD_RUNS = (LEADERBOARD_FIXTURES / "harness-0.4.0",)  # an early lm-eval 0.4 run of the rule group


def expected_choices(task: str, choices: list[str]) -> list[str]:
    """The option digits in order: the prompt ends at "Option" or "Rationale" and the label is the digit's index."""
    return [str(index) for index in range(len(choices))]
