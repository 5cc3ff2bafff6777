"""Shared fixtures: the embedded model, the data mirror and a real `lm_eval` CLI runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TASKS_DIR = REPO / "lm_eval_tasks"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Tests never reach the Hub: a fetch must fail fast instead of hanging on retries.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def full_data() -> Path:
    """The full data mirror; tests using it are skipped on a clone without one."""
    value = os.environ.get("EXPLAIN_EVAL_DATA")
    if not value:
        pytest.skip("EXPLAIN_EVAL_DATA is not set (full-data test)")
    return Path(value).resolve()


@pytest.fixture(scope="session")
def embedded_model() -> Path:
    from custom_metrics.embedded_model import ensure_checkpoint

    return ensure_checkpoint()


def run_lm_eval(
    model: Path,
    tasks: str,
    out: Path,
    *,
    limit: int | None = 2,
    extra: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[dict, dict[str, list[dict]]]:
    """Run the real ``lm_eval`` CLI; return the results JSON and the samples per task."""
    command = [
        str(Path(sys.executable).with_name("lm_eval")),
        "--model", "hf",
        "--model_args", f"pretrained={model},dtype=float32",
        "--device", "cpu",
        "--batch_size", "8",
        "--tasks", tasks,
        "--include_path", str(TASKS_DIR),
        "--log_samples",
        "--output_path", str(out),
    ]
    if limit is not None:
        command += ["--limit", str(limit)]
    command += extra or []
    completed = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=out.parent
    )
    if completed.returncode != 0:
        raise AssertionError(f"lm_eval failed ({completed.returncode}):\n{completed.stderr[-6000:]}")
    results_files = sorted(out.glob("*/results_*.json"))
    assert results_files, f"no results file under {out}"
    results = json.loads(results_files[-1].read_text())
    samples: dict[str, list[dict]] = {}
    for path in out.glob("*/samples_*.jsonl"):
        task = path.name[len("samples_"):].rsplit("_", 1)[0]
        samples[task] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return results, samples


@pytest.fixture()
def lm_eval_cli(embedded_model: Path, tmp_path: Path):
    """``lm_eval_cli(tasks, limit=2, extra=[...])`` runs the CLI on the embedded model."""

    def run(tasks: str, **kwargs):
        return run_lm_eval(embedded_model, tasks, tmp_path / "out", **kwargs)

    return run


FIXTURE_MIRROR = FIXTURES / "mirror"


@pytest.fixture()
def fixture_mirror(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point EXPLAIN_EVAL_DATA at the small committed mirror (real rows, few of them)."""
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(FIXTURE_MIRROR))
    return FIXTURE_MIRROR
