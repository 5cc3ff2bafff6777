"""lm-eval's ``openai-chat-completions`` forces temperature 1 and drops the stop sequences for
every model name containing "o1", "5", "o3" or "o4": the paper's GPT-3.5 judge, as the docs
once ran it, would have sampled. On the user's path (the real ``lm_eval`` command against a
local server that records every request), that pair is refused in one line before any request,
and the documented command (``local-chat-completions`` to the same URL) sends the task's
temperature 0 and its stop sequences."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from custom_metrics.common.api_sampling import check_command_line, rewrites
from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_args import check_model
from custom_metrics.ibe import data
from tests.helpers import MIRROR, TASKS_DIR
from tests.ibe.recording_server import RecordingServer

JUDGE_STOPS = ["<end_of_turn>", "<|im_end|>", "<|eot_id|>", "</s>"]  # _ibe_judge_chat_yaml's until


def test_the_request_builders_rewrites_are_found_by_asking_it() -> None:
    import lm_eval.models  # noqa: F401  (registers the model names)
    from lm_eval.api.registry import get_model

    forced = ["temperature forced to 1", "stop sequences dropped"]
    openai_chat, local_chat = get_model("openai-chat-completions"), get_model("local-chat-completions")
    assert rewrites(openai_chat, "gpt-3.5-turbo") == forced
    assert rewrites(openai_chat, "Qwen/Qwen3.5-9B") == forced and rewrites(openai_chat, "o3-mini") == forced
    assert rewrites(openai_chat, "gpt-4o") == []  # no "o1", "5", "o3" or "o4" in it
    assert rewrites(local_chat, "gpt-3.5-turbo") == [] and rewrites(get_model("hf"), "gpt-3.5-turbo") == []
    with pytest.raises(DataError, match=r"temperature forced to 1 and stop sequences dropped.*local-chat-completions"):
        check_model("openai-chat-completions", {"model": "gpt-3.5-turbo"})  # explain-eval sweep, rule-protocol
    # the task loaders read the class from the lm_eval command line (explain-eval lm-eval's too, after "run")
    for argv in (["run", "--model", "openai-chat-completions"], ["-M", "openai-chat-completions", "--tasks", "x"]):
        with pytest.raises(DataError, match=r"--model openai-chat-completions with model=gpt-3.5-turbo"):
            check_command_line(argv, {"model": "gpt-3.5-turbo"})
    check_command_line(["run", "--model", "local-chat-completions"], {"model": "gpt-3.5-turbo"})


def _lm_eval(model: str, base_url: str, explanations: Path, out: Path) -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).with_name("lm_eval")),
        "--model", model,
        "--model_args", f"model=gpt-3.5-turbo,base_url={base_url}/chat/completions,num_concurrent=1,max_retries=1",
        "--apply_chat_template",
        "--tasks", "ibe_judge_copa_chat",
        "--include_path", str(TASKS_DIR),
        "--metadata", json.dumps({"explanations": str(explanations)}),
        "--limit", "1",
        "--output_path", str(out),
    ]  # fmt: skip
    env = {**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR), "OPENAI_API_KEY": "sk-test"}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=out.parent)


@pytest.mark.e2e
@pytest.mark.slow
def test_the_override_is_refused_before_any_request_and_the_documented_command_is_greedy(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    explanations = tmp_path / "explanations.jsonl"
    rows = [
        {**doc, "explanation": f"Step 1: IF {doc['premise']}, THEN {doc['conclusion']}"} for doc in data.copa_docs()
    ]
    explanations.write_text("".join(json.dumps(row) + "\n" for row in rows if row["split"] == "test"))
    server = RecordingServer(lambda body: "Explanation 1")
    try:
        refused = _lm_eval("openai-chat-completions", server.base_url, explanations, tmp_path / "refused")
        assert refused.returncode == 2, refused.stderr[-3000:]
        assert server.requests == []  # not one request, not even a GET
        line = refused.stderr.strip().splitlines()[-1]
        assert "temperature forced to 1 and stop sequences dropped" in line, line
        assert "pass --model local-chat-completions --model_args model=gpt-3.5-turbo,base_url=" in line, line

        fixed = _lm_eval("local-chat-completions", server.base_url, explanations, tmp_path / "fixed")
        assert fixed.returncode == 0, fixed.stderr[-3000:]
    finally:
        server.close()
    bodies = [request.body for request in server.posts()]
    assert len(bodies) == 1 and bodies[0]["model"] == "gpt-3.5-turbo"
    assert (bodies[0]["temperature"], bodies[0]["stop"]) == (0.0, JUDGE_STOPS)
    assert {request.authorization for request in server.posts()} == {"Bearer sk-test"}
