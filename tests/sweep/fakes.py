"""A stand-in for ``lm_eval`` (and for the papers' post-run commands) for the sweep's logic
tests, and the job body that uses them.

The stand-in writes a results and a samples file the way the harness does, for one task
or several comma-joined ones (one model's shared run); the task ``broken`` exits 3 after
printing a message, ``truncated`` exits 0 leaving half a results file, ``slow`` first waits
until the test releases it (``release``: a file beside the sweep folder), so a test sees it
running, attaches to it or cancels it, for as long as it needs and no longer. Every run is
appended to ``calls.txt`` beside the sweep folder (the model, then the tasks as given), so a
test can tell which pairs really ran, and how many lm_eval each model took.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import custom_metrics.sweep.runner as runner
from custom_metrics.common.paper_spec import PostRun
from custom_metrics.sweep.cluster import run_model_job
from custom_metrics.sweep.runner import ModelSetting, SweepOptions

REAL_POST_RUN_OF = runner.post_run_of

FAKE_LM_EVAL = """
import json, sys, time, pathlib
tasks, out, calls = sys.argv[1].split(","), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
with calls.open("a") as handle:
    handle.write(sys.argv[4] + " " + sys.argv[1] + "\\n")
if "broken" in tasks:
    print("fake lm_eval: no such task broken")
    sys.exit(3)
if "slow" in tasks:
    release, waited = pathlib.Path(sys.argv[5]), time.monotonic()
    while not release.exists():  # the test says when; never past a minute
        if time.monotonic() - waited > 60:
            print("fake lm_eval: slow was never released")
            sys.exit(4)
        time.sleep(0.05)
folder = out / "org__model"
folder.mkdir(parents=True, exist_ok=True)
stamp = time.strftime("%Y-%m-%dT%H-%M-%S") + f".{time.time_ns() % 10**6:06d}"
if "truncated" in tasks:
    (folder / f"results_{stamp}.json").write_text('{"results": {"truncated": {"acc,')
    sys.exit(0)
(folder / f"results_{stamp}.json").write_text(json.dumps({
    "results": {task: {"acc,none": 0.5, "acc_stderr,none": 0.1} for task in tasks},
    "n-samples": {task: {"original": 1, "effective": 1} for task in tasks},
    "configs": {task: {"task": task} for task in tasks}, "model_name": "org/model",
    "config": {"model": "hf", "model_args": {"pretrained": "org/model"}, "limit": None},
}))
for task in tasks:
    (folder / f"samples_{task}_{stamp}.jsonl").write_text("{}\\n")
"""


def calls_file(options: SweepOptions) -> Path:
    return options.out.parent / "calls.txt"


def release_file(options: SweepOptions) -> Path:
    """Created by a test, it lets every ``slow`` pair of the sweep finish."""
    return options.out.parent / "release"


def release(options: SweepOptions) -> None:
    release_file(options).touch()


def fake_lm_eval_command(options: SweepOptions, setting: ModelSetting, task: str, folder: Path) -> list[str]:
    """Same signature as ``runner.lm_eval_command``; the task's own arguments (an IBE judge's
    explanations) are appended as the harness would get them, and ignored."""
    calls = str(calls_file(options))
    command = [sys.executable, "-c", FAKE_LM_EVAL, task, str(folder), calls, setting.name, str(release_file(options))]
    return command + runner.task_arguments(options, setting, task)


def fake_post_run_of(task: str) -> PostRun | None:
    """Same signature as ``runner.post_run_of``: the paper's step, whose commands only write its outputs."""
    step = REAL_POST_RUN_OF(task)
    if step is None:
        return None

    def commands(samples: Path, folder: Path) -> list[list[str]]:
        write = (
            "import pathlib, sys\n"
            "for p in map(pathlib.Path, sys.argv[1:]):\n"
            "    p.parent.mkdir(exist_ok=True)\n"
            "    p.write_text('{}')"
        )
        return [[sys.executable, "-c", write, *map(str, step.outputs(folder))]]

    return replace(step, commands=commands)


def ran(options: SweepOptions) -> list[tuple[str, str]]:
    """The (model, task) runs since the previous call."""
    path = calls_file(options)
    text = path.read_text() if path.is_file() else ""
    path.unlink(missing_ok=True)
    return [tuple(line.split(" ")) for line in text.splitlines()]


def model_job_with_fake_lm_eval(options: SweepOptions, setting: ModelSetting):
    """The real job body, in the job's own process, with the stand-ins in place of lm_eval and the post-run commands."""
    runner.lm_eval_command = fake_lm_eval_command
    runner.post_run_of = fake_post_run_of
    return run_model_job(options, setting)
