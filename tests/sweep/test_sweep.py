"""The sweep runner: model settings, command lines, resume markers, and real sweeps started twice and killed."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import custom_metrics.sweep.command as sweep_command
import custom_metrics.sweep.runner as sweep
from custom_metrics.sweep import batch, child
from custom_metrics.sweep.runner import ModelSetting, SweepOptions
from tests.helpers import MIRROR
from tests.sweep import fakes
from tests.sweep.processes import gone, until

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def fake_lm_eval(monkeypatch, tmp_path: Path):
    """Replaces lm_eval (tests/sweep/fakes.py); returns a function listing the (model, task) pairs it really ran."""
    monkeypatch.setattr(sweep, "lm_eval_command", fakes.fake_lm_eval_command)
    return lambda: fakes.ran(options(tmp_path, []))


def options(tmp_path: Path, tasks: list[str], models: str = "a::pretrained=x b::pretrained=y") -> SweepOptions:
    return SweepOptions(models=sweep.parse_models(models), tasks=tasks, out=tmp_path / "sweep")


def test_parse_models_forms_and_common_args() -> None:
    settings = sweep.parse_models(
        "fp32::pretrained=/ckpt,dtype=float32 org/model pretrained=/other,max_length=512",
        common_args="dtype=bfloat16,trust_remote_code=True",
    )
    assert settings == [
        ModelSetting("fp32", "dtype=float32,trust_remote_code=True,pretrained=/ckpt"),
        ModelSetting("org/model", "dtype=bfloat16,trust_remote_code=True,pretrained=org/model"),
        ModelSetting("/other", "dtype=bfloat16,trust_remote_code=True,pretrained=/other,max_length=512"),
    ]


def test_embedded_model_shorthand(monkeypatch) -> None:
    import custom_metrics.common.embedded_model as embedded

    monkeypatch.setattr(embedded, "ensure_checkpoint", lambda: Path("/cache/gemma"))
    assert sweep.parse_models("embedded small::pretrained=embedded,max_length=512") == [
        ModelSetting("embedded", "pretrained=/cache/gemma"),
        ModelSetting("small", "pretrained=/cache/gemma,max_length=512"),
    ]


@pytest.mark.parametrize("models", ["m m", "a/b a_b", ""])
def test_parse_models_rejects_clashing_or_missing_names(models: str) -> None:
    with pytest.raises(ValueError):
        sweep.parse_models(models)


@pytest.mark.parametrize("name", ["..", ".", "../../escape", "/abs/path", "a/../../b", "..\\..\\x"])
def test_model_names_never_write_outside_the_sweep_folder(tmp_path: Path, fake_lm_eval, name: str) -> None:
    """Issue 17: a model named ``..`` wrote its pair one level above the sweep folder."""
    out = tmp_path / "sweep"
    opts = SweepOptions(models=sweep.parse_models(f"{name}::pretrained=x"), tasks=["geese_noexp"], out=out)
    (outcome,) = batch.run_sweep(opts)
    assert outcome.status == "done"
    assert outcome.folder.resolve().parent.parent == out.resolve()
    outside = {p for p in tmp_path.rglob("*") if out not in p.parents and p != out}
    assert outside <= {tmp_path / "calls.txt"}


def test_judge_tasks_run_after_and_read_their_generation_pair(tmp_path: Path) -> None:
    assert sweep.parse_tasks("ibe_judge_copa, geese_noexp ibe_copa") == ["geese_noexp", "ibe_copa", "ibe_judge_copa"]
    opts = options(tmp_path, ["ibe_copa", "ibe_judge_copa"], models="a::pretrained=x")
    setting = opts.models[0]
    with pytest.raises(FileNotFoundError, match="add ibe_copa to --tasks"):
        sweep.task_arguments(opts, setting, "ibe_judge_copa")
    samples = tmp_path / "sweep" / "a" / "ibe_copa" / "m" / "samples_ibe_copa_2026.jsonl"
    samples.parent.mkdir(parents=True)
    samples.write_text("{}\n")
    command = sweep.lm_eval_command(opts, setting, "ibe_judge_copa", tmp_path / "judge")
    assert json.loads(command[command.index("--metadata") + 1]) == {"explanations": str(samples)}
    assert sweep.task_arguments(opts, setting, "geese_noexp") == []
    opts.extra = ["--num_fewshot", "0", "--metadata", '{"judge": "openai:j@http://h:8000/v1"}']
    merged = sweep.task_arguments(opts, setting, "ibe_judge_copa")
    assert merged[:3] == ["--num_fewshot", "0", "--metadata"]
    assert json.loads(merged[3]) == {"judge": "openai:j@http://h:8000/v1", "explanations": str(samples)}
    assert sweep.task_arguments(opts, setting, "reg_chaos") == opts.extra


def test_commands_for_accelerate_and_vllm(tmp_path: Path) -> None:
    setting = ModelSetting("big", "pretrained=org/big,tensor_parallel_size=4")
    plain = SweepOptions([setting], ["rule"], tmp_path, limit="10", device="cuda")
    command = sweep.lm_eval_command(plain, setting, "rule", tmp_path / "p")
    assert command[:3] == [sys.executable, "-m", "lm_eval"]
    assert command[command.index("--device") + 1] == "cuda" and command[-2:] == ["--limit", "10"]
    assert "--log_samples" in command and command[command.index("--output_path") + 1] == str(tmp_path / "p")

    accelerate = SweepOptions([setting], ["rule"], tmp_path, launcher="accelerate", num_processes=8)
    command = sweep.lm_eval_command(accelerate, setting, "rule", tmp_path / "p")
    assert command[:7] == [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "8", "-m", "lm_eval"]
    assert "--device" not in command

    vllm = SweepOptions([setting], ["rule"], tmp_path, backend="vllm", batch_size="auto")
    command = sweep.lm_eval_command(vllm, setting, "rule", tmp_path / "p")
    assert command[command.index("--model") + 1] == "vllm" and "--device" not in command
    assert command[command.index("--model_args") + 1] == "pretrained=org/big,tensor_parallel_size=4"
    with pytest.raises(ValueError, match="vLLM"):
        sweep.lm_eval_command(
            SweepOptions([setting], ["rule"], tmp_path, backend="vllm", launcher="accelerate"),
            setting,
            "rule",
            tmp_path,
        )


def test_failed_pair_leaves_no_marker_and_the_sweep_goes_on(tmp_path: Path, fake_lm_eval) -> None:
    outcomes = batch.run_sweep(options(tmp_path, ["geese_noexp", "broken"]))
    status = {(o.model, o.task): o.status for o in outcomes}
    assert status == {
        ("a", "geese_noexp"): "done",
        ("a", "broken"): "failed",
        ("b", "geese_noexp"): "done",
        ("b", "broken"): "failed",
    }
    assert (tmp_path / "sweep" / "a" / "geese_noexp" / "lm_eval.done").is_file()
    assert not (tmp_path / "sweep" / "a" / "broken" / "lm_eval.done").exists()
    failed = next(o for o in outcomes if o.task == "broken")
    assert "exited 3" in failed.detail and "lm_eval.log" in failed.detail

    fake_lm_eval()
    again = batch.run_sweep(options(tmp_path, ["geese_noexp", "broken"]))
    assert fake_lm_eval() == [("a", "broken"), ("b", "broken")]  # finished pairs are not rerun
    assert [o.status for o in again if o.task == "geese_noexp"] == ["skipped", "skipped"]


def test_exit_0_with_a_truncated_results_file_is_not_done(tmp_path: Path, fake_lm_eval) -> None:
    (outcome,) = batch.run_sweep(options(tmp_path, ["truncated"], models="a::pretrained=x"))
    assert outcome.status == "failed" and "is incomplete (not valid JSON" in outcome.detail
    assert not (tmp_path / "sweep" / "a" / "truncated" / "lm_eval.done").exists()


def test_finished_pair_made_with_other_arguments_is_kept_and_flagged(tmp_path: Path) -> None:
    folder = tmp_path / "sweep" / "a" / "geese_noexp"
    (folder / "m").mkdir(parents=True)
    (folder / "m" / "results_1.json").write_text("{}")
    old = sweep.lm_eval_command(
        options(tmp_path, ["geese_noexp"], "a::pretrained=x"),
        sweep.ModelSetting("a", "pretrained=x"),
        "geese_noexp",
        folder,
    )
    (folder / "lm_eval.done").write_text(json.dumps({"command": old, "results": ["m/results_1.json"]}))
    same_args = batch.run_sweep(options(tmp_path, ["geese_noexp"], "a::pretrained=x"))
    assert [(o.status, o.detail) for o in same_args] == [("skipped", "already complete")]
    other = options(tmp_path, ["geese_noexp"], "a::pretrained=x")
    other.limit = "5"
    (outcome,) = batch.run_sweep(other)
    assert outcome.status == "skipped" and "other arguments" in outcome.detail and "delete the folder" in outcome.detail


def test_marker_naming_a_vanished_results_file_reruns_the_pair(tmp_path: Path, fake_lm_eval) -> None:
    batch.run_sweep(options(tmp_path, ["geese_noexp"], models="a::pretrained=x"))
    for results in (tmp_path / "sweep").rglob("results_*.json"):
        results.unlink()
    fake_lm_eval()
    (outcome,) = batch.run_sweep(options(tmp_path, ["geese_noexp"], models="a::pretrained=x"))
    assert outcome.status == "done" and fake_lm_eval() == [("a", "geese_noexp")]


def test_a_resume_waits_for_a_recorded_run_that_still_lives_and_sets_its_files_aside(tmp_path: Path) -> None:
    """An earlier sweep's lm_eval still running here is waited for (it may be writing its results);
    one that ended unfinished leaves its files set aside; one recorded on another host fails the pair."""
    opts = options(tmp_path, ["geese_noexp"], models="a::pretrained=x")
    setting = opts.models[0]
    folder = sweep.pair_folder(opts.out, setting, "geese_noexp")
    (folder / "m").mkdir(parents=True)
    (folder / "m" / "results_1.json").write_text('{"results": {"geese_noexp": {"acc,')  # cut by a kill
    runs_on = subprocess.Popen(  # stands in for an earlier sweep's lm_eval: a real process in its own group
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, start_new_session=True
    )
    child.write_record(folder, runs_on.pid, ["lm_eval"])
    told: list[str] = []

    def say(text: str) -> None:
        told.append(text)
        runs_on.stdin.close()  # the earlier run ends while the sweep waits for it

    assert sweep.settle_earlier_run(opts, setting, "geese_noexp", folder, say) is None
    assert runs_on.wait() == 0 and "lm_eval of an earlier sweep still runs" in told[0]
    assert [p.name for p in folder.rglob("results_*")] == ["results_1.json.incomplete"]
    assert not (folder / child.RUN_FILE).exists()

    record = {"pid": 1, "host": "login-2", "started": "2026-12-01T10:00:00"}  # a sweep on another login node
    (folder / child.RUN_FILE).write_text(json.dumps(record))
    outcome = sweep.settle_earlier_run(opts, setting, "geese_noexp", folder, told.append)
    assert outcome.status == "failed" and "started for this pair on login-2 (pid 1" in outcome.detail
    assert f"delete {folder / child.RUN_FILE}" in outcome.detail


def _post_run(monkeypatch, commands) -> None:
    """The task's real post-run step (outputs, name), with stand-in commands."""
    real = sweep.post_run_of
    monkeypatch.setattr(
        sweep, "post_run_of", lambda task: replace(real(task), commands=commands) if real(task) else None
    )


