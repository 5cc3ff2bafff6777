"""The cluster sweep without a cluster: resources, sbatch parameters, and the submit / attach /
resubmit / report logic on real submitit jobs (LocalExecutor; tests/sweep/local_scheduler.py).
The same logic on a real Slurm is tests/sweep/test_slurm.py."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("submitit", reason="submitit is the [cluster] extra: pip install -e '.[cluster]'")

from submitit.slurm.slurm import _make_sbatch_string

import custom_metrics.sweep.command as sweep_command
from custom_metrics.cli import main as explain_eval
from custom_metrics.common.errors import DataError
from custom_metrics.sweep import cluster, runner
from custom_metrics.sweep.resources import ResourcePlan, Resources, load_plan, parse_minutes
from custom_metrics.sweep.runner import SweepOptions, parse_models
from custom_metrics.sweep.slurm import array_index, parse_sacct, phase, sbatch_parameters
from tests.sweep import fakes
from tests.sweep.local_scheduler import LocalScheduler

POLL = 0.2


def options(tmp_path: Path, tasks: list[str], models: str = "a::pretrained=x b::pretrained=y") -> SweepOptions:
    return SweepOptions(models=parse_models(models), tasks=tasks, out=tmp_path / "sweep")


def sweep(opts: SweepOptions, scheduler: LocalScheduler, **kwargs) -> dict[tuple[str, str], object]:
    kwargs.setdefault("poll_s", POLL)
    outcomes = cluster.run_cluster_sweep(
        opts, scheduler, ResourcePlan(), job=fakes.model_job_with_fake_lm_eval, **kwargs
    )
    return {(o.model, o.task): o for o in outcomes}


def record(opts: SweepOptions, model: str, task: str) -> dict:
    return json.loads((opts.out / model / task / cluster.JOB_FILE).read_text())


# --- resources -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "minutes"),
    [(90, 90), ("90", 90), ("1:30:00", 90), ("90:30", 91), ("2-00:00:00", 2880), ("1-12", 2160), ("0-0:1", 1)],
)
def test_time_in_every_slurm_form(text, minutes) -> None:
    assert parse_minutes(text) == minutes


def test_resources_per_pair_from_file_levels_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text(
        "defaults: {partition: gpu, account: lab, gpus: 1, cpus: 8, mem: 64g, time: '4:00:00', sbatch: {qos: normal}}\n"
        "models:\n  big: {gpus: 4, mem: 320G, sbatch: {constraint: a100}, setup: [module load cuda]}\n"
        "tasks:\n  reg_chaos: {time: '8:00:00', sbatch: {qos: long}}\n"
    )
    plan = load_plan(config, {"gpus": None, "account": "other", "time": None})
    assert plan.for_pair("small", "rule") == Resources(
        gpus=1, cpus=8, mem="64G", time_min=240, partition="gpu", account="other", sbatch={"qos": "normal"}
    )
    big = plan.for_pair("big", "reg_chaos")
    assert (big.gpus, big.mem, big.time_min, big.setup) == (4, "320G", 480, ("module load cuda",))
    assert big.sbatch == {"qos": "long", "constraint": "a100"}  # merged key by key, the task's level last
    assert load_plan(None, {"gpus": 2, "time": "30"}).for_pair("m", "t") == Resources(gpus=2, time_min=30)


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        ("defaults: {gpus: 1}\nmodels:\n  big: {gpu: 4}\n", ":3", "models.big.gpu: unknown key"),
        ("defaults:\n  mem: 64\n", ":2", "mem: must be a size with a unit"),
        ("tasks:\n  rule:\n    time: soon\n", ":3", "tasks.rule.time: time must be minutes"),
        ("defaults: {cpus: 0}\n", ":1", "cpus: must be an integer >= 1"),
        ("defaults: {gpus: true}\n", ":1", "gpus: must be an integer"),
        ("default: {gpus: 1}\n", ":1", "unknown section 'default'"),
        ("models: [big]\n", ":1", "models must map names to resources"),
        ("defaults: {gpus: 1\n", ":2", "not valid YAML"),
        ("defaults: {setup: [1, 2]}\n", ":1", "setup: must be a list of shell lines"),
    ],
)
def test_bad_resource_file_names_file_line_and_key(tmp_path: Path, text: str, where: str, says: str) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text(text)
    with pytest.raises(DataError) as error:
        load_plan(config, {})
    assert str(error.value).startswith(f"{config}{where}:") and says in str(error.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('defaults:\n  partition: "gpu\\ntouch /tmp/owned"\n', ":2: defaults.partition: the value holds the control"),
        ('models:\n  big:\n    account: "la\\rb"\n', ":3: models.big.account: the value holds the control"),
        ('tasks:\n  rule:\n    sbatch: {qos: "high\\nrm -rf ~"}\n', ":3: tasks.rule.sbatch: option 'qos' holds the"),
        ('defaults:\n  sbatch: {"qos\\nx": high}\n', ":2: defaults.sbatch: 'qos\\nx' is not an sbatch option name"),
        ('defaults:\n  mem: "64G\\n"\n', ":2: defaults.mem: must be a size with a unit"),
    ],
)
def test_a_control_character_in_a_slurm_value_is_refused_naming_the_key(
    tmp_path: Path, capsys, text: str, says: str
) -> None:
    """A newline in a value would end its #SBATCH line and start a shell line of the job script."""
    config = tmp_path / "cluster.yaml"
    config.write_text(text)
    args = ["--models", "big::pretrained=/b", "--tasks", "rule", "--out", str(tmp_path / "o"), "--launcher", "slurm"]
    with pytest.raises(SystemExit, match="2"):  # a usage error, before any job is written
        explain_eval(["sweep", *args, "--slurm-config", str(config), "--dry-run"])
    assert f"explain-eval sweep: error: {config}{says}" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):
        explain_eval(["sweep", *args, "--slurm-partition", "gpu\nreboot", "--dry-run"])
    assert "error: --slurm-partition: the value holds the control character U+000A" in capsys.readouterr().err


