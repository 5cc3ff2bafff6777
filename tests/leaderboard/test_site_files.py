"""`explain-eval leaderboard` against what a shared runs folder and a shared disk hold: FIFOs,
devices and giant files under the names it reads, JSON that Python would read silently
wrong, a second run on the same --out at the same moment, a read-only or full --out.

Each case runs the real command (a subprocess where a hang or another process is the point)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from custom_metrics.cli import main as explain_eval
from custom_metrics.common.files import RESULTS_MAX_BYTES
from custom_metrics.leaderboard.sample_pages import DOCUMENT_PAGE
from tests.helpers import BALLOON, LEADERBOARD_FIXTURES
from tests.leaderboard.test_leaderboard import modern_results, read_csv

EXPLAIN_EVAL = Path(sys.executable).with_name("explain-eval")
STAMP = "2026-01-02T03-04-05.000000"
HANG = 60  # seconds: far above a normal run here, far below "for ever"


def _run(*args: str, timeout: float = HANG) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXPLAIN_EVAL), *args], capture_output=True, text=True, timeout=timeout)


def _model_run(folder: Path, model: str, docs: int = 4, acc: float = 0.5) -> Path:
    """A GEESE run of ``model`` as lm_eval writes it: results file and logged samples."""
    folder.mkdir(parents=True, exist_ok=True)
    results = modern_results(model, {"geese_noexp": acc}, 1.0)
    results["n-samples"] = {"geese_noexp": {"original": 800, "effective": docs}}
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results))
    lines = [
        {"doc_id": i, "doc": {"id": str(i), "label": "YES"}, "acc": float(i % 2), "filtered_resps": [["-1", "False"]]}
        for i in range(docs)
    ]
    (folder / f"samples_geese_noexp_{STAMP}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def test_fifos_devices_and_giant_files_in_a_runs_folder_are_named_never_opened(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _model_run(runs / "good", "org/good")
    shutil.copytree(LEADERBOARD_FIXTURES / "ibe-report", runs / "ibe")
    special = {
        runs / "fifo-report" / "report.json": "fifo",  # beside a features file: read as an IBE report
        runs / "fifo-report" / "features.jsonl": "file",
        runs / "fifo-features" / "report.json": "copy",
        runs / "fifo-features" / "features.jsonl": "fifo",
        runs / "fifo-results" / "results_2026-01-01T00-00-00.json": "fifo",
        runs / "zero" / "results_2026-01-01T00-00-00.json": "/dev/zero",
        runs / "zero-report" / "report.json": "/dev/zero",
        runs / "zero-report" / "features.jsonl": "file",
        runs / "giant" / "results_2026-01-01T00-00-00.json": "sparse",
    }
    report = next((runs / "ibe").rglob("report.json"))
    for path, kind in special.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "file":
            path.write_text("")
        elif kind == "copy":
            shutil.copy(report, path)
        elif kind == "sparse":  # 64 MiB and a byte, none of it on disk
            with open(path, "wb") as handle:
                handle.truncate(RESULTS_MAX_BYTES + 1)
        else:
            path.symlink_to(kind)

    done = _run("leaderboard", str(runs), "--out", str(tmp_path / "board"))  # hung for ever before

    assert done.returncode == 0, done.stderr
    for path, kind in special.items():
        if kind == "fifo" or kind.startswith("/dev"):
            assert f"skipped {path}: is not a regular file (a FIFO, device or socket); not read" in done.stderr
    giant = runs / "giant" / "results_2026-01-01T00-00-00.json"
    assert f"skipped {giant}: is {RESULTS_MAX_BYTES + 1:,} bytes, over the {RESULTS_MAX_BYTES:,}-byte bound" in (
        done.stderr
    )
    assert "org/good" in read_csv(tmp_path / "board" / "geese.csv")  # the rest is still read
    assert "gemma-fp32" in read_csv(tmp_path / "board" / "ibe.csv")


def test_a_key_twice_or_a_number_no_float_holds_is_named_with_its_line(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    _model_run(runs / "good", "org/good")
    twice = _model_run(runs / "twice", "org/twice") / f"results_{STAMP}.json"
    text = json.dumps(modern_results("org/twice", {"geese_noexp": 0.25}, 1.0), indent=1)
    twice.write_text(text.replace('"acc,none": 0.25,', '"acc,none": 0.25,\n "acc,none": 0.95,'))
    huge = _model_run(runs / "huge", "org/huge") / f"results_{STAMP}.json"
    huge.write_text(text.replace('"acc,none": 0.25', '"acc,none": 1e999').replace("org/twice", "org/huge"))
    line = text.splitlines().index('   "acc,none": 0.25,') + 2

    assert explain_eval(["leaderboard", str(runs), "--out", str(tmp_path / "board")]) == 0

    out, err = capsys.readouterr()
    assert f"skipped {twice}: key 'acc,none' appears twice in one object (line {line})" in err
    assert f"skipped {huge}: number 1e999 is too large for a float (line {line - 1})" in err
    assert "∞" not in out and "org/huge" not in out and "org/twice" not in out
    assert set(read_csv(tmp_path / "board" / "geese.csv")) >= {"org/good"}
    assert not {"org/twice", "org/huge"} & set(read_csv(tmp_path / "board" / "geese.csv"))


def _links(site: Path) -> tuple[set[str], set[str]]:
    """Sample pages the index and the sample viewer link to, and the sample pages on disk."""
    linked = set(re.findall(r'href="samples/([^"#/]+\.html)"', (site / "index.html").read_text()))
    linked |= set(re.findall(r'href="([^"#/.][^"#/]*\.html)"', (site / "samples" / "index.html").read_text()))
    pages = {p.name for p in (site / "samples").glob("*.html")}
    return linked - {"index.html", DOCUMENT_PAGE}, pages - {"index.html", DOCUMENT_PAGE}


@pytest.mark.slow
def test_two_runs_on_one_out_at_once_leave_one_whole_site(tmp_path: Path) -> None:
    """Run A is frozen (SIGSTOP) as soon as it has written its first sample page, run B writes
    its whole site on the same --out, then A goes on: the interleaving that gave an index from
    one run and sample pages from the other (broken links, orphan pages), made certain."""
    inputs = {}
    for name, models in (("a", 6), ("b", 6), ("c", 2)):
        inputs[name] = tmp_path / f"runs-{name}"
        for index in range(models):
            _model_run(inputs[name] / f"m{index}", f"org/{name}-model-{index}", docs=20)
    out = tmp_path / "board"
    assert explain_eval(["leaderboard", str(inputs["c"]), "--out", str(out)]) == 0  # an earlier site to replace

    first = subprocess.Popen(
        [str(EXPLAIN_EVAL), "leaderboard", str(inputs["a"]), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + HANG
        while not list(tmp_path.glob("*/samples/geese-org_a-model-*.html")):  # in --out or beside it
            assert first.poll() is None and time.monotonic() < deadline, "run A never wrote a sample page"
            time.sleep(0.005)
        first.send_signal(signal.SIGSTOP)
        second = _run("leaderboard", str(inputs["b"]), "--out", str(out))
        assert second.returncode == 0, second.stderr
    finally:
        first.send_signal(signal.SIGCONT)
    assert first.wait(timeout=HANG) == 0, first.stderr.read() if first.stderr else ""

    linked, pages = _links(out)
    assert linked == pages, f"broken links: {sorted(linked - pages)}; orphan pages: {sorted(pages - linked)}"
    assert len(pages) == 6 and all(page.startswith("geese-org_a-model-") for page in pages), sorted(pages)
    assert "org/b-model-" not in (out / "index.html").read_text() and "org/a-model-0" in read_csv(out / "geese.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board", "runs-a", "runs-b", "runs-c"]  # no temporary


def _in_own_mount(mount: Path, tmpfs_options: str, *command: str) -> subprocess.CompletedProcess[str]:
    """``command`` with a fresh tmpfs on ``mount`` (in a user and mount namespace of its own: no
    root needed, nothing mounted outside); its stdout ends with what the tmpfs holds after it."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) to give the command a disk of its own")
    mount.mkdir()
    script = 'mount -t tmpfs -o "$1" tmpfs "$2" || exit 99; at="$2"; shift 2; "$@"; rc=$?; ls -A "$at"; exit $rc'
    namespace = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh"]
    return subprocess.run(
        [*namespace, tmpfs_options, str(mount), *command], capture_output=True, text=True, timeout=HANG
    )


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ("ro,size=1m", "Read-only file system; the file system is read-only: choose a folder on a writable disk"),
        ("size=256k", "No space left on device; the disk is full: free space there or choose a folder on another disk"),
    ],
)
def test_a_read_only_or_full_out_is_one_line_naming_it(tmp_path: Path, options: str, says: str) -> None:
    runs = _model_run(tmp_path / "runs" / "m", "org/m").parent
    site = tmp_path / "disk" / "site"
    done = _in_own_mount(site.parent, options, str(EXPLAIN_EVAL), "leaderboard", str(runs), "--out", str(site))
    if done.returncode == 99:
        pytest.skip(f"this kernel gives no mount namespace to an unprivileged user: {done.stderr.strip()}")
    assert (done.returncode, done.stdout) == (1, ""), done.stderr  # "": nothing half-written left on the disk
    assert done.stderr.splitlines() == [f"explain-eval leaderboard: {site}: {says} (--out)."]


def test_any_command_into_a_read_only_out_is_one_line_naming_it(tmp_path: Path) -> None:
    """The same edge holds for every command the dispatcher runs (here IBE scoring)."""
    pytest.importorskip("janus_swi", reason="IBE scoring is the [ibe] extra")
    features = tmp_path / "disk" / "features"
    command = [str(EXPLAIN_EVAL), "ibe", "score", str(BALLOON), "--out", str(features), "--certainty-model", "lexicon"]
    done = _in_own_mount(features.parent, "ro,size=1m", *command)
    if done.returncode == 99:
        pytest.skip(f"this kernel gives no mount namespace to an unprivileged user: {done.stderr.strip()}")
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"explain-eval ibe: {features}: Read-only file system; the file system is read-only: choose a folder on "
        "a writable disk (--out)."
    )
    assert "Traceback" not in done.stderr
