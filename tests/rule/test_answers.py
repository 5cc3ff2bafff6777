"""Reading chain-of-thought answers: the option "the answer is Option<k>" names, and a flagged
row (never a crash, never a silent zero) for every output that names none or several."""

from __future__ import annotations

import logging
import math

import pytest

from custom_metrics.rule.answers import CONFLICT, EMPTY, LETTER, NO_ANSWER, NO_SUCH_OPTION, Reading, read_answer
from custom_metrics.rule.metrics import COMBINED_METRICS, process_cot, unparsed

DOC = {
    "doc_id": "syn_1",
    "main_id": "syn_1",
    "kind": "main",
    "split": 0,
    "label": 2,
    "none_gold": False,
    "group_size": 4,
}


@pytest.mark.parametrize(
    ("text", "option"),
    [
        (" The argument assumes it. Therefore the answer is Option2 \n ", 2),
        ("Option0 and Option3 ignore the costs. Therefore the answer is Option2", 2),  # options in the reasoning
        ("For Option0, no. For Option1, no. For Option2, yes. Therefore the answer is Option2.", 2),
        ("The answer is option 2, since the others fail. So the answer is Option2.", 2),  # the same one twice
        ("**The correct answer is: Option2**", 2),
        ("the answer is (Option1)", 1),
    ],
)
def test_the_named_option_is_read(text: str, option: int) -> None:
    assert read_answer(text) == Reading(option)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", EMPTY),
        ("  \n ", EMPTY),
        ("The mayor's argument is weak because Option2 ignores costs.", NO_ANSWER),  # an answer-less rationale
        ("Therefore the answer is that visitors would not simply come on other days.", NO_ANSWER),  # option text
        ("Therefore the answer is B.", f"{LETTER} (B)"),
        ("The answer is Option1. On reflection, the answer is Option3.", f"{CONFLICT} (Option1, Option3)"),
        ("Therefore the answer is Option4", f"{NO_SUCH_OPTION} (Option4)"),
        ("Therefore the answer is Option", NO_ANSWER),  # cut off by the token budget
    ],
)
def test_no_single_option_is_a_problem_named_per_doc(text: str, problem: str) -> None:
    assert read_answer(text) == Reading(None, problem)


def test_the_demonstrated_phrase_with_a_letter_article_is_not_a_letter_answer() -> None:
    assert read_answer("In short the answer is a matter of cost.") == Reading(None, NO_ANSWER)


@pytest.mark.parametrize("text", ["", "Therefore the answer is B.", "the answer is Option1 or the answer is Option2"])
def test_an_unread_answer_is_a_flagged_wrong_row(text: str) -> None:
    scores = process_cot(DOC, [text])
    assert set(scores) == {*COMBINED_METRICS, "unparsed"}
    assert scores["unparsed"] == read_answer(text).problem != ""
    assert all(scores[metric].correct is False for metric in COMBINED_METRICS)


def test_a_read_answer_scores_like_a_chosen_option() -> None:
    right, wrong = (process_cot(DOC, [f"Therefore the answer is Option{k}"]) for k in (2, 0))
    assert right["unparsed"] == wrong["unparsed"] == ""
    assert right["mainq_acc"].correct and not wrong["mainq_acc"].correct


def test_the_unparsed_share_counts_and_names_the_problems(caplog) -> None:
    problems = ["", f"{CONFLICT} (Option1, Option3)", EMPTY, "", EMPTY]
    with caplog.at_level(logging.WARNING):
        assert unparsed(problems) == pytest.approx(3 / 5)
    assert "3 of 5 generations" in caplog.text and "2 empty output, 1 two different answers" in caplog.text
    assert unparsed(["", ""]) == 0.0 and math.isnan(unparsed([]))
