"""A remote judge that hangs and floods stops a real ``lm_eval`` run in time and in memory, with
the suite's one line and exit status 2, naming the judge and its URL.

The probe's two servers in one, on 127.0.0.1: its ``GET /models`` works (so the availability
check passes), the first request of REG's judge check is accepted and never answered, the
second gets an endless body. Before, the first held ``reg_chaos`` silent for the client's
timeouts times its retries (20 minutes and more), the second grew ``lm_eval`` past 5.7 GB in
75 s. The check sends its requests in parallel, so the endless one streams while the run waits
on the silent one: the run must cut the stream at its bound (the server sees it hang up) and
stop at the check's deadline. The run is the real CLI with the harness' ``dummy`` model: the
check runs while the task is built, before any model is asked anything
(tests/reg/test_fail_fast_e2e.py runs the other failing judges with the embedded model).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from custom_metrics.reg.data import judge_check_docs, load_items
from tests.helpers import MIRROR, TASKS_DIR
from tests.judge.endpoint_server import EndpointServer, Reply

pytestmark = pytest.mark.e2e

CHECK_DEADLINE_S = 3
# lm_eval's start (imports, task index) plus the deadline, on a busy machine: far below the
# 20 minutes a silent judge cost before, and what a run that never stops would exceed.
RUN_LIMIT_S = 300
MEMORY_LIMIT = 2 * 1024**3  # lm_eval with the dummy model peaks near 440 MiB here; the endless body went past 5.7 GB


def _peak_memory(pid: int) -> int:
    """The process's peak resident memory so far (bytes): VmHWM counts from its exec, not the
    forked test process it started as (which wait4's ru_maxrss would include)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmHWM:")), 0)


def _script(silent: str, endless: str):
    """The server's answers: none to the request naming ``silent``, an endless body to the one naming ``endless``."""

    def answer(body: dict) -> Reply:
        prompt = json.dumps(body.get("messages"))
        if endless in prompt and silent not in prompt:
            return Reply(b'{"choices": [{"message": {"content": "' + b"Neutral " * 128, endless=True)
        return Reply(silent=True)

    return answer


def test_a_judge_that_hangs_and_floods_stops_the_run_at_the_checks_deadline_in_bounded_memory(
    tmp_path, fixture_mirror
) -> None:
    # the check waits on its gold items in order: the first never answered, the second streaming meanwhile
    first, second = judge_check_docs(load_items())[:2]
    server = EndpointServer(_script(json.dumps(first["premise"])[1:-1], json.dumps(second["premise"])[1:-1]))
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
    started, peak = time.monotonic(), 0
    try:
        with (tmp_path / "stderr").open("w+") as err:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=tmp_path)
            try:
                while process.poll() is None:
                    peak = max(peak, _peak_memory(process.pid))
                    if time.monotonic() - started > RUN_LIMIT_S:
                        pytest.fail(f"lm_eval did not stop in {RUN_LIMIT_S} s with this judge")
                    time.sleep(0.2)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            err.seek(0)
            stderr = err.read()
    finally:
        server.close()
    took = time.monotonic() - started
    assert process.returncode == 2, stderr[-3000:]
    line = stderr.rstrip().splitlines()[-1]
    assert line.startswith("error: reg_chaos: judge openai:remote-judge@") and "Traceback" not in stderr, line
    deadline = f"the check's deadline of {CHECK_DEADLINE_S} s (EXPLAIN_EVAL_JUDGE_CHECK_DEADLINE)"
    assert f"POST {server.url}/chat/completions: no whole answer within {deadline}" in line
    assert server.requests >= 2 and server.hung_up >= 1  # the endless answer was cut off, not read on
    assert 0 < peak < MEMORY_LIMIT and took < RUN_LIMIT_S, (peak, took)
    assert not list((tmp_path / "out").glob("**/results_*.json"))
