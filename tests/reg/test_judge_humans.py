"""A judge held against ChaosNLI's 100 human labels: the measures on hand-computed examples,
the ``reg_judge_humans`` scorer, and ``explain-eval judge-humans`` on a real (tiny) judge."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from custom_metrics.judge.human_agreement import item_agreement, summarize
from custom_metrics.judge.types import NLI_LABELS
from custom_metrics.reg.metrics import judge_humans_results, mean_comparable
from tests.reg.judges import tiny_judge_metadata


def _probs(values: list[float]) -> dict[str, float]:
    return dict(zip(NLI_LABELS, values, strict=True))


def _by_hand(human: list[float], judge: list[float]) -> tuple[float, float]:
    """JS distance and KL(human || judge) from their definitions (natural log), no scipy."""
    h, j = np.asarray(human), np.asarray(judge)
    m = (h + j) / 2

    def kl(p: np.ndarray, q: np.ndarray) -> float:
        return float(sum(a * math.log(a / b) for a, b in zip(p, q, strict=True) if a > 0))

    return math.sqrt((kl(h, m) + kl(j, m)) / 2), kl(h, j)


def test_a_judge_matching_the_crowd_is_at_distance_zero() -> None:
    item = item_agreement([50, 30, 20], "entailment", _probs([0.5, 0.3, 0.2]), "entailment")
    assert item.jsd == pytest.approx(0, abs=1e-7) and item.kl == pytest.approx(0, abs=1e-12) and item.correct


def test_a_confident_wrong_judge_by_hand() -> None:
    """Humans all say entailment, the judge says neutral for certain: M = (1/2, 1/2, 0), so the JS
    divergence is ln 2 and the distance sqrt(ln 2); KL is ln(1 / 1e-15) once the judge's zero is floored."""
    item = item_agreement([100, 0, 0], "entailment", _probs([0.0, 1.0, 0.0]), "neutral")
    assert item.jsd == pytest.approx(math.sqrt(math.log(2)), abs=1e-6)
    assert item.kl == pytest.approx(math.log(1 / 1e-15), rel=1e-6)
    assert not item.correct


def test_a_mixed_item_equals_the_definitions() -> None:
    human, judge = [0.6, 0.3, 0.1], [0.2, 0.5, 0.3]
    item = item_agreement([60, 30, 10], "entailment", _probs(judge), "neutral")
    jsd, kl = _by_hand(human, judge)
    assert (item.jsd, item.kl) == (pytest.approx(jsd, abs=1e-12), pytest.approx(kl, abs=1e-12))


def test_summary_means_and_counts_unparsed() -> None:
    items = [
        item_agreement([60, 30, 10], "entailment", _probs([0.2, 0.5, 0.3]), "neutral"),
        item_agreement([50, 30, 20], "entailment", _probs([0.5, 0.3, 0.2]), "entailment"),
        item_agreement([10, 10, 80], "contradiction", _probs([1 / 3, 1 / 3, 1 / 3]), "unparsed"),
    ]
    summary = summarize(items)
    assert summary.n == 3 and summary.acc == pytest.approx(1 / 3) and summary.unparsed == 1
    assert summary.jsd == pytest.approx(sum(item.jsd for item in items) / 3)
    assert math.isnan(summarize([]).jsd)


def test_bad_distributions_are_refused() -> None:
    with pytest.raises(ValueError, match="3 non-negative counts"):
        item_agreement([0, 0, 0], "entailment", _probs([0.5, 0.3, 0.2]), "entailment")
    with pytest.raises(ValueError, match="3 finite"):
        item_agreement([1, 1, 1], "entailment", _probs([math.nan, 0.3, 0.2]), "entailment")


def test_the_task_scores_the_softmax_of_the_label_words() -> None:
    """Log-likelihoods whose softmax is the crowd's distribution: distance zero, the majority right."""
    doc = {"uid": "1", "label_count": [20, 70, 10], "majority_label": "neutral"}
    result = judge_humans_results(doc, [(math.log(p) - 3.0, False) for p in (0.2, 0.7, 0.1)])
    assert result["jsd"] == pytest.approx(0, abs=1e-6) and result["acc"] == 1.0 and result["not_comparable"] == 0.0
    broken = judge_humans_results(doc, [(math.nan, False), (-1.0, False), (-2.0, False)])
    assert broken == {"jsd": None, "kl": None, "acc": 0.0, "not_comparable": 1.0}
    assert mean_comparable([0.2, None, 0.4]) == pytest.approx(0.3) and math.isnan(mean_comparable([None]))


def test_the_published_rows_are_chaosnli_mnli() -> None:
    """Transcribed from the ChaosNLI authors' script output (README, ChaosNLI-MNLI block), and on
    the leaderboard as references beside reg_judge_humans: ChaosNLI's rows, not REG's, each on
    all 1,599 items."""
    from custom_metrics.reg.published import CHAOSNLI_ORIGIN, chaosnli_rows, published_rows

    rows = chaosnli_rows()
    assert rows["RoBERTa-large"] == (0.3112, 0.8701, 0.6354)
    assert rows["BERT-base"] == (0.3055, 0.7204, 0.5591)
    assert len(rows) == 9
    shown = [row for row in published_rows() if row.origin == CHAOSNLI_ORIGIN]
    assert {row.model for row in shown} == set(rows) and all("not REG's" in row.setting for row in shown)
    roberta = next(row for row in shown if row.model == "RoBERTa-large")
    assert {key: float(value.value) for key, value in roberta.cells.items()} == {
        "reg_judge_humans/jsd": 0.3112,
        "reg_judge_humans/kl": 0.8701,
        "reg_judge_humans/acc": 0.6354,
    }
    assert {cell.n for row in shown for cell in row.cells.values()} == {1599}  # each on all items


