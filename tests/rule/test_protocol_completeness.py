"""The RULE protocol never takes a run cut short for a finished one (issue 17).

lm_eval writes the results file, then the samples file line by line; a kill in between
left a samples file cut short that the protocol used to read as a finished run (MainQ
moved from 7.3 to 4.0 with no warning) or choke on (a bare JSONDecodeError for a line cut
mid-way). Here a real zero-shot protocol run (lm_eval's offline ``dummy`` model over the
fixture's 21 RULE docs) is cut exactly so, then summarized and resumed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from custom_metrics.cli import main as cli
from custom_metrics.common.task_folders import TASKS_PATH
from custom_metrics.rule.metrics import Outcome, mainq_acc
from custom_metrics.rule.protocol import ARGS_FILE, SUMMARY_FILE, IncompleteRun, finished_samples, run_protocol
from tests.helpers import MIRROR

pytestmark = pytest.mark.e2e

COMMAND = ["rule-protocol", "--shots", "0", "--model", "dummy"]


def _protocol(out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "custom_metrics.cli", *COMMAND, "--output_path", str(out), *extra]
    env = {**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR)}
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=out.parent)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("protocol") / "rule0"
    done = _protocol(out)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def _copy(finished: Path, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    out = tmp_path / "rule0"
    shutil.copytree(finished, out)
    samples = next(out.glob("zeroshot/*/samples_rule_*.jsonl"))
    return out, samples, samples.read_text(encoding="utf-8").splitlines(keepends=True)


def _summarize(out: Path, capsys) -> tuple[int, str]:
    code = cli([*COMMAND, "--output_path", str(out), "--summarize-only"])
    return code, capsys.readouterr().err


def test_a_whole_run_is_finished(finished):
    rows, counts = finished_samples(finished / "zeroshot", "rule")
    assert len(rows) == counts["effective"] == counts["original"] == 21


def test_samples_cut_at_a_line_boundary_are_refused_not_summarized(finished, tmp_path, capsys):
    out, samples, lines = _copy(finished, tmp_path)
    kept = lines[:9]  # syn_1 and its subquestions, syn_2, syn_2_sub1, syn_3, syn_3_sub1
    # The probe's input: a file that still parses, but holds 3 of the 6 main questions.
    assert sum(json.loads(line)["mainq_acc"][2] == "main" for line in kept) == 3
    samples.write_text("".join(kept), encoding="utf-8")
    summary_before = (out / SUMMARY_FILE).read_bytes()
    code, err = _summarize(out, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{samples}: 9 samples where results_" in err and "counts 21: cut short" in err
    assert "without --summarize-only" in err
    assert (out / SUMMARY_FILE).read_bytes() == summary_before  # nothing summarized from the cut file


def test_a_line_cut_mid_way_names_file_and_line(finished, tmp_path, capsys):
    out, samples, lines = _copy(finished, tmp_path)
    samples.write_text("".join(lines[:13]) + lines[13][: len(lines[13]) // 2], encoding="utf-8")
    code, err = _summarize(out, capsys)
    assert code == 2 and "Traceback" not in err and "JSONDecodeError" not in err
    assert f"{samples}:14: not valid JSON" in err and "cut short or damaged" in err


def test_results_without_samples_or_cut_results_are_unfinished(finished, tmp_path):
    out, samples, _ = _copy(finished, tmp_path)
    samples.unlink()
    with pytest.raises(IncompleteRun, match="missing beside results_"):
        finished_samples(out / "zeroshot", "rule")
    results = next(out.glob("zeroshot/*/results_*.json"))
    results.write_text(results.read_text()[:500])
    with pytest.raises(IncompleteRun, match="not a whole results file") as caught:
        finished_samples(out / "zeroshot", "rule")
    assert caught.value.leftovers == (results,)


def test_a_cut_run_is_set_aside_and_run_again_to_the_same_numbers(finished, tmp_path):
    out, samples, lines = _copy(finished, tmp_path)
    samples.write_text("".join(lines[:9]), encoding="utf-8")
    again = _protocol(out)
    assert again.returncode == 0, again.stderr[-4000:]
    assert "[rule-protocol] rule: running again, " in again.stderr and "9 samples where" in again.stderr
    assert (samples.parent / (samples.name + ".incomplete")).is_file()
    assert len(list(out.glob("zeroshot/*/results_*.json"))) == 1  # the cut run no longer reads as a run
    rows, _ = finished_samples(out / "zeroshot", "rule")
    assert len(rows) == 21
    # lm_eval seeds the dummy model, so the rerun reproduces the whole run's numbers.
    assert json.loads((out / SUMMARY_FILE).read_text()) == json.loads((finished / SUMMARY_FILE).read_text())
    rerun = [Outcome.parse(sample["mainq_acc"]) for _, sample in rows]
    whole = [Outcome.parse(json.loads(line)["mainq_acc"]) for line in lines]
    assert mainq_acc(rerun) == mainq_acc(whole)


@pytest.mark.parametrize("damage", [b'{"shots": 5, "lm_eval', b"\xff\xfe"])
def test_a_damaged_settings_record_names_its_file_before_any_run(tmp_path, damage: bytes):
    (tmp_path / ARGS_FILE).write_bytes(damage)
    with pytest.raises(SystemExit, match=f"{ARGS_FILE}: not the JSON record .* restore or delete the file"):
        run_protocol(tmp_path, ["--model", "dummy"], 5, TASKS_PATH, "reclor")
    assert sorted(p.name for p in tmp_path.iterdir()) == [ARGS_FILE]  # nothing was started
