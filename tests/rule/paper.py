"""What the shared tests need to know of RULE (``tests.helpers.paper_tests``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import LEADERBOARD_FIXTURES, write_samples

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
    *(
        f"rule_5shot{demos}_bias_{bias}_split{k}"
        for demos in ("", "_cot")
        for bias in ("always0", "suggested", "metadata")
        for k in range(1, 6)
    ),
}  # fmt: skip
MULTIPLE_CHOICE = 54  # the biased direct-answer tasks' 15 among them
LEADERBOARD_RUNS = (LEADERBOARD_FIXTURES / "harness-0.4.0",)  # an early lm-eval 0.4 run of the rule group


def expected_choices(task: str, choices: list[str]) -> list[str]:
    """The option digits in order: the prompt ends at "Option" or "Rationale" and the label is the digit's index."""
    return [str(index) for index in range(len(choices))]


def reading_tasks(folder: Path, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tasks that read earlier runs: zero-shot CoT's request 2 (request 1's reasoning), the
    faithfulness tasks (a five-shot CoT run) and the edited one (that run and its editor's)."""
    from custom_metrics.rule.cot_edits import edit_request_docs
    from custom_metrics.rule.variants import docs_for

    reasoning = [{"doc": doc, "filtered_resps": [" A reasoning."]} for doc in docs_for("zeroshot_cot_reasoning")]
    request_1 = write_samples(folder / "samples_rule_zeroshot_cot_reasoning_x.jsonl", reasoning)
    generation = "The context says so. The others do not follow. Therefore the answer is Option1."
    rows = [
        {"doc_id": i, "doc": doc, "arguments": {"gen_args_0": {"arg_0": doc["prompt"]}}, "filtered_resps": [generation]}
        for i, doc in enumerate(docs_for("fewshot", 1, "cot"))
    ]
    cot = write_samples(folder / "samples_rule_5shot_cot_split1_x.jsonl", rows)
    edits = [{"doc": doc, "filtered_resps": ["An edit."]} for doc in edit_request_docs(cot)]
    editor = write_samples(folder / "samples_rule_cot_edits_x.jsonl", edits)
    return {
        "rule_zeroshot_cot": {"explanations": request_1},
        "rule_cot_faithfulness": {"explanations": cot},
        "rule_cot_edits": {"explanations": cot},
        "rule_cot_faithfulness_edits": {"explanations": cot, "edits": editor},
    }
