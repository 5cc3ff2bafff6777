"""One lm_eval per model (custom_metrics/sweep/batch.py): its pending tasks together, the pair
folders as one lm_eval per pair leaves them, resume per task, a failed shared run retried
task by task, a shared run finished after its sweep died adopted; the plan of a large sweep."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import custom_metrics.sweep.command as sweep_command
import custom_metrics.sweep.runner as sweep
from custom_metrics.common.results import load_runs
from custom_metrics.sweep import batch, child
from custom_metrics.sweep.runner import SweepOptions
from tests.sweep import fakes

TASKS = ["geese_noexp", "geese_human", "rule_main"]


@pytest.fixture()
def ran(monkeypatch, tmp_path: Path):
    """lm_eval replaced by tests/sweep/fakes.py; returns the (model, tasks) runs since the last call."""
    monkeypatch.setattr(sweep, "lm_eval_command", fakes.fake_lm_eval_command)
    return lambda: fakes.ran(options(tmp_path, []))


def options(tmp_path: Path, tasks: list[str], models: str = "a::pretrained=x b::pretrained=y") -> SweepOptions:
    return SweepOptions(models=sweep.parse_models(models), tasks=tasks, out=tmp_path / "sweep")


def test_each_model_runs_its_pending_tasks_in_one_lm_eval_into_the_usual_pair_folders(tmp_path: Path, ran) -> None:
    opts = options(tmp_path, TASKS)
    outcomes = batch.run_sweep(opts)
    assert ran() == [("a", ",".join(TASKS)), ("b", ",".join(TASKS))]  # two starts, not six
    assert [(o.model, o.task, o.status) for o in outcomes] == [(m, t, "done") for m in "ab" for t in TASKS]
    for setting in opts.models:
        assert not list(batch.batch_folder(opts.out, setting).rglob("results*.json"))  # moved, nothing left
        for task in TASKS:
            folder = sweep.pair_folder(opts.out, setting, task)
            (results,) = folder.rglob("results_*.json")
            data = json.loads(results.read_text())
            assert list(data["results"]) == list(data["n-samples"]) == [task]  # its own share only
            assert [p.name for p in folder.rglob("samples_*.jsonl")] == [f"samples_{task}_{results.name[8:-5]}.jsonl"]
            done = json.loads((folder / "lm_eval.done").read_text())
            assert done["command"] == fakes.fake_lm_eval_command(opts, setting, task, folder)  # the pair's own
            assert done["batch"]["tasks"] == TASKS and done["results"] == [str(results.relative_to(folder))]
            assert json.loads((folder / "sweep_pair.json").read_text())["model"] == setting.name
            assert (folder / "lm_eval.log").read_text().count("\n### ") == 1
    runs, problems = load_runs([opts.out])  # what the leaderboard reads: one run per pair, named by the sweep
    assert problems == [] and sorted((r.model, r.task) for r in runs) == sorted((m, t) for m in "ab" for t in TASKS)

    again = batch.run_sweep(opts)
    assert ran() == [] and {o.status for o in again} == {"skipped"}
    for path in sweep.pair_folder(opts.out, opts.models[0], "geese_human").rglob("results_*.json"):
        path.unlink()  # one pair lost its results: only it runs again, alone
    batch.run_sweep(opts)
    assert ran() == [("a", "geese_human")]


def test_a_failed_shared_run_retries_each_task_alone_and_only_the_broken_one_fails(tmp_path: Path, ran) -> None:
    opts = options(tmp_path, ["geese_noexp", "broken", "rule_main"], models="a::pretrained=x")
    outcomes = {o.task: o for o in batch.run_sweep(opts)}
    assert ran() == [("a", "geese_noexp,broken,rule_main"), ("a", "geese_noexp"), ("a", "broken"), ("a", "rule_main")]
    assert {task: o.status for task, o in outcomes.items()} == {
        "geese_noexp": "done",
        "broken": "failed",
        "rule_main": "done",
    }
    assert "exited 3" in outcomes["broken"].detail
    folder = batch.batch_folder(opts.out, opts.models[0])
    assert not list(folder.rglob("results*.json")) and not (folder / child.RUN_FILE).exists()
    batch.run_sweep(opts)
    assert ran() == [("a", "broken")]  # the finished tasks are not rerun


def test_a_shared_run_that_finished_after_its_sweep_died_is_adopted(tmp_path: Path, ran) -> None:
    opts = options(tmp_path, TASKS, models="a::pretrained=x")
    setting = opts.models[0]
    folder = batch.batch_folder(opts.out, setting)
    folder.mkdir(parents=True)
    command = batch.shared_command(opts, setting, TASKS)
    finished = subprocess.run(command, check=True)  # the shared lm_eval, whose sweep was killed before it marked
    assert finished.returncode == 0 and ran() == [("a", ",".join(TASKS))]
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    child.write_record(folder, gone.pid, command)
    outcomes = batch.run_sweep(opts)
    assert ran() == [] and [o.status for o in outcomes] == ["adopted"] * 3
    assert all(sweep.pair_complete(o.folder, o.task) for o in outcomes)
    assert not (folder / child.RUN_FILE).exists() and not list(folder.rglob("results*.json"))


def test_a_group_keeps_its_subtasks_share() -> None:
    data = {
        "results": {"geese": {}, "geese_noexp": {}, "geese_human": {}, "rule_main": {}},
        "group_subtasks": {"geese": ["geese_noexp", "geese_human"], "rule_main": []},
        "n-samples": {"geese_noexp": {}, "geese_human": {}, "rule_main": {}},
        "config": {"limit": 2},
    }
    names = batch.members(data, "geese")
    assert names == ["geese", "geese_noexp", "geese_human"]
    share = batch.share_of(data, names)
    assert list(share["results"]) == names and list(share["n-samples"]) == names[1:]
    assert share["group_subtasks"] == {"geese": ["geese_noexp", "geese_human"]} and share["config"] == {"limit": 2}


def test_judge_tasks_run_alone_and_a_lone_task_keeps_the_one_pair_command(tmp_path: Path) -> None:
    opts = options(tmp_path, sweep.parse_tasks("geese_noexp ibe_copa ibe_judge_copa"), models="a::pretrained=x")
    plan = batch.plan_model(opts, opts.models[0])
    assert (plan.shared, plan.alone) == (["geese_noexp", "ibe_copa"], ["ibe_judge_copa"])
    single = batch.plan_model(options(tmp_path, ["geese_noexp"], models="a::pretrained=x"), opts.models[0])
    assert (single.shared, single.alone) == ([], ["geese_noexp"])


def test_dry_run_shows_one_command_per_model_for_100_models_x_30_tasks(tmp_path: Path, capsys, monkeypatch) -> None:
    """The plan of a lab's sweep: one lm_eval per model (its time is measured in bench/sweep_plan.py)."""
    tasks = [f"rule_5shot_split{s}" for s in range(1, 6)] + [f"rule_1shot_split{s}" for s in range(1, 6)]
    tasks += ["geese_noexp", "geese_human", "geese_dummy", "geese_llama3", "geese_selfexp", "geese_generate_whyexp"]
    tasks += ["rule_main", "rule_sub", "rule_noctx", "rule_alignment", "reg_chaos", "ibe_copa"]
    tasks += [f"rule_5shot_cot_split{s}" for s in range(1, 6)] + ["rule_rationale_none", "rule_rationale_both"]
    tasks += ["rule_5shot_noctx"]
    assert len(tasks) == 30
    models = " ".join(f"m{i}::pretrained={tmp_path}" for i in range(100))
    argv = ["--models", models, "--tasks", ",".join(tasks), "--out", str(tmp_path / "out"), "--dry-run"]
    assert sweep_command.main(argv) == 0
    commands = [line for line in capsys.readouterr().out.splitlines() if " -m lm_eval " in line]
    assert len(commands) == 100 and all(f"--tasks {','.join(tasks)} " in line for line in commands)
