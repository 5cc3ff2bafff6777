"""The IBE selector, the Table 1 ablation and the Figure 2 regressions on synthetic features."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ibe_postprocess.selector import ablation, feature_regressions, question_accuracy, random_accuracy, select


def synthetic(questions: int, seed: int) -> pd.DataFrame:
    """Two options per question; only uncertainty tells them apart (lower for the correct one)."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(questions):
        gold = int(rng.integers(1, 3))
        for option in (1, 2):
            correct = int(option == gold)
            rows.append(
                {
                    "qid": f"q{q}",
                    "option": option,
                    "correct": correct,
                    "consistent": int(rng.integers(0, 2)),
                    "depth": int(rng.integers(1, 5)),
                    "drift": int(rng.integers(0, 6)),
                    "coherence": float(rng.uniform(-1, 1)),
                    "uncertainty": float(rng.normal(1.0 if correct else 2.0, 0.3)),
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return pd.concat(
        [synthetic(200, 0).assign(split="train"), synthetic(200, 1).assign(split="test")], ignore_index=True
    )


def test_known_best_feature_wins(rows: pd.DataFrame) -> None:
    table = ablation(rows).set_index("row")["accuracy"]
    assert table["Linguistic Uncertainty"] > 0.9
    for noise in ("Consistency", "Depth (Parsimony)", "Drift (Parsimony)", "Coherence"):
        assert 0.35 < table[noise] < 0.65, noise
    assert table["Random"] == pytest.approx(0.5)
    assert table["+ Linguistic Uncertainty"] > 0.9 and table["+ Coherence"] < 0.65
    train, test = rows[rows.split == "train"], rows[rows.split == "test"]
    selection = select(train, test, ["consistent", "depth", "drift", "coherence", "uncertainty"])
    assert selection.coefficients["uncertainty"] < 0 and selection.questions == 200


def test_figure2_finds_only_the_informative_feature(rows: pd.DataFrame) -> None:
    regressions = {r.feature: r for r in feature_regressions(rows[rows.split == "test"])}
    assert regressions["uncertainty"].z < -5 and regressions["uncertainty"].stars == "***"
    for noise in ("depth", "drift", "coherence"):
        assert regressions[noise].p > 0.001, noise


def test_ties_earn_fractional_credit() -> None:
    test = pd.DataFrame({"qid": ["a", "a", "b", "b"], "correct": [1, 0, 0, 1]})
    assert question_accuracy(test, np.array([1.0, 1.0, 0.0, 2.0])) == (0.75, 2)
    assert random_accuracy(test) == 0.5


def test_missing_values_are_imputed_with_training_means() -> None:
    train = pd.DataFrame({"qid": ["a", "a"], "correct": [1, 0], "drift": [0.0, 4.0]})
    test = pd.DataFrame({"qid": ["b", "b"], "correct": [1, 0], "drift": [None, 3.0]})
    assert select(train, test, ["drift"]).accuracy == 1.0  # the missing value becomes 2.0 < 3.0


def test_selector_needs_both_splits(rows: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="training and test"):
        ablation(rows[rows.split == "test"])
