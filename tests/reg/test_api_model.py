"""The suite's lm-eval model class for API reasoning models: what a request holds, what an
answer carries, and a request that asks for a field such APIs refuse never leaving."""

from __future__ import annotations

import json
import time

import pytest
from lm_eval.api.instance import Instance
from lm_eval.api.registry import get_model

from custom_metrics.common.errors import DataError
from custom_metrics.judge.http_client import body_bound
from custom_metrics.reg.api_model import MODEL_NAME, APIAnswer, ReasoningChatCompletions
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
