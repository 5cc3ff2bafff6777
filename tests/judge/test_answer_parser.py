"""The one-word answer parser (generated judge mode, endpoint text answers, reg_judge_select):
examples, and properties over any text (hypothesis): a label or None, never a negated or
ambiguous label, linear time."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_metrics.judge.answer import answer_complete, parse_label
from custom_metrics.judge.types import NLI_LABELS

LABEL_WORDS = {
    "entailment": ["Entailment", "entailment", "ENTAILMENT", "entails"],
    "neutral": ["Neutral", "neutral", "NEUTRAL"],
    "contradiction": ["Contradiction", "contradiction", "contradicts", "Contradictory"],
}
FILLER = st.lists(st.sampled_from(["the", "label", "is", "answer", ":", "**", "-", "final", "output", "."]), max_size=6)


@pytest.mark.parametrize(
    "text, label",
    [
        ("Contradiction.", "contradiction"),
        ("  **Label:** Neutral", "neutral"),
        ("\n\nEntailment\n\nThe premise does not contradict the hypothesis.", "entailment"),
        ("Label:\nContradiction", "contradiction"),
        ("not entailment but contradiction", None),
        ("Not Entailment", None),
        ("non-entailment", None),
        ("The hypothesis doesn't contradict the premise.", None),
        ("Neutral or contradiction", None),
        ("Neutral - no clear link", "neutral"),  # a negation after the label does not negate it
        ("The hypothesis is most likely false given the premise.", None),  # recorded from SmolLM2
        ("I cannot tell.", None),
        ("", None),
        # a judge that thinks anyway: read after its trace, never inside one that did not close
        ("<think>Maybe it is a contradiction", None),
        ("<think>It might be neutral.</think>\nEntailment", "entailment"),
        ("The hypothesis seems neutral...</think>\n\nContradiction", "contradiction"),  # opened in the prompt
        ("<|channel>thought Neutral? no.<channel|>Contradiction", "contradiction"),  # Gemma 4's channel
    ],
)
def test_examples(text, label):
    assert parse_label(text) == label


def test_answer_complete_once_the_label_line_ends():
    assert not answer_complete("Contra")
    assert not answer_complete("\nContradiction")
    assert answer_complete("\nContradiction\n")
    assert not answer_complete("Label:\n")  # the line that decides has not come yet


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_gives_a_label_or_none(text):
    assert parse_label(text) in (*NLI_LABELS, None)
    assert isinstance(answer_complete(text), bool)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NLI_LABELS), st.data(), FILLER, FILLER)
def test_a_lone_label_is_read_and_a_negated_or_second_one_is_not(label, data, before, after):
    word = data.draw(st.sampled_from(LABEL_WORDS[label]))
    assert parse_label(" ".join([*before, word, *after])) == label
    assert parse_label(" ".join([*before, "not", word, *after])) is None
    other = data.draw(st.sampled_from([w for name, words in LABEL_WORDS.items() if name != label for w in words]))
    assert parse_label(" ".join([*before, word, "or", other, *after])) is None
    assert parse_label(" ".join([*before, word, *after]) + "\n" + other) == label  # the first label line decides


def test_pathological_answers_parse_in_linear_time():
    for text in ("not " * 25_000, "a" * 100_000, "\n" * 100_000, "Entailment " * 9_000 + "!", "x'" * 50_000):
        start = time.perf_counter()
        parse_label(text)
        answer_complete(text)
        assert time.perf_counter() - start < 1.0, text[:20]
