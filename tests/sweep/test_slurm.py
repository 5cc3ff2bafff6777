"""The sweep on a real Slurm: a single-node cluster (slurmctld + slurmd + munged, CPU only)
started for this module by scripts/slurm_test_cluster.sh, 2 model settings x 1 task with
``--limit 2`` through ``--launcher slurm``, a second sweep on the same folder while the jobs
run, one job killed with ``scancel`` while its lm_eval runs, and the rerun that reruns only
that pair.

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
from custom_metrics.sweep.slurm import parse_sacct
from tests.helpers import MIRROR, REPO
from tests.sweep.processes import until

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

CLUSTER_SCRIPT = REPO / "scripts" / "slurm_test_cluster.sh"
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sacct")
PAIRS = [(m, "geese_noexp") for m in ("gemma", "gemma-len512")]
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
    """job id -> (state, name) of every job squeue still shows (finished ones for MinJobAge)."""
    rows = (line.split("|") for line in _slurm(env, "squeue", "-h", "-t", "all", "-o", "%i|%T|%j").splitlines())
    return {job_id: (state, name) for job_id, state, name in rows}


def _job_id(out: Path, model: str, task: str) -> str | None:
    try:
        return json.loads((out / model / task / "cluster_job.json").read_text())["job_id"]
    except (OSError, ValueError, KeyError):
        return None


def test_sweep_through_a_real_slurm_cancel_one_job_and_rerun_only_it(
    slurm_env: dict[str, str], embedded_model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sweep"
    models = (
        f"gemma::pretrained={embedded_model},dtype=float32 "
        f"gemma-len512::pretrained={embedded_model},dtype=float32,max_length=512"
    )
    command = [sys.executable, "-m", "custom_metrics.cli", "sweep", "--models", models]
    command += ["--tasks", "geese_noexp", "--out", str(out), "--limit", "2", "--batch-size", "4"]
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

        ids = until("both submitted jobs", submitted, first, timeout_s=180)
        queue = _queue(slurm_env)
        assert {job_id for job_id in ids.values()} <= set(queue), queue  # really in Slurm's queue
        assert all(queue[job_id][1].startswith(f"ee-{m}-{t}-") for (m, t), job_id in ids.items())

        # a second sweep on the same folder while the jobs are queued or running submits nothing
        second = subprocess.run([*command, "--no-wait"], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "submitted job" not in second.stdout and second.stdout.count("attached to job") >= 2
        assert len(_queue(slurm_env)) == 2

        # kill one pair's job while its lm_eval runs (the job recorded it)
        victim = ids[("gemma", "geese_noexp")]
        until("the job's lm_eval to run", lambda: (out / "gemma" / "geese_noexp" / RUN_FILE).is_file(), first)
        _slurm(slurm_env, "scancel", victim)
        assert first.wait(timeout=DEADLINE_S) == 1, log.read_text()[-5000:]
    finally:
        if first.poll() is None:
            first.kill()
    text = log.read_text()
    assert f"[1/2] gemma x geese_noexp: failed (job {victim} CANCELLED" in text, text[-5000:]
    failure = text[text.index("FAILED gemma x geese_noexp:") :]
    assert "CANCELLED AT" in failure and f"{victim}_0_log.err" in failure  # the job's stderr tail
    assert "sweep: 1 run, 0 skipped (already complete), 1 failed" in text
    assert (out / "leaderboard" / "geese.csv").is_file()  # built with what finished
    markers = {pair: out / pair[0] / pair[1] / "lm_eval.done" for pair in PAIRS}
    assert [pair for pair, marker in markers.items() if not marker.is_file()] == [("gemma", "geese_noexp")]
    stamps = {pair: marker.stat().st_mtime_ns for pair, marker in markers.items() if marker.is_file()}

    rerun = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stdout[-5000:] + rerun.stderr[-5000:]
    # CANCELLED while squeue remembers it (MinJobAge, 300 s), else "ended unfinished" (no sacct here)
    assert f"gemma x geese_noexp: resubmitted (job {victim} " in rerun.stdout
    assert rerun.stdout.count("submitted job") == 1 and "sweep: 1 run, 1 skipped" in rerun.stdout
    assert {pair: m.stat().st_mtime_ns for pair, m in markers.items() if pair in stamps} == stamps
    new_id = _job_id(out, "gemma", "geese_noexp")
    assert new_id not in ids.values()

    # the scheduler's own record: three jobs, the killed one CANCELLED (the job completion log,
    # read by the parser the sweep uses for sacct on clusters with accounting)
    completed = _slurm(slurm_env, "sacct", "--completion", "--noheader", "--parsable2", "--format=JobID,State")
    finished = {job_id: state.state for job_id, state in parse_sacct(completed, [*ids.values(), new_id]).items()}
    assert finished == {job_id: "CANCELLED" if job_id == victim else "COMPLETED" for job_id in [*ids.values(), new_id]}

    for model, task in PAIRS:
        done = json.loads(markers[(model, task)].read_text())
        (results_file,) = (out / model / task).rglob("results_*.json")  # the cancelled run's files set aside
        assert done["results"] == [str(results_file.relative_to(out / model / task))]
        results = json.loads(results_file.read_text())
        assert results["config"]["limit"] == 2 and task in results["results"]
    with (out / "leaderboard" / "geese.csv").open(newline="") as handle:
        rows = [row["model"] for row in csv.DictReader(handle)]
    assert any(row.startswith("gemma-len512") for row in rows) and any(
        row.startswith("gemma") and not row.startswith("gemma-len512") for row in rows
    ), rows
