"""The RULE protocol never takes a run cut short for a finished one, and resumes by running
only what is not finished.

lm_eval writes the results file, then the samples file line by line; a kill in between
left a samples file cut short that the protocol used to read as a finished run (MainQ
moved from 7.3 to 4.0 with no warning) or choke on (a bare JSONDecodeError for a line cut
mid-way). Here the shared real runs (``conftest.py``: lm-eval's offline ``dummy`` model over
the fixture) are laid out as a protocol folder, cut exactly so, summarized and resumed; the
runner test starts the real protocol command, which starts ``lm_eval`` for the one split
that needs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from custom_metrics.cli import main as cli
from custom_metrics.common.task_folders import TASKS_PATH
from custom_metrics.rule.protocol import ARGS_FILE, SUMMARY_FILE, IncompleteRun, finished_samples, run_protocol
from tests.rule.conftest import DUMMY, ENV

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("fixture_mirror")]  # the in-process summaries read it

FIVE_SHOT = ["rule-protocol", *DUMMY]
ONE_SHOT_COT = ["rule-protocol", "--shots", "1", "--demos", "cot", *DUMMY]


def _summarize(command: list[str], out: Path, capsys) -> tuple[int, str]:
    code = cli([*command, "--output_path", str(out), "--summarize-only"])
    return code, capsys.readouterr().err


@pytest.fixture()
def finished(dummy_runs, tmp_path, capsys) -> Path:
    """The five-shot-on-ReClor splits as a finished protocol folder, summarized once."""
    out = dummy_runs.layout(tmp_path / "rule5", 5)
    assert _summarize(FIVE_SHOT, out, capsys)[0] == 0
    return out


def _samples(out: Path, split: int) -> tuple[Path, list[str]]:
    samples = next(out.glob(f"split{split}/*/samples_*.jsonl"))
    return samples, samples.read_text(encoding="utf-8").splitlines(keepends=True)


def test_a_whole_run_is_finished(finished):
    rows, counts = finished_samples(finished / "split2", "rule_5shot_split2")
    assert len(rows) == counts["effective"] == counts["original"] == 4  # syn_1_sub4, syn_2, syn_2_sub1, syn_6_sub3


def test_samples_cut_at_a_line_boundary_are_refused_not_summarized(finished, capsys):
    samples, lines = _samples(finished, 2)
    samples.write_text("".join(lines[:2]), encoding="utf-8")  # still parses: syn_1_sub4 and syn_2 only
    summary_before = (finished / SUMMARY_FILE).read_bytes()
    code, err = _summarize(FIVE_SHOT, finished, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{samples}: 2 samples where results_" in err and "counts 4: cut short" in err
    assert "without --summarize-only" in err
    assert (finished / SUMMARY_FILE).read_bytes() == summary_before  # nothing summarized from the cut file


def test_a_line_cut_mid_way_names_file_and_line(finished, capsys):
    samples, lines = _samples(finished, 2)
    samples.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2], encoding="utf-8")
    code, err = _summarize(FIVE_SHOT, finished, capsys)
    assert code == 2 and "Traceback" not in err and "JSONDecodeError" not in err
    assert f"{samples}:3: not valid JSON" in err and "cut short or damaged" in err


def test_results_without_samples_or_cut_results_are_unfinished(finished):
    samples, _ = _samples(finished, 2)
    samples.unlink()
    with pytest.raises(IncompleteRun, match="missing beside results_"):
        finished_samples(finished / "split2", "rule_5shot_split2")
    results = next(finished.glob("split2/*/results_*.json"))
    results.write_text(results.read_text()[:500])
    with pytest.raises(IncompleteRun, match="not a whole results file") as caught:
        finished_samples(finished / "split2", "rule_5shot_split2")
    assert caught.value.leftovers == (results,)


def test_the_protocol_keeps_finished_splits_and_runs_a_cut_one_again(dummy_runs, tmp_path, capsys):
    """One-shot chain of thought (generated answers): the real command keeps splits 1, 2, 4 and 5,
    sets split 3's cut samples aside, runs it again and summarizes the same numbers as the whole runs."""
    whole = dummy_runs.layout(tmp_path / "whole", 1, "cot")
    assert _summarize(ONE_SHOT_COT, whole, capsys)[0] == 0
    out = dummy_runs.layout(tmp_path / "cot1", 1, "cot")
    samples, lines = _samples(out, 3)
    samples.write_text(lines[0], encoding="utf-8")
    command = [sys.executable, "-m", "custom_metrics.cli", *ONE_SHOT_COT, "--output_path", str(out)]
    again = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **ENV}, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-4000:]
    assert again.stderr.count("done earlier, kept") == 4 and "running rule_1shot_cot_split3" in again.stderr
    assert (
        "[rule-protocol] rule_1shot_cot_split3: running again, " in again.stderr and "1 samples where" in again.stderr
    )
    assert (samples.parent / (samples.name + ".incomplete")).is_file()
    assert len(list(out.glob("split3/*/results_*.json"))) == 1  # the cut run no longer reads as a run
    summary = json.loads((out / SUMMARY_FILE).read_text())
    assert summary == json.loads((whole / SUMMARY_FILE).read_text())
    # the dummy model writes "lol": every answer is unread, counted wrong and said so
    assert summary["unparsed"]["3"] == {"unread": len(lines), "docs": len(lines)}
    assert "| Table 6, one-shot on ReClor, CoT |" in again.stdout and "no readable answer" in again.stdout

    # Resuming a finished protocol runs nothing; other settings are refused before any run.
    assert cli([*ONE_SHOT_COT, "--output_path", str(out)]) == 0
    assert capsys.readouterr().err.count("done earlier, kept") == 5
    for changed in (["--limit", "2"], ["--demos", "rule"], ["--shots", "5"]):
        with pytest.raises(SystemExit, match="other settings"):
            cli([*ONE_SHOT_COT, *changed, "--output_path", str(out)])
    with pytest.raises(SystemExit):
        cli(["rule-protocol", "--shots", "0", "--demos", "rule", *DUMMY, "--output_path", str(out)])
    assert "zero-shot has none" in capsys.readouterr().err


@pytest.mark.parametrize("damage", [b'{"shots": 5, "lm_eval', b"\xff\xfe"])
def test_a_damaged_settings_record_names_its_file_before_any_run(tmp_path, damage: bytes):
    (tmp_path / ARGS_FILE).write_bytes(damage)
    with pytest.raises(SystemExit, match=f"{ARGS_FILE}: not the JSON record .* restore or delete the file"):
        run_protocol(tmp_path, ["--model", "dummy"], 5, TASKS_PATH, "reclor")
    assert sorted(p.name for p in tmp_path.iterdir()) == [ARGS_FILE]  # nothing was started
