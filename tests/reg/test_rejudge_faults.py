"""``explain-eval rejudge`` when things go wrong mid-way: a completion stopped between its two
writes, a judge that fails part-way through, a run folder that cannot be written.

The run is the demo's real REG run (``tests/fixtures/leaderboard/demo-generation``), copied and,
for a completion, made into what ``reg_chaos`` logs when its judge dies after generation (every
record without verdicts, the judged numbers NaN: ``judging.unjudged_record``, then the task's own
per-sample metrics and aggregation). Judges are a tiny random classifier (loads in a second) and
a scripted local endpoint (tests/judge/endpoint_server.py).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from custom_metrics.cli import main
from custom_metrics.reg import rejudge as reg_rejudge
from custom_metrics.reg.data import judge_check_docs, load_items
from custom_metrics.reg.judging import read_record
from custom_metrics.reg.metrics import process_results
from tests.helpers import LEADERBOARD_FIXTURES
from tests.judge.endpoint_server import EndpointServer, Reply, completion
from tests.reg.judges import tiny_judge_metadata


@pytest.fixture()
def demo_run(tmp_path: Path) -> Path:
    shutil.copytree(LEADERBOARD_FIXTURES / "demo-generation", tmp_path / "run")
    return tmp_path / "run"


def _files(run: Path) -> tuple[Path, Path]:
    (results,) = run.glob("*/results_*.json")
    (samples,) = run.glob("*/samples_reg_chaos_*.jsonl")
    return results, samples


def unjudged(run: Path) -> Path:
    """The run as ``reg_chaos`` logs it when its judge fails after generation; its results file."""
    results_file, samples_file = _files(run)
    samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    for sample in samples:
        record = read_record(sample["filtered_resps"][0])
        kept = {key: value for key, value in record.items() if key not in reg_rejudge.VERDICT_FIELDS}
        filtered = json.dumps({**kept, "judge": record["judge"], "judge_error": "ConnectionError: refused"})
        sample.update(filtered_resps=[filtered], **process_results(sample["doc"], [filtered]))
    samples_file.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    results = json.loads(results_file.read_text())
    results["results"]["reg_chaos"].update(reg_rejudge.aggregate("reg_chaos", samples, 0))
    results_file.write_text(json.dumps(results))
    assert math.isnan(results["results"]["reg_chaos"]["n,judged"])
    return results_file


JUDGED = ("n", "coherence", "effectiveness", "success")  # the numbers a judge's verdicts decide


class Killed(BaseException):
    """What a kill does to the command: it stops there, no handler runs."""


def _judged(results_file: Path) -> dict[str, Any]:
    """The judged numbers of a results file, as written (NaN compares equal to NaN)."""
    entry = json.loads(results_file.read_text())["results"]["reg_chaos"]
    return {key: str(value) for key, value in entry.items() if key.split(",")[0] in JUDGED}


def test_a_completion_killed_between_its_two_writes_is_finished_by_the_rerun(
    demo_run: Path, tmp_path: Path, fixture_mirror: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    judge = tiny_judge_metadata(tmp_path)["judge"]
    complete = ["rejudge", "--complete", judge, "--judge-cache", str(tmp_path / "verdicts")]
    # the same completion, never stopped: what the killed one must end as
    reference = tmp_path / "reference"
    shutil.copytree(demo_run, reference)
    assert main([*complete, str(unjudged(reference))]) == 0
    unjudged_results = unjudged(demo_run)
    expected = _judged(next(reference.glob("*/results_*.json")))
    assert expected["n,judged"] != "nan"

    replace = os.replace

    def killed_before_the_results_file(source, target, *args, **kwargs):
        if Path(target) == unjudged_results:
            raise Killed  # the samples file is replaced already; the results file never is
        return replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", killed_before_the_results_file)
    with pytest.raises(Killed):
        main([*complete, str(unjudged_results)])
    monkeypatch.setattr(os, "replace", replace)
    assert _judged(unjudged_results)["n,judged"] == "nan"  # the state the kill left
    assert not reg_rejudge._unjudged(reg_rejudge._read(unjudged_results, "reg_chaos")[1])
    capsys.readouterr()

    assert main([*complete, str(unjudged_results)]) == 0
    out = capsys.readouterr().out
    assert "did not count the verdicts its samples hold" in out and "nothing to complete" not in out
    assert _judged(unjudged_results) == expected
    assert main([*complete, str(unjudged_results)]) == 0  # and from then on, there is nothing to do
    assert "nothing to complete" in capsys.readouterr().out


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).with_name("explain-eval")), *args]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)


def test_a_judge_failing_mid_way_is_one_line_and_the_rerun_resumes(
    demo_run: Path, tmp_path: Path, fixture_mirror: Path
) -> None:
    # the judge check's gold items and call 1's two items are answered, call 2's first request too, then the
    # server refuses every request (HTTP 400: not retried) until it is told to answer again
    gold = len(judge_check_docs(load_items()))
    answered = gold + 2 + 1
    refusing = threading.Event()

    def script(body: dict) -> Reply:
        if server.requests > answered and not refusing.is_set():
            return Reply(b'{"error": "model unloaded"}', status=400)
        return Reply(completion("Contradiction"))

    server = EndpointServer(script)
    try:
        judge = f"openai:scripted@{server.url}?concurrency=1"
        # the REG run's results file: its folder also holds an IBE score folder, which this judge would judge too
        command = ["rejudge", str(_files(demo_run)[0]), "--judge", judge, "--judge-check", "warn"]
        env = {"EXPLAIN_EVAL_DATA": str(fixture_mirror), "EXPLAIN_EVAL_JUDGE_CACHE": str(tmp_path / "verdicts")}
        failed = _cli(*command, env=env)
        assert failed.returncode != 0, failed.stdout + failed.stderr[-3000:]
        assert "Traceback" not in failed.stderr, failed.stderr[-3000:]
        line = failed.stderr.strip().splitlines()[-1]  # after the check's warning that the judge is degenerate
        assert line.startswith("explain-eval rejudge: judge openai:scripted@") and server.url in line
        assert "reg_chaos item 47639c" in line and "HTTP 400" in line  # the item it stopped at, and why
        assert f"{gold + 2} of its verdicts are kept in the verdict cache" in line, line
        assert "Rerun the same command" in line
        assert not list(demo_run.rglob("rejudge/*/samples_*"))  # nothing half-judged beside the run

        refusing.set()  # the judge answers again: the rerun asks only for what was not kept
        before = server.requests
        rerun = _cli(*command, env=env)
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert server.requests - before == 4  # call 2's four verdicts; the check's and call 1's are cached
    finally:
        server.close()


@contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` made read-only: a read-only bind mount of it on itself where the tests run as root (root
    writes through any permission bits), else its permission bits; skips, saying why, where neither works."""
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in [folder, *folder.rglob("*")] if path.is_dir()}
        for path in modes:
            path.chmod(0o555)
        try:
            yield folder
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    bound = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True, text=True)
    if bound.returncode != 0:
        pytest.skip(f"root, and no bind mount here to make a folder read-only ({bound.stderr.strip()})")
    try:
        made = subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"root, and the bind mount cannot be made read-only ({made.stderr.strip()})")
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("mode", ["--judge", "--complete"])
def test_a_read_only_run_is_named_before_any_judging(
    demo_run: Path, tmp_path: Path, fixture_mirror: Path, mode: str, capsys
) -> None:
    judge = tiny_judge_metadata(tmp_path)["judge"]
    results_file = unjudged(demo_run) if mode == "--complete" else _files(demo_run)[0]
    before = {path: path.read_bytes() for path in demo_run.rglob("*") if path.is_file()}
    cache = tmp_path / "verdicts"
    capsys.readouterr()  # the judge's building
    with read_only(demo_run):
        code = main(["rejudge", str(demo_run), mode, judge, "--judge-cache", str(cache), "--judge-check", "warn"])
    error = capsys.readouterr().err
    assert code == 2 and len(error.strip().splitlines()) == 1, error
    assert str(results_file.parent) in error and "it has no --out option" in error and "(--out)" not in error
    assert "copy the run's folder to a writable disk and pass the copy" in error and "--judge-cache" in error
    assert "read-only" in error or "permission denied" in error
    assert {path: path.read_bytes() for path in demo_run.rglob("*") if path.is_file()} == before
    verdicts = cache / "verdicts.sqlite"  # nothing judged: the judge check's gold items neither
    count = "SELECT COUNT(*) FROM verdicts"
    assert not verdicts.exists() or sqlite3.connect(verdicts).execute(count).fetchone() == (0,)


def test_a_judge_failing_on_its_check_is_one_line(demo_run: Path, tmp_path: Path, fixture_mirror: Path, capsys) -> None:
    server = EndpointServer(lambda body: Reply(b'{"error": "no such model"}', status=404))
    try:
        judge = f"openai:scripted@{server.url}?concurrency=1"
        code = main(["rejudge", str(demo_run), "--judge", judge, "--judge-cache", str(tmp_path / "verdicts")])
    finally:
        server.close()
    error = capsys.readouterr().err.strip()
    assert code == 2 and len(error.splitlines()) == 1, error
    assert "stopped at the gold items of its check: EndpointError: HTTP 404" in error
    assert "0 of its verdicts are kept" in error and "nothing of this judge is judged or written yet" in error
