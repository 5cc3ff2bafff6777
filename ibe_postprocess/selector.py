"""The IBE selector (Section 4.1, Appendix A.9), the Table 1 ablation and the Figure 2 regressions.

A linear regression (scikit-learn) is fitted on the training explanations, target 1 for
the explanation of the correct option; each test question's answer is the option whose
explanation scores highest. Appendix A.9 fits **one** selector on the COPA and e-CARE
training explanations together and evaluates it on each test set (protocol ``a9``, the
default); ``per-dataset`` fits one per dataset on that dataset's training explanations.
With a single dataset the two are the same. Accuracies are always per dataset, as the
columns of the paper's Table 1. Ties (common with a single binary feature such as
consistency) earn 1/k credit, k being the number of tied options: the expected accuracy
of breaking the tie at random, without a random draw. A missing feature value (an
explanation without steps has no drift or coherence) is replaced by the training mean of
that feature; the report counts how many values were imputed.

Figure 2 regresses correctness on each feature alone with a logistic GLM (statsmodels),
reporting z and p as the paper's heat map does; where such a fit means nothing (perfect
separation, or fewer than ``MIN_EVENTS`` explanations of the rarer outcome: DETAILS.md), the
note says so beside the numbers.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ibe_postprocess.features_file import FEATURES
from ibe_postprocess.questions import dataset_of
from ibe_postprocess.report_file import Regression

LABELS = {
    "consistent": "Consistency",
    "depth": "Depth (Parsimony)",
    "drift": "Drift (Parsimony)",
    "coherence": "Coherence",
    "uncertainty": "Linguistic Uncertainty",
}
# Table 1's composed-model rows: "+ Depth" adds depth to the features before it.
CUMULATIVE_LABELS = {feature: "+ " + label.removesuffix(" (Parsimony)") for feature, label in LABELS.items()}
PROTOCOLS = ("a9", "per-dataset")
# Fewer explanations than this of the rarer outcome (correct or incorrect) make a one-feature
# logistic fit unreliable (Peduzzi et al., 1996: about ten events per predictor).
MIN_EVENTS = 10


@dataclass(frozen=True)
class Selection:
    accuracy: float
    questions: int
    coefficients: dict[str, float]
    intercept: float


@dataclass(frozen=True)
class Selector:
    """A fitted linear selector, with what it was fitted on and the means it imputes with."""

    features: tuple[str, ...]
    trained_on: tuple[str, ...]  # datasets of its training explanations
    train_explanations: int
    coefficients: dict[str, float]
    intercept: float
    means: pd.Series

    def scores(self, frame: pd.DataFrame) -> np.ndarray:
        """The fitted plausibility of each explanation (row) of ``frame``."""
        weights = np.array([self.coefficients[f] for f in self.features])
        return _design(frame, self.features, self.means) @ weights + self.intercept

    def evaluate(self, test: pd.DataFrame) -> tuple[float, int]:
        """Question accuracy on ``test`` (see ``question_accuracy``) and the number of questions."""
        return question_accuracy(test, self.scores(test))


def _design(frame: pd.DataFrame, features: Sequence[str], means: pd.Series) -> np.ndarray:
    return frame[list(features)].astype(float).fillna(means[list(features)]).to_numpy()


def picked(test: pd.DataFrame, scores: np.ndarray) -> pd.Series:
    """Whether each explanation of ``test`` is among its question's highest-scored (the argmax,
    ties included); ``question_credits`` and the report's error analysis share this one rule."""
    frame = test.assign(_score=scores)
    best = frame.groupby("qid", sort=False)["_score"].transform("max")
    return pd.Series(np.isclose(frame["_score"], best), index=test.index)


def question_credits(test: pd.DataFrame, scores: np.ndarray) -> pd.Series:
    """Per test question (in order of appearance): the credit for picking the argmax
    explanation, 1/k for each of k tied explanations."""
    top = picked(test, scores)
    tied = top.groupby(test["qid"], sort=False)
    return (test["correct"].where(top, 0)).groupby(test["qid"], sort=False).sum() / tied.sum()


def question_accuracy(test: pd.DataFrame, scores: np.ndarray) -> tuple[float, int]:
    """Mean over test questions of the credit for picking the argmax explanation."""
    credits = question_credits(test, scores)
    return (float(np.mean(credits.to_numpy())) if len(credits) else math.nan), len(credits)


def random_accuracy(test: pd.DataFrame) -> float:
    """Expected accuracy of a uniformly random choice among each question's options."""
    per_question = test.groupby("qid", sort=False)["correct"].agg(lambda c: c.sum() / len(c))
    return float(per_question.mean()) if len(per_question) else math.nan


def fit(train: pd.DataFrame, features: Sequence[str]) -> Selector:
    from sklearn.linear_model import LinearRegression

    means = train[list(features)].astype(float).mean().fillna(0.0)
    model = LinearRegression().fit(_design(train, features, means), train["correct"].astype(float))
    trained_on = tuple(sorted({dataset_of(str(qid)) for qid in train["qid"]}))
    return Selector(
        tuple(features),
        trained_on,
        len(train),
        dict(zip(features, map(float, model.coef_))),
        float(model.intercept_),
        means,
    )


