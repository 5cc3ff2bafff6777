"""The suite's lm-eval model class for API reasoning models: what a request holds, what an
answer carries, and a request that asks for a field such APIs refuse never leaving."""

from __future__ import annotations

import json
import logging
import time

import pytest
from lm_eval.api.registry import get_model

from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_api import new_instance
from custom_metrics.judge.http_client import body_bound
from custom_metrics.reg.api_model import MODEL_NAME, APIAnswer, ReasoningChatCompletions
from custom_metrics.reg.generation import split_outputs
from custom_metrics.reg.judging import read_record, unjudged_record
from custom_metrics.reg.metrics import process_results
from custom_metrics.reg.modes import REASONING, THINKING
from custom_metrics.reg.outputs import CUT_OFF
from tests.judge.endpoint_server import EndpointServer, Reply, completion

CLOSED = "http://127.0.0.1:9/v1/chat/completions"  # nothing listens: a request sent would fail differently
MESSAGES = [{"role": "user", "content": "Premise: P.\nHypothesis: H."}]


def test_it_is_registered_for_the_harness():
    assert get_model(MODEL_NAME) is ReasoningChatCompletions


def test_a_request_holds_the_effort_and_budget_only():
    model = ReasoningChatCompletions(model="gpt-x", base_url=CLOSED)
    gen_kwargs = {"until": ["\n\n"], "do_sample": False, "max_gen_toks": 64, "reasoning_effort": "medium"}
    assert model._create_payload(MESSAGES, generate=True, gen_kwargs=gen_kwargs, seed=1234) == {
        "messages": MESSAGES,
        "model": "gpt-x",
        "max_completion_tokens": 64,
        "reasoning_effort": "medium",
    }


def test_an_answer_carries_its_usage_and_finish_reason():
    usage = {"completion_tokens": 90, "completion_tokens_details": {"reasoning_tokens": 80}}
    response = {"choices": [{"index": 0, "message": {"content": None}, "finish_reason": "length"}], "usage": usage}
    (answer,) = ReasoningChatCompletions(model="gpt-x", base_url=CLOSED).parse_generations(response)
    assert isinstance(answer, APIAnswer) and answer == "" and (answer.usage, answer.finish_reason) == (usage, "length")


def test_a_refused_field_stops_the_run_before_any_request():
    model = ReasoningChatCompletions(model="gpt-x", base_url=CLOSED, max_retries=1)
    arguments = ('[{"role": "user", "content": "x"}]', {"until": [], "temperature": 0.7, "top_p": 0.8})
    request = new_instance("generate_until", arguments, 0)
    with pytest.raises(DataError, match="asks for temperature, top_p, which API reasoning models refuse"):
        model.generate_until([request])


def _generate(server: EndpointServer, **model_args) -> list[str]:
    model = ReasoningChatCompletions(model="gpt-x", base_url=f"{server.url}/chat/completions", **model_args)
    arguments = ('[{"role": "user", "content": "x"}]', {"until": [], "max_gen_toks": 16, "reasoning_effort": "low"})
    return model.generate_until([new_instance("generate_until", arguments, index) for index in range(2)])


@pytest.mark.parametrize("concurrent", [1, 2], ids=["sync", "concurrent"])
def test_requests_go_through_the_bounded_client(concurrent: int) -> None:
    usage = {"completion_tokens": 9, "completion_tokens_details": {"reasoning_tokens": 4}}
    answer = {"choices": [{"index": 0, "message": {"content": "An answer."}, "finish_reason": "stop"}], "usage": usage}
    server = EndpointServer(lambda body: Reply(json.dumps(answer).encode()))
    try:
        answers = _generate(server, num_concurrent=concurrent)
        assert answers == ["An answer."] * 2 and all(answer.usage == usage for answer in answers)
        # an endless answer: read to its bound, then that document's generation fails alone (no retry)
        server.script, server.requests = (lambda body: Reply(b'{"choices": [' + b" " * 1024, endless=True)), 0
        refused = _generate(server, num_concurrent=concurrent, timeout=30, max_retries=2)
        says = f"{server.url}/chat/completions sent more than {body_bound(16) // 1024} KiB"
        assert refused == ["", ""] and all(says in answer.failure for answer in refused) and server.requests == 2
        # a trickled answer: the whole-request deadline, then the run stops in one line
        server.script, server.requests = (lambda body: Reply(completion("An answer."), trickle_s=1.0)), 0
        started = time.monotonic()
        with pytest.raises(DataError) as caught:
            _generate(server, num_concurrent=concurrent, timeout=2, max_retries=2)
        message = str(caught.value)
        assert "no whole answer within its request timeout of 2 s" in message, message
        assert f"{server.url}/chat/completions" in message and "\n" not in message, message
        assert server.requests <= 2 * 2 and time.monotonic() - started < 2 * 2 + 30  # bounded, by the deadline
    finally:
        server.close()