def test_post_run_failure_is_reported_for_the_pair_only(tmp_path: Path, fake_lm_eval, monkeypatch) -> None:
    failing = [[sys.executable, "-c", "import sys; print('no such command'); sys.exit(2)"]]
    _post_run(monkeypatch, lambda samples, folder: failing)
    outcomes = batch.run_sweep(options(tmp_path, ["ibe_copa", "geese_noexp"], models="a::pretrained=x"))
    ibe, other = outcomes
    assert ibe.status == "failed" and "exited 2" in ibe.detail and "no such command" in ibe.detail
    assert other.status == "done"
    folder = tmp_path / "sweep" / "a" / "ibe_copa"
    assert (folder / "lm_eval.done").is_file() and not (folder / sweep.POST_RUN_DONE).exists()

    _post_run(monkeypatch, lambda samples, folder: [[sys.executable, "-c", "pass"]])
    fake_lm_eval()
    ibe, _ = batch.run_sweep(options(tmp_path, ["ibe_copa", "geese_noexp"], models="a::pretrained=x"))
    assert fake_lm_eval() == []  # lm_eval is not rerun, the post-run step is
    assert not (folder / sweep.POST_RUN_DONE).is_file()  # the stand-in wrote no report
    assert "wrote no" in ibe.detail and ibe.status == "failed"

    (report,) = sweep.post_run_of("ibe_copa").outputs(folder)
    writes_report = (
        f"import pathlib; p = pathlib.Path({str(report)!r}); p.parent.mkdir(exist_ok=True); p.write_text('{{}}')"
    )
    _post_run(monkeypatch, lambda samples, folder: [[sys.executable, "-c", writes_report]])
    ibe, _ = batch.run_sweep(options(tmp_path, ["ibe_copa", "geese_noexp"], models="a::pretrained=x"))
    assert fake_lm_eval() == [] and ibe.status == "skipped" and "done" in ibe.detail
    assert (folder / sweep.POST_RUN_DONE).is_file()
    ibe, _ = batch.run_sweep(options(tmp_path, ["ibe_copa", "geese_noexp"], models="a::pretrained=x"))
    assert ibe.detail == "already complete"  # neither lm_eval nor the post-run step again


