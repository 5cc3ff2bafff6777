"""Model x task pairs as cluster jobs: submit what is missing, attach to what is queued, wait, report.

Each pending pair becomes one job that runs :func:`run_pair_job` (the local sweep's
``run_pair``, so markers, post-run steps and resume work as on one machine). What
survives between sweeps lives in the pair folder: ``lm_eval.done`` (written atomically by
the job once the results file is complete) and ``cluster_job.json`` (the pair's current
job id and log paths, written right after submission). A rerun of the same command
therefore skips finished pairs, attaches to pairs whose job is still queued or running,
and resubmits pairs whose job failed, was cancelled or was preempted.

Two sweeps on one folder never submit a pair twice: submission happens under a lock file
(``OUT/.sweep.lock``, ``lock.py``), and a pair whose job name (derived from its folder) is among the
user's queued or running jobs is adopted instead of resubmitted, which also covers a sweep
killed between submitting and writing ``cluster_job.json``, or one started on another
login node.

The scheduler is only asked for job states, never trusted to keep them: a job it no
longer knows is judged by the pair's markers, so a cluster without accounting (no
``sacct``) cannot make the sweep wait forever.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from custom_metrics.sweep.lock import sweep_lock
from custom_metrics.sweep.resources import ResourcePlan, Resources
from custom_metrics.sweep.runner import (
    DONE_FILE,
    ModelSetting,
    PairOutcome,
    SweepOptions,
    pair_complete,
    pair_folder,
    run_pair,
    skip_detail,
    source_task,
    task_arguments,
    write_json_atomic,
)

JOB_FILE = "cluster_job.json"
JOB_LOG_FOLDER = "jobs"  # the scheduler's scripts, pickles and logs, inside the pair folder


@dataclass(frozen=True)
class JobState:
    """A job as the scheduler reports it."""

    state: str  # the scheduler's own word: PENDING, RUNNING, COMPLETED, CANCELLED, ...
    phase: str  # queued | running | ended
    reason: str = ""  # why it waits or ended, when the scheduler says (Resources, DependencyNeverSatisfied)


@dataclass(frozen=True)
class JobRequest:
    name: str
    folder: Path
    resources: Resources
    function: Callable[..., Any]
    args: tuple[Any, ...]
    after: str | None = None  # a job id that must end successfully first


@dataclass(frozen=True)
class SubmittedJob:
    job_id: str
    stdout: Path
    stderr: Path


class SchedulerUnavailable(RuntimeError):
    """The scheduler could not be asked (command missing, controller unreachable)."""


class Scheduler(Protocol):
    name: str

    def submit(self, request: JobRequest) -> SubmittedJob:
        """Submit one job; raises SchedulerUnavailable or RuntimeError with the scheduler's message."""
        ...

    def states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        """States of the given jobs; a job the scheduler no longer knows is left out."""
        ...

    def active_by_name(self) -> dict[str, str]:
        """Job name -> id of this user's queued or running jobs."""
        ...


def run_pair_job(options: SweepOptions, setting: ModelSetting, task: str) -> PairOutcome:
    """The body of every pair's job: the pair exactly as the local sweep runs it.

    A failed pair ends the job with exit status 1 (the scheduler records it as FAILED) and
    the reason, with the tail of ``lm_eval.log``, as the last lines of the job's stderr,
    which is what the sweep shows; an exception would bury it under a traceback.
    """
    outcome = run_pair(options, setting, task)
    if outcome.status == "failed":
        print(f"{setting.name} x {task} failed: {outcome.detail}", file=sys.stderr, flush=True)
        raise SystemExit(1)
    print(f"{setting.name} x {task}: {outcome.status} ({outcome.detail})", flush=True)
    return outcome


@dataclass
class _Pair:
    index: int
    setting: ModelSetting
    task: str
    folder: Path
    job: SubmittedJob | None = None
    outcome: PairOutcome | None = None

    @property
    def key(self) -> tuple[ModelSetting, str]:
        return self.setting, self.task

    def outcome_as(self, status: str, detail: str) -> PairOutcome:
        self.outcome = PairOutcome(self.setting.name, self.task, self.folder, status, detail)
        return self.outcome


def job_name(folder: Path) -> str:
    """Unique per pair folder (readable in squeue), so another sweep can recognise the pair's job."""
    digest = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:8]
    return f"ee-{folder.parent.name}-{folder.name}-{digest}"


def job_paths(folder: Path, job_id: str) -> SubmittedJob:
    """The log files of a job submitted through submitit into ``folder``."""
    from submitit.core.utils import JobPaths

    paths = JobPaths(folder, job_id=job_id)
    return SubmittedJob(job_id, paths.stdout, paths.stderr)