def test_bad_flag_names_the_flag() -> None:
    with pytest.raises(DataError, match="--slurm-mem: must be a size with a unit"):
        load_plan(None, {"mem": "64"})


def test_sbatch_script_of_an_array(tmp_path: Path) -> None:
    resources = Resources(
        gpus=4,
        cpus=16,
        mem="320G",
        time_min=720,
        partition="gpu",
        account="lab",
        sbatch={"qos": "high"},
        setup=("module load cuda",),
    )
    request = cluster.ArrayRequest("ee-sweep-0123abcd", tmp_path, resources, print, [(), ()])
    script = _make_sbatch_string(
        command="python -m submitit.core._submit X", folder=tmp_path, map_count=2, **sbatch_parameters(request)
    )
    for line in (
        "--job-name=ee-sweep-0123abcd",
        "--gpus-per-node=4",
        "--cpus-per-task=16",
        "--mem=320G",
        "--time=720",
        "--partition=gpu",
        "--account=lab",
        "--qos=high",
        "--nodes=1",
        "--ntasks-per-node=1",
        "--array=0-1%2",
    ):
        assert f"#SBATCH {line}\n" in script
    assert "\nmodule load cuda\n" in script
    bare = _make_sbatch_string(
        command="x", folder=tmp_path, **sbatch_parameters(cluster.ArrayRequest("n", tmp_path, Resources(), print, []))
    )
    assert "--gpus" not in bare and "--mem" not in bare and "--time=240" in bare
    assert [array_index(job_id) for job_id in ("12_3", "12", "12_10")] == [3, 0, 10]


def test_a_models_array_task_asks_for_what_its_tasks_need_together() -> None:
    plan = ResourcePlan(
        defaults={"mem": "16G", "cpus": 4},
        tasks={"rule": {"gpus": 2, "time": 120, "mem": "1T", "sbatch": {"qos": "long"}}, "geese": {"cpus": 8}},
    )
    both = cluster.model_resources(plan, "m", ["rule", "geese"])
    assert (both.gpus, both.cpus, both.mem, both.time_min, both.sbatch) == (2, 8, "1T", 120 + 240, {"qos": "long"})
    flagged = cluster.model_resources(ResourcePlan(flags={"time": 30}), "m", ["rule", "geese"])
    assert flagged.time_min == 30  # --slurm-time is the job's


def test_sacct_output_keeps_jobs_not_steps() -> None:
    text = "12|CANCELLED by 1000\n12.batch|CANCELLED\n12.0|CANCELLED\n13|TIMEOUT\n14|COMPLETED\n"
    assert parse_sacct(text, ["12", "13", "99"]) == {
        "12": cluster.JobState("CANCELLED", "ended", "by 1000"),
        "13": cluster.JobState("TIMEOUT", "ended"),
    }


