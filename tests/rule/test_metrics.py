"""RULE Table 2 metrics on hand-built outcomes whose values were computed by hand."""

from __future__ import annotations

import math

import pytest

from custom_metrics.rule.metrics import (
    TABLE2_METRICS,
    TABLE8_METRICS,
    Outcome,
    consistency,
    eliminative_acc,
    mainq_acc,
    mainq_wise_subq_acc,
    none_acc,
    selective_acc,
    subq_acc,
)
from custom_metrics.rule.protocol import pooled, summarize


def main(mid: str, correct: bool, size: int) -> Outcome:
    return Outcome(mid, mid, "main", 0, correct, False, size)


def sub(mid: str, k: int, kind: str, correct: bool, size: int, none_gold: bool = False, split: int = 1) -> Outcome:
    return Outcome(f"{mid}_sub{k}", mid, kind, split, correct, none_gold, size)


S, E = "selective", "eliminative"

# A: main right, 4 subquestions, the last (a None-gold eliminative one) wrong.
# B: main right, 1 selective subquestion, right.
# C: main WRONG, 2 subquestions, both right.
# D: main right, 3 subquestions all right, one of them None-gold.
A = [
    main("A", True, 4),
    sub("A", 1, S, True, 4),
    sub("A", 2, E, True, 4),
    sub("A", 3, E, True, 4),
    sub("A", 4, E, False, 4, none_gold=True),
]
B = [main("B", True, 1), sub("B", 1, S, True, 1)]
C = [main("C", False, 2), sub("C", 1, E, True, 2), sub("C", 2, S, True, 2)]
D = [main("D", True, 3), sub("D", 1, E, True, 3, none_gold=True), sub("D", 2, E, True, 3), sub("D", 3, S, True, 3)]
ALL = A + B + C + D


def test_table2_metrics_by_hand():
    assert mainq_acc(ALL) == pytest.approx(3 / 4)
    assert subq_acc(ALL) == pytest.approx(9 / 10)  # micro: 9 of 10 subquestions
    assert selective_acc(ALL) == pytest.approx(4 / 4)
    assert eliminative_acc(ALL) == pytest.approx(5 / 6)
    # B and D consistent; A has a wrong subquestion; C has a wrong main answer.
    assert consistency(ALL) == pytest.approx(2 / 4)
    # macro: (3/4 + 1 + 1 + 1) / 4 differs from the micro 0.9
    assert mainq_wise_subq_acc(ALL) == pytest.approx(0.9375)
    assert none_acc(ALL) == pytest.approx(1 / 2)


def test_table8_metrics_by_hand_leave_out_the_wrongly_answered_main_questions():
    # C (main wrong) is left out: A, B and D hold 8 subquestions, 7 right (A's fourth wrong).
    assert TABLE8_METRICS["subq_acc_mainq_correct"](ALL) == pytest.approx(7 / 8)
    assert TABLE8_METRICS["selective_acc_mainq_correct"](ALL) == pytest.approx(3 / 3)
    assert TABLE8_METRICS["eliminative_acc_mainq_correct"](ALL) == pytest.approx(4 / 5)  # C's right one left out
    # B and D of the three right main questions have every subquestion right (Table 2: 2 of 4)
    assert TABLE8_METRICS["consistency_mainq_correct"](ALL) == pytest.approx(2 / 3)
    assert TABLE8_METRICS["mainq_wise_subq_acc_mainq_correct"](ALL) == pytest.approx((3 / 4 + 1 + 1) / 3)
    cut = [*A[:3], *B]  # A cut short by --limit: left out of the group metrics, not of the micro average
    assert TABLE8_METRICS["consistency_mainq_correct"](cut) == 1.0
    assert TABLE8_METRICS["subq_acc_mainq_correct"](cut) == 1.0
    assert all(math.isnan(fn(C)) for fn in TABLE8_METRICS.values())  # no main question answered correctly


def test_wrong_main_with_right_subanswers_is_inconsistent():
    assert consistency(C) == 0.0
    assert mainq_wise_subq_acc(C) == 1.0


