"""Another tool's results file under a runs folder is named as such, never shown as a run.

A lighteval results file (``results/<model>/results_<time>.json``, as lighteval writes it:
``config_general``, ``results`` keyed ``suite|task|shots`` plus an ``all`` average,
``versions``, ``config_tasks``, ``summary_tasks``, ``summary_general``) used to read as two
"OTHER · unnamed model" rows, one of them its ``all`` average.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from custom_metrics.common.results import load_runs, other_tool
from tests.helpers import LEADERBOARD_FIXTURES

SCORES = {"acc": 0.52, "acc_stderr": 0.014, "acc_norm": 0.55, "acc_norm_stderr": 0.014}
LIGHTEVAL = {
    "config_general": {
        "lighteval_sha": "0f9b4b8c1c8e4b1d8a1c2b1f0e9d8c7b6a5f4e3d",
        "num_fewshot_seeds": 1,
        "max_samples": None,
        "job_id": "",
        "start_time": 1764547200.0,
        "end_time": 1764547500.0,
        "total_evaluation_time_secondes": "300.0",
        "model_name": "meta-llama/Llama-3.1-8B",
        "model_sha": "",
        "model_dtype": "torch.bfloat16",
        "model_size": "15.0 GB",
    },
    "results": {"leaderboard|arc:challenge|25": SCORES, "all": SCORES},
    "versions": {"leaderboard|arc:challenge|25": 0},
    "config_tasks": {"leaderboard|arc:challenge": {"name": "arc:challenge", "suite": ["leaderboard"]}},
    "summary_tasks": {"leaderboard|arc:challenge|25": {"hashes": {}, "truncated": 0, "padded": 0}},
    "summary_general": {"hashes": {}, "truncated": 0, "padded": 0},
}


def test_a_lighteval_results_file_is_named_and_the_lm_eval_runs_stay(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(LEADERBOARD_FIXTURES / "harness-0.4.0", runs / "harness-0.4.0")
    foreign = runs / "lighteval" / "results" / "meta-llama" / "Llama-3.1-8B" / "results_2026-12-01T00-00-00.json"
    foreign.parent.mkdir(parents=True)
    foreign.write_text(json.dumps(LIGHTEVAL))
    found, problems = load_runs([runs])
    assert found and all(run.path != foreign for run in found)  # the lm-eval file still gives its runs
    (problem,) = problems
    assert problem.path == foreign and problem.reason.startswith("a lighteval results file, not lm-eval's")
    assert other_tool({"results": LIGHTEVAL["results"]}) == "lighteval"  # by its task names alone
    assert other_tool({"results": {"geese_noexp": SCORES}}) is None