def test_post_run_reads_the_newest_samples_and_the_sweep_names_no_paper(tmp_path: Path) -> None:
    folder = tmp_path / "pair"
    (folder / "m").mkdir(parents=True)
    older, newer = folder / "m" / "samples_ibe_copa_1.jsonl", folder / "m" / "samples_ibe_copa_2.jsonl"
    older.write_text("{}\n")
    newer.write_text("{}\n")
    os.utime(older, (1, 1))
    assert sweep.newest_samples(folder, "ibe_copa") == newer
    step = sweep.post_run_of("ibe_copa")
    score, report = step.commands(newer, folder)
    assert score[2:6] == ["custom_metrics.cli", "ibe", "score", str(newer)]
    assert report[4:] == ["report", score[-1]] and step.outputs(folder)[0].parent == Path(score[-1])
    assert sweep.post_run_of("ibe_judge_copa") is None and sweep.post_run_of("geese_noexp") is None
    # The sweep's own code knows no paper: every paper-specific step comes from a PaperSpec.
    package = Path(sweep.__file__).parent
    mentions = [p.name for p in package.glob("*.py") if "ibe" in p.read_text(encoding="utf-8").lower()]
    assert mentions == []


def test_dry_run_prints_pending_commands(tmp_path: Path, capsys) -> None:
    code = sweep_command.main(
        [
            "--models",
            f"m::pretrained={tmp_path}",
            "--tasks",
            "geese_noexp",
            "--out",
            str(tmp_path),
            "--dry-run",
            "--launcher",
            "accelerate",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "# m: 1 pending task(s) (geese_noexp)" in out and "accelerate.commands.launch -m lm_eval" in out


def _starts(log: Path) -> int:
    """How many times the sweep started lm_eval for a pair (one header line per start in its log)."""
    return sum(line.startswith("### ") for line in log.read_text().splitlines()) if log.is_file() else 0


@pytest.mark.e2e
def test_real_sweeps_started_twice_and_killed_run_each_pair_exactly_once(embedded_model: Path, tmp_path: Path) -> None:
    """Two real sweeps into one folder at once; the one running pair 1 is killed alone (``kill -9``,
    as a dropped login session does) while its lm_eval runs; the other is frozen while pair 2's
    lm_eval runs and killed once that has finished, before it could mark it; a resume then
    builds the leaderboard. Each pair runs to the end exactly once: the killed sweep's lm_eval
    dies with it, the waiting sweep reruns pair 1 (the killed run left nothing to keep), the
    resume adopts pair 2 without running it again, and each pair holds one results file."""
    out = tmp_path / "sweep"
    models = (
        f"fp32::pretrained={embedded_model},dtype=float32 "
        f"fp32-len512::pretrained={embedded_model},dtype=float32,max_length=512"
    )
    command = [sys.executable, "-m", "custom_metrics.cli", "sweep", "--models", models, "--tasks", "geese_noexp"]
    command += ["--out", str(out), "--limit", "1", "--batch-size", "4", "--device", "cpu"]
    env = {**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR), "HF_HUB_OFFLINE": "1"}
    pair_1, pair_2 = out / "fp32" / "geese_noexp", out / "fp32-len512" / "geese_noexp"
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    sweeps = []
    for log in logs:
        with log.open("w") as handle:
            sweeps.append(
                subprocess.Popen([*command, "--no-leaderboard"], stdout=handle, stderr=subprocess.STDOUT, env=env)
            )
    try:
        first = until("pair 1's lm_eval", lambda: child.read_record(pair_1), timeout_s=300)
        os.kill(first["pid"], signal.SIGSTOP)  # held mid-run until its sweep is gone: the timing is the test's
        holder = next(s for s in sweeps if s.pid == first["sweep_pid"])
        waiting = next(s for s in sweeps if s is not holder)
        wait_log = logs[sweeps.index(waiting)]
        until("the other sweep to wait", lambda: "waiting for it to finish" in wait_log.read_text(), waiting)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        os.kill(first["pid"], signal.SIGCONT)  # the parent-death signal, pending while it was stopped, ends it
        until("the killed sweep's lm_eval to die with it", lambda: gone(first["pid"]), timeout_s=60)

        second = until("pair 2's lm_eval", lambda: child.read_record(pair_2), waiting)
        os.kill(waiting.pid, signal.SIGSTOP)  # frozen: it cannot mark the pair its lm_eval finishes
        until("pair 2's lm_eval to finish", lambda: gone(second["pid"]), timeout_s=300)
        assert not (pair_2 / "lm_eval.done").exists()
        os.kill(waiting.pid, signal.SIGKILL)
        waiting.wait()
    finally:
        for process in sweeps:
            if process.poll() is None:
                process.kill()
    told = wait_log.read_text()
    assert "is running its pairs into" in told and "waiting for it to finish" in told, told[-3000:]
    assert "[1/2] fp32 x geese_noexp: done" in told, told[-3000:]

    resume = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert resume.returncode == 0, resume.stdout[-3000:] + resume.stderr[-3000:]
    assert "sweep: 0 run, 1 skipped (already complete), 0 failed, 1 adopted" in resume.stdout, resume.stdout
    assert f"adopted the run of pid {second['pid']}" in resume.stdout
    assert (_starts(pair_1 / "lm_eval.log"), _starts(pair_2 / "lm_eval.log")) == (2, 1)  # pair 1: killed, then whole

    with (out / "leaderboard" / "geese.csv").open(newline="") as handle:
        board = {row["model"]: row for row in csv.DictReader(handle)}
    for name, folder in (("fp32", pair_1), ("fp32-len512", pair_2)):
        (results_file,) = folder.rglob("results_*.json")  # one run's results per pair, nothing beside them
        assert len(list(folder.rglob("samples_*.jsonl"))) == 1 and not (folder / child.RUN_FILE).exists()
        done = json.loads((folder / "lm_eval.done").read_text())
        assert done["results"] == [str(results_file.relative_to(folder))]
        results = json.loads(results_file.read_text())
        assert float(board[name]["geese_noexp acc"]) == results["results"]["geese_noexp"]["acc,none"]
        assert results["config"]["limit"] == 1
    assert "adopted" in json.loads((pair_2 / "lm_eval.done").read_text())
    assert sweep.pair_complete(pair_1, "geese_noexp") and sweep.pair_complete(pair_2, "geese_noexp")  # skipped next


def test_a_symlinked_sweep_lock_is_refused_and_its_target_kept(tmp_path: Path, fake_lm_eval, capsys) -> None:
    """A ``.sweep.lock`` planted as a link to another file was opened and truncated through it."""
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "sweep"
    out.mkdir()
    (out / ".sweep.lock").symlink_to(victim)
    argv = ["--models", f"m::pretrained={tmp_path}", "--tasks", "geese_noexp", "--out", str(out), "--no-leaderboard"]
    assert sweep_command.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and f"{out / '.sweep.lock'}: sweep lock is a symbolic link" in error
    assert victim.read_text() == "keep me\n" and fake_lm_eval() == []
    (out / ".sweep.lock").unlink()
    os.link(victim, out / ".sweep.lock")  # a hard link is refused too
    assert sweep_command.main(argv) == 2 and "has other hard links" in capsys.readouterr().err
    assert victim.read_text() == "keep me\n" and fake_lm_eval() == []


def test_a_symlinked_pair_log_is_refused_and_its_target_kept(tmp_path: Path, fake_lm_eval) -> None:
    """``lm_eval.log`` planted as a link was appended to through it."""
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    opts = options(tmp_path, ["geese_noexp"], models="a::pretrained=x")
    folder = sweep.pair_folder(opts.out, opts.models[0], "geese_noexp")
    folder.mkdir(parents=True)
    (folder / "lm_eval.log").symlink_to(victim)
    (outcome,) = batch.run_sweep(opts)
    assert outcome.status == "failed" and f"{folder / 'lm_eval.log'}: sweep log is a symbolic link" in outcome.detail
    assert victim.read_text() == "keep me\n" and fake_lm_eval() == []


def test_a_record_naming_a_live_unrelated_process_without_start_time_is_not_waited_for(tmp_path: Path) -> None:
    """A run record without ``start_ticks`` naming a live process (here a ``sleep`` of the test's
    own) made the sweep wait for that process for ever."""
    opts = options(tmp_path, ["geese_noexp"], models="a::pretrained=x")
    setting = opts.models[0]
    folder = sweep.pair_folder(opts.out, setting, "geese_noexp")
    folder.mkdir(parents=True)
    unrelated = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        record = {"pid": unrelated.pid, "host": os.uname().nodename, "started": "2026-12-01T10:00:00"}
        (folder / child.RUN_FILE).write_text(json.dumps(record))
        assert child.still_running(child.read_record(folder)) is False
        told: list[str] = []

        def say(text: str) -> None:
            assert "still runs" not in text, "the sweep waits on an unrelated process"
            told.append(text)

        assert sweep.settle_earlier_run(opts, setting, "geese_noexp", folder, say) is None
        assert len(told) == 1 and f"names the live pid {unrelated.pid} without its start time" in told[0]
        assert not (folder / child.RUN_FILE).exists() and unrelated.poll() is None  # left alone
    finally:
        unrelated.kill()
        unrelated.wait()
