"""A REG run with a judge it cannot use stops before any generation.

One case runs the real ``lm_eval`` on the embedded model (``--model hf``) with ``reg_chaos``:
what proves that no generation request was made is the harness' own record, not timing:
with ``--use_cache`` lm-eval writes every response it gets to a sqlite file (sampled
generations included), which stays empty, and it logs "Running generate_until requests"
before it sends any, which never appears. The other cases take the same path in process
(``simple_evaluate`` builds the task, and so runs its checks, after the model and before any
request), on the harness' dummy model counting the requests it is sent: none.
"""

from __future__ import annotations

import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from tests.helpers import MIRROR, TASKS_DIR, hf_model_flags
from tests.reg.test_lm_object import CountingLM
from tests.serving import free_port

LIMIT_S = 60  # a wrong judge must cost less than a minute, lm_eval's start and model loading included


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cached_responses(prefix: Path) -> int:
    """Responses in the harness' ``--use_cache`` file (none if it was never written)."""
    files = list(prefix.parent.glob(f"{prefix.name}_rank*.db"))
    assert files, f"lm_eval wrote no cache file {prefix}_rank*.db: the check would prove nothing"
    total = 0
    for path in files:
        db = sqlite3.connect(path)
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        total += sum(db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in tables)
        db.close()
    return total


CASES = {
    "missing local path": (
        {"judge": "lm:/models/my-nli-judge"},
        r"judge lm:/models/my-nli-judge\?mode=loglik: there is no folder /models/my-nli-judge\. Pass the folder",
    ),
    "hub id not cached, offline": (
        {"judge": "seqcls:example-org/nli-judge-nobody-cached"},
        r"example-org/nli-judge-nobody-cached is not in the local Hugging Face cache and HF_HUB_OFFLINE=1 forbids "
        r"downloading it\. Download it where there is network",
    ),
    "endpoint on a closed port": (
        {"judge": "openai:judge@http://127.0.0.1:{port}/v1"},
        r"no answer from GET http://127\.0\.0\.1:\d+/v1/models .*Start the judge's server",
    ),
    "misspelled judge key": (
        {"jugde": "lm:/models/my-nli-judge"},
        r"--metadata key 'jugde' is read by no task of the suite: did you mean 'judge'\?",
    ),
}


CLI_CASE = "missing local path"


@pytest.mark.parametrize("case", [case for case in CASES if case != CLI_CASE])
def test_a_judge_that_cannot_work_stops_reg_chaos_before_any_request(case, fixture_mirror, monkeypatch, tmp_path):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    metadata, message = CASES[case]
    metadata = {key: value.format(port=free_port()) for key, value in metadata.items()}
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE_CACHE", str(tmp_path / "verdicts"))
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE", "")
    model = CountingLM()
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
    with pytest.raises(DataError, match=message):
        simple_evaluate(model=model, tasks=["reg_chaos"], limit=2, task_manager=manager)
    assert model.requests == 0


@pytest.mark.e2e
@pytest.mark.parametrize("case", [CLI_CASE])
def test_a_judge_that_cannot_work_stops_reg_chaos_before_generation(case, embedded_model, tmp_path):
    metadata, message = CASES[case]
    metadata = {key: value.format(port=free_port()) for key, value in metadata.items()}
    cache = tmp_path / "harness-cache"
    command = [
        str(Path(sys.executable).with_name("lm_eval")),
        *hf_model_flags(embedded_model),
        "--tasks", "reg_chaos", "--include_path", str(TASKS_DIR), "--limit", "2",
        "--metadata", json.dumps(metadata), "--use_cache", str(cache),
        "--log_samples", "--output_path", str(tmp_path / "out"),
    ]  # fmt: skip
    env = {
        **os.environ,
        "EXPLAIN_EVAL_DATA": str(MIRROR),
        "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path / "verdicts"),
        "EXPLAIN_EVAL_JUDGE": "",
        "HF_HUB_OFFLINE": "1",
    }
    started, cpu_before = time.monotonic(), _children_cpu_s()
    completed = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    elapsed, cpu = time.monotonic() - started, _children_cpu_s() - cpu_before
    log = completed.stdout + completed.stderr
    assert completed.returncode == 2, log[-3000:]
    assert re.search(message, log), log[-3000:]
    # the suite's one line is the last a user sees, not the end of a harness traceback
    last = completed.stderr.rstrip().splitlines()[-1]
    assert last.startswith("error: reg_chaos: ") and re.search(message, last) and "Traceback" not in log, log[-3000:]
    # no generation request: the harness never reached its request loop, its cache holds nothing
    assert "Running generate_until requests" not in log
    assert _cached_responses(cache) == 0
    assert not list((tmp_path / "out").glob("**/results_*.json"))
    # The time to the error is lm_eval's start and the generator's load, then seconds of checks.
    # Wall-clock time swells on a machine that other jobs share; the CPU time it took does not.
    print(f"{case}: error after {elapsed:.0f} s wall clock, {cpu:.0f} s of CPU")
    assert cpu < LIMIT_S, f"{case}: {cpu:.0f} s of CPU ({elapsed:.0f} s wall clock) to the error"
