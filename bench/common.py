"""What every benchmark needs: an offline environment, timers, memory and the results file.

Each benchmark module runs as its own process (``python -m bench.<name>``), so a model or
cache loaded by one never speeds up or slows down another; each writes its section of
``bench/results.json`` (merged, so sections can be rerun one at a time). A section lists
its headline ``figures`` (``figure(...)``: what, target, measured, verdict, the peer's
figure where one exists, the command), which ``bench/summary.py`` gathers into one table.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# `run_all --quick` points this elsewhere, so check runs never replace the measured figures.
RESULTS = Path(os.environ.get("BENCH_RESULTS", REPO / "bench" / "results.json"))
WORK = REPO / "runs" / "bench"  # scratch (caches, generated inputs); `make clean` removes runs/

CHROMIUM = os.environ.get("EXPLAIN_EVAL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def setup_env() -> None:
    """Offline settings, and the data mirror beside the checkout when none is named."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    mirror = REPO.parent / "shared" / "data"
    if "EXPLAIN_EVAL_DATA" not in os.environ and (mirror / "README.md").is_file():
        os.environ["EXPLAIN_EVAL_DATA"] = str(mirror)


def scratch(name: str, fresh: bool = True) -> Path:
    """A scratch folder under runs/bench; ``fresh`` empties it so no cache from an earlier run is reused."""
    path = WORK / name
    if fresh and path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def timed() -> Iterator[dict[str, float]]:
    """``with timed() as t: ...`` then ``t["s"]`` holds the wall seconds and ``t["cpu"]`` this process's
    CPU seconds (on a shared, loaded machine the steadier of the two for single-process work)."""
    box: dict[str, float] = {}
    start, cpu = time.perf_counter(), time.process_time()
    try:
        yield box
    finally:
        box.update(s=time.perf_counter() - start, cpu=time.process_time() - cpu)


def child_json(module: str, *args: str) -> Any:
    """``python -m module args`` in a fresh process (no model or cache shared with this one);
    the last line it printed, as JSON."""
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{module} {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def opened_pages(pages: list[Path], repeats: int) -> Iterator[tuple[Path, Any]]:
    """Each page opened from disk in headless Chromium once its first contentful paint is in,
    alternating pages ``repeats`` times so that all see the same machine load."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for _ in range(repeats):
            for path in pages:
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                page = context.new_page()
                page.goto(path.as_uri(), wait_until="load")
                page.wait_for_function("performance.getEntriesByName('first-contentful-paint').length > 0")
                yield path, page
                context.close()
        browser.close()


def task_manager(metadata: dict[str, Any]) -> Any:
    """The harness' index of this checkout's tasks; ``metadata`` is what lm_eval's CLI would merge into every task's."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=[str(REPO / "lm_eval_tasks")], include_defaults=False, metadata=metadata)


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> dict[str, Any]:
    import torch

    load1, load5, _ = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "load_1min_at_start": round(load1, 2),
        "load_5min_at_start": round(load5, 2),
        "python": platform.python_version(),
        "commit": _commit(),
    }


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def save_section(name: str, payload: dict[str, Any]) -> None:
    """Merge one benchmark's results into bench/results.json."""
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    payload = {"machine": machine(), "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"), **payload}
    results[name] = payload
    partial = RESULTS.with_name(RESULTS.name + ".tmp")  # an interrupted write never truncates the file
    partial.write_text(json.dumps(results, indent=2) + "\n")
    partial.replace(RESULTS)


def table(rows: list[list[Any]], header: list[str]) -> str:
    """A plain-text table (also valid markdown) for the terminal and the README."""
    cells = [[_fmt(c) for c in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def figure(name: str, target: str, measured: str, passed: bool | None, command: str, peer: str = "") -> dict[str, Any]:
    """One row of the summary table; ``passed`` None for a figure without a target."""
    return {"figure": name, "target": target, "measured": measured, "pass": passed, "peer": peer, "command": command}
