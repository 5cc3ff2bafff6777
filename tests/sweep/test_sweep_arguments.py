"""``explain-eval sweep`` checks every task name, count and model setting before it runs a
pair or submits a job: on Slurm a typo otherwise costs a queue wait per pair.

Each case goes through the command's main, with running a pair and building a Slurm
scheduler replaced by failures, so any pair started or job submitted shows.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import custom_metrics.sweep.runner as runner
import custom_metrics.sweep.slurm as slurm
from custom_metrics.sweep import command as sweep_command


@pytest.fixture
def nothing_may_start(monkeypatch) -> None:
    def started(*args, **kwargs):
        raise AssertionError("a pair ran or a job was submitted")

    monkeypatch.setattr(runner, "run_child", started)
    monkeypatch.setattr(slurm, "SlurmScheduler", started)


def _refused(arguments: list[str], tmp_path: Path, capsys) -> str:
    out = tmp_path / "sweep"
    with pytest.raises(SystemExit) as exit_:
        sweep_command.main([*arguments, "--out", str(out), "--no-leaderboard"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err and not out.exists(), err
    return err


@pytest.mark.parametrize("launcher", [[], ["--launcher", "slurm", "--slurm-gpus", "1"]])
@pytest.mark.slow
def test_an_unknown_task_is_named_with_the_closest_known_names(tmp_path, capsys, nothing_may_start, launcher) -> None:
    models = ["--models", f"m::pretrained={tmp_path}"]
    err = _refused([*models, "--tasks", "geese_noexp,reg_chaoss", *launcher], tmp_path, capsys)
    assert "unknown task(s) 'reg_chaoss' (did you mean 'reg_chaos'" in err and "geese_noexp'" not in err


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["--limit", "0"], "--limit 0: pass a whole number of docs of at least 1"),
        (["--limit", "2.5"], "--limit 2.5: pass a whole number of docs"),
        (["--limit", "two"], "--limit 'two': pass a number of docs"),
        (["--batch-size", "0"], "--batch-size '0': pass a whole number of at least 1, 'auto' or 'auto:N'"),
        (["--poll-seconds", "0", "--launcher", "slurm"], "--poll-seconds 0.0: pass a number of seconds above 0"),
        (["--lm-eval-args", "--num_fewshots 5"], "lm_eval would refuse these arguments: unrecognized arguments"),
    ],
)
def test_counts_and_harness_arguments_are_checked_first(tmp_path, capsys, nothing_may_start, arguments, says) -> None:
    err = _refused(["--models", f"m::pretrained={tmp_path}", "--tasks", "geese_noexp", *arguments], tmp_path, capsys)
    assert says in err


def test_each_model_setting_is_checked_as_lm_eval_would_load_it(tmp_path, capsys, nothing_may_start) -> None:
    err = _refused(["--models", f"ok::pretrained={tmp_path} bad::dtype=float32", "--tasks", "rule"], tmp_path, capsys)
    assert "--model hf needs 'pretrained' in --model_args" in err
    err = _refused(["--models", "gone::pretrained=/no/such/checkpoint", "--tasks", "rule"], tmp_path, capsys)
    assert "--model_args pretrained=/no/such/checkpoint: no such folder" in err


def test_a_bad_option_is_one_line_through_the_command(tmp_path) -> None:
    """The real command: the suite's message is all of stderr, not the end of a usage dump."""
    command = [sys.executable, "-m", "custom_metrics.cli", "sweep", "--models", f"m::pretrained={tmp_path}"]
    for wrong, says in (
        (["--tasks", "geese_noexp", "--limit", "0"], "--limit 0: pass a whole number of docs"),
        (["--tasks", "geese_noexp", "--launcher", "slurmm"], "argument --launcher: invalid choice: 'slurmm'"),
    ):
        done = subprocess.run([*command, *wrong, "--out", str(tmp_path / "sweep")], capture_output=True, text=True)
        (line,) = done.stderr.splitlines()
        assert done.returncode == 2 and line.startswith("explain-eval sweep: error: ") and says in line, done.stderr


@pytest.mark.parametrize("launcher", [[], ["--launcher", "slurm", "--slurm-gpus", "1"]])
def test_a_wrong_reg_judge_is_refused_before_any_pair(tmp_path, capsys, nothing_may_start, launcher) -> None:
    """Each pair's lm_eval would load its model before REG's task checks the judge (on Slurm, after
    a queue wait): the spec is checked first; a judge folder that is not there, where it runs here."""
    models = ["--models", f"m::pretrained={tmp_path}"]
    judge = ["--lm-eval-args", '--metadata \'{"judge": "nli:some/model"}\'']
    err = _refused([*models, "--tasks", "reg_chaos", *judge, *launcher], tmp_path, capsys)
    assert "reg_chaos: judge spec 'nli:some/model' is not understood" in err
    if not launcher:
        missing = ["--lm-eval-args", f'--metadata \'{{"judge": "seqcls:{tmp_path / "no-judge"}"}}\'']
        err = _refused([*models, "--tasks", "reg_chaos", *missing], tmp_path, capsys)
        assert f"there is no folder {tmp_path / 'no-judge'}" in err
