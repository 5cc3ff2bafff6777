"""``ibe report``'s analyses beyond Table 1: §6's self-evident explanations (depth 1, drift 0)
and the errors that picked one, Figure 19's cause vs effect accuracy with the direction read
back from the entailment form, and the hedge cues of Figures 6, 17, 18; their numbers in
report.json, and the paper's §6 and Figure 19 transcribed as printed."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from custom_metrics.common.published import read_table
from ibe_postprocess import report_file
from ibe_postprocess.analyses import direction_accuracy, hedge_cues, question_directions, self_evident
from ibe_postprocess.paper import SECTION_6, TABLES, figure_19
from ibe_postprocess.selector import Selector, question_accuracy
from tests.leaderboard.test_published import papers  # noqa: F401  (the papers folder, when at hand)


def _row(qid: str, option: int, correct: int, premise: str, conclusion: str, depth: int, drift: int, **hedges):
    cues = {"hedge_epistemic": 0, "hedge_doxastic": 0, "hedge_conditional": 0, "hedge_ratio": 0.0} | hedges
    return {"qid": qid, "option": option, "split": "test", "correct": correct, "premise": premise,
            "conclusion": conclusion, "depth": depth, "drift": drift, **cues}  # fmt: skip


# q1, cause: the options are premises of one conclusion; q2 and q3, effect; q4: options share both.
TEST = pd.DataFrame(
    [
        _row("copa-1", 1, 1, "I blew into it.", "The balloon expanded.", 2, 1),
        _row("copa-1", 2, 0, "I pricked it.", "The balloon expanded.", 1, 0, hedge_epistemic=2, hedge_ratio=0.1),
        _row("copa-2", 1, 0, "The child punched the blocks.", "The stack towered.", 1, 0, hedge_doxastic=1),
        _row("copa-2", 2, 1, "The child punched the blocks.", "The blocks scattered.", 3, 2),
        _row("copa-3", 1, 1, "It rained.", "The street got wet.", 2, 3),
        _row("copa-3", 2, 0, "It rained.", "The street got dry.", 2, 3, hedge_conditional=1),
        _row("copa-4", 1, 1, "Same.", "Same.", 1, 1),
        _row("copa-4", 2, 0, "Same.", "Same.", 1, 1),
    ]
)
# A selector preferring the explanation with less drift: it picks the self-evident (drift 0) one in q1
# and q2, both wrong, ties q3 and q4.
LESS_DRIFT = Selector(("drift",), ("copa",), 8, {"drift": -1.0}, 0.0, pd.Series({"drift": 0.0}))


def test_self_evident_shares_and_the_errors_that_picked_one() -> None:
    found = self_evident(TEST, TEST, LESS_DRIFT)
    assert (found.explanations, found.drift_zero, found.depth_one, found.self_evident) == (8, 0.25, 0.5, 0.25)
    # Wrong picks: q1 and q2 whole (both self-evident), half of q3 and of q4 (ties): 3.0, of which 2.0 self-evident.
    assert (found.errors, found.self_evident_errors, found.error_share) == (3.0, 2.0, pytest.approx(2 / 3))
    assert found.errors == 4 * (1 - question_accuracy(TEST, LESS_DRIFT.scores(TEST))[0])  # the accuracy's tie rule


def test_the_direction_is_read_back_from_the_entailment_form() -> None:
    assert question_directions(TEST).to_dict() == {
        "copa-1": "cause",
        "copa-2": "effect",
        "copa-3": "effect",
        "copa-4": "unknown",
    }
    found = direction_accuracy(TEST, LESS_DRIFT)
    assert found.accuracy == {"cause": 0.0, "effect": 0.25} and found.questions == {"cause": 1, "effect": 2}
    assert found.unknown == 1


def test_hedge_cues_by_correctness_and_category() -> None:
    found = hedge_cues(TEST)
    assert (found.ratio_correct, found.ratio_incorrect) == (0.0, pytest.approx(0.025))
    assert found.incorrect_shares == {"epistemic": 0.5, "doxastic": 0.25, "conditional": 0.25}
    none = hedge_cues(TEST.assign(hedge_epistemic=0, hedge_doxastic=0, hedge_conditional=0))
    assert all(math.isnan(share) for share in none.incorrect_shares.values())  # no cue: no share, not 0 %


def test_the_analyses_round_trip_through_report_json() -> None:
    table = (report_file.TableRow("Composed Model", "+ Linguistic Uncertainty", 0.5),)
    entry = report_file.DatasetReport(
        table,
        4,
        self_evident=self_evident(TEST, TEST, LESS_DRIFT),
        directions=direction_accuracy(TEST.iloc[:6], LESS_DRIFT),
        hedges=hedge_cues(TEST),
    )
    report = report_file.Report(report_file.FeaturesRef(8, "x", "y"), {"copa": entry})
    data = report_file.to_json(report)
    back = report_file.from_json(data).datasets["copa"]
    assert back.self_evident == entry.self_evident and back.directions == entry.directions
    assert back.hedges == entry.hedges
    for name in ("self_evident", "directions", "hedges"):  # reports written before these were reported
        del data["datasets"]["copa"][name]
    assert report_file.from_json(data).datasets["copa"].self_evident is None


def test_section_6_and_figure_19_as_the_paper_prints_them(papers: Path) -> None:  # noqa: F811
    text = " ".join((papers / "ibe-eval.md").read_text(encoding="utf-8").split())
    section = text[text.index("## 6 Preliminary Analysis") : text.index("## 7 Results")]
    for key, words in (
        ("self_evident", "of the cases consist of self-evident explanations"),
        ("drift_zero", "of the generated explanations exhibit a concept drift of 0"),
        ("depth_one", "of the explanations have a proof depth of 1"),
        ("error_share", "of the errors were caused by the selection of such explanations"),
    ):
        assert f"{SECTION_6[key]} {words}" in section, key
    figure = text[text.index("cause-effect-acc.png") : text.index("Figure 19:")]
    printed = {
        "LLaMA 2 7B": "Llama 2 7B",
        "LLaMA 2 13B": "Llama 2 13B",
        "GPT 3.5": "ChatGPT",  # the figure's name for it
    }
    for model, cause, effect in (row.cells.values() for row in read_table(TABLES / "figure_19.csv")):
        found = re.search(rf"\*\*{printed[model]}\*\*: - Cause: (\d+%) .*? - Effect: (\d+%)", figure)
        assert found and found.groups() == (cause, effect), model
    assert figure_19()["GPT 3.5"] == (0.71, 0.80)
