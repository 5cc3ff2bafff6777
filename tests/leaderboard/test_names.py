"""Model names people recognise: embedded models by name, Hub ids as given, local paths by
their last component, ``--name`` overrides, and one row per sweep model (harness + IBE)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import custom_metrics.leaderboard.build as leaderboard
from custom_metrics.common.results import friendly_model_name, load_runs, rename
from custom_metrics.leaderboard.tables import build_tables
from ibe_postprocess.provenance import provenance_of
from tests.helpers import LEADERBOARD_FIXTURES
from tests.leaderboard.test_leaderboard import modern_results, read_csv


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("/root/.cache/explain-eval/gemma-3-270m-hf", "gemma-3-270m (embedded)"),
        ("/home/me/.cache/explain-eval/smollm2-135m-instruct-hf/", "SmolLM2-135M-Instruct (embedded)"),
        ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("gpt2", "gpt2"),
        ("/scratch/$USER/ckpt_$SLURM_JOB_ID", "ckpt_$SLURM_JOB_ID"),
        ("./runs/final/", "final"),
        ("C:\\models\\my-model", "my-model"),
        ("/data/hub/models--Qwen--Qwen3.5-9B/snapshots/0123abcd", "Qwen/Qwen3.5-9B"),
        ("gemma-3-270m-hf", "gemma-3-270m-hf"),  # a bare name is not a path: as given
        ("  ", "unnamed model"),
    ],
)
def test_friendly_model_names(raw: str, shown: str) -> None:
    assert friendly_model_name(raw) == shown


def test_results_show_the_friendly_name_and_keep_the_recorded_one(tmp_path: Path) -> None:
    data = modern_results("/scratch/me/ckpt_17", {"geese_noexp": 0.5}, 1.0)
    (tmp_path / "results_1.json").write_text(json.dumps(data))
    (run,) = load_runs([tmp_path])[0]
    assert (run.model, run.model_id) == ("ckpt_17", "/scratch/me/ckpt_17")
    # --name matches either the shown or the recorded name.
    assert rename([run], {"ckpt_17": "mine"})[0].model == "mine"
    assert rename([run], {"/scratch/me/ckpt_17": "mine too"})[0].model == "mine too"
    assert rename([run], {"other": "x"})[0].model == "ckpt_17"


def test_name_option_renames_rows(tmp_path: Path, capsys) -> None:
    data = modern_results("/scratch/me/ckpt_17", {"geese_noexp": 0.5}, 1.0)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "results_1.json").write_text(json.dumps(data))
    out = tmp_path / "board"
    assert leaderboard.main([str(tmp_path / "runs"), "--out", str(out), "--name", "ckpt_17=my model=v2"]) == 0
    assert "my model=v2" in {row["model"] for row in read_csv(out / "geese.csv").values()}
    printed = capsys.readouterr().out
    assert f"leaderboard page: {out.resolve() / 'index.html'}" in printed
    assert f"sample viewer:    {out.resolve() / 'samples' / 'index.html'}" in printed
    with pytest.raises(SystemExit):
        leaderboard.main([str(tmp_path / "runs"), "--out", str(out), "--name", "no-equals-sign"])


def test_provenance_records_the_friendly_name(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    results = modern_results("/root/.cache/explain-eval/gemma-3-270m-hf", {"ibe_copa": 0.5}, 1.0)
    (folder / "results_t1.json").write_text(json.dumps(results))
    samples = folder / "samples_ibe_copa_t1.jsonl"
    samples.write_text("{}\n")
    assert provenance_of([samples])["model"] == "gemma-3-270m (embedded)"


def test_sweep_pair_with_ibe_report_is_one_row(tmp_path: Path) -> None:
    """Issue 17: the harness rows took the sweep's name, the IBE rows the report's model."""
    sweep = tmp_path / "sweep"
    shutil.copytree(LEADERBOARD_FIXTURES / "ibe-report", sweep)
    report = sweep / "gemma-fp32" / "ibe_copa" / "ibe" / "report.json"
    text = report.read_text().replace('"/ckpt"', '"/ckpt/elsewhere"')  # the model, judging itself
    report.write_text(text)  # provenance from the checkpoint: a different name than the sweep's
    runs, problems = load_runs([sweep])
    from custom_metrics.ibe.selection import load_ibe_tables

    ibe_runs, ibe_problems = load_ibe_tables([sweep])
    assert problems == ibe_problems == []
    ibe = next(table for table in build_tables(runs + ibe_runs) if table.key == "ibe")
    (row,) = [row for row in ibe.rows if row.kind == "run"]
    assert row.model == "gemma-fp32"
    assert {"ibe_copa/well_formed", "ibe_copa_selection/cum_uncertainty", "ibe_judge_copa/acc"} <= set(row.cells)
