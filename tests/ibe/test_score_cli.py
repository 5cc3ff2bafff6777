"""``explain-eval ibe score`` and ``report`` on hostile rows: a 10 MB explanation and a
1,000-step one are scored within the caps in bounded memory (``score`` in a child process of
its own, whose peak memory is measured; ``report`` through the same command line in this one),
a stale judge file from an earlier run is not reported, and report.json is strict JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ibe_postprocess import features_file
from ibe_postprocess.cli import main as ibe
from ibe_postprocess.folder import FeaturesFolder
from ibe_postprocess.parsing import MAX_STEPS
from tests.helpers import BALLOON, REPO

# Without the caps the 1,000-step explanation alone took 2.3 GB for its similarity matrix
# (and the 10 MB one stopped the run); with them the whole run stays near its models' size.
PEAK_RSS_BOUND_MIB = 2048
CPU_BOUND_S = 300  # generous (about 30 s here, most of it model loads); the uncapped proof alone took 27 s


# A child's peak RSS (ru_maxrss) starts at its parent's: Linux records the memory a process
# had before exec, and a child forked from pytest has all of pytest's. A small launcher forks
# the command and reports its usage, so the figure is the command's own (and its workers').
_LAUNCHER = """
import json, os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024], out)
"""


def _cli(*args: str) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``explain-eval`` in a child process; its exit, CPU seconds and peak RSS (MiB), from wait4."""
    command = [sys.executable, "-m", "custom_metrics.cli", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as scratch:
        usage_file = Path(scratch) / "usage.json"
        launched = [sys.executable, "-c", _LAUNCHER, str(usage_file), *command[1:]]
        finished = subprocess.run(launched, capture_output=True, text=True, env=env, check=False)
        code, cpu, peak = json.loads(usage_file.read_text())
    return subprocess.CompletedProcess(command, code, finished.stdout, finished.stderr), cpu, peak


@pytest.mark.slow
def test_hostile_rows_are_scored_within_the_caps(tmp_path: Path, tiny_nli: Path) -> None:
    rows = [json.loads(line) for line in BALLOON.read_text().splitlines()]
    train = [{**row, "qid": "balloon-train", "split": "train"} for row in rows]
    head = rows[0]["explanation"].split("\nTherefore")[0]
    hostile = [
        {**rows[0], "qid": "hostile", "explanation": head + "\n" + "lol " * 2_500_000},  # 10 MB
        {**rows[1], "qid": "hostile", "explanation": "\n".join(f"IF p{k}, THEN p{k + 1}" for k in range(1000))},
    ]
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps(row) + "\n" for row in train + rows + hostile))
    out = tmp_path / "features"
    out.mkdir()
    (out / "judge.jsonl").write_text('{"qid": "old", "choice": 1, "gold": 1, "source": "an earlier run"}\n')
    done, cpu, peak = _cli(
        "ibe",
        "score",
        str(inputs),
        "--out",
        str(out),
        "--nli-judge",
        f"seqcls:{tiny_nli}",
        "--certainty-model",
        "lexicon",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert peak < PEAK_RSS_BOUND_MIB and cpu < CPU_BOUND_S, (peak, cpu)
    # what "flagged" means is on screen, with the reasons that came up most
    assert "flagged: scored, but something was off, said in the row's 'flag' field" in done.stdout, done.stdout
    (said,) = [line for line in done.stdout.splitlines() if line.startswith("flagged: ")]
    assert "most often: " in said and "explanation longer than 20,000 characters" in said, said
    features = {(r["qid"], r["option"]): r for r in features_file.read(FeaturesFolder(out)).rows}
    huge, long = features["hostile", 1], features["hostile", 2]
    assert huge["n_steps"] == 2 and huge["flag"].startswith("explanation longer than 20,000 characters")
    assert huge["drift"] is not None and huge["coherence"] is not None
    assert long["n_steps"] == MAX_STEPS and f"more than {MAX_STEPS} steps: {1000 - MAX_STEPS}" in long["flag"]
    assert long["program"].count(":-") == MAX_STEPS and long["proof_status"] == "complete"
    assert not (out / "judge.jsonl").exists()  # the earlier run's judge is not this run's

    assert ibe(["report", str(out)]) == 0  # in this process: only the scoring's memory is measured
    assert "(this run) |" not in (out / "report.md").read_text()  # no judge row of this run
    text = (out / "report.json").read_text()
    summary = json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    assert all(entry["judge"] is None for entry in summary["datasets"].values()) and "NaN" not in text
