"""REG's two modes, in process and on a served model, with a served judge and its verdict cache.

The generator is the embedded gemma-3-270m with a chat template that has a thinking switch
(``tests/reg/thinking_model.py``), behind one real ``transformers serve``; the same server is
REG's ``openai:`` judge (a base model, so the judge check warns and the run goes on). One
``lm_eval`` CLI run of both served tasks is shared by the served tests; the cache rerun and the
in-process thinking run go through ``simple_evaluate`` in this process (the CLI's own path is
``test_e2e.py``'s). Generation is a few tokens: the point is the wiring (the switch reaches the
template, the mode's sampling parameters reach the model, the samples record the mode, seed,
token lengths and the split malformed flags, every verdict is asked once), not the explanations.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from custom_metrics.judge.spec import parse_spec
from custom_metrics.reg.judging import read_record
from custom_metrics.reg.modes import MODES, NON_THINKING, THINKING
from custom_metrics.reg.outputs import FLAGS, split_output
from custom_metrics.reg.tokens import count_tokens
from tests.helpers import MIRROR, TASKS_DIR, run_lm_eval
from tests.reg.thinking_model import THINKING_PREFILL, thinking_model_folder

BUDGET = 6  # tokens: every thinking-mode output is a trace cut off by the budget
SERVED_TASKS = ["reg_chaos_served", "reg_chaos_thinking_served"]
CHAT = "/v1/chat/completions"


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
def judge(thinking_server, thinking_model) -> str:
    """The server as REG's judge, in its default (the paper's) protocol; 4 answer tokens, not 16:
    a CPU server decodes every verdict, and a one-word label fits."""
    return f"openai:{thinking_model}@{thinking_server.base_url}?max_tokens=4&server=transformers"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    verdicts = tmp_path_factory.mktemp("verdicts")
    return {"EXPLAIN_EVAL_DATA": str(MIRROR), "EXPLAIN_EVAL_JUDGE_CACHE": str(verdicts), "EXPLAIN_EVAL_JUDGE": ""}


def _served_args(thinking_server, thinking_model) -> dict[str, Any]:
    base_url = f"{thinking_server.base_url}/chat/completions"
    return {"model": str(thinking_model), "base_url": base_url, "num_concurrent": 1, "max_retries": 1}


@pytest.fixture(scope="module")
def served_env(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The served run's own verdict cache: what it holds is what that run asked the judge."""
    return {**env, "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path_factory.mktemp("served-verdicts"))}


@pytest.fixture(scope="module")
def served_run(thinking_server, thinking_model, judge, served_env, tmp_path_factory):
    """Both served tasks through the real CLI: results, samples, chat requests the server got."""
    args = ",".join(f"{key}={value}" for key, value in _served_args(thinking_server, thinking_model).items())
    flags = ["--model", "local-chat-completions", "--model_args", args, "--apply_chat_template"]
    # a base model judges: degenerate, run anyway; top_k and min_p in transformers serve's own field
    metadata = {"judge": judge, "judge_check": "warn", "server": "transformers"}
    extra = ["--gen_kwargs", f"max_gen_toks={BUDGET}", "--metadata", json.dumps(metadata)]
    before = thinking_server.requests(CHAT)
    out = tmp_path_factory.mktemp("served")
    results, samples = run_lm_eval(flags, ",".join(SERVED_TASKS), out, limit=2, extra=extra, env=served_env)
    return results, samples, thinking_server.requests(CHAT) - before


def _in_process(model: str, model_args: dict, tasks: list[str], metadata: dict, env: dict, monkeypatch) -> dict:
    """``simple_evaluate`` as the CLI runs it: the model arguments merged into the task metadata."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=model_args | metadata)
    return simple_evaluate(
        model=model,
        model_args=model_args,
        tasks=tasks,
        limit=2,
        gen_kwargs=f"max_gen_toks={BUDGET}",
        apply_chat_template=True,
        log_samples=True,
        task_manager=manager,
        device="cpu",
        batch_size=8,
    )


def _request(sample: dict) -> tuple[Any, dict]:
    """(prompt, generation arguments) of a sample, from a samples file or from ``simple_evaluate``."""
    arguments = sample["arguments"]
    if isinstance(arguments, dict):
        return arguments["gen_args_0"]["arg_0"], arguments["gen_args_0"]["arg_1"]
    return arguments[0][0], arguments[0][1]


def _check_samples(task: str, result: dict, samples: list[dict], tokenizer: str) -> list[dict]:
    """What every reg_chaos* sample records, and the metrics that follow from it."""
    mode = MODES[samples[0]["doc"]["mode"]]
    records = [read_record(sample["filtered_resps"][0]) for sample in samples]
    raws = [sample["resps"][0][0] for sample in samples]
    for sample, record, raw in zip(samples, records, raws):
        assert record["mode"] == mode.name and sample["doc"]["length_tokenizer"] == tokenizer
        sent = _request(sample)[1]  # the sampling parameters as the harness sent them
        assert (sent["temperature"], sent["top_p"], sent["do_sample"]) == (mode.temperature, mode.top_p, True)
        assert record["output_tokens"] == count_tokens(tokenizer, [raw])[0] <= BUDGET
        assert record["thinking_tokens"] == count_tokens(tokenizer, [split_output(raw, mode.thinking).thinking])[0]
    for flag in FLAGS:
        assert result[f"{flag},judged"] == pytest.approx(sum(r["flag"] == flag for r in records) / len(records)), task
    assert result["output_tokens,judged"] == pytest.approx(sum(r["output_tokens"] for r in records) / len(records))
    if mode.thinking:  # no trace ended within the budget: none is judged as an explanation
        assert {r["flag"] for r in records} <= set(FLAGS) and not any(r["explanation"] for r in records)
        assert result["cut_off,judged"] + result["no_explanation,judged"] == 1
        assert all(r["effectiveness"] is None and r["coherence"] is None for r in records)
    return records


@pytest.mark.e2e
def test_thinking_mode_in_process(thinking_model, judge, env, monkeypatch):
    """reg_chaos_thinking on ``--model hf``; the non-thinking ``reg_chaos`` runs in process through
    the CLI in ``test_e2e.py`` and both modes' switch checks in ``test_generation.py``."""
    task = "reg_chaos_thinking"
    model_args = {
        "pretrained": str(thinking_model),
        "dtype": "float32",
        "chat_template_args": {"enable_thinking": True},
    }
    out = _in_process("hf", model_args, [task], {"judge": judge, "judge_check": "warn"}, env, monkeypatch)
    _check_samples(task, out["results"][task], out["samples"][task], str(thinking_model))
    for sample in out["samples"][task]:
        prompt, sent = _request(sample)
        assert prompt.endswith(THINKING_PREFILL), prompt[-80:]  # the switch reached the template
        assert (sent["top_k"], sent["min_p"], sent["max_gen_toks"]) == (20, 0.0, BUDGET)  # in process, Qwen's set
        assert "presence_penalty" not in sent  # transformers' generate() has none
        assert sample["doc"]["sampling_seed"] == 1234  # lm_eval's default torch seed


def _post(base_url: str, body: dict) -> dict:
    request = urllib.request.Request(
        f"{base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


@pytest.mark.e2e
def test_each_mode_on_a_served_model(served_run, thinking_server, thinking_model):
    """Both served variants in one run: each request carries its mode's switch, which the
    server's template needs to render at all; the server's prompt lengths show it took effect."""
    results, samples, _ = served_run
    for task in SERVED_TASKS:
        _check_samples(task, results["results"][task], samples[task], str(thinking_model))
        mode = THINKING if task == "reg_chaos_thinking_served" else NON_THINKING
        sent = _request(samples[task][0])[1]
        assert sent["chat_template_kwargs"] == {"enable_thinking": mode.thinking}
        assert sent["presence_penalty"] == 1.5  # vLLM applies it; transformers serve ignores it
        # transformers serve answers HTTP 422 to top_k and min_p as fields: they travel in its generation_config
        assert "top_k" not in sent and json.loads(sent["generation_config"]) == {
            "do_sample": True,
            "min_p": 0.0,
            "top_k": 20,
        }
        assert samples[task][0]["doc"]["sampling_seed"] == 1234  # the request seed
        assert MODES[samples[task][0]["doc"]["mode"]] is mode

    # Server side: the messages the harness sent, rendered by the server with each switch,
    # are as long as the template makes them (the two prefills differ), and without the
    # switch the template refuses to render.
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(thinking_model)
    # the chat messages as logged: lm-eval's JsonChatStr, a one-field tuple holding their JSON
    (logged,) = _request(samples[SERVED_TASKS[0]][0])[0]
    messages = json.loads(logged)
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
def test_a_served_judge_is_asked_each_pair_once_and_a_rerun_asks_it_nothing(
    served_run, thinking_server, thinking_model, judge, served_env, monkeypatch
):
    """The server's access log counts requests: the run sent one chat completion per doc (the
    explanation) plus one per pair the judge had not judged (the gold items of its check, the
    (p, h) pairs, the explanations of the items in N), each stored in the verdict cache; the
    rerun (same cache, no harness response cache) sends exactly one per doc."""
    results, samples, sent = served_run
    name = parse_spec(judge).name
    records = [read_record(s["filtered_resps"][0]) for task in SERVED_TASKS for s in samples[task]]
    assert {r["judge"] for r in records} == {name}
    assert not [r.get("judge_error") for r in records if r.get("judge_error")], [r.get("judge_error") for r in records]
    # the paper's protocol by default: a generated one-word label, parsed or flagged unparsed
    assert all(r["initial"]["method"] in ("generated", "unparsed") for r in records)
    db = sqlite3.connect(Path(served_env["EXPLAIN_EVAL_JUDGE_CACHE"]) / "verdicts.sqlite")
    stored = db.execute("SELECT COUNT(*) FROM verdicts WHERE judge = ?", (name,)).fetchone()[0]
    documents = sum(len(samples[task]) for task in SERVED_TASKS)
    assert stored >= 5 + 1 and sent == documents + stored, thinking_server.log_tail()  # 5 gold items, s001's (p, h)

    before = thinking_server.requests(CHAT)
    rerun = _in_process(
        "local-chat-completions",
        _served_args(thinking_server, thinking_model),
        SERVED_TASKS,
        {"judge": judge, "judge_check": "warn", "server": "transformers"},
        served_env,
        monkeypatch,
    )
    assert thinking_server.requests(CHAT) - before == documents, thinking_server.log_tail()
    for task in SERVED_TASKS:
        again = [read_record(s["filtered_resps"][0]) for s in rerun["samples"][task]]
        assert again == [read_record(s["filtered_resps"][0]) for s in samples[task]]
        in_memory = json.dumps(rerun["results"][task], sort_keys=True, default=str)
        assert in_memory == json.dumps(results["results"][task], sort_keys=True)


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
