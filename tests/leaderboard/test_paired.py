"""Paired differences: the statistics against an independent implementation, and the
comparisons the page shows (GEESE effectiveness within a run, two runs of one task)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

import custom_metrics.leaderboard.build as leaderboard
from custom_metrics.leaderboard.paired import paired_difference
from tests.leaderboard.test_leaderboard import modern_results

STAMP = "2026-01-02T03-04-05.000000"


def test_mcnemar_and_bootstrap_against_statsmodels_and_numpy() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2, 60).astype(float)
    b = np.where(rng.random(60) < 0.3, 1 - a, a)  # 30% of the documents change
    keys = [f"doc{i}" for i in range(60)]
    result = paired_difference(dict(zip(keys, a)), dict(zip(keys, b)))
    table = [[int(((a == 1) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())]]
    table.append([int(((a == 0) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())])
    assert result.test == "McNemar (exact)" and result.n == 60
    assert result.p_value == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert result.difference == pytest.approx(a.mean() - b.mean())
    assert result.low <= result.difference <= result.high
    assert paired_difference(dict(zip(keys, a)), dict(zip(keys, b))) == result  # fixed seed: same page twice


def test_only_shared_documents_count_and_continuous_outcomes_use_the_interval() -> None:
    result = paired_difference({"x": 0.5, "y": 0.75, "z": 2.0}, {"y": 0.25, "z": 1.0, "w": 9.0})
    assert (result.n, result.test, result.p_value) == (2, "paired bootstrap", None)
    assert result.difference == pytest.approx(0.75)
    assert paired_difference({"x": 1.0}, {"y": 1.0}) is None
    single = paired_difference({"x": 1.0}, {"x": 0.0})
    assert (single.low, single.high, single.p_value, single.significant) == (None, None, 1.0, False)
    same = paired_difference({str(i): 1.0 for i in range(30)}, {str(i): 0.0 for i in range(30)})
    assert (same.low, same.high) == (1.0, 1.0) and same.significant and same.p_value < 1e-8


def _geese_samples(folder: Path, task: str, correct: list[int]) -> None:
    lines = []
    for index, right in enumerate(correct):
        doc = {"id": str(100 + index), "label": "YES", "text_t": "t", "text_h": "h", "hint": "x"}
        lines.append({"doc_id": index, "doc": doc, "acc": float(right), "filtered_resps": [["-1", "False"]]})
    path = folder / f"samples_{task}_{STAMP}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_effectiveness_and_two_runs_get_paired_differences(tmp_path: Path) -> None:
    noexp = [0] * 12 + [1] * 4
    human = [1] * 12 + [1] * 4  # 12 documents gained with the human hint
    for model, shift in (("org/a", 0), ("org/b", 1)):
        folder = tmp_path / "runs" / model.replace("/", "__")
        folder.mkdir(parents=True)
        results = modern_results(model, {"geese_noexp": 0.25, "geese_human": 1.0}, 1.0)
        results["n-samples"] = {task: {"original": 800, "effective": 16} for task in ("geese_noexp", "geese_human")}
        (folder / f"results_{STAMP}.json").write_text(json.dumps(results))
        _geese_samples(folder, "geese_noexp", noexp[shift:] + noexp[:shift])
        _geese_samples(folder, "geese_human", human)
    out = tmp_path / "board"
    board = leaderboard.build_leaderboard([tmp_path / "runs"], out, {})
    with (out / "geese_differences.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    effectiveness = [r for r in rows if r["kind"] == "same run" and r["a"] == "org/a"]
    assert len(effectiveness) == 1
    (row,) = effectiveness
    assert row["task"] == "geese_human" and row["metric"] == "acc" and row["docs"] == "16"
    assert float(row["difference"]) == pytest.approx(0.75) and row["significant"] == "True"
    assert float(row["p_value"]) == pytest.approx(mcnemar([[4, 12], [0, 0]], exact=True).pvalue)
    between = [r for r in rows if r["kind"] == "two runs" and r["task"] == "geese_noexp"]
    assert len(between) == 1 and between[0]["a"] == "org/a" and between[0]["b"] == "org/b"
    assert float(between[0]["difference"]) == 0.0 and between[0]["significant"] == "False"
    assert len(board.logged) == 4 and all(len(task.rows) == 16 for task in board.logged)
    assert "Paired differences" in (out / "geese.md").read_text()
