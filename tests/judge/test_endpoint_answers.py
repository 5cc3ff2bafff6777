"""The endpoint judge's reading of responses, on recorded bodies (no server): the
transformers-serve exchanges in tests/fixtures/judge/, and bodies in the OpenAI chat
schema that vLLM returns with logprobs. Odd responses name the judge and the URL; what the
HTTP client does with odd servers is tests/judge/test_endpoint_limits.py."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from custom_metrics.judge.endpoint import OpenAIJudge
from custom_metrics.judge.prompt import nli_prompt
from custom_metrics.judge.spec import parse_spec
from custom_metrics.judge.types import UNPARSED, JudgeError

RECORDED = json.loads((Path(__file__).parents[1] / "fixtures/judge/transformers_serve_responses.json").read_text())
URL = "http://127.0.0.1:8000/v1"


def _judge(options: str = "") -> OpenAIJudge:
    return OpenAIJudge(parse_spec(f"openai:smollm2-135m-instruct-hf@{URL}" + (f"?{options}" if options else "")))


def _body(name: str) -> dict:
    return json.loads(RECORDED[name]["body"])


def _with_answer(text: str | None) -> dict:
    """A recorded response with its answer text replaced (the recorded model never named a label)."""
    body = copy.deepcopy(_body("generate_0"))
    body["choices"][0]["message"]["content"] = text
    return body


def test_recorded_requests_are_what_the_judge_sends():
    """Recorded before judges sent the thinking switch and Qwen's top_k: ``thinking=unset&top_k=0``
    sends exactly them; the default adds the non-thinking switch and top_k 20 / min_p 0, as
    request fields (vLLM) or, for ``transformers serve`` (HTTP 422 on them), in its
    ``generation_config`` field."""
    unset, default, served = _judge("thinking=unset&top_k=0"), _judge(), _judge("server=transformers")
    switch = {"chat_template_kwargs": {"enable_thinking": False}}
    for name in ("generate_0", "generate_1"):
        request = RECORDED[name]["request"]
        premise, hypothesis = request["messages"][0]["content"].rsplit("Premise: ", 1)[1].split("\nHypothesis: ")
        assert unset._payload(premise, hypothesis) == request
        assert default._payload(premise, hypothesis) == {**request, **switch, "top_k": 20, "min_p": 0.0}
        moved = {"generation_config": '{"do_sample": true, "min_p": 0.0, "top_k": 20}'}
        assert served._payload(premise, hypothesis) == {**request, **switch, **moved}
        assert request["messages"][0]["content"] == nli_prompt(premise, hypothesis)
    generate = RECORDED["generate_0"]["request"]
    assert (generate["temperature"], generate["top_p"], generate["max_tokens"]) == (0.7, 0.8, 16)
    assert "logprobs" not in generate and "top_k" not in generate  # transformers serve rejects top_k
    assert RECORDED["generate_0"]["request"]["seed"] != RECORDED["generate_1"]["request"]["seed"]  # one per pair
    assert RECORDED["top_k_rejected"]["status"] == 422 and "top_k" in RECORDED["top_k_rejected"]["body"]
    loglik = RECORDED["loglik_0"]["request"]
    assert (loglik["temperature"], loglik["logprobs"], loglik["top_logprobs"]) == (0, True, 20)


def test_recorded_answers_without_a_label_are_unparsed():
    for name in ("generate_0", "generate_1", "generate_seed0_3"):
        verdict = _judge().verdict(_body(name))
        assert (verdict.label, verdict.method) == (UNPARSED, UNPARSED)
        assert verdict.answer == _body(name)["choices"][0]["message"]["content"]
    # the loglik mode on a server without logprobs falls back to the text, which names no label
    assert _judge("mode=loglik").verdict(_body("loglik_0")).label == UNPARSED


@pytest.mark.parametrize(
    "text, label",
    [
        ("Contradiction", "contradiction"),
        ("**Entailment**", "entailment"),
        ("Label: Neutral.", "neutral"),
        ("not entailment but contradiction", UNPARSED),
        ("Entailment or neutral", UNPARSED),
        ("The premise does not entail the hypothesis.", UNPARSED),
        ("", UNPARSED),
        (None, UNPARSED),
    ],
)
def test_answer_text_gives_the_asserted_label_or_unparsed(text, label):
    verdict = _judge().verdict(_with_answer(text))
    assert verdict.label == label
    assert verdict.method == ("generated" if label != UNPARSED else UNPARSED)
    if label != UNPARSED:
        assert verdict.probs[label] == 1.0


def _vllm_logprobs(answer: str, positions: list[tuple[str, list[tuple[str, float]]]]) -> dict:
    """A chat completion with logprobs in the OpenAI schema, as vLLM returns it."""
    body = _with_answer(answer)
    body["choices"][0]["logprobs"] = {
        "content": [
            {
                "token": token,
                "logprob": top[0][1],
                "bytes": list(token.encode()),
                "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top],
            }
            for token, top in positions
        ]
    }
    return body


def test_loglik_mode_reads_label_mass_from_logprobs():
    top = [("Contr", 0.6), ("contradiction", 0.1), ("Ent", 0.2), ("N", 0.05), ("The", 0.05)]
    body = _vllm_logprobs(
        "**Contradiction**", [("**", [("**", -0.01)]), ("Contr", [(token, math.log(p)) for token, p in top])]
    )
    verdict = _judge("mode=loglik").verdict(body)
    assert (verdict.label, verdict.method) == ("contradiction", "scores")
    assert verdict.probs["contradiction"] == pytest.approx(0.7 / 0.95)
    assert verdict.probs["neutral"] == pytest.approx(0.05 / 0.95)
    # non-finite or malformed logprobs are ignored, and with no label mass the text decides
    broken = _vllm_logprobs("Neutral", [("Neu", [("Neu", float("nan")), ("Ent", float("-inf"))])])
    broken["choices"][0]["logprobs"]["content"].insert(0, "not a position")
    assert (lambda v: (v.label, v.method))(_judge("mode=loglik").verdict(broken)) == ("neutral", "text")
    # in the generated mode logprobs are never read: the answer text is the verdict
    assert _judge().verdict(body).method == "generated"


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": "model not loaded", "type": "BadRequestError"}},
        {"object": "error", "message": "context length exceeded"},
        {"choices": []},
        {"choices": ["Entailment"]},
    ],
)
def test_a_response_without_a_choice_names_judge_and_url(body):
    judge = _judge()
    with pytest.raises(JudgeError) as err:
        judge.verdict(body)
    assert judge.name in str(err.value) and f"{URL}/chat/completions" in str(err.value)
