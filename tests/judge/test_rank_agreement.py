"""Kendall's tau-b between the raters' rankings of runs (``custom_metrics.judge.agreement``):
a hand-computed example checked against scipy, its bootstrap interval recomputed as documented,
and undefined (never a number) with fewer than three runs or a rater that ranks nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau

from custom_metrics.common.rejudging import AGAIN, GOLD, RUN_JUDGE, Rater, RejudgedTask
from custom_metrics.judge.agreement import RESAMPLES, SEED, compare, markdown, rankings, tau_b


def _outcomes(*hits: int, items: int = 4) -> list[dict[str, bool]]:
    """One run per count: ``items`` items of which the first ``hits`` succeed."""
    return [{f"i{k}": k < hit for k in range(items)} for hit in hits]


# Shares A: .25 1 .75 .75; B: .5 .75 .75 .25. Of the 6 pairs of runs: (1,2) (1,3) (2,4) concordant,
# (1,4) discordant, (2,3) tied in B, (3,4) tied in A: tau-b = (3 - 1) / sqrt((6 - 1) * (6 - 1)) = 0.4.
RUNS_A, RUNS_B = _outcomes(1, 4, 3, 3), _outcomes(2, 3, 3, 1)


def test_tau_b_of_a_hand_computed_ranking_is_scipys() -> None:
    result = compare("A", "B", RUNS_A, RUNS_B)
    assert result.tau == pytest.approx(0.4, abs=1e-12) and result.runs == 4 and result.undefined == ""
    assert kendalltau([0.25, 1, 0.75, 0.75], [0.5, 0.75, 0.75, 0.25], variant="b").statistic == pytest.approx(0.4)
    low, high = result.interval
    assert -1 <= low <= 0.4 <= high <= 1


def test_the_interval_is_the_documented_bootstrap_over_items_within_runs() -> None:
    """Each run's items drawn with replacement (one draw for both raters), tau-b by scipy on each."""
    rng = np.random.default_rng(SEED)
    draws = [rng.integers(0, 4, size=(RESAMPLES, 4)) for _ in RUNS_A]
    a, b = ([np.array([run[f"i{k}"] for k in range(4)], dtype=float) for run in runs] for runs in (RUNS_A, RUNS_B))
    means_a = np.stack([run[draw].mean(axis=1) for run, draw in zip(a, draws)], axis=1)  # resamples x runs
    means_b = np.stack([run[draw].mean(axis=1) for run, draw in zip(b, draws)], axis=1)
    # NaN where one ranking is constant
    values = np.array([kendalltau(x, y, variant="b").statistic for x, y in zip(means_a, means_b)])
    defined = values[~np.isnan(values)]
    result = compare("A", "B", RUNS_A, RUNS_B)
    assert result.interval == pytest.approx((np.percentile(defined, 2.5), np.percentile(defined, 97.5)))
    assert result.resamples_undefined == int(np.isnan(values).sum()) > 0


def test_the_vectorised_tau_b_is_scipys_with_ties() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 3, size=(50, 5)).astype(float), rng.integers(0, 3, size=(50, 5)).astype(float)
    ours = tau_b(x, y)
    for row, value in enumerate(ours):
        expected = kendalltau(x[row], y[row], variant="b").statistic
        assert (np.isnan(value) and np.isnan(expected)) or value == pytest.approx(expected, abs=1e-12)


def test_fewer_than_three_runs_or_a_constant_ranking_is_undefined() -> None:
    two = compare("A", "B", RUNS_A[:2], RUNS_B[:2])
    assert two.tau is None and two.interval is None and two.undefined == "2 runs scored by both (tau-b needs 3)"
    flat = compare("A", "B", RUNS_A, _outcomes(2, 2, 2, 2))
    assert flat.tau is None and flat.undefined == "B gave every run the same value (no ranking)"
    missing = compare("A", "B", RUNS_A, [*RUNS_B[:2], {}, {}])  # B scores two of the runs only
    assert missing.tau is None and missing.runs == 2


def test_the_runs_of_one_task_are_ranked_by_every_rater() -> None:
    tasks = [
        RejudgedTask(
            "t",
            Path(f"/runs/m{index}/samples.jsonl"),
            Path(f"/runs/m{index}"),
            (
                Rater("A", RUN_JUDGE, {}, {}, None, {"success": a}),
                Rater("B", AGAIN, {}, {}, None, {"success": b}),
                Rater("gold", GOLD, {}),
            ),
            (),
            ("success",),
            headline="success",
        )
        for index, (a, b) in enumerate(zip(RUNS_A, RUNS_B))
    ]
    (ranking,) = rankings(tasks)
    assert ranking.scores == {"A": (0.25, 1.0, 0.75, 0.75), "B": (0.5, 0.75, 0.75, 0.25)}
    (pair,) = ranking.pairs
    assert (pair.a, pair.b) == ("A", "B") and pair.tau == pytest.approx(0.4)
    text = markdown(ranking, ["m0", "m1", "m2", "m3"])
    assert "| m1 | 1.000 | 0.750 |" in text and "| A | B | 4 | 0.400 | [" in text
    assert rankings(tasks[:1]) == []  # one run: nothing to rank
