"""submitit's LocalExecutor behind the cluster sweep's Scheduler protocol.

Jobs are real processes started by submitit from pickled functions, as on Slurm; what a
local machine lacks is a queue and arrays, so each task of an array is a job of its own
that runs at once (its id the process', its index kept here). ``cancel``, ``forget_ended`` (a scheduler that
no longer remembers finished jobs, like Slurm after MinJobAge without accounting) and
``unreachable`` let tests reproduce what clusters do.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import submitit

from custom_metrics.sweep.cluster import ArrayRequest, JobState, SchedulerUnavailable, SubmittedJob

KILL_WAIT_S = 10.0  # Slurm's KillWait is 30 s by default


class LocalScheduler:
    name = "local"

    def __init__(self) -> None:
        self.jobs: dict[str, submitit.LocalJob] = {}
        self.names: dict[str, tuple[str, int]] = {}
        self.requests: list[ArrayRequest] = []
        self.unreachable = False
        self.forget_ended = False  # like Slurm after MinJobAge, with no accounting to ask

    def submit_array(self, request: ArrayRequest) -> list[SubmittedJob]:
        executor = submitit.LocalExecutor(folder=request.folder)
        executor.update_parameters(timeout_min=request.resources.time_min)
        submitted = []
        for index, args in enumerate(request.args):
            job = executor.submit(request.function, *args)
            self.jobs[job.job_id] = job
            self.names[job.job_id] = (request.name, index)
            submitted.append(SubmittedJob(job.job_id, job.paths.stdout, job.paths.stderr))
        self.requests.append(request)
        return submitted

    def states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        if self.unreachable:
            raise SchedulerUnavailable("the test made the scheduler unreachable")
        states = {job_id: self._state(job_id) for job_id in job_ids if job_id in self.jobs}
        return {k: v for k, v in states.items() if not (self.forget_ended and v.phase == "ended")}

    def active(self) -> dict[str, tuple[str, int]]:
        return {job_id: self.names[job_id] for job_id in self.jobs if self._state(job_id).phase != "ended"}

    def _state(self, job_id: str) -> JobState:
        job = self.jobs[job_id]
        state = job.state  # RUNNING, INTERRUPTED (killed by a signal) or FINISHED
        if state == "RUNNING":
            return JobState("RUNNING", "running")
        if state == "INTERRUPTED":
            return JobState("CANCELLED", "ended")
        success = (
            job.paths.result_pickle.exists()
            and submitit.core.utils.pickle_load(job.paths.result_pickle)[0] == "success"
        )
        return JobState("COMPLETED" if success else "FAILED", "ended")

    def wait(self, job_id: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while self._state(job_id).phase != "ended":
            if time.monotonic() > deadline:
                raise TimeoutError(f"local job {job_id} still running after {timeout_s} s")
            time.sleep(0.1)

    def cancel(self, job_id: str, timeout_s: float = 60.0) -> None:
        """Interrupt a job once it runs the pair (as scancel kills a running job)."""
        job, deadline = self.jobs[job_id], time.monotonic() + timeout_s
        while "Starting with" not in (job.paths.stdout.read_text() if job.paths.stdout.exists() else ""):
            if time.monotonic() > deadline:
                raise TimeoutError(f"local job {job_id} did not start within {timeout_s} s")
            time.sleep(0.1)
        job.cancel()  # SIGINT; then, as scancel after its KillWait, SIGKILL (a signal that arrived
        try:  # while submitit was still starting the function can be lost on a loaded machine)
            self.wait(job_id, KILL_WAIT_S)
        except TimeoutError:
            job._process.kill()
            self.wait(job_id)
