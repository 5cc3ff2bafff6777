"""REG's two modes through the real lm_eval CLI, in process and on a served model.

The generator is the embedded gemma-3-270m with a chat template that has a thinking switch
(``tests/reg/thinking_model.py``); the judge is the default embedded one, its verdicts
cached across the module's runs. Generation is a few tokens: the point is the wiring (the
switch reaches the template, the mode's sampling parameters reach the model, the samples
record the mode, seed, token lengths and the split malformed flags), not the explanations.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from custom_metrics.reg.generation import MODES, THINKING, count_tokens
from custom_metrics.reg.judging import read_record
from custom_metrics.reg.outputs import FLAGS
from tests.helpers import MIRROR, run_lm_eval
from tests.reg.thinking_model import THINKING_PREFILL, thinking_model_folder

BUDGET = 6  # tokens: every thinking-mode output is a trace cut off by the budget
WARN = ["--metadata", json.dumps({"judge_check": "warn"})]  # the embedded judge is degenerate: run anyway


@pytest.fixture(scope="module")
def thinking_model(embedded_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return thinking_model_folder(embedded_model, tmp_path_factory.mktemp("thinking") / "gemma-3-270m-thinking")


@pytest.fixture(scope="module")
def thinking_server(thinking_model: Path):
    """``transformers serve`` pins the folder it is started with, so the switchable model has
    a server of its own (the session's ``served_model`` serves Gemma 3's template)."""
    from tests.serving import missing_serving_modules, start_server

    missing = missing_serving_modules()
    if missing:
        pytest.skip(f"the serving extra is not installed ({', '.join(missing)} missing): pip install -e '.[serving]'")
    served = start_server(thinking_model, thinking_model.parent / "server.log")
    yield served
    served.stop()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    verdicts = tmp_path_factory.mktemp("verdicts")
    return {"EXPLAIN_EVAL_DATA": str(MIRROR), "EXPLAIN_EVAL_JUDGE_CACHE": str(verdicts), "EXPLAIN_EVAL_JUDGE": ""}


def _in_process(model: Path, thinking: bool) -> list[str]:
    args = {"pretrained": str(model), "dtype": "float32", "chat_template_args": {"enable_thinking": thinking}}
    flags = ["--model", "hf", "--model_args", json.dumps(args), "--device", "cpu", "--batch_size", "8"]
    return [*flags, "--apply_chat_template"]


def _check_samples(task: str, result: dict, samples: list[dict], tokenizer: str) -> list[dict]:
    """What every reg_chaos* sample records, and the metrics that follow from it."""
    mode = MODES[samples[0]["doc"]["mode"]]
    records = [read_record(sample["filtered_resps"][0]) for sample in samples]
    raws = [sample["resps"][0][0] for sample in samples]
    for sample, record, raw in zip(samples, records, raws):
        assert record["mode"] == mode.name and sample["doc"]["length_tokenizer"] == tokenizer
        sent = sample["arguments"]["gen_args_0"]["arg_1"]  # the sampling parameters as the harness sent them
        assert (sent["temperature"], sent["top_p"], sent["do_sample"]) == (mode.temperature, mode.top_p, True)
        assert record["output_tokens"] == count_tokens(tokenizer, [raw])[0] <= BUDGET
        assert record["thinking_tokens"] == count_tokens(tokenizer, [record_thinking(raw, mode.thinking)])[0]
    for flag in FLAGS:
        assert result[f"{flag},judged"] == pytest.approx(sum(r["flag"] == flag for r in records) / len(records)), task
    assert result["output_tokens,judged"] == pytest.approx(sum(r["output_tokens"] for r in records) / len(records))
    if mode.thinking:  # no trace ended within the budget: none is judged as an explanation
        assert {r["flag"] for r in records} <= set(FLAGS) and not any(r["explanation"] for r in records)
        assert result["cut_off,judged"] + result["no_explanation,judged"] == 1
        assert all(r["effectiveness"] is None and r["coherence"] is None for r in records)
    return records


def record_thinking(raw: str, thinking: bool) -> str:
    from custom_metrics.reg.outputs import split_output

    return split_output(raw, thinking).thinking


@pytest.mark.e2e
def test_thinking_mode_in_process(thinking_model, env, tmp_path):
    """reg_chaos_thinking on ``--model hf``; the non-thinking ``reg_chaos`` runs in process in
    ``test_e2e.py`` and both modes' switch checks in ``test_generation.py``."""
    task = "reg_chaos_thinking"
    extra = ["--gen_kwargs", f"max_gen_toks={BUDGET}", *WARN]
    results, samples = run_lm_eval(_in_process(thinking_model, True), task, tmp_path, limit=2, extra=extra, env=env)
    _check_samples(task, results["results"][task], samples[task], str(thinking_model))
    for sample in samples[task]:
        # the switch reached the template: the rendered prompt ends in the thinking prefill
        prompt = sample["arguments"]["gen_args_0"]["arg_0"]
        assert prompt.endswith(THINKING_PREFILL), prompt[-80:]
        sent = sample["arguments"]["gen_args_0"]["arg_1"]
        assert (sent["top_k"], sent["min_p"], sent["max_gen_toks"]) == (
            20,
            0.0,
            BUDGET,
        )  # in process, all of Qwen's set
        assert sample["doc"]["sampling_seed"] == 1234  # lm_eval's default torch seed


