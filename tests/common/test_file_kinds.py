"""``ibe score`` and ``reg-analysis`` name the kind of file they were given and the one they
need, with the command that makes it.

Before, ``ibe score results_<ts>.json`` said "line 1: not valid JSON" (true of a
pretty-printed results file read as JSONL, and no help), and a samples file of another task
failed on a missing field. The files here are a real lm-eval run's (one results file and
the samples files it wrote beside it); each command runs through ``explain-eval``'s main.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from custom_metrics.cli import main as cli
from tests.helpers import FIXTURES

RUN = FIXTURES / "leaderboard" / "demo-generation" / "__root__.cache__explain-eval__smollm2-135m-instruct-hf"
STAMP = "2026-12-01T01-15-05.988826"
RESULTS = RUN / f"results_{STAMP}.json"
IBE_SAMPLES = RUN / f"samples_ibe_copa_{STAMP}.jsonl"
REG_SAMPLES = RUN / f"samples_reg_chaos_{STAMP}.jsonl"


def _features(tmp_path: Path) -> Path:
    path = tmp_path / "ibe" / "features.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"ibe_features": {"complete": True, "rows": 0}}) + "\n")
    return path


def _run(command: str, path: Path, tmp_path: Path, capsys) -> str:
    code = cli([*command.split(), str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()  # refused before anything was written
    return err


def test_ibe_score_names_a_results_file_and_the_samples_beside_it(tmp_path, capsys) -> None:
    err = _run("ibe score", RESULTS, tmp_path, capsys)
    assert f"{RESULTS}: this is an lm-eval results file (results_*.json); ibe score needs the samples file" in err
    assert f"lm-eval wrote it beside this file: {IBE_SAMPLES}." in err and "reg_chaos" not in err
    assert "not valid JSON" not in err


def test_a_results_file_under_another_name_is_known_by_its_content(tmp_path, capsys) -> None:
    renamed = shutil.copy(RESULTS, tmp_path / "run.json")
    err = _run("ibe score", Path(renamed), tmp_path, capsys)
    assert "this is an lm-eval results file" in err and "Make it with: lm_eval --model hf" in err
    assert "--tasks ibe_copa,ibe_ecare" in err and "--log_samples" in err


def test_ibe_score_names_another_tasks_samples_and_a_features_file(tmp_path, capsys) -> None:
    err = _run("ibe score", REG_SAMPLES, tmp_path, capsys)
    assert f"{REG_SAMPLES}: this is the samples file of an lm-eval reg_chaos run; ibe score needs" in err
    assert "samples_ibe_copa_<time>.jsonl" in err and "Make it with: lm_eval" in err
    features = _features(tmp_path)
    err = _run("ibe score", features, tmp_path, capsys)
    assert "this is an IBE features file, written by `explain-eval ibe score`" in err
    assert f"`explain-eval ibe report {features.parent}` reads this one" in err


def test_reg_analysis_names_each_wrong_kind_and_the_command_that_makes_the_right_one(tmp_path, capsys) -> None:
    err = _run("reg-analysis", RESULTS, tmp_path, capsys)
    assert "this is an lm-eval results file" in err and f"lm-eval wrote it beside this file: {REG_SAMPLES}." in err
    err = _run("reg-analysis", IBE_SAMPLES, tmp_path, capsys)
    assert "this is the samples file of an lm-eval ibe_copa run; reg-analysis needs the samples file of a " in err
    assert "--tasks reg_chaos_thinking" in err
    err = _run("reg-analysis", _features(tmp_path), tmp_path, capsys)
    assert "this is an IBE features file" in err and "reg-analysis needs" in err


@pytest.mark.parametrize("command", ["ibe score", "reg-analysis"])
def test_the_right_kind_still_gets_past_the_check(command: str, tmp_path, capsys) -> None:
    """A samples file of the right task, and a plain JSONL file of any name, reach the readers."""
    right = IBE_SAMPLES if command == "ibe score" else REG_SAMPLES
    renamed = Path(shutil.copy(right, tmp_path / "rows.jsonl"))
    if command == "ibe score":
        from ibe_postprocess.inputs import read_inputs

        for path in (right, renamed):
            records, _ = read_inputs([path])
            assert records
    else:
        from custom_metrics.reg.analysis import parse_inputs

        assert parse_inputs([str(right), f"{renamed}=other"]) == [(right, RUN.name), (renamed, "other")]


def test_the_papers_file_kinds_come_from_their_packages(tmp_path) -> None:
    """``common`` names no paper: IBE's header keys and RULE's file names are the packages' own,
    the same keys the IBE files are written with."""
    from custom_metrics.common import file_kinds
    from ibe_postprocess import features_file, report_file

    names, headers = file_kinds.paper_kinds()
    assert {features_file.HEADER_KEY, report_file.HEADER_KEY} <= set(headers)
    assert file_kinds.file_kind(_features(tmp_path)).kind == "ibe_features"
    assert file_kinds.file_kind(tmp_path / "rule_protocol_summary.json").kind == "rule_summary"
    assert "rule_protocol_args.json" in names
