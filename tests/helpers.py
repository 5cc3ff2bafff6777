"""What many tests share: fixture paths and a runner of the real ``lm_eval`` CLI."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

from custom_metrics.common.harness_api import lists_per_document
from custom_metrics.common.samples import normalised
from custom_metrics.common.task_folders import TASKS_PATH
from custom_metrics.leaderboard.registry import PAPERS

REPO = Path(__file__).resolve().parents[1]
TASKS_DIR = TASKS_PATH  # where the installed suite's tasks are (explain-eval tasks-path), as users pass it
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Real or synthetic rows of every dataset, laid out like shared/data (see its README).
MIRROR = FIXTURES / "mirror"
LEADERBOARD_FIXTURES = FIXTURES / "leaderboard"
BALLOON = FIXTURES / "ibe" / "balloon.jsonl"  # the IBE paper's Figure 1 explanations
# The suite's papers, from the one list (the registry): package, task folder and leaderboard tab.
PAPER_KEYS = tuple(spec.key for spec in PAPERS)


def checkout_files() -> list[str]:
    """Tracked and not-ignored files of the checkout: what a clone of the pushed branch holds."""
    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    listed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [name for name in listed.split("\0") if name and (REPO / name).is_file()]


def paper_tests(key: str) -> ModuleType:
    """What the shared tests need to know of one paper, from its own ``tests/<key>/paper.py``: the
    tasks that must load (``EXPECTED_TASKS``), its multiple-choice tasks' choices, its fixture runs
    for the leaderboard. So a new paper brings these with its tests, and no shared test names it."""
    try:
        return importlib.import_module(f"tests.{key}.paper")
    except ModuleNotFoundError as err:
        if err.name not in (f"tests.{key}", f"tests.{key}.paper"):
            raise
        raise AssertionError(
            f"tests/{key}/paper.py is missing: give it EXPECTED_TASKS and LEADERBOARD_RUNS "
            '(docs/development.md, "Adding a paper", step 5)'
        ) from None


@contextmanager
def tmpfs(mount: Path, options: str) -> Iterator[Path]:
    """A real tmpfs mounted at ``mount`` with ``options`` (``size=64k``, ``ro,size=1m``), unmounted
    afterwards; the test skips, saying why, where the machine gives no mount rights."""
    mount.mkdir(parents=True, exist_ok=True)
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({made.stderr.decode().strip() or made.returncode})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill_disk(path: Path) -> None:
    """Write zeros to ``path`` until its file system has no block left (a real full disk)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def write_samples(path: Path, rows: list[dict]) -> str:
    """A samples file standing in for an earlier run's (one JSON object per line); its path as text."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def read_samples_files(out: Path) -> dict[str, list[dict]]:
    """Samples per task of an ``lm_eval --log_samples`` output folder."""
    samples: dict[str, list[dict]] = {}
    for path in out.glob("*/samples_*.jsonl"):
        task = path.name[len("samples_") :].rsplit("_", 1)[0]
        samples[task] = [normalised(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
    return samples


def per_document(filtered: list) -> list:
    """A filter's output called directly, one value per document whatever the harness version
    (lm-eval 0.5 wants a list per document: ``harness_api.filter_output``)."""
    return [value[0] for value in filtered] if lists_per_document() else list(filtered)


def hf_model_flags(model: Path) -> list[str]:
    """``lm_eval`` flags for a local checkpoint loaded in-process on the CPU."""
    return [
        "--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--device", "cpu", "--batch_size", "8",
    ]  # fmt: skip


def run_lm_eval(
    model: Path | list[str],
    tasks: str,
    out: Path,
    *,
    limit: int | None = 2,
    extra: list[str] | None = None,
    env: dict[str, str] | None = None,
    entry: list[str] | None = None,
) -> tuple[dict, dict[str, list[dict]]]:
    """Run the real ``lm_eval`` CLI; return the results JSON and the samples per task.

    ``model``: a local checkpoint (``--model hf`` on the CPU) or the model flags themselves
    (e.g. a served model's, ``tests.serving.ServedModel.chat_flags()``). ``entry``: the command
    that runs lm-eval's CLI, when not ``lm_eval`` itself (``explain-eval lm-eval``).
    """
    command = [
        *(entry or [str(Path(sys.executable).with_name("lm_eval"))]),
        *(hf_model_flags(model) if isinstance(model, Path) else model),
        "--tasks", tasks,
        "--include_path", str(TASKS_DIR),
        "--log_samples",
        "--output_path", str(out),
    ]  # fmt: skip
    if limit is not None:
        command += ["--limit", str(limit)]
    command += extra or []
    out.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=out.parent
    )
    if completed.returncode != 0:
        raise AssertionError(f"lm_eval failed ({completed.returncode}):\n{completed.stderr[-6000:]}")
    results_files = sorted(out.glob("*/results_*.json"))
    assert results_files, f"no results file under {out}"
    return json.loads(results_files[-1].read_text()), read_samples_files(out)
