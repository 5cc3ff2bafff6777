"""The IBE selector, the Table 1 ablation, the Figure 2 regressions and the report on synthetic features."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ibe_postprocess.selector as selector_module
from ibe_postprocess import features_file
from ibe_postprocess.folder import FeaturesFolder
from ibe_postprocess.inputs import JudgeRecord, Source
from ibe_postprocess.report import write_report
from ibe_postprocess.selector import (
    FEATURES,
    ablation,
    evaluate,
    feature_regressions,
    fit_selectors,
    question_accuracy,
    random_accuracy,
    select,
)


def synthetic(
    questions: int, seed: int, prefix: str = "q", told_by: str = "uncertainty", sign: int = -1
) -> pd.DataFrame:
    """Two options per question; only ``told_by`` tells them apart: 0.5 lower (sign -1) or higher
    (sign 1) for the correct one than its mean, 1.5; the other features are noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(questions):
        gold = int(rng.integers(1, 3))
        for option in (1, 2):
            correct = int(option == gold)
            rows.append(
                {
                    "qid": f"{prefix}{q}",
                    "option": option,
                    "correct": correct,
                    "consistent": int(rng.integers(0, 2)),
                    "depth": int(rng.integers(1, 5)),
                    "drift": int(rng.integers(0, 6)),
                    "coherence": float(rng.uniform(-1, 1)),
                    "uncertainty": float(rng.normal(1.5, 0.3)),
                }
            )
            rows[-1][told_by] = 1.5 + sign * (0.5 if correct else -0.5) + float(rng.normal(0, 0.3))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return pd.concat(
        [synthetic(200, 0).assign(split="train"), synthetic(200, 1).assign(split="test")], ignore_index=True
    )


def test_known_best_feature_wins(rows: pd.DataFrame) -> None:
    table = ablation(rows).set_index("row")["accuracy"]  # one dataset (qids q<n>): one value per row
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


@pytest.fixture(scope="module")
def two_datasets() -> pd.DataFrame:
    """COPA and e-CARE whose drift points opposite ways; COPA has four times the training questions."""
    parts = [
        synthetic(200, 0, "copa-", "drift", 1).assign(split="train"),
        synthetic(100, 1, "copa-", "drift", 1).assign(split="test"),
        synthetic(50, 2, "ecare-", "drift", -1).assign(split="train"),
        synthetic(100, 3, "ecare-", "drift", -1).assign(split="test"),
    ]
    return pd.concat(parts, ignore_index=True)


def test_a9_fits_one_selector_and_reports_both_test_sets(two_datasets, monkeypatch) -> None:
    fits = []
    real_fit = selector_module.fit
    monkeypatch.setattr(
        selector_module, "fit", lambda train, features: fits.append(len(train)) or real_fit(train, features)
    )
    selectors = fit_selectors(two_datasets, FEATURES)
    assert fits == [500]  # once, on COPA train (400 explanations) plus e-CARE train (100)
    assert selectors["copa"] is selectors["ecare"] and selectors["copa"].trained_on == ("copa", "ecare")
    a9 = evaluate(two_datasets, FEATURES)
    assert {name: questions for name, (_, questions) in a9.items()} == {"copa": 100, "ecare": 100}
    # The shared fit follows COPA's larger training set: right on COPA, wrong on e-CARE.
    assert a9["copa"][0] > 0.9 and a9["ecare"][0] < 0.1
    fits.clear()
    own = fit_selectors(two_datasets, FEATURES, "per-dataset")
    assert fits == [400, 100] and own["ecare"].trained_on == ("ecare",)
    per_dataset = evaluate(two_datasets, FEATURES, "per-dataset")
    assert per_dataset["copa"][0] > 0.9 and per_dataset["ecare"][0] > 0.9
    table = ablation(two_datasets)
    assert len(table) == 2 * 11 and set(table["dataset"]) == {"copa", "ecare"}
    assert table.set_index(["row", "dataset"]).loc[("Random", "ecare"), "accuracy"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="per-dataset selectors need training explanations of \\['ecare'\\]"):
        fit_selectors(
            two_datasets[two_datasets.qid.str.startswith("copa") | (two_datasets.split == "test")],
            FEATURES,
            "per-dataset",
        )


def test_report_has_a_column_per_dataset_and_labels_the_judge(two_datasets, tmp_path: Path) -> None:
    features = tmp_path / "features"
    frame = two_datasets.assign(
        flag="", uncertainty_source="lexicon", coherence_judge="nli", formalization="deterministic"
    )
    source = Source("judge.jsonl", 1)
    decisions = [JudgeRecord("copa-1", 1, 1, source), JudgeRecord("copa-2", 1, 2, source)]
    origin = features_file.Origin(("in.jsonl",), "0", {}, {"model": "org/writer", "judge_model": "org/judge"})
    features_file.write(FeaturesFolder(features), origin, frame.to_dict(orient="records"), decisions)
    report = write_report(features).read_text()
    assert "| Block | Row | This run: COPA | This run: e-CARE | COPA GPT 3.5 |" in report
    assert "Selector: Appendix A.9, one linear regression fitted on the training explanations of all datasets" in report
    assert "Composed model fitted on COPA + e-CARE (500 explanations)" in report
    # This run's judge and the paper's never share a row: each is labelled by who judged.
    assert "| Baselines | LLM judge: org/judge (this run) | 0.50 (n=2) | not run |  |  |  |  |  |  |" in report
    assert "| Baselines | LLM judge: GPT 3.5 (paper) |  |  | 0.59 | 0.47 | 0.63 | 0.43 | 0.61 | 0.52 |" in report
    summary = json.loads((features / "report.json").read_text())
    assert summary["selector"]["protocol"] == "a9" and summary["model"] == "org/writer"
    assert summary["selector"]["fits"]["copa"] == summary["selector"]["fits"]["ecare"]
    judge = {"model": "org/judge", "accuracy": 0.5, "questions": 2, "unparsed": 0, "method": "loglik"}
    assert summary["datasets"]["copa"]["judge"] == judge
    assert summary["datasets"]["ecare"]["judge"] is None
    assert {d: len(v["table1"]) for d, v in summary["datasets"].items()} == {"copa": 11, "ecare": 11}
    assert summary["datasets"]["ecare"]["test_questions"] == 100
