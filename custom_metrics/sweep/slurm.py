"""Slurm for the cluster sweep: one job array through submitit, job states from squeue, then sacct.

submitit writes the sbatch script and runs each model's function inside its array task, but it
reads job states from ``sacct`` alone, which leaves every job ``UNKNOWN`` where a cluster keeps
no accounting (and a cancelled job's ``result()`` waiting forever). So states are read here:
``squeue`` first (finished jobs stay there for ``MinJobAge``), ``sacct`` for older ones, and a
job neither knows is judged by the pair's markers (``cluster.py``).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Sequence
from typing import Any

from custom_metrics.sweep.cluster import ArrayRequest, JobState, SchedulerUnavailable, SubmittedJob

QUEUED = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SUSPENDED"}
RUNNING = {"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "STOPPED", "RESIZING"}
COMMAND_TIMEOUT_S = 60


def phase(state: str) -> str:
    """queued | running | ended, from a Slurm job state (``CANCELLED by 0`` counts as CANCELLED)."""
    word = state.split()[0].rstrip("+") if state.strip() else "UNKNOWN"
    return "queued" if word in QUEUED else "running" if word in RUNNING else "ended"


def parse_sacct(text: str, job_ids: Sequence[str]) -> dict[str, JobState]:
    """States from ``sacct --noheader --parsable2 --format=JobID,State`` output; job steps
    (``12.batch``) and other jobs are ignored, ``CANCELLED by 1000`` keeps its "by" as reason."""
    states = {}
    for line in text.splitlines():
        job_id, _, state = line.partition("|")
        if job_id in job_ids and state.strip():
            word = state.split()[0]
            states[job_id] = JobState(word, phase(word), state[len(word) :].strip())
    return states


def sbatch_parameters(request: ArrayRequest) -> dict[str, Any]:
    """submitit ``SlurmExecutor`` parameters of one array: each task one process on one node."""
    res = request.resources
    params: dict[str, Any] = {"job_name": request.name, "time": res.time_min, "nodes": 1, "ntasks_per_node": 1}
    optional = {
        "gpus_per_node": res.gpus or None,
        "cpus_per_task": res.cpus,
        "mem": res.mem,
        "partition": res.partition,
        "account": res.account,
        "setup": list(res.setup) or None,
        "additional_parameters": dict(res.sbatch) or None,
    }
    params.update({key: value for key, value in optional.items() if value is not None})
    return params


def array_index(job_id: str) -> int:
    """The array index of ``12_3`` (3); a job submitted alone (``12``, an array of one) is index 0."""
    _, _, index = job_id.partition("_")
    return int(index) if index.isdigit() else 0


class SlurmScheduler:
    """The cluster the sweep runs on; the Slurm commands must be on PATH (a login node)."""

    name = "slurm"

    def __init__(self, user: str | None = None) -> None:
        missing = [command for command in ("sbatch", "srun", "squeue") if shutil.which(command) is None]
        if missing:
            raise SchedulerUnavailable(
                f"--launcher slurm needs Slurm's commands on PATH ({', '.join(missing)} not found): "
                "start the sweep on a login node of the cluster"
            )
        self.user = user or pwd.getpwuid(os.getuid()).pw_name

    def submit_array(self, request: ArrayRequest) -> list[SubmittedJob]:
        try:
            import submitit
        except ImportError as error:
            raise SchedulerUnavailable(
                "--launcher slurm needs submitit: pip install 'explain-eval[cluster]'"
            ) from error
        executor = submitit.SlurmExecutor(folder=request.folder)
        executor.update_parameters(**sbatch_parameters(request))
        jobs = []
        try:
            with executor.batch():  # one sbatch --array, one task per argument tuple
                for args in request.args:
                    jobs.append(executor.submit(request.function, *args))
        except submitit.core.utils.UncompletedJobError as error:  # sbatch exited non-zero; its stderr
            raise RuntimeError(f"sbatch refused the job array: {str(error).strip()}") from error
        return [SubmittedJob(job.job_id, job.paths.stdout, job.paths.stderr) for job in jobs]

    def _squeue(self) -> list[tuple[str, str, str, str]]:
        """(id, state, reason, name) of this user's jobs, finished ones included while Slurm keeps
        them, array tasks one by one (``--array``: a queued array is otherwise one ``12_[0-9]`` line)."""
        command = ["squeue", "--noheader", "--array", "--states=all", f"--user={self.user}", "--format=%i|%T|%r|%j"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SchedulerUnavailable(f"squeue failed: {error}") from error
        if done.returncode != 0:
            raise SchedulerUnavailable(f"squeue exited {done.returncode}: {done.stderr.strip()}")
        rows = (line.split("|", 3) for line in done.stdout.splitlines())
        return [(row[0].strip(), row[1].strip(), row[2].strip(), row[3]) for row in rows if len(row) == 4]

    def _sacct(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        """Accounting's states of finished jobs; empty where the cluster keeps no accounting."""
        command = ["sacct", "--noheader", "--parsable2", "--allocations", "--format=JobID,State", "--jobs"]
        try:
            done = subprocess.run(
                [*command, ",".join(job_ids)], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
            )
        except (OSError, subprocess.TimeoutExpired):
            return {}
        return parse_sacct(done.stdout, job_ids) if done.returncode == 0 else {}

    def states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        wanted = set(job_ids)
        found = {job_id: JobState(state, phase(state), reason) for job_id, state, reason, _ in self._squeue()}
        states = {job_id: found[job_id] for job_id in wanted if job_id in found}
        missing = sorted(wanted - set(states))
        if missing:
            states.update(self._sacct(missing))
        return states

    def active(self) -> dict[str, tuple[str, int]]:
        return {
            job_id: (name, array_index(job_id)) for job_id, state, _, name in self._squeue() if phase(state) != "ended"
        }