def test_the_command_measures_a_real_judge(fixture_mirror: Path, tmp_path: Path, capsys) -> None:
    """A tiny classifier as judge on the fixture items: the command's numbers are the judge's own
    verdicts scored by the definitions, and the published rows are printed beside them."""
    from custom_metrics.judge.build import build_judge
    from custom_metrics.reg.data import load_items
    from custom_metrics.reg.judge_humans import main

    spec = tiny_judge_metadata(tmp_path)["judge"]
    out = tmp_path / "humans.json"
    assert main(["--judge", spec, "--judge-cache", str(tmp_path / "cache"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "RoBERTa-large (published) | 1,599 | 0.3112" in printed
    data = json.loads(out.read_text())
    [measured] = data["judges"].values()
    items = load_items()
    verdicts = build_judge(spec, cache_dir=tmp_path / "cache").judge([(d["premise"], d["hypothesis"]) for d in items])
    by_hand = [
        _by_hand([c / sum(d["label_count"]) for c in d["label_count"]], [v.probs[label] for label in NLI_LABELS])
        for d, v in zip(items, verdicts, strict=True)
    ]
    assert measured["n"] == len(items) == data["items"]
    assert measured["jsd"] == pytest.approx(np.mean([jsd for jsd, _ in by_hand]), abs=1e-9)
    assert measured["kl"] == pytest.approx(np.mean([kl for _, kl in by_hand]), abs=1e-9)
    assert measured["acc"] == pytest.approx(np.mean([v.label == d["majority_label"] for d, v in zip(items, verdicts)]))
    assert measured["verdicts"] == {"scores": len(items)}


def test_the_command_shows_its_progress_as_it_judges(
    fixture_mirror: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line on stderr before the judge loads and after each part of the items (5 here, 20 by
    default): 50 items were 64 s without a word, all 1,599 would be half an hour."""
    from custom_metrics.reg import judge_humans

    monkeypatch.setattr(judge_humans, "PROGRESS_ITEMS", 5)
    spec = tiny_judge_metadata(tmp_path)["judge"]
    assert judge_humans.main(["--judge", spec, "--judge-cache", str(tmp_path / "cache")]) == 0
    lines = capsys.readouterr().err.splitlines()
    progress = [line for line in lines if line.startswith("judge-humans: ")]
    assert progress[0].endswith(": loading, then 12 items"), lines
    assert [re.search(r": (\d+) of 12 items \(\d+ s\)$", line).group(1) for line in progress[1:]] == ["5", "10", "12"]


def test_a_judge_that_is_not_there_stops_before_any_item(fixture_mirror: Path, tmp_path: Path) -> None:
    from custom_metrics.common.errors import DataError
    from custom_metrics.reg.judge_humans import main

    with pytest.raises(DataError, match=r"--judge seqcls:.*nope"):
        main(["--judge", f"seqcls:{tmp_path / 'nope'}", "--judge-cache", str(tmp_path / "cache")])


def test_two_judges_whose_folders_share_a_name_keep_their_own_rows(fixture_mirror: Path, tmp_path: Path, capsys):
    """Two checkpoints both in a folder named ``judge`` read alike: the second judge's row
    replaced the first's, whose numbers were dropped without a word. Each keeps its row, named
    as ``rejudge`` names such judges (the display name and a hash of the spec)."""
    from custom_metrics.reg.judge_humans import main
    from tests.judge.conftest import tiny_seqcls
    from tests.reg.judges import NLI_ID2LABEL

    folders = [tiny_seqcls(tmp_path / lab / "judge", NLI_ID2LABEL, seed) for lab, seed in (("a", 1), ("b", 2))]
    specs = [f"seqcls:{folder}" for folder in folders]
    alone = []
    for spec in specs:  # each judge on its own: its numbers, under its plain name
        out = tmp_path / f"{len(alone)}.json"
        assert main(["--judge", spec, "--judge-cache", str(tmp_path / "cache"), "--out", str(out)]) == 0
        alone.append(json.loads(out.read_text())["judges"]["seqcls:judge"])
    out = tmp_path / "both.json"
    argv = ["--judge", specs[0], "--judge", specs[1], "--judge", specs[0], "--judge-cache", str(tmp_path / "cache")]
    capsys.readouterr()
    assert main([*argv, "--out", str(out)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| seqcls:judge")]
    judges = json.loads(out.read_text())["judges"]
    assert len(rows) == 2 and len(judges) == 2  # the judge given twice is measured once
    assert [name.split(" #")[0] for name in judges] == ["seqcls:judge"] * 2 and len(set(judges)) == 2
    assert list(judges.values()) == alone and alone[0] != alone[1]
    assert all(row.startswith(f"| {name} |") for row, name in zip(rows, judges))