def read_job_record(folder: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((folder / JOB_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("job_id"), str) else None


def _write_job_record(folder: Path, scheduler: str, job: SubmittedJob, resources: Resources | None) -> None:
    previous = read_job_record(folder) or {}
    history = [*previous.get("history", []), *([previous["job_id"]] if previous.get("job_id") else [])]
    write_json_atomic(
        folder / JOB_FILE,
        {
            "scheduler": scheduler,
            "job_id": job.job_id,
            "name": job_name(folder),
            "stdout": str(job.stdout),
            "stderr": str(job.stderr),
            "submitted": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "by": f"{socket.gethostname()}:{os.getpid()}",
            "resources": resources.summary() if resources else "adopted from another sweep",
            "history": [job_id for job_id in history if job_id != job.job_id],
        },
    )


def run_cluster_sweep(
    options: SweepOptions,
    scheduler: Scheduler,
    plan: ResourcePlan,
    *,
    wait: bool = True,
    poll_s: float = 30.0,
    unreachable_s: float = 900.0,
    job: Callable[..., Any] = run_pair_job,
) -> list[PairOutcome]:
    """Submit every pending pair, then (with ``wait``) follow the jobs until all have ended.

    Outcomes are ``skipped`` / ``done`` / ``failed`` as in the local sweep, plus ``pending``
    for pairs whose job is still queued or running when the sweep stops following them
    (``wait=False``, Ctrl-C, or a scheduler unreachable for ``unreachable_s``): rerunning the
    same command attaches to them.
    """
    combinations = itertools.product(options.models, options.tasks)
    pairs = [
        _Pair(index, setting, task, pair_folder(options.out, setting, task))
        for index, (setting, task) in enumerate(combinations, start=1)
    ]

    def say(pair: _Pair, text: str) -> None:
        print(f"[{pair.index}/{len(pairs)}] {pair.setting.name} x {pair.task}: {text}", flush=True)

    with sweep_lock(options.out, lambda text: print(text, flush=True)):
        _submit_pending(options, pairs, scheduler, plan, job, say)
    if wait:
        try:
            _follow(pairs, scheduler, poll_s, unreachable_s, say)
        except KeyboardInterrupt:
            print("stopped following the jobs (they keep running); rerun the same command to re-attach", flush=True)
    for pair in pairs:
        if pair.outcome is None and pair.job is not None:
            pair.outcome_as("pending", f"job {pair.job.job_id} still queued or running; log {pair.job.stdout}")
    return [pair.outcome for pair in pairs if pair.outcome is not None]


def _submit_pending(
    options: SweepOptions,
    pairs: list[_Pair],
    scheduler: Scheduler,
    plan: ResourcePlan,
    job: Callable[..., Any],
    say: Callable[[_Pair, str], None],
) -> None:
    records = {pair.index: read_job_record(pair.folder) for pair in pairs}
    recorded = [record["job_id"] for record in records.values() if record]
    known = scheduler.states(recorded) if recorded else {}
    active = scheduler.active_by_name()
    by_name = {(pair.setting.name, pair.task): pair for pair in pairs}
    for pair in pairs:
        record = records[pair.index]
        if pair_complete(pair.folder, pair.task):
            say(pair, f"skipped ({pair.outcome_as('skipped', skip_detail(options, *pair.key, pair.folder)).detail})")
            continue
        state = known.get(record["job_id"]) if record else None
        if record and state is not None and state.phase != "ended":
            pair.job = SubmittedJob(record["job_id"], Path(record["stdout"]), Path(record["stderr"]))
            say(pair, f"attached to job {pair.job.job_id} ({state.phase}; log {pair.job.stdout})")
            continue
        adopted = active.get(job_name(pair.folder))
        if adopted is not None:
            pair.job = job_paths(pair.folder / JOB_LOG_FOLDER, adopted)
            _write_job_record(pair.folder, scheduler.name, pair.job, None)
            say(pair, f"attached to job {adopted}, submitted by another sweep (log {pair.job.stdout})")
            continue
        after = _dependency(options, pair, by_name)
        if pair.outcome is not None:  # it cannot run
            continue
        resources = plan.for_pair(pair.setting.name, pair.task)
        arguments = (job_options(options, resources), *pair.key)
        request = JobRequest(job_name(pair.folder), pair.folder / JOB_LOG_FOLDER, resources, job, arguments, after)
        pair.folder.mkdir(parents=True, exist_ok=True)
        try:
            pair.job = scheduler.submit(request)
        except (SchedulerUnavailable, RuntimeError, OSError) as error:
            say(pair, f"failed to submit: {error}")
            pair.outcome_as("failed", f"submission failed: {error}")
            continue
        _write_job_record(pair.folder, scheduler.name, pair.job, resources)
        again = (
            f"resubmitted (job {record['job_id']} {state.state if state else 'ended unfinished'}); " if record else ""
        )
        waits = f", after job {after}" if after else ""
        say(pair, f"{again}submitted job {pair.job.job_id} ({resources.summary()}{waits}; log {pair.job.stdout})")


def _dependency(options: SweepOptions, pair: _Pair, by_name: dict[tuple[str, str], _Pair]) -> str | None:
    """The job a pair must wait for (its model's job of the task whose samples it reads), if
    any. Sets the pair's outcome to failed when it cannot run at all."""
    source = source_task(pair.task)
    source_pair = by_name.get((pair.setting.name, source)) if source else None
    if source and source_pair is None:  # not in this sweep: its samples must already exist
        try:
            task_arguments(options, *pair.key)
        except FileNotFoundError as error:
            pair.outcome_as("failed", str(error))
    elif source_pair is not None and source_pair.job is not None:
        return source_pair.job.job_id
    elif source_pair is not None and source_pair.outcome is not None and source_pair.outcome.status == "failed":
        pair.outcome_as("failed", f"not submitted: the {source} pair whose samples it reads failed")
    return None


def model_resources(plan: ResourcePlan, model: str, tasks: list[str]) -> Resources:
    """What the array task of one model asks for, its tasks running in one ``lm_eval``: the
    most GPUs, CPUs and memory any of its tasks asks for, the sum of their times (unless
    ``--slurm-time`` sets the job's time), ``sbatch`` options merged, the rest as for its first task."""
    each = [plan.for_pair(model, task) for task in tasks]
    cpus = [res.cpus for res in each if res.cpus is not None]
    mems = [res.mem for res in each if res.mem is not None]
    sbatch: dict[str, str] = {}
    for res in each:
        sbatch.update(res.sbatch)
    time_min = each[0].time_min if "time" in plan.flags else sum(res.time_min for res in each)
    return replace(
        each[0],
        gpus=max(res.gpus for res in each),
        cpus=max(cpus) if cpus else None,
        mem=max(mems, key=_kibibytes) if mems else None,
        time_min=time_min,
        sbatch=sbatch,
    )


def _kibibytes(mem: str) -> float:
    return float(mem[:-1]) * 1024 ** "KMGT".index(mem[-1].upper())


def job_options(options: SweepOptions, resources: Resources) -> SweepOptions:
    """The sweep options as the job sees them: accelerate gets one process per GPU unless told otherwise."""
    if options.launcher == "accelerate" and options.num_processes is None and resources.gpus:
        return replace(options, num_processes=resources.gpus)
    return options


def _follow(
    pairs: list[_Pair],
    scheduler: Scheduler,
    poll_s: float,
    unreachable_s: float,
    say: Callable[[_Pair, str], None],
) -> None:
    waiting = [pair for pair in pairs if pair.outcome is None and pair.job is not None]
    shown: dict[int, tuple[str, str]] = {}
    unreachable_since: float | None = None
    while waiting:
        try:
            states = scheduler.states([pair.job.job_id for pair in waiting if pair.job])
            unreachable_since = None
        except SchedulerUnavailable as error:
            unreachable_since = unreachable_since or time.monotonic()
            if time.monotonic() - unreachable_since >= unreachable_s:
                print(f"the scheduler has not answered for {unreachable_s:.0f} s ({error}); stop following", flush=True)
                return
            time.sleep(poll_s)
            continue
        for pair in list(waiting):
            assert pair.job is not None
            state = states.get(pair.job.job_id)
            if state is None or state.phase == "ended":
                outcome = _ended(pair, pair.job, state)
                say(pair, f"{outcome.status} ({outcome.detail.splitlines()[0].rstrip(':')})")
                waiting.remove(pair)
            elif shown.get(pair.index) != (state.phase, state.reason):
                shown[pair.index] = (state.phase, state.reason)
                why = f", {state.reason}" if state.reason and state.reason != "None" else ""
                say(pair, f"{state.phase} (job {pair.job.job_id}{why}; log {pair.job.stdout})")
        if waiting:
            time.sleep(poll_s)


def _ended(pair: _Pair, job: SubmittedJob, state: JobState | None) -> PairOutcome:
    """Done when the pair's markers say so (whatever the scheduler remembers), else failed with the job's stderr."""
    if pair_complete(pair.folder, pair.task):
        try:
            seconds = json.loads((pair.folder / DONE_FILE).read_text(encoding="utf-8")).get("seconds")
        except (OSError, ValueError):
            seconds = None
        return pair.outcome_as("done", f"job {job.job_id}" + (f", lm_eval {seconds:.0f} s" if seconds else ""))
    if state is None:
        what = "is no longer known to the scheduler (no accounting to ask) and left no completed results"
    else:
        what = state.state + (f" ({state.reason})" if state.reason and state.reason != "None" else "")
    return pair.outcome_as("failed", f"job {job.job_id} {what}; {_stderr_tail(job.stderr)}")


def _stderr_tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"no job log at {path} (the job never started)"
    tail = "\n".join(text.rstrip().splitlines()[-lines:])
    return f"stderr {path}:\n{tail}" if tail else f"stderr {path} is empty"
