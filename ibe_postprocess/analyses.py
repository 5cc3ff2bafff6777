"""The paper's analyses beyond Table 1 and Figure 2, per dataset: §6's self-evident
(tautological) explanations, Appendix A.11's cause vs effect accuracy (Figure 19) and the
hedge cues of Figures 6, 17 and 18.

**§6.** An explanation is self-evident when its proof depth is 1 (one rule links premise and
conclusion) and its concept drift is 0 (no concept beyond the hypothesis): it restates the
causal relation it should explain. The shares are over every explanation of the dataset, the
errors the composed model's on the test questions, a tie among k counting 1/k each.

**Figure 19.** The composed model's test accuracy on cause questions and on effect questions
(why the composed model's: DETAILS.md). A question's direction is read back from its
entailment form (Figure 7): a cause question's options are premises of one conclusion, an
effect question's options conclusions of one premise; sharing both, or neither, is unknown.

**Hedge cues.** The mean hedge-cue ratio by option correctness (Figures 6 and 17) and, over
the incorrect options' explanations, each category's share of the cues (Figures 6 and 18),
counted with the lexicon of ``uncertainty`` (the paper's token classifier is not public).
"""

from __future__ import annotations

import math

import pandas as pd

from ibe_postprocess.report_file import DIRECTIONS, DirectionAccuracy, HedgeCues, SelfEvident
from ibe_postprocess.selector import Selector, picked, question_credits
from ibe_postprocess.uncertainty import HEDGE_CUES


def _self_evident(frame: pd.DataFrame) -> pd.Series:
    return (frame["depth"] == 1) & (frame["drift"] == 0)


def self_evident(rows: pd.DataFrame, test: pd.DataFrame, selector: Selector) -> SelfEvident:
    top = picked(test, selector.scores(test))
    weight = top / top.groupby(test["qid"], sort=False).transform("sum")  # 1/k for each of k tied picks
    wrong = weight.where(test["correct"] == 0, 0.0)
    masks = (rows["drift"] == 0, rows["depth"] == 1, _self_evident(rows))
    shares = (float(mask.mean()) if len(rows) else math.nan for mask in masks)
    return SelfEvident(len(rows), *shares, float(wrong.sum()), float(wrong.where(_self_evident(test), 0.0).sum()))


def question_directions(test: pd.DataFrame) -> pd.Series:
    """Per test question: "cause", "effect" or "unknown", from its options' premises and conclusions
    (unknown for every question of rows without their texts)."""
    if not {"premise", "conclusion"} <= set(test.columns):
        return pd.Series("unknown", index=pd.unique(test["qid"]), dtype=object)
    # (one premise, one conclusion) -> the direction; both or neither: unknown.
    kinds = {(False, True): "cause", (True, False): "effect"}
    single = test.groupby("qid", sort=False)[["premise", "conclusion"]].nunique() == 1
    return pd.Series({qid: kinds.get(tuple(row), "unknown") for qid, row in single.iterrows()}, dtype=object)


def direction_accuracy(test: pd.DataFrame, selector: Selector) -> DirectionAccuracy:
    credits = question_credits(test, selector.scores(test))
    directions = question_directions(test).reindex(credits.index)
    chosen = {name: credits[directions == name] for name in DIRECTIONS}
    accuracy = {name: float(found.mean()) if len(found) else math.nan for name, found in chosen.items()}
    questions = {name: len(found) for name, found in chosen.items()}
    return DirectionAccuracy(accuracy, questions, int((directions == "unknown").sum()))


def hedge_cues(rows: pd.DataFrame) -> HedgeCues:
    """Undefined (NaN) where the rows hold no hedge counts."""
    ratio = rows.groupby("correct")["hedge_ratio"].mean() if "hedge_ratio" in rows else pd.Series(dtype=float)
    incorrect = rows[rows["correct"] == 0]
    totals = {
        category: float(incorrect[f"hedge_{category}"].sum()) if f"hedge_{category}" in incorrect else math.nan
        for category in HEDGE_CUES
    }
    cues = sum(totals.values())
    return HedgeCues(
        float(ratio.get(1, math.nan)),
        float(ratio.get(0, math.nan)),
        {category: (total / cues if cues else math.nan) for category, total in totals.items()},
    )
