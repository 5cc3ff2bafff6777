"""What the harness hooks make of raw model output: REG's thinking/explanation split, GEESE's
anonymization, RULE's chain-of-thought answers and the multiple-choice prediction from
log-likelihoods.

Any generation is split into an explanation or a flag, losing no character of a usable
one; anonymized text holds no label word and anonymizing again changes nothing; a NaN
log-likelihood never decides a prediction. All within a time bound.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from custom_metrics.common.classification import NO_PREDICTION, predicted_index
from custom_metrics.geese.anonymize import ANON_PATTERN, anonymize
from custom_metrics.judge.traces import think_blocks
from custom_metrics.reg.outputs import split_output
from custom_metrics.rule.answers import read_answer
from tests.fuzz.support import SECONDS, within

pytestmark = pytest.mark.fuzz

TAGS = ("<think>", "</think>")
generation = st.lists(
    st.one_of(st.text(max_size=20), st.sampled_from([*TAGS, "<think", "think>", "\n", " ", "<<think>>", "</THINK>"])),
    max_size=30,
).map("".join)


def _visible(text: str) -> str:
    return "".join(text.replace("<think>", "").replace("</think>", "").split())


@given(generation)
@example("Because <think>first</think> the <think>second</think> premise")
@example("<think>" * 20_000)  # a degenerate generation repeating the tag
def test_any_generation_is_an_explanation_or_a_flag(raw: str) -> None:
    out = within(SECONDS, lambda: split_output(raw))
    assert out.raw == raw and out.flag in ("", "cut_off", "no_explanation")
    assert bool(out.explanation) == (out.flag == ""), out
    assert not any(tag in out.explanation for tag in TAGS)
    assert out.explanation == " ".join(out.explanation.split())  # whitespace normalized, nothing else
    if not out.flag:  # usable: every visible character is in the explanation or the thinking trace
        assert sorted(_visible(out.explanation + out.thinking)) == sorted(_visible(raw))


LAZY_BLOCK = re.compile(r"<think>(.*?)</think>", flags=re.DOTALL)  # the former, quadratic, pattern


@given(generation)
def test_thinking_blocks_are_those_the_former_pattern_found(raw: str) -> None:
    assert think_blocks(raw) == ([m.group(1) for m in LAZY_BLOCK.finditer(raw)], LAZY_BLOCK.sub("", raw))


# GEESE hints are Italian and English; label words in any case, glued to punctuation or digits.
hint = st.lists(
    st.one_of(
        st.text(max_size=15),
        st.sampled_from(["YES", "no", "Unknown", "entails", "Contradiction", "neutrale", "implicito", "contraddice"]),
        st.sampled_from(["NOT", "nope", "yesterday", "XXX", "noYES", "_no_", "no.", "(yes)", "3no", "ÉNO"]),
    ),
    max_size=25,
).map(" ".join)


@given(hint)
def test_anonymized_text_holds_no_label_word_and_is_stable(text: str) -> None:
    masked = within(SECONDS, lambda: anonymize(text))
    assert ANON_PATTERN.search(masked) is None, masked
    assert anonymize(masked) == masked
    # Word for word, only label words changed: no word lost, merged or split.
    words, masked_words = text.split(), masked.split()
    assert len(words) == len(masked_words)
    assert all(after == before for before, after in zip(words, masked_words) if not ANON_PATTERN.search(before))


logliks = st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=6)


@given(logliks)
@example([math.nan, -1.0, -2.0])
@example([-1.0, math.inf])
def test_a_prediction_is_the_argmax_or_none_never_decided_by_nan(values: list[float]) -> None:
    index = predicted_index([(value, False) for value in values], "fuzz doc")
    if any(math.isnan(value) or value == math.inf for value in values):
        assert index == NO_PREDICTION
    else:
        assert values[index] == max(values) and index == values.index(max(values))  # first on ties, like acc


cot_generation = st.lists(
    st.one_of(
        st.text(max_size=12),
        st.sampled_from(
            ["the answer is ", "The answer is: ", "Option", "option ", "**", "(", "B", "4", "2", "\n", " "]
        ),
        st.integers(0, 9).map(str),
    ),
    max_size=40,
).map("".join)


@given(cot_generation)
@example("Therefore the answer is Option2 and the answer is Option2")
@example("the answer is " * 5_000)
def test_a_chain_of_thought_answer_is_one_named_option_or_a_named_problem(raw: str) -> None:
    reading = within(SECONDS, lambda: read_answer(raw))
    named = {int(k) for k in re.findall(r"(?i)\banswer\s+is\W{0,4}?option\s*(\d+)\b", raw)}
    if reading.option is None:
        assert reading.problem and not (len(named) == 1 and min(named) < 4)
    else:
        assert reading.problem == "" and named == {reading.option} and reading.option in range(4)
    assert read_answer(raw + " \n ") == reading  # where the generation stopped does not matter
