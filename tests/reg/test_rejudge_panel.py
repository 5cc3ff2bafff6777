"""``explain-eval rejudge`` over several runs with several judges: the vote of the judges as one more
rater, and the runs' rankings compared across raters, through the real command.

Two copies of the demo's real REG run (``tests/fixtures/leaderboard/demo-generation``: SmolLM2, two
documents, judged by the embedded model) stand for two models' runs, judged again in one command by
two tiny random NLI classifiers (built in a second; their labels differ from the run's judge and from
each other, so the vote has a verdict on one item and a three-way tie on the other). The expected
vote is counted here straight from each rater's logged samples file.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from custom_metrics.cli import main
from custom_metrics.judge.ensemble import VOTE
from custom_metrics.reg.judging import read_record
from tests.helpers import LEADERBOARD_FIXTURES
from tests.reg.judges import tiny_judge_metadata


@pytest.fixture(autouse=True)
def verdict_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_mirror: Path) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE_CACHE", str(tmp_path / "verdicts"))


def _initial(path: str) -> dict[str, str]:
    samples = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return {s["doc"]["uid"]: read_record(s["filtered_resps"][0])["initial"]["label"] for s in samples}


def test_the_judges_vote_and_two_runs_rankings_through_rejudge(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    for model in ("model-a", "model-b"):
        # the REG run only: the demo's IBE features folder is judged again in tests/ibe/test_rejudge_coherence.py
        shutil.copytree(LEADERBOARD_FIXTURES / "demo-generation", runs / model, ignore=shutil.ignore_patterns("ibe"))
    judges = [tiny_judge_metadata(tmp_path, seed=seed)["judge"] for seed in (1, 4)]
    assert main(["rejudge", str(runs), *(a for j in judges for a in ("--judge", j)), "--judge-check", "warn"]) == 0
    out = capsys.readouterr().out

    (table,) = (runs / "model-a").glob("*/rejudge/agreement_*.json")
    report = json.loads(table.read_text())
    files = [rater["file"] for rater in report["raters"] if rater["file"]]
    assert len(files) == 3  # the run's own judge and the two judged again
    labels = [_initial(path) for path in files]
    expected, tied = {}, []
    for item in labels[0]:
        counts = Counter(judge[item] for judge in labels).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            tied.append(item)
        else:
            expected[item] = counts[0][0]
    assert expected and tied, "the fixture should give the vote one verdict and one tie"
    (vote,) = [rater for rater in report["raters"] if rater["role"] == VOTE]
    # N is voted from each judge's in-N outcome (contradiction or not), not from its three-way label
    in_n = [Counter(judge[item] == "contradiction" for judge in labels).most_common(1)[0][0] for item in labels[0]]
    assert vote["name"] == "vote of 3 judges" and (vote["metrics"]["N"]["count"], vote["metrics"]["N"]["of"]) == (
        sum(in_n),
        len(in_n),  # three judges on yes/no: never a tie
    )
    assert report["vote"]["decisions"]["J(p, h)"] == {
        "voted": len(expected),
        "tied": len(tied),
        "tied_items": sorted(tied),
        "one_voter": 0,
    }
    rows = [row for row in report["agreement"] if row["decision"] == "J(p, h)" and row["b"] == "vote of 3 judges"]
    assert len(rows) == 3 and all(row["n"] == len(expected) for row in rows)  # each judge against the vote
    assert any(r["a"] == "vote of 3 judges" and r["b"].startswith("gold") for r in report["agreement"])
    assert "vote" not in json.dumps(report["spread"])

    ranking = json.loads((runs / "rejudge" / "rank_agreement_reg_chaos.json").read_text())
    assert len(ranking["runs"]) == 2 and ranking["metric"] == "success"
    assert ranking["rank_agreement"] and all(pair["kendall_tau_b"] is None for pair in ranking["rank_agreement"])
    assert all("(tau-b needs 3)" in pair["undefined"] for pair in ranking["rank_agreement"])
    assert "## reg_chaos: the runs ranked by each rater's success" in out and "| undefined | – |" in out