def select(train: pd.DataFrame, test: pd.DataFrame, features: Sequence[str]) -> Selection:
    selector = fit(train, features)
    accuracy, questions = selector.evaluate(test)
    return Selection(accuracy, questions, selector.coefficients, selector.intercept)


def split_frames(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    train, test = rows[rows["split"] == "train"], rows[rows["split"] == "test"]
    if train.empty or test.empty:
        missing = "test" if test.empty else "training"
        raise ValueError(
            f"the selector needs training and test explanations; got {len(train)} train and {len(test)} "
            f"test rows (field 'split'). The {missing} questions are missing: the ibe_* tasks' documents "
            "interleave training and test questions (two documents, one per option, for each), so --limit 2 "
            "holds a single training question. Rerun lm_eval with --limit 4 or more, or pick documents of both "
            "splits with --samples, then `explain-eval ibe score` again."
        )
    return train, test


def by_dataset(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Rows per dataset (from the question ids), datasets in name order."""
    names = frame["qid"].astype(str).map(dataset_of)
    return {name: frame[names == name] for name in sorted(set(names))}


def fit_selectors(rows: pd.DataFrame, features: Sequence[str], protocol: str = "a9") -> dict[str, Selector]:
    """The selector that answers each dataset's test questions, fitted as ``protocol`` says
    (``a9``: one on every training explanation; ``per-dataset``: each dataset's own)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown selector protocol {protocol!r}; expected one of {PROTOCOLS}.")
    train, test = split_frames(rows)
    tested = list(by_dataset(test))
    if protocol == "a9":
        shared = fit(train, features)
        return {name: shared for name in tested}
    trained = by_dataset(train)
    missing = [name for name in tested if name not in trained]
    if missing:
        raise ValueError(f"per-dataset selectors need training explanations of {missing} (field 'split').")
    return {name: fit(trained[name], features) for name in tested}


def evaluate(rows: pd.DataFrame, features: Sequence[str], protocol: str = "a9") -> dict[str, tuple[float, int]]:
    """Per dataset: accuracy and questions of the selector over ``features``."""
    tests = by_dataset(split_frames(rows)[1])
    return {name: selector.evaluate(tests[name]) for name, selector in fit_selectors(rows, features, protocol).items()}


def ablation(rows: pd.DataFrame, protocol: str = "a9") -> pd.DataFrame:
    """Table 1 per dataset: each feature alone, the random baseline, then features added cumulatively."""
    tests = by_dataset(split_frames(rows)[1])

    def accuracies(block: str, row: str, features: Sequence[str]) -> list[tuple]:
        return [(block, row, name, acc) for name, (acc, _) in evaluate(rows, features, protocol).items()]

    records = [record for f in FEATURES for record in accuracies("IBE Features", LABELS[f], [f])]
    records += [("Composed Model", "Random", name, random_accuracy(test)) for name, test in tests.items()]
    for end in range(1, len(FEATURES) + 1):
        records += accuracies("Composed Model", CUMULATIVE_LABELS[FEATURES[end - 1]], FEATURES[:end])
    return pd.DataFrame(records, columns=["block", "row", "dataset", "accuracy"])


def unreliable(values: pd.Series, correct: pd.Series) -> list[str]:
    """Why a logistic fit of ``correct`` on ``values`` cannot be read (empty if it can)."""
    reasons = []
    right, wrong = values[correct == 1], values[correct == 0]
    if right.min() >= wrong.max() or wrong.min() >= right.max():
        reasons.append(
            "not meaningful: the feature separates correct from incorrect explanations "
            "(perfect separation), so the estimate diverges"
        )
    rarer = min(len(right), len(wrong))
    if rarer < MIN_EVENTS:
        reasons.append(
            f"not meaningful: {rarer} explanation(s) of the rarer outcome, fewer than {MIN_EVENTS} for a logistic fit"
        )
    return reasons


def feature_regressions(rows: pd.DataFrame) -> list[Regression]:
    """Figure 2: logistic regression of correctness on each feature alone."""
    return [_regression(feature, rows[[feature, "correct"]].dropna().astype(float)) for feature in FEATURES]


def _regression(feature: str, frame: pd.DataFrame) -> Regression:
    import statsmodels.api as sm

    if len(frame) < 3 or frame[feature].nunique() < 2 or frame["correct"].nunique() < 2:
        return Regression(feature, math.nan, math.nan, math.nan, len(frame), "constant feature or outcome")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = sm.GLM(frame["correct"], sm.add_constant(frame[feature]), family=sm.families.Binomial()).fit()
        except Exception as err:  # perfect separation and friends: report, do not crash
            return Regression(feature, math.nan, math.nan, math.nan, len(frame), f"{type(err).__name__}: {err}")
    # Perfect separation only warns, if at all; its estimates are meaningless, so the note says so.
    warned = sorted({w.category.__name__ for w in caught})
    note = "; ".join([*unreliable(frame[feature], frame["correct"]), *warned])
    estimates = (float(values[feature]) for values in (fit.params, fit.tvalues, fit.pvalues))
    return Regression(feature, *estimates, len(frame), note)
