"""Model x task pairs as a cluster job array: submit what is missing, attach to what is queued, wait, report.

One array task per model with pending pairs runs :func:`run_model_job`, the local sweep's
``batch.run_model``. What survives between sweeps lives in the pair folders: ``lm_eval.done``
and ``cluster_job.json`` (the array task that runs the pair, and its logs). A rerun of the
same command skips finished pairs, attaches to queued or running array tasks, and resubmits,
in one new array, the models whose task failed or was cancelled. The scheduler's scripts,
pickles and logs go in ``OUT/_jobs``.

Two sweeps never submit a pair twice: submission happens under ``OUT/.sweep.lock``, and an
array whose name (from the sweep folder and its models) is among the user's queued or running
jobs is adopted instead (a sweep killed before writing ``cluster_job.json``, or one on
another login node). The scheduler is asked for job states but not trusted to keep them: a
job it no longer knows is judged by the pair's markers (a cluster without ``sacct``).
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

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import MARKER_MAX_BYTES, read_regular_bytes, refuse_linked_folders
from custom_metrics.sweep.lock import sweep_lock
from custom_metrics.sweep.resources import ResourcePlan, Resources
from custom_metrics.sweep.runner import (
    DONE_FILE,
    ModelSetting,
    PairOutcome,
    SweepOptions,
    pair_complete,
    pair_folder,
    skip_detail,
    source_task,
    task_arguments,
    write_json_atomic,
)

JOB_FILE = "cluster_job.json"
JOB_LOG_FOLDER = "_jobs"  # the scheduler's scripts, pickles and logs, in the sweep folder (no model folder is so named)


@dataclass(frozen=True)
class JobState:
    """A job as the scheduler reports it."""

    state: str  # the scheduler's own word: PENDING, RUNNING, COMPLETED, CANCELLED, ...
    phase: str  # queued | running | ended
    reason: str = ""  # why it waits or ended, when the scheduler says (Resources, DependencyNeverSatisfied)


@dataclass(frozen=True)
class ArrayRequest:
    """One job array: the same resources for each task, one argument tuple per task."""

    name: str
    folder: Path
    resources: Resources
    function: Callable[..., Any]
    args: list[tuple[Any, ...]]


@dataclass(frozen=True)
class SubmittedJob:
    job_id: str
    stdout: Path
    stderr: Path


class SchedulerUnavailable(RuntimeError):
    """The scheduler could not be asked (command missing, controller unreachable)."""


class Scheduler(Protocol):
    name: str

    def submit_array(self, request: ArrayRequest) -> list[SubmittedJob]:
        """Submit one job array (its tasks in the order of ``request.args``); raises
        SchedulerUnavailable or RuntimeError with the scheduler's message."""
        ...

    def states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        """States of the given jobs (array tasks: ``12_3``); a job the scheduler no longer knows is left out."""
        ...

    def active(self) -> dict[str, tuple[str, int]]:
        """Job id -> (name, array index) of this user's queued or running jobs, array tasks one by one."""
        ...


def run_model_job(options: SweepOptions, setting: ModelSetting) -> dict[str, PairOutcome]:
    """The body of every array task: one model's pairs exactly as the local sweep runs them. A failed
    pair ends the task with exit status 1 and its reason as the last lines of stderr, which the sweep
    shows (an exception would bury it under a traceback).
    """
    from custom_metrics.sweep.batch import run_model

    outcomes = run_model(options, setting, lambda text: print(text, flush=True))
    for task, outcome in outcomes.items():
        print(f"{setting.name} x {task}: {outcome.status} ({outcome.detail})", flush=True)
    failed = [(task, outcome) for task, outcome in outcomes.items() if outcome.status == "failed"]
    for task, outcome in failed:
        print(f"{setting.name} x {task} failed: {outcome.detail}", file=sys.stderr, flush=True)
    if failed:
        raise SystemExit(1)
    return outcomes


