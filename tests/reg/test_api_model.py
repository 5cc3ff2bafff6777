"""The suite's lm-eval model class for API reasoning models: what a request holds, what an
answer carries, and a request that asks for a field such APIs refuse never leaving."""

from __future__ import annotations

import json
import logging
import time

import pytest
from lm_eval.api.instance import Instance
from lm_eval.api.registry import get_model

from custom_metrics.common.errors import DataError
from custom_metrics.judge.http_client import body_bound
from custom_metrics.reg.api_model import MODEL_NAME, APIAnswer, ReasoningChatCompletions
from custom_metrics.reg.generation import REASONING, THINKING, split_outputs
from custom_metrics.reg.judging import unjudged_record
from custom_metrics.reg.metrics import process_results
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
    request = Instance("generate_until", {}, arguments, 0)
    with pytest.raises(DataError, match="asks for temperature, top_p, which API reasoning models refuse"):
        model.generate_until([request])


def _generate(server: EndpointServer, **model_args) -> list[str]:
    model = ReasoningChatCompletions(model="gpt-x", base_url=f"{server.url}/chat/completions", **model_args)
    arguments = ('[{"role": "user", "content": "x"}]', {"until": [], "max_gen_toks": 16, "reasoning_effort": "low"})
    return model.generate_until([Instance("generate_until", {}, arguments, index) for index in range(2)])


@pytest.mark.parametrize("concurrent", [1, 2], ids=["sync", "concurrent"])
def test_requests_go_through_the_bounded_client(concurrent: int) -> None:
    usage = {"completion_tokens": 9, "completion_tokens_details": {"reasoning_tokens": 4}}
    answer = {"choices": [{"index": 0, "message": {"content": "An answer."}, "finish_reason": "stop"}], "usage": usage}
    server = EndpointServer(lambda body: Reply(json.dumps(answer).encode()))
    try:
        answers = _generate(server, num_concurrent=concurrent)
        assert answers == ["An answer."] * 2 and all(answer.usage == usage for answer in answers)
        for reply, says in [
            (Reply(b'{"choices": [' + b" " * 1024, endless=True), f"sent more than {body_bound(16) // 1024} KiB"),
            (Reply(completion("An answer."), trickle_s=1.0), "no whole answer within its request timeout of 2 s"),
        ]:
            server.script, server.requests = (lambda body, reply=reply: reply), 0
            started = time.monotonic()
            with pytest.raises(DataError) as caught:
                _generate(server, num_concurrent=concurrent, timeout=2, max_retries=2)
            message = str(caught.value)
            assert says in message and f"{server.url}/chat/completions" in message and "\n" not in message, message
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
            Instance("generate_until", {}, (json.dumps([{"role": "user", "content": case}]), kwargs), i)
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
