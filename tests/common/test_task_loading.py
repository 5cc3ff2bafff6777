"""What every loader of the suite does first (custom_metrics/common/task_loading.py): a stale copy
of the task YAMLs is refused, and under the ``lm_eval`` command the suite's own error is one
line and exit status 2, while Python callers still catch a ``DataError``.

The stale copy is the newcomer's: ``pip install file://<clone>`` leaves ``build/lib`` in the
clone, and ``lm_eval --include_path .`` indexes it first (lm-eval walks the folder in path
order and keeps the first of two tasks of one name), so the old copy ran with exit status 0.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from custom_metrics.common import task_loading
from custom_metrics.common.errors import DataError
from custom_metrics.common.task_folders import TASKS_PATH
from tests.helpers import MIRROR


def _clone_with_stale_build(root: Path) -> Path:
    """A clone whose ``lm_eval_tasks`` is the installed one and whose ``build/lib`` holds an older GEESE folder."""
    shutil.copytree(TASKS_PATH / "geese", root / "lm_eval_tasks" / "geese")
    stale = root / "build" / "lib" / "lm_eval_tasks" / "geese"
    shutil.copytree(TASKS_PATH / "geese", stale)
    template = stale / "_geese_predict_yaml"
    template.write_text(template.read_text().replace("version:", "version: 0.0  # was:", 1))
    return stale


@pytest.mark.e2e
def test_lm_eval_on_a_clone_with_a_stale_build_copy_stops_with_one_line(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    stale = _clone_with_stale_build(clone)
    command = [str(Path(sys.executable).with_name("lm_eval")), "--model", "dummy", "--tasks", "geese_noexp"]
    command += ["--include_path", ".", "--limit", "1", "--output_path", str(tmp_path / "out")]
    env = {**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR), "HF_HUB_OFFLINE": "1"}
    env.pop(task_loading.TASK_COPY_ENV, None)
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=clone)
    assert done.returncode == 2, done.stderr[-3000:]
    last = done.stderr.rstrip().splitlines()[-1]
    assert last.startswith(f"error: {stale}/geese_noexp.yaml is not the installed suite's task YAML: its folder ")
    assert f"differs from the installed {TASKS_PATH / 'geese'}" in last and "explain-eval tasks-path" in last
    assert "Traceback" not in done.stderr and not list((tmp_path / "out").glob("**/results_*.json"))


def test_an_identical_copy_runs_and_a_modified_one_only_when_asked(tmp_path: Path, monkeypatch) -> None:
    stale = _clone_with_stale_build(tmp_path)
    task_loading.check_task_folder(TASKS_PATH / "geese" / "geese_noexp.yaml")  # the installed folder itself
    task_loading.check_task_folder(tmp_path / "lm_eval_tasks" / "geese" / "geese_noexp.yaml")  # a copy, identical
    with pytest.raises(DataError, match="is not the installed suite's task YAML"):
        task_loading.check_task_folder(stale / "geese_noexp.yaml")
    monkeypatch.setenv(task_loading.TASK_COPY_ENV, "1")
    task_loading.check_task_folder(stale / "geese_noexp.yaml")  # a modified copy run on purpose
    (tmp_path / "mine").mkdir()
    monkeypatch.delenv(task_loading.TASK_COPY_ENV)
    with pytest.raises(DataError, match=r"which the installed suite .* does not have"):
        task_loading.check_task_folder(tmp_path / "mine" / "task.yaml")


def test_a_python_caller_gets_the_data_error_to_catch(monkeypatch) -> None:
    @task_loading.task_loader
    def load(**run_args):
        raise DataError("my_task: a bad setting")

    with pytest.raises(DataError, match="my_task: a bad setting"):
        load(config_source="inline")
    monkeypatch.setattr(sys, "argv", [str(Path(sys.executable).with_name("lm_eval")), "--tasks", "my_task"])
    with pytest.raises(SystemExit) as stopped:
        load(config_source="inline")
    assert stopped.value.code == 2


@pytest.mark.e2e
def test_plain_lm_eval_on_a_folder_holding_the_suite_twice_stops_at_the_first_loader(tmp_path: Path) -> None:
    """Two identical copies (each alone would run, named): lm-eval indexed both, so the first loader
    refuses the folder in one line, naming the one to pass, and nothing is written."""
    clone = tmp_path / "clone"
    for place in (clone / "lm_eval_tasks", clone / "build" / "lib" / "lm_eval_tasks"):
        shutil.copytree(TASKS_PATH / "geese", place / "geese")
    command = [str(Path(sys.executable).with_name("lm_eval")), "--model", "dummy", "--tasks", "geese_noexp"]
    command += ["--include_path", ".", "--limit", "1", "--output_path", str(tmp_path / "out")]
    env = {**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=clone)
    assert done.returncode == 2, done.stderr[-3000:]
    last = done.stderr.rstrip().splitlines()[-1]
    assert last.startswith("error: --include_path . holds the suite's task folder geese/ 2 times (") and (
        '--include_path "$(explain-eval tasks-path)"' in last
    ), last
    assert "Traceback" not in done.stderr and not list((tmp_path / "out").glob("**/results_*.json"))


def test_the_loader_reads_the_include_path_of_lm_evals_command_line(tmp_path: Path) -> None:
    """A folder holding lm-eval's own tasks (a clone's .venv), as plain ``lm_eval`` gives it (its
    index takes minutes, so the loader's check is called here on that command line)."""
    site = Path(importlib.util.find_spec("lm_eval").origin).resolve().parents[1]
    with pytest.raises(DataError, match=rf"--include_path {site} holds lm-eval's own tasks \({site}/lm_eval/tasks"):
        task_loading.check_include_option(["run", "--model", "dummy", "--include_path", str(site)])
    task_loading.check_include_option(["--model", "dummy", "--include_path", str(TASKS_PATH)])
