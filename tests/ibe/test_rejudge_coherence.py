"""IBE's coherence judged again by ``explain-eval rejudge`` (``ibe_postprocess.rejudge``).

On the demo's real features folder (``tests/fixtures/leaderboard/demo-generation/ibe``: SmolLM2's
COPA explanations, coherence by the embedded model): the folder's own judge read back gives the
numbers its ``ibe report`` wrote, and one tiny NLI classifier judging the logged IF-THEN steps
again through the real command gives, per explanation, the mean P(entailment) - P(contradiction)
of the verdicts the same classifier gives when asked directly, with the features file untouched
and a rerun asking the judge nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from custom_metrics.cli import main
from custom_metrics.common.rejudging import AGAIN, GOLD, RUN_JUDGE
from custom_metrics.judge.ensemble import VOTE
from custom_metrics.judge.seqcls import SeqClsJudge
from custom_metrics.judge.spec import parse_spec
from ibe_postprocess import features_file
from ibe_postprocess import rejudge as ibe_rejudge
from ibe_postprocess.folder import FeaturesFolder
from tests.helpers import LEADERBOARD_FIXTURES

DEMO = LEADERBOARD_FIXTURES / "demo-generation" / "ibe"


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE_CACHE", str(tmp_path / "verdicts"))
    shutil.copytree(DEMO, tmp_path / "ibe")
    return tmp_path / "ibe"


def test_the_folders_own_judge_reads_back_as_its_report() -> None:
    rows = features_file.read(FeaturesFolder(DEMO)).rows
    rater, note = ibe_rejudge.rater("own", RUN_JUDGE, rows, ibe_rejudge._own_verdicts(rows), None)
    # coherence pick by hand: per question, the option with the larger logged coherence
    expected = {}
    for row in rows:
        if row["coherence"] is not None and row["coherence"] > expected.get(row["qid"], (None, -2.0))[1]:
            expected[row["qid"]] = (str(row["option"]), row["coherence"])
    assert rater.decisions["coherence pick"] == {qid: option for qid, (option, _) in expected.items()}
    correct = {row["qid"]: str(row["option"]) for row in rows if row["correct"]}
    hits = sum(option == correct[qid] for qid, (option, _) in expected.items())
    assert rater.metrics["coherence picks correct"] == (hits, len(expected))
    steps = [step for row in rows for step in row["step_coherence"]]
    entailed = sum(s["entailment"] > max(s["contradiction"], 1 - s["entailment"] - s["contradiction"]) for s in steps)
    assert rater.metrics["steps entailed"] == (entailed, len(steps)) and len(steps) > 0
    report = json.loads((DEMO / "report.json").read_text())
    table = {entry["row"]: entry["accuracy"] for entry in report["datasets"]["copa"]["table1"]}
    coefficient = report["selector"]["fits"]["copa"]["coefficients"]["coherence"]
    assert f"Table 1 Coherence alone: copa {table['Coherence']:.3f} (2 questions)" in note
    assert f"all five criteria (IBE-Eval): copa {table['+ Linguistic Uncertainty']:.3f}" in note
    assert f"coherence coefficient {round(coefficient, 4)}" in note
    assert set(rater.decisions["selector pick"]) == {row["qid"] for row in rows if row["split"] == "test"}


def test_the_coherence_judged_again_through_rejudge(folder: Path, tiny_nli: Path, monkeypatch, capsys) -> None:
    spec = f"seqcls:{tiny_nli}"
    before = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file() and "cache" not in path.parts}
    assert main(["rejudge", str(folder), "--judge", spec]) == 0
    assert {path: path.read_bytes() for path in before} == before  # the features file and report untouched
    (judged,) = folder.glob("rejudge/*/coherence.jsonl")
    header, *lines = [json.loads(line) for line in judged.read_text().splitlines()]
    assert header["ibe_rejudge"]["judge"] == spec
    rows = features_file.read(FeaturesFolder(folder)).rows
    pairs = sorted({(s["if"], s["then"]) for row in rows for s in row["step_coherence"]})
    direct = dict(zip(pairs, SeqClsJudge(parse_spec(spec)).judge(pairs)))  # other batches: last bits may differ
    for row, line in zip(rows, lines):
        assert (line["qid"], line["option"]) == (row["qid"], row["option"])
        verdicts = [direct[s["if"], s["then"]] for s in row["step_coherence"]]
        if not verdicts:
            assert line["coherence"] is None
            continue
        mean = sum(v.probs["entailment"] - v.probs["contradiction"] for v in verdicts) / len(verdicts)
        assert line["coherence"] == pytest.approx(mean, abs=1e-5)

    (table,) = folder.glob("rejudge/agreement_features.json")
    report = json.loads(table.read_text())
    assert [r["role"] for r in report["raters"]] == [RUN_JUDGE, AGAIN, VOTE, GOLD]
    assert report["task"] == "ibe_copa_coherence" and report["vote"]["voters"][1] == f"seqcls:{tiny_nli.name}"
    decided = {(row["decision"], row["a"], row["b"]) for row in report["agreement"]}
    assert ("selector pick", f"seqcls:{tiny_nli.name}", "gold: the correct option") in decided
    assert "### Metrics per judge" in capsys.readouterr().out

    def asked(*args, **kwargs):
        raise AssertionError("the judge was asked again: its chunks are in the folder's cache")

    monkeypatch.setattr(SeqClsJudge, "judge", asked)
    text = judged.read_bytes()
    assert main(["rejudge", str(folder), "--judge", spec]) == 0
    assert judged.read_bytes() == text