def test_slurm_states_as_phases() -> None:
    assert [phase(s) for s in ("PENDING", "REQUEUED", "RUNNING", "COMPLETING", "COMPLETED", "CANCELLED by 0")] == [
        "queued",
        "queued",
        "running",
        "running",
        "ended",
        "ended",
    ]
    assert [phase(s) for s in ("TIMEOUT", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY", "FAILED", "")] == ["ended"] * 6


# --- the command line --------------------------------------------------------------------------


def test_slurm_options_need_the_slurm_launcher(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        sweep_command.main(
            ["--models", "m::pretrained=x", "--tasks", "rule", "--out", str(tmp_path), "--slurm-gpus", "1"]
        )
    assert "--slurm-gpus only apply with --launcher slurm" in capsys.readouterr().err


def test_dry_run_on_slurm_shows_each_models_array_task(tmp_path: Path, capsys) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("models:\n  big: {gpus: 4}\n")
    args = ["--models", "small::pretrained=/s big::pretrained=/b", "--tasks", "rule", "--out", str(tmp_path / "o")]
    args += ["--launcher", "slurm", "--job-launcher", "accelerate", "--slurm-config", str(config), "--slurm-time", "60"]
    assert sweep_command.main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "# small: 1 pending task(s) (rule), one load per command; Slurm array task: gpus=0 time=1:00:00" in out
    assert "# big: 1 pending task(s) (rule), one load per command; Slurm array task: gpus=4 time=1:00:00" in out
    assert "accelerate.commands.launch --num_processes 4 -m lm_eval" in out  # one process per GPU of the job


# --- submit, follow, report, resume ----------------------------------------------------------


@pytest.mark.slow
def test_models_run_as_tasks_of_one_array_a_failed_pair_reports_its_stderr_and_only_it_is_resubmitted(
    tmp_path: Path,
) -> None:
    opts, scheduler = options(tmp_path, ["geese_noexp", "broken"]), LocalScheduler()
    outcomes = sweep(opts, scheduler)
    assert {key: o.status for key, o in outcomes.items()} == {
        ("a", "geese_noexp"): "done",
        ("a", "broken"): "failed",
        ("b", "geese_noexp"): "done",
        ("b", "broken"): "failed",
    }
    (array,) = scheduler.requests  # one array, one task per model
    assert [args[1].name for args in array.args] == ["a", "b"]
    failed = outcomes[("a", "broken")].detail
    first_job = record(opts, "a", "broken")["job_id"]
    assert record(opts, "a", "geese_noexp")["job_id"] == first_job  # the model's task runs both pairs
    assert failed.startswith(f"job {first_job} FAILED; stderr ")
    assert "lm_eval exited 3" in failed and "fake lm_eval: no such task broken" in failed  # the job's stderr tail
    assert (opts.out / "a" / "geese_noexp" / "lm_eval.done").is_file()
    assert not (opts.out / "a" / "broken" / "lm_eval.done").exists()
    ran = sorted(fakes.ran(opts))  # the shared run failed: each task retried alone, in the same job
    assert ran == sorted((m, t) for m in "ab" for t in ("geese_noexp,broken", "geese_noexp", "broken"))

    again = sweep(opts, scheduler)
    assert sorted(fakes.ran(opts)) == [("a", "broken"), ("b", "broken")]  # finished pairs never rerun
    assert [again[("a", "geese_noexp")].status, again[("b", "geese_noexp")].status] == ["skipped", "skipped"]
    assert record(opts, "a", "broken")["history"] == [first_job]
    assert len(scheduler.requests) == 2


def test_no_wait_then_reattach_never_submits_a_pair_twice(tmp_path: Path, capsys) -> None:
    opts, scheduler = options(tmp_path, ["slow"]), LocalScheduler()
    first = sweep(opts, scheduler, wait=False)
    assert [o.status for o in first.values()] == ["pending", "pending"]
    assert all("still queued or running" in o.detail for o in first.values())
    # a second sweep while the jobs run: one job lost its record (a sweep killed right after
    # sbatch) and is recognised by its name
    (opts.out / "b" / "slow" / cluster.JOB_FILE).unlink()
    second = sweep(opts, scheduler, wait=False)
    assert [o.status for o in second.values()] == ["pending", "pending"]
    out = capsys.readouterr().out
    assert "a x slow: attached to job" in out and "b x slow: attached to job" in out and "another sweep" in out
    assert len(scheduler.requests) == 1
    fakes.release(opts)
    third = sweep(opts, scheduler)
    assert [o.status for o in third.values()] == ["done", "done"] and len(scheduler.requests) == 1
    assert sorted(fakes.ran(opts)) == [("a", "slow"), ("b", "slow")]


@pytest.mark.slow
def test_cancelled_job_is_resubmitted_the_others_attached(tmp_path: Path, capsys) -> None:
    opts, scheduler = options(tmp_path, ["slow"]), LocalScheduler()
    sweep(opts, scheduler, wait=False)
    cancelled = record(opts, "a", "slow")["job_id"]
    scheduler.cancel(cancelled)
    fakes.release(opts)
    outcomes = sweep(opts, scheduler)
    assert [o.status for o in outcomes.values()] == ["done", "done"]
    assert f"a x slow: resubmitted (job {cancelled} CANCELLED); submitted job" in capsys.readouterr().out
    assert record(opts, "a", "slow")["history"] == [cancelled] and len(scheduler.requests) == 2
    assert [args[1].name for args in scheduler.requests[-1].args] == ["a"]  # an array of the cancelled model only


def test_job_the_scheduler_forgot_is_judged_by_its_markers(tmp_path: Path) -> None:
    """Slurm forgets a finished job after MinJobAge; without accounting nothing else knows it."""
    opts, scheduler = options(tmp_path, ["geese_noexp", "broken"], models="a::pretrained=x"), LocalScheduler()
    scheduler.forget_ended = True
    outcomes = sweep(opts, scheduler)
    assert outcomes[("a", "geese_noexp")].status == "done"
    broken = outcomes[("a", "broken")]
    assert broken.status == "failed" and "is no longer known to the scheduler" in broken.detail
    assert "fake lm_eval: no such task broken" in broken.detail  # still its stderr tail


def test_unreachable_scheduler_stops_following_instead_of_hanging(tmp_path: Path, capsys) -> None:
    opts, scheduler = options(tmp_path, ["slow"], models="a::pretrained=x"), LocalScheduler()
    scheduler.unreachable = True  # from the first state query on (submission asks none on a fresh folder)
    started = time.monotonic()
    (outcome,) = sweep(opts, scheduler, unreachable_s=1.0).values()
    assert outcome.status == "pending" and time.monotonic() - started < 30  # 1 s unanswered, not the job's end
    assert "has not answered for 1 s" in capsys.readouterr().out
    assert sweep_command.finish([outcome], opts.out, None, build=True, waited=True) == 1
    assert "leaderboard not built yet: 1 pair(s) still queued or running" in capsys.readouterr().out
    scheduler.unreachable = False
    fakes.release(opts)
    scheduler.wait(record(opts, "a", "slow")["job_id"])


@pytest.mark.slow
def test_a_judge_runs_after_its_generation_in_the_models_array_task(tmp_path: Path) -> None:
    opts, scheduler = options(tmp_path, ["ibe_copa", "ibe_judge_copa"], models="a::pretrained=x"), LocalScheduler()
    outcomes = sweep(opts, scheduler)
    assert [o.status for o in outcomes.values()] == ["done", "done"]
    assert len(scheduler.requests) == 1 and record(opts, "a", "ibe_copa") == record(opts, "a", "ibe_judge_copa")
    assert (opts.out / "a" / "ibe_copa" / runner.POST_RUN_DONE).is_file()
    command = json.loads((opts.out / "a" / "ibe_judge_copa" / "lm_eval.done").read_text())["command"]
    explanations = json.loads(command[command.index("--metadata") + 1])["explanations"]
    assert Path(explanations).name.startswith("samples_ibe_copa_") and Path(explanations).is_file()


def test_refused_submission_fails_its_pairs_and_a_judge_without_samples_is_never_submitted(tmp_path: Path) -> None:
    class Refusing(LocalScheduler):
        def submit_array(self, request: cluster.ArrayRequest) -> list[cluster.SubmittedJob]:
            raise RuntimeError("sbatch refused the job array: invalid partition specified: gpu")

    opts = options(tmp_path, ["ibe_judge_copa", "geese_noexp"], models="a::pretrained=x")
    outcomes = sweep(opts, Refusing())
    assert outcomes[("a", "ibe_judge_copa")].status == "failed"
    assert "add ibe_copa to --tasks" in outcomes[("a", "ibe_judge_copa")].detail  # before any submission
    assert (
        outcomes[("a", "geese_noexp")].detail
        == "submission failed: sbatch refused the job array: invalid partition specified: gpu"
    )


def test_second_sweep_waits_for_the_first_to_finish_submitting(tmp_path: Path, capsys) -> None:
    entered = threading.Event()

    def first() -> None:
        with cluster.sweep_lock(tmp_path, print):
            entered.set()
            time.sleep(1.0)

    thread = threading.Thread(target=first)
    thread.start()
    entered.wait(5)
    started = time.monotonic()
    with cluster.sweep_lock(tmp_path, print):
        waited = time.monotonic() - started
    thread.join()
    assert waited > 0.5 and "is submitting into" in capsys.readouterr().out
