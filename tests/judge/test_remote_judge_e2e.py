"""A remote judge that hangs or floods stops a real ``lm_eval`` run in time and in memory, with
the suite's one line and exit status 2, naming the judge and its URL.

The probe's two servers, on 127.0.0.1: one accepts the connection and never answers (its
``GET /models`` works, so the availability check passes), one streams an endless body. Before,
the first held ``reg_chaos`` silent for the client's timeouts times its retries (20 minutes
and more), the second grew ``lm_eval`` past 5.7 GB in 75 s. The run is the real CLI with the
harness' ``dummy`` model: the judge's check runs while the task is built, before any model
is asked anything, so the generator plays no part (tests/reg/test_fail_fast_e2e.py runs the
same check with the embedded model).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import MIRROR, TASKS_DIR
from tests.judge.endpoint_server import EndpointServer, Reply

pytestmark = pytest.mark.e2e

CHECK_DEADLINE_S = 5
# lm_eval's start (imports, task index) plus the deadline, on a busy machine: far below the
# 20 minutes a silent judge cost before, and what a run that never stops would exceed.
RUN_LIMIT_S = 300
MEMORY_LIMIT = 3 * 1024**3  # lm_eval with the dummy model holds well under it; the endless body went past 5.7 GB


def _run_reg_chaos(server: EndpointServer, tmp_path: Path) -> tuple[subprocess.CompletedProcess, float, int]:
    """``lm_eval`` on ``reg_chaos`` judged by the server: its outcome, wall-clock seconds, peak memory (bytes)."""
    command = [
        str(Path(sys.executable).with_name("lm_eval")), "--model", "dummy", "--tasks", "reg_chaos",
        "--include_path", str(TASKS_DIR), "--limit", "2", "--output_path", str(tmp_path / "out"),
        "--metadata", json.dumps({"judge": f"openai:remote-judge@{server.url}"}),
    ]  # fmt: skip
    env = {
        **os.environ,
        "EXPLAIN_EVAL_DATA": str(MIRROR),
        "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path / "verdicts"),
        "EXPLAIN_EVAL_JUDGE_CHECK_DEADLINE": str(CHECK_DEADLINE_S),
        "HF_HUB_OFFLINE": "1",
    }
    started, pid = time.monotonic(), 0
    with (tmp_path / "stdout").open("w+") as out, (tmp_path / "stderr").open("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=tmp_path)
        try:
            while True:  # wait4: the child's own peak memory, not the test's
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - started > RUN_LIMIT_S:
                    pytest.fail(f"lm_eval did not stop in {RUN_LIMIT_S} s with this judge")
                time.sleep(0.2)
        finally:
            if not pid:
                process.kill()
                process.wait()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        completed = subprocess.CompletedProcess(command, process.returncode, out.read(), err.read())
    return completed, time.monotonic() - started, usage.ru_maxrss * 1024


@pytest.fixture()
def server():
    scripted = EndpointServer(lambda body: Reply(silent=True))
    yield scripted
    scripted.close()


def _last_line(completed: subprocess.CompletedProcess) -> str:
    assert completed.returncode == 2, completed.stderr[-3000:]
    return completed.stderr.rstrip().splitlines()[-1]


def test_a_judge_that_never_answers_stops_the_run_at_the_checks_deadline(server, tmp_path) -> None:
    completed, took, _ = _run_reg_chaos(server, tmp_path)
    line = _last_line(completed)
    assert line.startswith("error: reg_chaos: judge openai:remote-judge@") and "Traceback" not in completed.stderr
    assert f"{server.url}/chat/completions" in line
    assert (
        f"no whole answer within the check's deadline of {CHECK_DEADLINE_S} s (EXPLAIN_EVAL_JUDGE_CHECK_DEADLINE)"
        in line
    )
    assert server.requests >= 1 and took < RUN_LIMIT_S
    assert not list((tmp_path / "out").glob("**/results_*.json"))


def test_a_judge_streaming_an_endless_body_stops_the_run_in_bounded_memory(server, tmp_path) -> None:
    server.script = lambda body: Reply(b'{"choices": [{"message": {"content": "' + b"Neutral " * 128, endless=True)
    completed, took, peak = _run_reg_chaos(server, tmp_path)
    line = _last_line(completed)
    assert f"{server.url}/chat/completions sent more than 68 KiB, the bound for this answer" in line
    assert peak < MEMORY_LIMIT and took < RUN_LIMIT_S, (peak, took)
