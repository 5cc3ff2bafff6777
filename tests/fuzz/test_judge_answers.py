"""The endpoint judge's reading of one chat-completion response (custom_metrics/judge/endpoint.py).

Any JSON object a server sends back is a verdict or an error naming the judge and its URL, within
a time bound; an answer that names exactly one label is that label; an answer that rejects
a label ("not entailment but contradiction") is never read as the label it rejects.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from custom_metrics.judge.endpoint import OpenAIJudge
from custom_metrics.judge.spec import parse_spec
from custom_metrics.judge.types import NLI_LABELS, Verdict
from tests.fuzz.support import SECONDS, json_values, names, within

pytestmark = pytest.mark.fuzz

JUDGE = OpenAIJudge(parse_spec("openai:fuzz-judge@http://127.0.0.1:9/v1"))
read_response = JUDGE.verdict


def _unparsed(verdict: Verdict) -> bool:
    return not verdict.parsed


def _check(verdict: Verdict) -> None:
    assert verdict.label in NLI_LABELS or _unparsed(verdict)
    assert all(math.isfinite(p) and 0 <= p <= 1 for p in verdict.probs.values())
    assert math.isclose(sum(verdict.probs.values()), 1, abs_tol=1e-4)


def _text_response(content: object) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content}, "logprobs": None}]}


token = st.one_of(
    st.sampled_from(["Ent", "Contr", "neutral", "**", " ", "N", "contradiction", "\n"]), st.text(max_size=6)
)
position = st.fixed_dictionaries(
    {"token": token, "logprob": st.floats()},
    optional={"top_logprobs": st.lists(st.fixed_dictionaries({"token": token, "logprob": st.floats()}), max_size=4)},
)
# Objects only: the client turns a body that is no JSON object into an error before parsing.
responses = st.one_of(
    st.dictionaries(st.text(max_size=10), json_values, max_size=3),
    st.fixed_dictionaries(
        {"choices": st.lists(st.one_of(json_values, st.fixed_dictionaries({}, optional={
            "message": st.one_of(json_values, st.fixed_dictionaries({"content": json_values | st.text(max_size=40)})),
            "logprobs": st.one_of(json_values, st.fixed_dictionaries({"content": st.lists(position, max_size=3)})),
        })), max_size=2)},
        optional={"error": json_values},
    ),
)  # fmt: skip


@given(responses)
@example({})
@example({"choices": [{"logprobs": {"content": [{"token": "Ent", "logprob": math.nan}]}, "message": {}}]})
def test_any_response_is_a_verdict_or_an_error_naming_judge_and_url(response: object) -> None:
    try:
        verdict = within(SECONDS, lambda: read_response(response))
    except AssertionError:
        raise
    except Exception as error:
        assert names(error, JUDGE.name, JUDGE.url), f"{type(error).__name__}: {error}"
        assert type(error) not in (KeyError, TypeError, IndexError, AttributeError, ValueError), "a bare traceback"
        return
    _check(verdict)


label_words = {"entailment": ["entailment", "Entailment", "ENTAILMENT"], "neutral": ["neutral", "Neutral"]}
label_words["contradiction"] = ["contradiction", "Contradiction", "CONTRADICTION"]
filler = st.sampled_from(["", "The answer is ", "Label: ", "**", "I think it is "])
ending = st.sampled_from(["", ".", "**", "!", " (confident)"])


@given(st.sampled_from(NLI_LABELS), filler, ending, st.data())
def test_an_answer_naming_one_label_is_that_label(label: str, before: str, after: str, data) -> None:
    word = data.draw(st.sampled_from(label_words[label]))
    verdict = read_response(_text_response(f"{before}{word}{after}"))
    _check(verdict)
    assert verdict.label == label


@given(st.sampled_from(NLI_LABELS), st.sampled_from(NLI_LABELS), st.sampled_from(["not {a} but {b}", "{b}, not {a}"]))
@example("entailment", "contradiction", "not {a} but {b}")
def test_a_rejected_label_is_never_the_verdict(rejected: str, asserted: str, form: str) -> None:
    if rejected == asserted:
        return
    verdict = read_response(_text_response(form.format(a=rejected, b=asserted)))
    _check(verdict)
    assert verdict.label != rejected or _unparsed(verdict)