def test_order_of_outcomes_does_not_matter():
    assert consistency(list(reversed(ALL))) == consistency(ALL)
    assert mainq_wise_subq_acc(ALL[::2] + ALL[1::2]) == mainq_wise_subq_acc(ALL)


def test_limit_cut_group_is_left_out_and_logged(caplog):
    cut = A + B + C + D[:-1]  # --limit cut D's last subquestion
    assert consistency(cut) == pytest.approx(1 / 3)  # A, B, C only
    assert mainq_wise_subq_acc(cut) == pytest.approx((3 / 4 + 1 + 1) / 3)
    assert "1 main question(s) left out" in caplog.text
    # the per-question accuracies still use every answered question
    assert subq_acc(cut) == pytest.approx(8 / 9)


def test_subquestions_without_their_main_question():
    subs_only = [o for o in ALL if o.kind != "main"]
    assert math.isnan(consistency(subs_only))  # no main answer to be consistent with
    assert math.isnan(mainq_acc(subs_only))
    assert mainq_wise_subq_acc(subs_only) == pytest.approx(0.9375)


def test_main_question_whose_subquestions_were_all_cut():
    assert math.isnan(consistency([main("A", True, 4)]))
    assert math.isnan(mainq_wise_subq_acc([main("A", True, 4)]))


def test_empty_kinds_are_nan_not_zero():
    assert math.isnan(none_acc(B + C))
    assert all(math.isnan(fn([])) for fn in TABLE2_METRICS.values())


def test_outcome_round_trips_through_a_samples_file():
    import json

    original = D[1]
    assert Outcome.parse(json.loads(json.dumps(original))) == original


# Two five-shot runs. Main question A is scored in both: right in run 1, wrong in run 2.
RUN1 = [
    main("A", True, 2),
    sub("A", 1, S, True, 2),
    sub("A", 2, E, True, 2),
    main("B", True, 0),
    main("C", True, 1),
    sub("C", 1, E, True, 1),
]
RUN2 = [
    main("A", False, 2),
    sub("A", 3, E, True, 2, split=2),
    sub("A", 4, E, True, 2, split=2),
    main("B", True, 1),
    sub("B", 1, S, False, 1, split=2),
    main("C", True, 0),
]


def test_pooled_consistency_needs_the_main_right_in_every_run_with_its_subquestions():
    result = pooled([RUN1, RUN2])
    # A: all four subquestions right but the main wrong in run 2 -> inconsistent.
    # B: its subquestion wrong -> inconsistent. C: right and right -> consistent.
    assert result["consistency"] == pytest.approx(1 / 3)
    assert result["mainq_wise_subq_acc"] == pytest.approx((1 + 0 + 1) / 3)
    assert result["n_consistency"] == 3


def test_pooled_leaves_out_a_main_question_only_demonstrated():
    # C was a demonstration in the run holding its subquestion: no main answer to pair.
    run1 = [o for o in RUN1 if o.doc_id != "C"]
    result = pooled([run1, RUN2])
    assert result["n_demo_only"] == 1
    assert result["n_consistency"] == 2
    assert result["consistency"] == 0.0
    assert result["n_mainq_wise"] == 3  # C's subquestion still counts here


def test_summary_reports_mean_and_population_std_across_splits():
    # split 1: subq 3/3; split 2: subq 2/3 -> mean 5/6, pstdev 1/6
    summary = summarize({1: RUN1, 2: RUN2}, [RUN1, RUN2], {1: 0, 2: 1}, grouped_splits=True)
    stats = summary["across_splits"]["subq_acc"]
    assert stats["mean"] == pytest.approx(5 / 6)
    assert stats["std"] == pytest.approx(1 / 6)
    assert summary["across_splits"]["mainq_acc"]["mean"] == pytest.approx((1 + 2 / 3) / 2)
    assert summary["table3"][2]["none_in_shot"] == 1
    assert summary["table3"]["pooled"]["subq_acc"] == pytest.approx(5 / 6)
