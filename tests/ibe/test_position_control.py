"""The IBE judge baseline's position control: the swapped docs and the two aggregations, by hand."""

from __future__ import annotations

import math

from custom_metrics.common.classification import NO_PREDICTION
from custom_metrics.ibe.data import ORDER_SHOWN, ORDER_SWAPPED, swapped
from custom_metrics.ibe.metrics import first_slot_share, judge_position_results, position_bias_share
from custom_metrics.ibe.prompts import judge_prompt

DOC = {
    "qid": "copa-501",
    "gold": 1,
    "order": ORDER_SHOWN,
    "explanations": [
        {"premise": "The balloon burst.", "conclusion": "I pricked it.", "explanation": "IF pricked, THEN burst."},
        {"premise": "The balloon burst.", "conclusion": "I blew into it.", "explanation": "IF blown, THEN grows."},
    ],
}


def test_the_swapped_doc_moves_the_correct_explanation_to_the_other_slot() -> None:
    other = swapped(DOC)
    assert other["order"] == ORDER_SWAPPED and other["gold"] == 2 and other["qid"] == DOC["qid"]
    assert judge_prompt(other).index("IF blown") < judge_prompt(other).index("IF pricked")
    assert swapped(other)["explanations"] == DOC["explanations"] and swapped(other)["gold"] == 1


def test_a_judge_that_reads_content_has_no_position_bias() -> None:
    """Picks the pricked explanation in both orders: slot 0 then slot 1."""
    first = judge_position_results(DOC, [(-1.0, False), (-2.0, False)])
    second = judge_position_results(swapped(DOC), [(-2.0, False), (-1.0, False)])
    assert first["acc"] == second["acc"] == 1.0
    assert position_bias_share([first["position_bias"], second["position_bias"]]) == 0.0
    assert first_slot_share([first["first_slot"], second["first_slot"]]) == 0.5


def test_a_judge_that_always_picks_the_first_slot_is_all_bias() -> None:
    items = [
        ("q1", ORDER_SHOWN, 0), ("q1", ORDER_SWAPPED, 0),
        ("q2", ORDER_SHOWN, 0), ("q2", ORDER_SWAPPED, 1),
        ("q3", ORDER_SHOWN, 0), ("q3", ORDER_SWAPPED, NO_PREDICTION),  # no pair: left out of the bias
    ]  # fmt: skip
    assert position_bias_share(items) == 0.5  # q1 followed the slot, q2 the content
    assert first_slot_share(items) == 4 / 5
    assert math.isnan(position_bias_share(items[4:])) and math.isnan(first_slot_share([("q", ORDER_SHOWN, -1)]))


def test_a_nan_log_likelihood_is_no_choice() -> None:
    result = judge_position_results(DOC, [(math.nan, False), (-2.0, False)])
    assert result["acc"] == 0.0 and result["position_bias"] == ("copa-501", ORDER_SHOWN, NO_PREDICTION)