# What the API reports for each prompt: (usage, finish_reason, what the row must say is wrong).
USAGES = {
    "sound": ({"completion_tokens": 120, "completion_tokens_details": {"reasoning_tokens": 100}}, "stop", ""),
    "negative": ({"completion_tokens": -500}, "stop", "a negative token count (completion_tokens -500"),
    "float": ({"completion_tokens": 1e18}, "stop", "completion_tokens is 1e+18, not a whole number of tokens"),
    "past the budget": ({"completion_tokens": 10**18}, "stop", f"{10**18} is past the budget of 32768 tokens"),
    "boolean": ({"completion_tokens": True}, "stop", "completion_tokens is True, not a whole number of tokens"),
    "reasoning > completion": (
        {"completion_tokens": 50, "completion_tokens_details": {"reasoning_tokens": 80}},
        "stop",
        "reasoning_tokens 80 is more than completion_tokens 50",
    ),
    "cut by the budget": ({"completion_tokens": 32768}, "length", ""),
}


def test_api_usage_that_cannot_be_is_flagged_and_left_out_of_the_means(caplog) -> None:
    def reply(body: dict) -> Reply:
        case = next(case for case in USAGES if case in str(body["messages"]))
        usage, finish, _ = USAGES[case]
        choice = {"index": 0, "message": {"content": f"An explanation ({case})."}, "finish_reason": finish}
        return Reply(json.dumps({"choices": [choice], "usage": usage}).encode())

    server = EndpointServer(reply)
    try:
        model = ReasoningChatCompletions(model="gpt-x", base_url=f"{server.url}/chat/completions")
        kwargs = {"until": [], "max_gen_toks": THINKING.max_gen_toks, "reasoning_effort": "medium"}
        requests = [
            new_instance("generate_until", (json.dumps([{"role": "user", "content": case}]), kwargs), i)
            for i, case in enumerate(USAGES)
        ]
        answers = model.generate_until(requests)
    finally:
        server.close()
    docs = [{"mode": THINKING.name, "length_tokenizer": "", "backend": REASONING}] * len(USAGES)
    with caplog.at_level(logging.WARNING):
        outputs = split_outputs([[answer] for answer in answers], docs)
    assert f"5 of {len(USAGES)} responses reported token usage that cannot be" in caplog.text
    rows = dict(zip(USAGES, outputs, strict=True))
    for case, (_, _, says) in USAGES.items():
        assert (says in rows[case].usage_problem) if says else rows[case].usage_problem == "", case
        if says:  # flagged: no length recorded, and the record says why
            assert rows[case].output_tokens is None and rows[case].thinking_tokens is None
    assert (rows["sound"].output_tokens, rows["sound"].thinking_tokens, rows["sound"].flag) == (120, 100, "")
    assert rows["cut by the budget"].flag == CUT_OFF and rows["cut by the budget"].explanation == ""
    metrics = [process_results({}, [json.dumps(unjudged_record("judge", out, "not judged"))]) for out in outputs]
    lengths = [row["output_tokens"] for row in metrics if "output_tokens" in row]
    assert lengths == [120, 32768]  # the run's mean is (120 + 32768) / 2, never 1.4e17


@pytest.mark.e2e
def test_an_answer_over_its_bound_is_a_flagged_row_and_the_run_keeps_the_others(tmp_path) -> None:
    """One 10 MB answer (above the 8.1 MiB bound of a 32,768-token budget) ended the whole run with
    no samples file, losing the generations already made. Through the real ``explain-eval
    lm-eval``: its document's generation is marked failed (``no_explanation``, the reason in its
    record), the other documents are judged as usual."""
    import sys
    from pathlib import Path

    from custom_metrics.reg.outputs import NO_EXPLANATION
    from tests.helpers import MIRROR, run_lm_eval
    from tests.reg.judges import tiny_judge_metadata

    huge = "Cassie hates the taste of coffee."
    usage = {"completion_tokens": 9, "completion_tokens_details": {"reasoning_tokens": 4}}

    def reply(body: dict) -> Reply:
        if huge in str(body["messages"]):
            return Reply(completion("x" * 10_000_000))
        return Reply(_answer(usage))

    server = EndpointServer(reply)
    try:
        args = f"model=gpt-x,base_url={server.url}/chat/completions,num_concurrent=1,max_retries=1"
        flags = ["--model", MODEL_NAME, "--model_args", args, "--apply_chat_template"]
        metadata = json.dumps(tiny_judge_metadata(tmp_path))  # a tiny local judge, checked with judge_check=warn
        results, samples = run_lm_eval(
            flags,
            "reg_chaos_reasoning_served",
            tmp_path / "run",
            limit=3,
            extra=["--metadata", metadata],
            env={"EXPLAIN_EVAL_DATA": str(MIRROR), "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path / "verdicts")},
            entry=[str(Path(sys.executable).with_name("explain-eval")), "lm-eval"],
        )
    finally:
        server.close()
    records = {s["doc"]["premise"]: read_record(s["filtered_resps"][0]) for s in samples["reg_chaos_reasoning_served"]}
    assert len(records) == 3 and server.requests == 3  # a bound is no retry
    failed = records.pop(huge)
    assert failed["flag"] == NO_EXPLANATION and failed["explanation"] == ""
    assert f"above the bound of {body_bound(32768) / 1024 / 1024:.1f} MiB" in failed["generation_error"], failed
    assert all(r["explanation"] == "An explanation." and not r["generation_error"] for r in records.values())
    assert results["results"]["reg_chaos_reasoning_served"]["no_explanation,judged"] == pytest.approx(1 / 3)


def _answer(usage: dict) -> bytes:
    choice = {"index": 0, "message": {"content": "An explanation."}, "finish_reason": "stop"}
    return json.dumps({"choices": [choice], "usage": usage}).encode()
