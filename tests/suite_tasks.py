"""Every task of the suite loaded the way the harness loads it, on the fixture mirror: shared
by the task-config checks and the harness' own ``BaseTasks`` checks (one load per session)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lm_eval.tasks import TaskManager

from custom_metrics.common.harness_api import evaluation_docs
from tests.helpers import MIRROR, PAPER_KEYS, TASKS_DIR, paper_tests

# Every task that must load: each paper's own list (tests/<key>/paper.py), for every registered paper.
EXPECTED_TASKS = {task for key in PAPER_KEYS for task in paper_tests(key).EXPECTED_TASKS}


def small_data() -> dict[str, Any]:
    """The data sizes the papers' tests load their tasks with on the fixture mirror (each paper's
    ``SMALL_DATA``, e.g. IBE's e-CARE sample: the mirror holds 6 rows, the paper samples 500)."""
    return {key: value for paper in PAPER_KEYS for key, value in getattr(paper_tests(paper), "SMALL_DATA", {}).items()}


def reading_tasks(folder: Path, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tasks that read an earlier run's samples files, each with the ``--metadata`` naming stand-in
    files: from each paper's ``reading_tasks(folder, data)`` hook (``data``: the sizes its docs use)."""
    reading: dict[str, dict[str, Any]] = {}
    for key in PAPER_KEYS:
        hook = getattr(paper_tests(key), "reading_tasks", None)
        if hook is not None:
            (folder / key).mkdir(parents=True, exist_ok=True)
            reading |= hook(folder / key, data)
    return reading


def run_arg_tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Tasks that read model arguments (merged into the metadata) as a run builds them: from each
    paper's ``run_arg_tasks(tmp_path_factory)`` hook."""
    built: dict[str, dict[str, Any]] = {}
    for key in PAPER_KEYS:
        hook = getattr(paper_tests(key), "run_arg_tasks", None)
        if hook is not None:
            built |= hook(tmp_path_factory)
    return built


def with_docs(tasks: dict[str, Any]) -> dict[str, Any]:
    """The tasks with their documents loaded now, while the data settings hold (lm-eval 0.5
    loads a dataset at its first document access)."""
    for task in tasks.values():
        evaluation_docs(task)
    return tasks


def load_plain_tasks(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> dict[str, Any]:
    """Every task as upstream's own checks build it: one plain ``TaskManager``, no model and no
    metadata; only the reading tasks get the samples files they read (data, not a model)."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(data_root))
    try:
        manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
        reading = reading_tasks(tmp_path_factory.mktemp("explanations"), {})
        loaded = dict(manager.load(sorted(set(manager.all_subtasks) - set(reading)))["tasks"])
        for name, metadata in reading.items():
            reader = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
            loaded.update(reader.load([name])["tasks"])
        return with_docs(loaded)
    finally:
        monkeypatch.undo()


def load_suite_tasks(
    tmp_path_factory: pytest.TempPathFactory, data_root: Path = MIRROR, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Every task of the suite, loaded by the harness' ``TaskManager`` on ``data_root`` (the
    fixture mirror unless told) with the papers' small data sizes (unless told), the model
    arguments the papers' variants read and stand-in samples files for the reading tasks."""
    data = small_data() if data is None else data
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(data_root))
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE_CACHE", str(tmp_path_factory.mktemp("verdicts")))
    try:
        special = reading_tasks(tmp_path_factory.mktemp("explanations"), data) | run_arg_tasks(tmp_path_factory)
        plain = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=data)
        loaded = dict(plain.load(sorted(set(plain.all_subtasks) - set(special)))["tasks"])
        for name, metadata in special.items():
            manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata={**data, **metadata})
            loaded.update(manager.load([name])["tasks"])
        return with_docs(loaded)
    finally:
        monkeypatch.undo()
