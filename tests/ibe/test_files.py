"""IBE's files are never trusted half-written or stale, and what goes wrong at the edge of
``explain-eval ibe`` is one line naming the path.

Through the real command: an ``ibe score`` with new inputs killed in an old folder leaves a
features file that ``ibe report`` and the leaderboard refuse, naming it and the command that
rebuilds it (the cut-file case is a property in ``tests/fuzz/test_features_file.py``); a
FIFO input is called a FIFO; a read-only or full ``--out`` is a one-line error (real tmpfs
mounts; skipped where the test may not mount).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from custom_metrics.ibe.selection import load_ibe_tables
from ibe_postprocess import features_file, report_file
from ibe_postprocess.folder import FeaturesFolder
from ibe_postprocess.inputs import ExplanationRecord, Source, read_inputs
from ibe_postprocess.report import write_report
from ibe_postprocess.selector import feature_regressions
from tests.helpers import BALLOON, REPO, fill_disk, tmpfs

CLI = [sys.executable, "-m", "custom_metrics.cli", "ibe"]  # the dispatcher: its edge turns an OSError into one line


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=600, **kwargs)


def _rows(records: list[ExplanationRecord]) -> list[dict]:
    """Feature rows as ``ibe score`` writes them, for the report stage (values made up, two
    options per question, both splits)."""
    return [
        {
            "qid": r.qid,
            "option": r.option,
            "split": r.split,
            "correct": r.correct,
            "consistent": r.correct,
            "depth": 1 + r.correct,
            "drift": 2 - r.correct,
            "coherence": 0.1 * (1 + r.correct),
            "uncertainty": 1.0 - r.correct,
            "flag": "",
            "formalization": "deterministic",
            "coherence_judge": "stand-in",
            "uncertainty_source": "lexicon",
            "source": {"file": r.source.file, "line": r.source.line},
        }
        for r in records
    ]


def _balloon_inputs(path: Path, questions: int) -> Path:
    """The balloon explanations as ``questions`` training and as many test questions."""
    rows = [json.loads(line) for line in BALLOON.read_text().splitlines()]
    lines = [
        {**row, "qid": f"copa-{split}{k}", "split": split}
        for split in ("train", "test")
        for k in range(questions)
        for row in rows
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.slow
def test_a_killed_score_with_new_inputs_is_never_reported_as_the_old_one(tmp_path: Path) -> None:
    old_inputs = _balloon_inputs(tmp_path / "old.jsonl", 2)
    out = tmp_path / "pair" / "ibe"
    folder = FeaturesFolder(out)
    records, _ = read_inputs([old_inputs])
    origin = features_file.Origin((str(old_inputs),), "old", {}, {"model": "org/writer", "tasks": ["ibe_copa"]})
    features_file.write(folder, origin, _rows(records), [])
    write_report(out)
    (runs, problems) = load_ibe_tables([tmp_path])
    assert problems == [] and {run.task for run in runs} == {"ibe_copa_selection"}

    new_inputs = _balloon_inputs(tmp_path / "new.jsonl", 1)
    command = [*CLI, "score", str(new_inputs), "--out", str(out), "--certainty-model", "lexicon"]
    child = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # killed once it has claimed the folder, long before it ends
        header = features_file.read_header(folder.features)
        if not header.complete:
            break
        assert child.poll() is None, "ibe score ended before it marked the folder as being scored"
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert header.origin.inputs == (str(new_inputs),) and not header.complete

    reported = _cli("report", str(out))
    assert reported.returncode == 2 and reported.stderr.count("\n") == 1, reported.stderr
    assert str(folder.features) in reported.stderr and "did not finish" in reported.stderr
    assert f"explain-eval ibe score {new_inputs} --out {out}" in reported.stderr  # the command that rebuilds it
    runs, problems = load_ibe_tables([tmp_path])
    assert runs == [] and [p.path for p in problems] == [folder.report.resolve()]
    assert "did not finish" in problems[0].reason


def test_a_report_of_rows_rescored_since_is_stale(tmp_path: Path) -> None:
    inputs = _balloon_inputs(tmp_path / "in.jsonl", 2)
    folder = FeaturesFolder(tmp_path / "ibe")
    records, _ = read_inputs([inputs])
    features_file.write(folder, features_file.Origin((str(inputs),), "a"), _rows(records), [])
    write_report(folder.root)
    assert report_file.read(folder.report).features.rows == len(records)
    features_file.write(folder, features_file.Origin((str(inputs),), "b"), _rows(records[:4]), [])
    with pytest.raises(report_file.ReportError, match=r"stale: features\.jsonl was rewritten after this report"):
        report_file.read(folder.report)
    assert report_file.read(folder.report, check_features=False).features.rows == len(records)


def test_features_header_records_what_the_rows_come_from(tmp_path: Path) -> None:
    folder = FeaturesFolder(tmp_path)
    records = [
        ExplanationRecord("copa-1", 1, "test", 1, "p", "c", "e", Source("runs/samples_ibe_copa_t.jsonl", 7)),
    ]
    origin = features_file.Origin(("runs/samples_ibe_copa_t.jsonl",), "f" * 64, {"nli_judge": "embedded"}, {})
    features_file.write(folder, origin, _rows(records), [])
    features = features_file.read(folder)
    assert (features.header.rows, features.header.origin.inputs_sha256, features.header.complete) == (1, "f" * 64, True)
    assert features.header.origin.version and features.rows[0]["source"] == {
        "file": "runs/samples_ibe_copa_t.jsonl",
        "line": 7,
    }
    assert pd.read_csv(folder.features_csv)["source"].tolist() == ["runs/samples_ibe_copa_t.jsonl:7"]
    assert "--nli-judge embedded" in features.header.origin.command(tmp_path)
    assert features.header.schema == features_file.SCHEMA == 2


def test_a_features_file_of_another_schema_is_refused_with_the_rebuild_command(tmp_path: Path) -> None:
    """Schema 1 (written before the proof steps were kept) has no ``schema`` key: its rows are
    refused, naming the command that rebuilds them; its header, all a report checks, still reads."""
    folder = FeaturesFolder(tmp_path)
    records = [ExplanationRecord("copa-1", 1, "test", 1, "p", "c", "e", Source("runs/samples_ibe_copa_t.jsonl", 7))]
    origin = features_file.Origin(("runs/samples_ibe_copa_t.jsonl",), "f" * 64, {"nli_judge": "embedded"}, {})
    features_file.write(folder, origin, _rows(records), [])
    header, *rows = folder.features.read_text(encoding="utf-8").splitlines(keepends=True)
    for schema, older in ((None, "an older"), (3, "a newer")):
        payload = json.loads(header)
        if schema is None:
            del payload["ibe_features"]["schema"]
        else:
            payload["ibe_features"]["schema"] = schema
        folder.features.write_text(json.dumps(payload) + "\n" + "".join(rows), encoding="utf-8")
        with pytest.raises(features_file.FeaturesError, match=f"written by {older} explain-eval") as refused:
            features_file.read(folder)
        assert "proof steps); rebuild it with `explain-eval ibe score runs/samples_ibe_copa_t.jsonl --out" in str(
            refused.value
        )
        assert features_file.read_header(folder.features).schema == (schema or 1)


def test_a_fifo_input_is_called_what_it_is(tmp_path: Path) -> None:
    fifo = tmp_path / "samples_ibe_copa_t.jsonl"
    os.mkfifo(fifo)
    done = _cli("score", str(fifo), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"{fifo}: input is not a regular file (a FIFO, device or socket)" in done.stderr
    device = _cli("score", "/dev/zero", "--out", str(tmp_path / "out"))
    assert device.returncode == 2 and "/dev/zero: input is not a regular file" in device.stderr
    missing = _cli("score", str(tmp_path / "nothing.jsonl"), "--out", str(tmp_path / "out"))
    assert missing.returncode == 2 and "nothing.jsonl: no such file" in missing.stderr


@pytest.fixture()
def small_disk(tmp_path: Path):
    """A real tmpfs of 64 KiB (needs mount rights)."""
    with tmpfs(tmp_path / "mnt", "size=64k") as mount:
        yield mount


@pytest.mark.slow
def test_a_full_disk_or_read_only_out_is_one_line_naming_the_path(tmp_path: Path, small_disk: Path) -> None:
    inputs = _balloon_inputs(tmp_path / "in.jsonl", 1)
    filler = small_disk / "filler"
    fill_disk(filler)
    full = _cli("score", str(inputs), "--out", str(small_disk / "features"), "--certainty-model", "lexicon")
    assert full.returncode == 1 and full.stderr.count("\n") == 1, full.stderr
    assert "Traceback" not in full.stderr and str(small_disk / "features") in full.stderr
    assert "No space left on device; the disk is full" in full.stderr

    filler.unlink()
    scored = FeaturesFolder(small_disk / "scored")
    records, _ = read_inputs([inputs])
    features_file.write(scored, features_file.Origin((str(inputs),), "0"), _rows(records), [])
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    read_only = _cli("score", str(inputs), "--out", str(scored.root), "--certainty-model", "lexicon")
    assert read_only.returncode == 1 and read_only.stderr.count("\n") == 1, read_only.stderr
    # the file itself, not the temporary file beside it
    assert read_only.stderr.startswith(f"explain-eval ibe: {scored.features}: Read-only file system; ")
    reported = _cli("report", str(scored.root))
    assert reported.returncode == 1 and reported.stderr.count("\n") == 1, reported.stderr
    assert f"explain-eval ibe: {scored.root}/" in reported.stderr and "Read-only file system" in reported.stderr
    assert "Traceback" not in reported.stderr


def test_figure_2_says_when_a_glm_means_nothing() -> None:
    """Four explanations that the feature separates: statsmodels returns a huge coefficient with
    p near 1 and no warning; the note says the fit is not meaningful, and why."""
    separated = pd.DataFrame(
        {
            "correct": [1, 1, 0, 0],
            "consistent": [1, 1, 0, 0],
            "depth": [3, 2, 1, 1],
            "drift": [0, 1, 0, 1],
            "coherence": [0.9, 0.8, 0.1, 0.2],
            "uncertainty": [0.0, 1.0, 0.5, 1.5],
        }
    )
    notes = {r.feature: r.note for r in feature_regressions(separated)}
    assert "perfect separation" in notes["coherence"] and "fewer than 10" in notes["coherence"]
    assert "perfect separation" not in notes["drift"] and "fewer than 10" in notes["drift"]
