"""A newcomer's first mistakes, each through the real command: the message says what happened
and what to do, on one line, with the exit status a script can test.

(The stale ``build/lib`` task copy and the one-line errors under ``lm_eval`` are
tests/common/test_task_loading.py; a wheel built in a clone leaving no ``build/`` is
tests/test_packaging.py; the sweep's one-line usage errors are tests/sweep/test_sweep_arguments.py.)
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from custom_metrics.cli import main as explain_eval
from ibe_postprocess import features_file
from ibe_postprocess.folder import FeaturesFolder
from tests.helpers import FIXTURES, MIRROR, tmpfs


@pytest.fixture()
def read_only_disk(tmp_path: Path):
    with tmpfs(tmp_path / "ro", "ro,size=1m") as mount:
        yield mount


def test_model_path_on_a_read_only_cache_names_the_cache_variable(read_only_disk: Path) -> None:
    """``model-path`` has no --out: the fix for an unwritable cache is EXPLAIN_EVAL_CACHE."""
    command = [sys.executable, "-m", "custom_metrics.cli", "model-path", "--model", "smollm2-135m-instruct"]
    env = {**os.environ, "EXPLAIN_EVAL_CACHE": str(read_only_disk)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("explain-eval model-path: ") and str(read_only_disk) in line
    assert "read-only" in line and "set EXPLAIN_EVAL_CACHE to one" in line and "--out" not in line


def test_ibe_score_on_a_glob_that_matched_nothing_names_log_samples(tmp_path: Path, capsys) -> None:
    pattern = tmp_path / "runs" / "*" / "samples_ibe_copa_*.jsonl"  # what the shell passes on when nothing matches
    code = explain_eval(["ibe", "score", str(pattern), "--out", str(tmp_path / "ibe")])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2 and f"{pattern}: no file matches this pattern" in line and "--log_samples" in line
    assert not (tmp_path / "ibe").exists()


def test_ibe_report_without_test_questions_says_how_to_get_them(tmp_path: Path, capsys) -> None:
    """``--limit 2`` holds the first training question only: the report says to raise it or use --samples."""
    with gzip.open(FIXTURES / "ibe" / "bench_features_5000.jsonl.gz", "rt") as handle:
        rows = [{**row, "coherence": 0.5} for row in map(json.loads, handle) if row["split"] == "train"][:4]
    folder = FeaturesFolder(tmp_path / "ibe")
    folder.root.mkdir()
    features_file.write(folder, features_file.Origin(("samples_ibe_copa_x.jsonl",), "0" * 64), rows, [])
    code = explain_eval(["ibe", "report", str(folder.root)])
    err = capsys.readouterr().err
    assert code == 2 and "got 4 train and 0 test rows (field 'split')" in err
    assert "--limit 4 or more" in err and "--samples" in err and "explain-eval ibe score" in err


@pytest.mark.e2e
def test_rule_protocol_after_a_small_limit_says_how_many_splits_hold_each_metric(tmp_path: Path) -> None:
    """With ``--limit 2`` the zero-shot run reaches few of the five subquestion splits: a mean over
    one split is shown as such, never as ``± 0.0``, and the fix is named."""
    out = tmp_path / "rule0"
    command = [sys.executable, "-m", "custom_metrics.cli", "rule-protocol", "--shots", "0", "--model", "dummy"]
    command += ["--limit", "2", "--output_path", str(out)]
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR)}, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    table = next(line for line in done.stdout.splitlines() if line.startswith("| Table 2, zero-shot"))
    cells = [cell.strip() for cell in table.strip("|").split("|")[1:]]
    single = [cell for cell in cells if "1 of 5 splits" in cell]
    assert single and all(cell.endswith("(1 of 5 splits, no spread)") and "±" not in cell for cell in single), table
    assert "some metrics rest on fewer than the 5 splits" in done.stdout and "--samples" in done.stdout


# Libraries that take seconds to import: a command's --help must not wait for them.
HEAVY = ("torch", "transformers", "datasets", "lm_eval", "spacy", "sklearn", "scipy", "pandas")
# lm-eval's own CLI is lm-eval; reg-analysis reads REG records through the judging module.
HELP_LIGHT = ("", "leaderboard", "rejudge", "reg-rejudge", "download", "sweep", "rule-protocol", "ibe", "tasks-path")


def test_help_imports_no_heavy_library() -> None:
    """Each command's --help in a fresh interpreter, one after the other: after each, no heavy
    library is imported (``--help`` took 12-15 s when the leaderboard's imports pulled in
    datasets, lm-eval, scipy and pandas; measured in seconds, not here: a timed test fails on a loaded machine)."""
    script = (
        "import contextlib, io, sys\n"
        "from custom_metrics.cli import main\n"
        f"for name in {HELP_LIGHT!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            main([name, '--help'] if name else ['--help'])\n"
        "        except SystemExit:\n"
        "            pass\n"
        f"    print(name or 'top-level', *[m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(HELP_LIGHT) and all(len(line.split()) == 1 for line in lines), lines
