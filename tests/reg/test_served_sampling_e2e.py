"""The ``_served`` tasks send the paper's whole sampling set (Qwen3.5's top_k 20 and min_p 0
included, as vLLM takes them) in every generation request, and the run's ``openai:`` judge
samples with the same top_k and min_p: the real ``lm_eval`` CLI against a local server that
records every request (``ReasoningAPI`` of the reasoning-API test, which also answers the
judge); the length tokenizer is a small local one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_metrics.reg.modes import NON_THINKING, SERVED, THINKING
from tests.helpers import MIRROR, run_lm_eval
from tests.reg.test_reasoning_api_e2e import GENERATOR, JUDGE, ReasoningAPI
from tests.tiny_models import small_tokenizer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
TASKS = {"reg_chaos_served": NON_THINKING, "reg_chaos_thinking_served": THINKING}


def test_every_served_generation_request_carries_the_papers_sampling(tmp_path: Path) -> None:
    api = ReasoningAPI()
    base_url = api.start()
    args = f"model={GENERATOR},base_url={base_url}/chat/completions,num_concurrent=1,max_retries=1"
    metadata = {"judge": f"openai:{JUDGE}@{base_url}", "tokenizer": str(small_tokenizer(tmp_path / "tokenizer"))}
    env = {"EXPLAIN_EVAL_DATA": str(MIRROR), "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path / "verdicts")}
    try:
        results, _ = run_lm_eval(
            ["--model", "local-chat-completions", "--model_args", args, "--apply_chat_template"],
            ",".join(TASKS),
            tmp_path / "run",
            limit=3,
            extra=["--metadata", json.dumps(metadata)],
            env=env,
        )
    finally:
        api.stop()
    generated = [r for r in api.requests if r["model"] == GENERATOR]
    assert len(generated) == 3 * len(TASKS) and set(results["results"]) == set(TASKS)
    for request in generated:
        thinking = request["chat_template_kwargs"]["enable_thinking"]
        mode = THINKING if thinking else NON_THINKING
        expected = mode.generation_kwargs(SERVED)
        assert (request["top_k"], request["min_p"]) == (20, 0.0), request
        assert (request["temperature"], request["top_p"], request["presence_penalty"]) == (
            expected["temperature"],
            expected["top_p"],
            expected["presence_penalty"],
        )
    assert sorted(r["chat_template_kwargs"]["enable_thinking"] for r in generated) == [False] * 3 + [True] * 3
    # the run's openai: judge (generate mode, its default) samples with the paper's set too
    judged = [r for r in api.requests if r["model"] == JUDGE]
    assert judged and all((r["top_k"], r["min_p"], r["temperature"], r["top_p"]) == (20, 0.0, 0.7, 0.8) for r in judged)
