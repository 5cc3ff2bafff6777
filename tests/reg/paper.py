"""What the shared tests need to know of REG (``tests.helpers.paper_tests``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custom_metrics.judge.prompt import LABEL_WORDS
from tests.helpers import LEADERBOARD_FIXTURES, write_samples

EXPECTED_TASKS = {
    "reg_chaos", "reg_chaos_thinking", "reg_chaos_served", "reg_chaos_thinking_served", "reg_chaos_reasoning_served",
    "reg_judge_select", "reg_judge_select_loglik", "reg_judge_select_reasoning_served", "reg_judge_humans",
    "reg_cot_faithfulness",
}  # fmt: skip
MULTIPLE_CHOICE = 2  # reg_judge_select_loglik, reg_judge_humans
LEADERBOARD_RUNS = (LEADERBOARD_FIXTURES / "harness-0.4.0",)  # with reg_chaos in its "groups"


def expected_choices(task: str, choices: list[str]) -> list[str]:
    """The label words the REG judge's parser maps back to labels."""
    return list(LABEL_WORDS)


def fake_result(task: str, doc: dict[str, Any]) -> list[str] | None:
    """What REG's filter hands ``process_results`` for a reg_chaos or reg_cot_faithfulness doc: the
    judged record (None: the default)."""
    if not task.startswith(("reg_chaos", "reg_cot_faithfulness")):
        return None
    verdict = {"label": "contradiction", "probs": {"entailment": 0.1, "neutral": 0.1, "contradiction": 0.8}}
    record = {"explanation": "e", "flag": "", "initial": verdict, "coherence": verdict, "effectiveness": verdict}
    lengths = {"thinking_words": 0, "output_tokens": 3, "thinking_tokens": 0}
    return [json.dumps({**record, **lengths})]


SERVED = {"base_url": "http://127.0.0.1:9/v1/chat/completions"}
# The model arguments each variant reads (merged into the metadata): the model kind, the thinking
# switch and the tokenizer that counts output tokens (custom_metrics/reg/generation.py, thinking_switch.py, tokens.py).
RUN_ARGS = {
    "reg_chaos": {},
    "reg_chaos_thinking": {"chat_template_args": {"enable_thinking": True}},
    "reg_chaos_served": SERVED,
    "reg_chaos_thinking_served": SERVED,
    "reg_chaos_reasoning_served": SERVED,
}


def run_arg_tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """REG's variants as a run builds them: their model arguments, a tokenizer, and a judge (REG
    checks its judge while the task is built: a tiny classifier, random, so degenerate: a warning)."""
    from tests.reg.judges import tiny_judge_metadata
    from tests.tiny_models import small_tokenizer

    tokenizer = str(small_tokenizer(tmp_path_factory.mktemp("tokenizer")))
    judge = tiny_judge_metadata(tmp_path_factory.mktemp("judge"))
    built = {}
    for name, run_args in RUN_ARGS.items():
        model = {"tokenizer": tokenizer, "model": tokenizer} if run_args is SERVED else {"pretrained": tokenizer}
        built[name] = model | judge | run_args
    return built


def reading_tasks(folder: Path, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The task that reads an earlier run: reg_cot_faithfulness, over a stand-in reg_chaos_thinking
    run of two items (hand-written closed traces: the embedded models do not think), six docs each:
    more than the harness checks' ten."""
    from tests.reg.thinking_run import thinking_sample

    items = [
        {"uid": "s001", "premise": "Cassie hates the taste of coffee.", "hypothesis": "Cassie buys coffee daily."},
        {"uid": "s002", "premise": "The shop is closed on Sundays.", "hypothesis": "I bought bread there on Sunday."},
    ]
    raws = [
        "The premise rules it out. Unless it changed.\n</think>\n\nIt changed later.",
        "Closed means no sales. A special opening would allow it.\n</think>\n\nIt opened for a holiday.",
    ]
    samples = [thinking_sample(i, item, raw, "embedded") for i, (item, raw) in enumerate(zip(items, raws, strict=True))]
    run = write_samples(folder / "samples_reg_chaos_thinking_x.jsonl", samples)
    return {"reg_cot_faithfulness": {"explanations": run}}
