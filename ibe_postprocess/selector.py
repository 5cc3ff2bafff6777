"""The IBE selector (Section 4.1, Appendix A.9), the Table 1 ablation and the Figure 2 regressions.

A linear regression (scikit-learn) is fitted on the training explanations, target 1 for
the explanation of the correct option; each test question's answer is the option whose
explanation scores highest. Ties (common with a single binary feature such as
consistency) earn 1/k credit, k being the number of tied options: the expected accuracy
of breaking the tie at random, without a random draw. A missing feature value (an
explanation without steps has no drift or coherence) is replaced by the training mean of
that feature; the report counts how many values were imputed.

Figure 2 regresses correctness on each feature alone with a logistic GLM (statsmodels)
and reports the z statistic and its p-value, the quantities the paper's heat map shows.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

FEATURES = ("consistent", "depth", "drift", "coherence", "uncertainty")
LABELS = {
    "consistent": "Consistency",
    "depth": "Depth (Parsimony)",
    "drift": "Drift (Parsimony)",
    "coherence": "Coherence",
    "uncertainty": "Linguistic Uncertainty",
}
CUMULATIVE_LABELS = {
    "consistent": "+ Consistency",
    "depth": "+ Depth",
    "drift": "+ Drift",
    "coherence": "+ Coherence",
    "uncertainty": "+ Linguistic Uncertainty",
}


@dataclass(frozen=True)
class Selection:
    accuracy: float
    questions: int
    coefficients: dict[str, float]
    intercept: float


def _design(frame: pd.DataFrame, features: Sequence[str], means: pd.Series) -> np.ndarray:
    return frame[list(features)].astype(float).fillna(means[list(features)]).to_numpy()


def question_accuracy(test: pd.DataFrame, scores: np.ndarray) -> tuple[float, int]:
    """Mean over test questions of the credit for picking the argmax explanation."""
    frame = test.assign(_score=scores)
    credits = []
    for _qid, group in frame.groupby("qid", sort=False):
        best = group["_score"].max()
        tied = group[np.isclose(group["_score"], best)]
        credits.append(tied["correct"].sum() / len(tied))
    return (float(np.mean(credits)) if credits else math.nan), len(credits)


def random_accuracy(test: pd.DataFrame) -> float:
    """Expected accuracy of a uniformly random choice among each question's options."""
    per_question = test.groupby("qid", sort=False)["correct"].agg(lambda c: c.sum() / len(c))
    return float(per_question.mean()) if len(per_question) else math.nan


def select(train: pd.DataFrame, test: pd.DataFrame, features: Sequence[str]) -> Selection:
    from sklearn.linear_model import LinearRegression

    means = train[list(features)].astype(float).mean().fillna(0.0)
    model = LinearRegression().fit(_design(train, features, means), train["correct"].astype(float))
    accuracy, questions = question_accuracy(test, model.predict(_design(test, features, means)))
    return Selection(accuracy, questions, dict(zip(features, map(float, model.coef_))), float(model.intercept_))


def split_frames(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    train, test = rows[rows["split"] == "train"], rows[rows["split"] == "test"]
    if train.empty or test.empty:
        raise ValueError(
            f"the selector needs training and test explanations; got {len(train)} train and {len(test)} "
            "test rows (field 'split')."
        )
    return train, test


def ablation(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 1: each feature alone, the random baseline, then features added cumulatively."""
    train, test = split_frames(rows)
    records = [("IBE Features", LABELS[f], select(train, test, [f]).accuracy) for f in FEATURES]
    records.append(("Composed Model", "Random", random_accuracy(test)))
    for end in range(1, len(FEATURES) + 1):
        records.append(
            ("Composed Model", CUMULATIVE_LABELS[FEATURES[end - 1]], select(train, test, FEATURES[:end]).accuracy)
        )
    return pd.DataFrame(records, columns=["block", "row", "accuracy"])


@dataclass(frozen=True)
class Regression:
    feature: str
    coefficient: float
    z: float
    p: float
    n: int
    note: str = ""

    @property
    def stars(self) -> str:
        if math.isnan(self.p):
            return ""
        return "***" if self.p < 0.001 else "**" if self.p < 0.01 else "*" if self.p < 0.05 else ""


def feature_regressions(rows: pd.DataFrame) -> list[Regression]:
    """Figure 2: logistic regression of correctness on each feature alone."""
    import statsmodels.api as sm

    results = []
    for feature in FEATURES:
        frame = rows[[feature, "correct"]].dropna().astype(float)
        if len(frame) < 3 or frame[feature].nunique() < 2 or frame["correct"].nunique() < 2:
            results.append(Regression(feature, math.nan, math.nan, math.nan, len(frame), "constant feature or outcome"))
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                fit = sm.GLM(frame["correct"], sm.add_constant(frame[feature]), family=sm.families.Binomial()).fit()
            except Exception as err:  # perfect separation and friends: report, do not crash
                results.append(
                    Regression(feature, math.nan, math.nan, math.nan, len(frame), f"{type(err).__name__}: {err}")
                )
                continue
        # Perfect separation only warns; its estimates are meaningless, so the note says so.
        note = ", ".join(sorted({w.category.__name__ for w in caught}))
        results.append(
            Regression(
                feature,
                float(fit.params[feature]),
                float(fit.tvalues[feature]),
                float(fit.pvalues[feature]),
                len(frame),
                note,
            )
        )
    return results
