"""The sweep on a real Slurm: a single-node cluster (slurmctld + slurmd + munged, CPU only)
started once for this module by scripts/slurm_test_cluster.sh, 2 model settings x 3 tasks
with ``--limit 2`` through ``--launcher slurm`` as one job array of 2 tasks (one per model,
each loading its model once for its 3 tasks), a second sweep on the same folder while they
run, one array task killed with ``scancel`` while its lm_eval runs, and the resume that
reruns only that model's tasks and one finished task whose marker was removed, alone.

The cluster keeps no accounting database (no slurmdbd): plain ``sacct`` fails as on many
small clusters, so the sweep reads states from ``squeue``; the job completion log is read
here with ``sacct --completion``. Skipped where Slurm is not installed or not root."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from custom_metrics.sweep.child import RUN_FILE
from tests.helpers import MIRROR, REPO
from tests.sweep.processes import until

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

CLUSTER_SCRIPT = REPO / "scripts" / "slurm_test_cluster.sh"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sacct")
MODELS = ("gemma", "gemma-len512")
TASKS = ("geese_noexp", "geese_human", "geese_dummy")
PAIRS = [(m, t) for m in MODELS for t in TASKS]
DEADLINE_S = 900


def _installed(command: str) -> bool:
    return shutil.which(command) is not None or Path("/usr/sbin", command).is_file()


@pytest.fixture(scope="module")
def slurm_env() -> Iterator[dict[str, str]]:
    """The environment of a process that talks to the test cluster (SLURM_CONF)."""
    missing = [command for command in DAEMONS if not _installed(command)]
    if missing:
        pytest.skip(
            f"Slurm is not installed ({', '.join(missing)} missing); scripts/install_slurm.sh "
            "(run by make install as root) installs slurm-wlm and munge"
        )
    if os.geteuid() != 0:
        pytest.skip("starting slurmd needs root (it starts every job); run the tests as root to include Slurm")
    folder = Path(tempfile.mkdtemp(prefix="ee-slurm-", dir="/tmp"))  # short: munge's socket path has a limit
    started = subprocess.run([str(CLUSTER_SCRIPT), "start", str(folder)], capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, f"the test cluster did not start:\n{started.stderr[-5000:]}"
    env = {**os.environ, "SLURM_CONF": str(folder / "slurm.conf"), "PATH": f"/usr/sbin:{os.environ['PATH']}"}
    try:
        yield env
    finally:
        subprocess.run([str(CLUSTER_SCRIPT), "stop", str(folder)], capture_output=True, text=True, timeout=180)
        shutil.rmtree(folder, ignore_errors=True)


def _slurm(env: dict[str, str], *command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}: {done.stderr}"
    return done.stdout


def _queue(env: dict[str, str]) -> dict[str, tuple[str, str]]:
    """job id -> (state, name) of every job squeue still shows (finished ones for MinJobAge), array tasks one by one."""
    rows = (line.split("|") for line in _slurm(env, "squeue", "-h", "-r", "-t", "all", "-o", "%i|%T|%j").splitlines())
    return {job_id: (state, name) for job_id, state, name in rows}


def _job_id(out: Path, model: str, task: str) -> str | None:
    try:
        return json.loads((out / model / task / "cluster_job.json").read_text())["job_id"]
    except (OSError, ValueError, KeyError):
        return None


def _starts(log: Path) -> int:
    """How many lm_eval runs a log records (one header line each)."""
    return sum(line.startswith("### ") for line in log.read_text().splitlines()) if log.is_file() else 0


def test_sweep_as_one_job_array_cancel_one_model_and_resume_only_what_is_missing(
    slurm_env: dict[str, str], embedded_model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sweep"
    models = (
        f"gemma::pretrained={embedded_model},dtype=float32 "
        f"gemma-len512::pretrained={embedded_model},dtype=float32,max_length=512"
    )
    command = [sys.executable, "-m", "custom_metrics.cli", "sweep", "--models", models]
    command += ["--tasks", ",".join(TASKS), "--out", str(out), "--limit", "2", "--batch-size", "4"]
    command += ["--device", "cpu", "--launcher", "slurm", "--slurm-partition", "debug", "--slurm-cpus", "1"]
    command += ["--slurm-mem", "4G", "--slurm-time", "30", "--poll-seconds", "1"]
    env = {**slurm_env, "EXPLAIN_EVAL_DATA": str(MIRROR), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    log = tmp_path / "first.log"
    with log.open("w") as handle:
        first = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:

        def submitted() -> dict[tuple[str, str], str] | None:
            ids = {pair: _job_id(out, *pair) for pair in PAIRS}
            return ids if all(ids.values()) else None

        ids = until("every pair's array task", submitted, first, timeout_s=180)
        tasks = {model: {ids[(model, task)] for task in TASKS} for model in MODELS}
        assert all(len(job_ids) == 1 for job_ids in tasks.values()), ids  # one array task per model
        (gemma,), (other,) = tasks["gemma"], tasks["gemma-len512"]
        array = gemma.partition("_")[0]
        assert {gemma, other} == {f"{array}_0", f"{array}_1"}  # two tasks of one array
        queue = _queue(slurm_env)
        assert {gemma, other} <= set(queue), queue  # really in Slurm's queue, as array tasks
        assert queue[gemma][1] == queue[other][1] and queue[gemma][1].startswith("ee-sweep-")

        # a second sweep on the same folder while the tasks are queued or running submits nothing
        second = subprocess.run([*command, "--no-wait"], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "submitted job" not in second.stdout and second.stdout.count("attached to job") == len(PAIRS)
        assert len(_queue(slurm_env)) == 2

        # kill the gemma model's array task while its one lm_eval runs (the job recorded it)
        until("the shared lm_eval to run", lambda: (out / "gemma" / "_batch" / RUN_FILE).is_file(), first)
        _slurm(slurm_env, "scancel", gemma)
        assert first.wait(timeout=DEADLINE_S) == 1, log.read_text()[-5000:]
    finally:
        if first.poll() is None:
            first.kill()
    text = log.read_text()
    assert f"[1/6] gemma x geese_noexp: failed (job {gemma} CANCELLED" in text, text[-5000:]
    failure = text[text.index("FAILED gemma x geese_noexp:") :]
    assert "CANCELLED AT" in failure and f"{gemma}_0_log.err" in failure  # the job's stderr tail
    assert "sweep: 3 run, 0 skipped (already complete), 3 failed" in text
    assert (out / "leaderboard" / "geese.csv").is_file()  # built with what finished
    markers = {pair: out / pair[0] / pair[1] / "lm_eval.done" for pair in PAIRS}
    assert [pair for pair, marker in markers.items() if not marker.is_file()] == [("gemma", t) for t in TASKS]
    assert _starts(out / "gemma-len512" / "_batch" / "lm_eval.log") == 1  # one load for its three tasks
    markers[("gemma-len512", "geese_human")].unlink()  # a finished task that lost its marker runs again, alone
    stamps = {pair: marker.stat().st_mtime_ns for pair, marker in markers.items() if marker.is_file()}

    rerun = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stdout[-5000:] + rerun.stderr[-5000:]
    # CANCELLED while squeue remembers it (MinJobAge, 300 s), else "ended unfinished" (no sacct here)
    assert f"gemma x geese_noexp: resubmitted (job {gemma} " in rerun.stdout
    assert "sweep: 4 run, 2 skipped" in rerun.stdout, rerun.stdout[-3000:]
    assert {pair: m.stat().st_mtime_ns for pair, m in markers.items() if pair in stamps} == stamps
    again = {pair: _job_id(out, *pair) for pair in PAIRS if pair not in stamps}
    (resumed,) = {job_id.partition("_")[0] for job_id in again.values()}  # one new array, two tasks
    assert resumed != array and len(set(again.values())) == 2
    assert _starts(out / "gemma" / "_batch" / "lm_eval.log") == 2  # cancelled, then whole: one load each
    assert _starts(out / "gemma-len512" / "_batch" / "lm_eval.log") == 1  # its other tasks were not rerun
    assert _starts(out / "gemma-len512" / "geese_human" / "lm_eval.log") == 2  # the shared run, then alone

    for model, task in PAIRS:
        folder = out / model / task
        done = json.loads(markers[(model, task)].read_text())
        (results_file,) = folder.rglob("results_*.json")  # earlier files set aside
        assert done["results"] == [str(results_file.relative_to(folder))]
        results = json.loads(results_file.read_text())
        assert results["config"]["limit"] == 2 and list(results["results"]) == [task]
    with (out / "leaderboard" / "geese.csv").open(newline="") as handle:
        rows = [row["model"] for row in csv.DictReader(handle)]
    assert any(row.startswith("gemma-len512") for row in rows) and any(
        row.startswith("gemma") and not row.startswith("gemma-len512") for row in rows
    ), rows