@dataclass
class _Pair:
    index: int
    setting: ModelSetting
    task: str
    folder: Path
    job: SubmittedJob | None = None
    outcome: PairOutcome | None = None

    def outcome_as(self, status: str, detail: str) -> PairOutcome:
        self.outcome = PairOutcome(self.setting.name, self.task, self.folder, status, detail)
        return self.outcome


def array_name(out: Path, models: Sequence[str]) -> str:
    """The same for the same sweep folder and models (readable in squeue), so another sweep can recognise the array."""
    digest = hashlib.sha1("\n".join([str(out.resolve()), *models]).encode()).hexdigest()[:8]
    return f"ee-{out.name}-{digest}"


def read_job_record(folder: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((folder / JOB_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("job_id"), str) else None


def _write_job_record(folder: Path, scheduler: str, job: SubmittedJob, resources: Resources | None, name: str) -> None:
    previous = read_job_record(folder) or {}
    history = [*previous.get("history", []), *([previous["job_id"]] if previous.get("job_id") else [])]
    write_json_atomic(
        folder / JOB_FILE,
        {
            "scheduler": scheduler,
            "job_id": job.job_id,
            "name": name,
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
    job: Callable[..., Any] = run_model_job,
) -> list[PairOutcome]:
    """Submit every model with pending pairs as a task of one job array, then (with ``wait``)
    follow the array tasks until all have ended. Pairs still queued or running when the sweep stops
    following them (``wait=False``, Ctrl-C, a scheduler unreachable for ``unreachable_s``) are
    ``pending``: rerunning the same command attaches to them.
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
    for pair in pairs:
        try:
            refuse_linked_folders(options.out, pair.folder, "the sweep")
        except DataError as error:
            pair.outcome_as("failed", str(error))
    pairs = [pair for pair in pairs if pair.outcome is None]
    records = {pair.index: read_job_record(pair.folder) for pair in pairs}
    recorded = sorted({record["job_id"] for record in records.values() if record})
    known = scheduler.states(recorded) if recorded else {}
    by_name = {(pair.setting.name, pair.task): pair for pair in pairs}
    to_submit: list[tuple[ModelSetting, list[_Pair], Resources]] = []
    for setting in options.models:
        pending = []
        for pair in (pair for pair in pairs if pair.setting == setting):
            if pair_complete(pair.folder, pair.task):
                outcome = pair.outcome_as("skipped", skip_detail(options, pair.setting, pair.task, pair.folder))
                say(pair, f"skipped ({outcome.detail})")
            elif not _cannot_run(options, pair, by_name):
                pending.append(pair)
        live = next((records[p.index] for p in pending if _still_queued(records[p.index], known)), None)
        if live is not None:  # the model's array task still runs: its pairs wait for it
            for pair in pending:
                pair.job = SubmittedJob(live["job_id"], Path(live["stdout"]), Path(live["stderr"]))
                if (records[pair.index] or {}).get("job_id") != live["job_id"]:
                    _write_job_record(pair.folder, scheduler.name, pair.job, None, live.get("name", ""))
                say(pair, f"attached to job {pair.job.job_id} ({known[live['job_id']].phase}; log {pair.job.stdout})")
        elif pending:
            to_submit.append((setting, pending, model_resources(plan, setting.name, [p.task for p in pending])))
    adoptable = _submitted_by_another_sweep(options.out, scheduler.active()) if to_submit else {}
    groups: dict[str, list[tuple[ModelSetting, list[_Pair], Resources]]] = {}
    for setting, pending, resources in to_submit:
        job_id = adoptable.get(setting.name)
        if job_id is not None:  # a sweep killed after sbatch, or one on another login node, submitted it
            from submitit.core.utils import JobPaths  # its log files, as submitit names them

            paths = JobPaths(options.out / JOB_LOG_FOLDER, job_id=job_id)
            for pair in pending:
                pair.job = SubmittedJob(job_id, paths.stdout, paths.stderr)
                _write_job_record(pair.folder, scheduler.name, pair.job, None, "")
                say(pair, f"attached to job {job_id}, submitted by another sweep (log {pair.job.stdout})")
            continue
        # one array per resource request (usually one for the whole sweep)
        groups.setdefault(f"{resources.summary()} {resources.setup}", []).append((setting, pending, resources))
    for group in groups.values():
        _submit_array(options, group, records, known, scheduler, job, say)


def _still_queued(record: dict[str, Any] | None, known: dict[str, JobState]) -> bool:
    state = known.get(record["job_id"]) if record else None
    return state is not None and state.phase != "ended"


def _submitted_by_another_sweep(out: Path, active: dict[str, tuple[str, int]]) -> dict[str, str]:
    """Model name -> id of its queued or running array task, for arrays this sweep folder's
    ``_jobs/<array name>.json`` lists the models of (written before each submission)."""
    found = {}
    for job_id, (name, index) in active.items():
        try:
            models = json.loads(read_regular_bytes(out / JOB_LOG_FOLDER / f"{name}.json", MARKER_MAX_BYTES))["models"]
        except (DataError, ValueError, KeyError, TypeError):
            continue
        if isinstance(models, list) and index < len(models) and isinstance(models[index], str):
            found[models[index]] = job_id
    return found


def _submit_array(
    options: SweepOptions,
    group: list[tuple[ModelSetting, list[_Pair], Resources]],
    records: dict[int, dict[str, Any] | None],
    known: dict[str, JobState],
    scheduler: Scheduler,
    job: Callable[..., Any],
    say: Callable[[_Pair, str], None],
) -> None:
    """One job array for the group's models, one task each (the array's models are written
    first, so that another sweep can tell which task runs which model)."""
    models = [setting.name for setting, _, _ in group]
    name = array_name(options.out, models)
    folder = options.out / JOB_LOG_FOLDER
    resources = group[0][2]
    arguments = [(job_options(options, resources), setting) for setting, _, _ in group]
    try:
        refuse_linked_folders(options.out, folder, "the sweep")
        folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(folder / f"{name}.json", {"models": models})
        jobs = scheduler.submit_array(ArrayRequest(name, folder, resources, job, arguments))
    except (SchedulerUnavailable, RuntimeError, OSError) as error:  # a linked _jobs folder: a DataError, a RuntimeError
        for _, pending, _ in group:
            for pair in pending:
                say(pair, f"failed to submit: {error}")
                pair.outcome_as("failed", f"submission failed: {error}")
        return
    for submitted, (_, pending, _) in zip(jobs, group):
        for pair in pending:
            pair.job = submitted
            pair.folder.mkdir(parents=True, exist_ok=True)
            record = records[pair.index]
            _write_job_record(pair.folder, scheduler.name, submitted, resources, name)
            state = known.get(record["job_id"]) if record else None
            again = (
                f"resubmitted (job {record['job_id']} {state.state if state else 'ended unfinished'}); "
                if record
                else ""
            )
            with_others = f" with the model's {len(pending) - 1} other pending task(s)" if len(pending) > 1 else ""
            summary = f"{resources.summary()}; log {submitted.stdout}"
            say(pair, f"{again}submitted job {submitted.job_id}{with_others} (array {name}, {summary})")


def _cannot_run(options: SweepOptions, pair: _Pair, by_name: dict[tuple[str, str], _Pair]) -> bool:
    """A pair that reads the samples of a task outside this sweep, which its model has not
    logged: failed before submission (a queue wait would end in the same error)."""
    source = source_task(pair.task)
    if not source or (pair.setting.name, source) in by_name:
        return False  # its source runs first inside the same array task
    try:
        task_arguments(options, pair.setting, pair.task)
    except FileNotFoundError as error:
        pair.outcome_as("failed", str(error))
        return True
    return False


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
            states = scheduler.states(sorted({pair.job.job_id for pair in waiting if pair.job}))
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


def _stderr_tail(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"no job log at {path} (the job never started)"
    tail = "\n".join(text.rstrip().splitlines()[-20:])
    return f"stderr {path}:\n{tail}" if tail else f"stderr {path} is empty"