def _post(base_url: str, body: dict) -> dict:
    request = urllib.request.Request(
        f"{base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


@pytest.mark.e2e
def test_each_mode_on_a_served_model(thinking_server, thinking_model, env, tmp_path):
    """Both served variants in one run: each request carries its mode's switch, which the
    server's template needs to render at all; the server's prompt lengths show it took effect."""
    tasks = ["reg_chaos_served", "reg_chaos_thinking_served"]
    args = f"model={thinking_model},base_url={thinking_server.base_url}/chat/completions,num_concurrent=1,max_retries=1"
    flags = ["--model", "local-chat-completions", "--model_args", args, "--apply_chat_template"]
    extra = ["--gen_kwargs", f"max_gen_toks={BUDGET}", *WARN]
    results, samples = run_lm_eval(flags, ",".join(tasks), tmp_path, limit=2, extra=extra, env=env)
    for task in tasks:
        _check_samples(task, results["results"][task], samples[task], str(thinking_model))
        mode = THINKING if task == "reg_chaos_thinking_served" else MODES["non-thinking"]
        sent = samples[task][0]["arguments"]["gen_args_0"]["arg_1"]
        assert sent["chat_template_kwargs"] == {"enable_thinking": mode.thinking}
        assert "top_k" not in sent and samples[task][0]["doc"]["sampling_seed"] == 1234  # the request seed
        assert MODES[samples[task][0]["doc"]["mode"]] is mode

    # Server side: the messages the harness sent, rendered by the server with each switch,
    # are as long as the template makes them (the two prefills differ), and without the
    # switch the template refuses to render.
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(thinking_model)
    # the chat messages as logged: lm-eval's JsonChatStr, a one-field tuple holding their JSON
    (sent,) = samples[tasks[0]][0]["arguments"]["gen_args_0"]["arg_0"]
    messages = json.loads(sent)
    assert [message["role"] for message in messages] == ["user"]
    body = {"model": str(thinking_model), "messages": messages, "max_tokens": 1, "temperature": 0}
    lengths = []
    for thinking in (False, True):
        rendered = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, enable_thinking=thinking, tokenize=True, return_dict=True
        )
        expected = len(rendered["input_ids"])
        answer = _post(thinking_server.base_url, {**body, "chat_template_kwargs": {"enable_thinking": thinking}})
        assert answer["usage"]["prompt_tokens"] == expected, (thinking, answer["usage"])
        lengths.append(expected)
    assert lengths[0] != lengths[1]
    with pytest.raises(urllib.error.HTTPError) as refused:
        _post(thinking_server.base_url, body)
    assert refused.value.code >= 400


@pytest.mark.e2e
def test_an_endpoint_judge_sends_the_thinking_switch_off(thinking_server, thinking_model, tmp_path):
    """An ``openai:`` judge's default request carries ``enable_thinking: false``, as the server
    sees it: this model's template refuses to render without the switch (above), so a verdict
    at all shows the switch arrived; ``thinking=unset`` sends none and the server refuses."""
    from custom_metrics.judge.build import build_judge
    from custom_metrics.judge.types import JudgeError

    base = f"openai:{thinking_model}@{thinking_server.base_url}?mode=loglik"
    pair = [("A man is playing a guitar on stage.", "Someone is performing music.")]
    judge = build_judge(base, cache_dir=tmp_path)
    assert "thinking=off" in judge.name
    assert judge.judge(pair)[0].method in ("text", "unparsed", "scores")
    unset = build_judge(base + "&thinking=unset", cache_dir=tmp_path)
    with pytest.raises(JudgeError, match="HTTP"):
        unset.judge(pair)
