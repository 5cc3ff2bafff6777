"""Paired differences: the statistics against an independent implementation (statsmodels), test
and interval from one procedure, every pair of many runs at once, and the comparisons the page
shows (GEESE effectiveness within a run, two runs of one task)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

import custom_metrics.leaderboard.build as leaderboard
from custom_metrics.leaderboard import procedures
from custom_metrics.leaderboard.paired import paired_difference, paired_matrix
from custom_metrics.leaderboard.procedures import BOOTSTRAP, MCNEMAR, NO_CHANGE, NO_SPREAD
from tests.leaderboard.test_leaderboard import modern_results

STAMP = "2026-01-02T03-04-05.000000"


def test_mcnemar_and_its_interval_against_statsmodels() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2, 60).astype(float)
    b = np.where(rng.random(60) < 0.3, 1 - a, a)  # 30% of the documents change
    keys = [f"doc{i}" for i in range(60)]
    result = paired_difference(dict(zip(keys, a)), dict(zip(keys, b)))
    a_only, b_only = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    table = [[int(((a == 1) & (b == 1)).sum()), a_only], [b_only, int(((a == 0) & (b == 0)).sum())]]
    assert result.test == MCNEMAR and result.n == 60
    assert result.p_value == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert result.difference == pytest.approx(a.mean() - b.mean())
    # the interval: Clopper-Pearson of the changed documents that went A's way, scaled to all 60
    low, high = proportion_confint(a_only, a_only + b_only, alpha=0.05, method="beta")
    scale = (a_only + b_only) / 60
    assert (result.low, result.high) == pytest.approx((scale * (2 * low - 1), scale * (2 * high - 1)))
    assert paired_difference(dict(zip(keys, a)), dict(zip(keys, b))) == result  # same page twice


@pytest.mark.parametrize("a_only", range(0, 13))
def test_the_interval_excludes_0_exactly_when_p_is_below_005(a_only: int) -> None:
    """McNemar's exact p and its interval come from one procedure: 5 of 5 changed documents the
    same way gives p = 0.0625 and an interval holding 0 (the bootstrap excluded 0 there)."""
    docs = [str(i) for i in range(30)]
    left = {doc: 1.0 if i < a_only else 0.0 for i, doc in enumerate(docs)}
    result = paired_difference(left, dict.fromkeys(docs, 0.0))
    if a_only == 0:  # nothing changed: McNemar's test has nothing to condition on, so no interval
        assert (result.low, result.high, result.p_value) == (None, None, 1.0)
        assert result.interval_text == f"none: {NO_CHANGE}"
        return
    assert (result.low > 0 or result.high < 0) == (result.p_value < 0.05), result
    if a_only == 5:
        assert result.p_value == pytest.approx(0.0625) and result.low < 0 < result.high


def test_only_shared_documents_count_and_continuous_outcomes_use_the_bootstrap() -> None:
    result = paired_difference({"x": 0.5, "y": 0.75, "z": 2.0}, {"y": 0.25, "z": 1.0, "w": 9.0})
    assert (result.n, result.test) == (2, BOOTSTRAP)
    assert result.difference == pytest.approx(0.75)
    assert (result.low > 0 or result.high < 0) == (result.p_value < 0.05)
    assert paired_difference({"x": 1.0}, {"y": 1.0}) is None
    single = paired_difference({"x": 1.0}, {"x": 0.0})
    assert (single.p_value, single.significant) == (1.0, False) and single.low < 0 < single.high
    same = paired_difference({str(i): 1.0 for i in range(30)}, {str(i): 0.0 for i in range(30)})
    assert same.low == pytest.approx(2 * 0.025 ** (1 / 30) - 1) and same.significant and same.p_value < 1e-8


def test_no_interval_of_zero_width_from_a_few_documents() -> None:
    """6 documents that no task changes gave "95% CI [+0.0000, +0.0000]"; a bootstrap of
    differences all alike gave [+0.5000, +0.5000] and p = 0: now no interval, saying why, and p = 1."""
    docs = [str(i) for i in range(6)]
    unchanged = paired_difference(dict.fromkeys(docs, 1.0), dict.fromkeys(docs, 1.0))
    assert unchanged.interval_text.startswith("none: no document changed") and unchanged.p_value == 1.0
    alike = paired_difference(dict.fromkeys(docs, 0.75), dict.fromkeys(docs, 0.25))
    assert (alike.test, alike.low, alike.high, alike.p_value) == (BOOTSTRAP, None, None, 1.0)
    assert alike.no_interval == NO_SPREAD.format(n=6, value=0.5)
    assert procedures.bootstrap_test([0.5] * 6) is None


def test_every_pair_of_many_runs_matches_the_pair_alone() -> None:
    rng = np.random.default_rng(3)
    runs = [{str(d): float(v) for d, v in enumerate(rng.integers(0, 2, 40)) if d % (i + 2)} for i in range(6)]
    pairs = paired_matrix(runs)
    assert len(pairs) == 15
    for (i, j), result in pairs.items():
        assert result == paired_difference(runs[i], runs[j])


def _geese_samples(folder: Path, task: str, correct: list[int]) -> None:
    lines = []
    for index, right in enumerate(correct):
        doc = {"id": str(100 + index), "label": "YES", "text_t": "t", "text_h": "h", "hint": "x"}
        lines.append({"doc_id": index, "doc": doc, "acc": float(right), "filtered_resps": [["-1", "False"]]})
    path = folder / f"samples_{task}_{STAMP}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _two_runs(tmp_path: Path, human: list[int]) -> tuple[Path, leaderboard.Leaderboard, list[dict]]:
    """Two GEESE runs of 16 documents, with and without the human hint (the second's no-hint
    outcomes shifted by one document); the board and its differences CSV."""
    noexp = [0] * 12 + [1] * 4
    for model, shift in (("org/a", 0), ("org/b", 1)):
        folder = tmp_path / "runs" / model.replace("/", "__")
        folder.mkdir(parents=True)
        results = modern_results(model, {"geese_noexp": 0.25, "geese_human": sum(human) / 16}, 1.0)
        results["n-samples"] = {task: {"original": 800, "effective": 16} for task in ("geese_noexp", "geese_human")}
        (folder / f"results_{STAMP}.json").write_text(json.dumps(results))
        _geese_samples(folder, "geese_noexp", noexp[shift:] + noexp[:shift])
        _geese_samples(folder, "geese_human", human)
    out = tmp_path / "board"
    board = leaderboard.build_leaderboard([tmp_path / "runs"], out, {}, all_pairs=True)
    with (out / "geese_differences.csv").open(newline="", encoding="utf-8") as handle:
        return out, board, list(csv.DictReader(handle))


def test_effectiveness_and_two_runs_get_paired_differences(tmp_path: Path) -> None:
    out, board, rows = _two_runs(tmp_path, [1] * 12 + [1] * 4)  # 12 documents gained with the human hint
    effectiveness = [r for r in rows if r["kind"] == "same run" and r["a"] == "org/a"]
    assert len(effectiveness) == 1
    (row,) = effectiveness
    assert row["task"] == "geese_human" and row["metric"] == "acc" and row["docs"] == "16"
    assert float(row["difference"]) == pytest.approx(0.75) and row["significant"] == "True"
    assert float(row["p_value"]) == pytest.approx(mcnemar([[4, 12], [0, 0]], exact=True).pvalue)
    assert row["comparison"].startswith("org/a: effectiveness")  # each line names its model
    assert float(row["p_holm"]) >= float(row["p_value"])
    between = [r for r in rows if r["kind"] == "two runs" and r["task"] == "geese_noexp"]
    assert len(between) == 1 and between[0]["a"] == "org/a" and between[0]["b"] == "org/b"
    assert float(between[0]["difference"]) == 0.0 and between[0]["significant"] == "False"
    assert len(board.logged) == 4 and all(len(task.rows) == 16 for task in board.logged)
    assert "Paired differences" in (out / "geese.md").read_text()


def test_effectiveness_has_one_interval_in_the_summary_and_its_paired_test(tmp_path: Path) -> None:
    """GEESE's effectiveness under the number (summary, CSV, JSON) is its paired test's interval,
    McNemar's, as in the differences CSV (the summary showed a bootstrap interval beside it); with
    no document changed it has none, and says why (it showed [+0.0000, +0.0000])."""
    out, _, rows = _two_runs(tmp_path, [0] * 8 + [1] * 8)  # org/a: 4 gained; org/b: 5 gained, 1 lost
    export = json.loads((out / "geese.json").read_text(encoding="utf-8"))
    with (out / "geese.csv").open(newline="", encoding="utf-8") as handle:
        table = {row["model"]: row for row in csv.DictReader(handle)}
    for model in ("org/a", "org/b"):
        (line,) = [r for r in rows if r["kind"] == "same run" and r["a"] == model and r["task"] == "geese_human"]
        cell = next(r for r in export["rows"] if r["model"] == model)["headlines"]["geese_human/effectiveness"]
        assert cell["interval"] == line["test"] == MCNEMAR
        assert (cell["ci_low"], cell["ci_high"]) == (line["ci_low"], line["ci_high"])
        assert table[model]["geese_human/effectiveness interval"] == MCNEMAR
        assert table[model]["geese_human/effectiveness ci_low"] == line["ci_low"]
    out, _, rows = _two_runs(tmp_path / "same", [0] * 12 + [1] * 4)  # org/a: the hint changes no document
    cell = next(r for r in json.loads((out / "geese.json").read_text())["rows"] if r["model"] == "org/a")
    cell = cell["headlines"]["geese_human/effectiveness"]
    assert (cell["ci_low"], cell["ci_high"]) == ("", "") and cell["interval"] == f"none: {NO_CHANGE}"
    (line,) = [r for r in rows if r["kind"] == "same run" and r["a"] == "org/a" and r["task"] == "geese_human"]
    assert (line["ci_low"], line["ci_high"], line["no_interval"]) == ("", "", NO_CHANGE)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "[+0.0000, +0.0000]" not in page and "none: no document changed" in page


def test_a_runs_own_family_is_named_once_in_the_verdicts(tmp_path: Path) -> None:
    """The verdict under the summary read "Holm 1 within within org/a (1)"."""
    out, _, _ = _two_runs(tmp_path, [1] * 16)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "within within" not in page
    assert "Holm 0.000488 (family: within org/a, 1 test(s))" in page
