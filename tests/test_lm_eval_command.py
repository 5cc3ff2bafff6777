"""``explain-eval lm-eval`` refuses, in one line and before the model loads, what lm-eval would
refuse only after loading it (a REG judge: lm-eval builds its tasks after the model) or with a
traceback (a misspelt task, an include path or a model path that is not there), with the
checks ``explain-eval sweep`` runs on each pair.

The model is a folder holding a ``config.json`` no library can load: had lm-eval loaded it
first, the error would be its own about that model, not the line asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lm_eval
import pytest

from custom_metrics.cli import main as explain_eval
from custom_metrics.reg.api_model import MODEL_NAME
from tests.helpers import TASKS_DIR


@pytest.fixture()
def unloadable(tmp_path: Path) -> Path:
    """A model folder that exists (so the path check passes) but that no loader can load."""
    folder = tmp_path / "unloadable-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    return folder


HARNESS_HOME = Path(lm_eval.__file__).resolve().parents[1]  # the site-packages lm-eval is installed in


def _suite_twice(clone: Path) -> Path:
    """A clone holding the suite's task folders and a ``build/lib`` copy of them."""
    for place in (clone / "lm_eval_tasks", clone / "build" / "lib" / "lm_eval_tasks"):
        shutil.copytree(TASKS_DIR, place, ignore=shutil.ignore_patterns("__pycache__"))
    return clone


def _run(model: Path | str, tasks: str, include: Path | str, *extra: str) -> list[str]:
    return [
        "lm-eval", "--model", "hf", "--model_args", f"pretrained={model}", "--device", "cpu",
        "--tasks", tasks, "--include_path", str(include), *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_a_wrong_judge_is_one_line_before_the_model_loads(unloadable: Path) -> None:
    """The real command in a process of its own: one line on stderr, exit status 2, lm-eval never started."""
    command = [str(Path(sys.executable).with_name("explain-eval"))]
    command += _run(unloadable, "reg_chaos", TASKS_DIR, "--metadata", json.dumps({"judge": "nli:some/model"}))
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "EXPLAIN_EVAL_JUDGE": ""})
    assert done.returncode == 2 and done.stdout == "", done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("explain-eval lm-eval: reg_chaos: judge spec 'nli:some/model' is not understood; use ")


@pytest.mark.parametrize(
    "case",
    [
        # lm-eval's own task index is read for a name the suite's folder lacks: seconds
        pytest.param("misspelt task", marks=pytest.mark.slow),
        "relative include path",
        "include path holding lm-eval's own tasks",
        "include path holding the suite twice",
        "missing model folder",
        "relative model path in a folder here",
        "relative model path, offline",
        "judge_check",
        "misspelled metadata key",
        "limit inside a generation",
    ],
)
def test_each_mistake_is_one_line_with_the_fix(
    case: str, unloadable: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EXPLAIN_EVAL_JUDGE", "")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a Hub id is looked for in the local cache only
    (tmp_path / "models").mkdir()
    argv, expected = {
        "misspelt task": (
            _run(unloadable, "geese_noexp,reg_chaoss", TASKS_DIR),
            ["unknown task(s) 'reg_chaoss' (did you mean 'reg_chaos'", f"under --include_path {TASKS_DIR}"],
        ),
        "relative include path": (
            _run(unloadable, "reg_chaos", "lm_eval_tasks"),
            [
                "--include_path lm_eval_tasks: no such folder (a relative path is resolved against the current "
                f"folder: {tmp_path / 'lm_eval_tasks'})",
                '--include_path "$(explain-eval tasks-path)"',
            ],
        ),
        # a clone with its .venv inside: lm-eval would index its own ~14,000 task files a second time
        "include path holding lm-eval's own tasks": (
            _run(unloadable, "geese_noexp", HARNESS_HOME),
            [
                f"--include_path {HARNESS_HOME} holds lm-eval's own tasks ({HARNESS_HOME / 'lm_eval' / 'tasks'}",
                '--include_path "$(explain-eval tasks-path)"',
            ],
        ),
        # a clone holding a build/lib copy of the task folders: two tasks of each name
        "include path holding the suite twice": (
            _run(unloadable, "geese_noexp", _suite_twice(tmp_path / "clone")),
            [
                f"--include_path {tmp_path / 'clone'} holds the suite's task folder geese/ 2 times (",
                f"{tmp_path / 'clone' / 'build' / 'lib' / 'lm_eval_tasks' / 'geese'}",
            ],
        ),
        "missing model folder": (
            _run("./nope", "reg_chaos", TASKS_DIR),
            [
                "pretrained=./nope: no such folder (a relative path is resolved against the current folder: "
                f"{tmp_path / 'nope'})"
            ],
        ),
        # a path first, as transformers looks a name up: models/ is a folder here, so no Hub id
        "relative model path in a folder here": (
            _run("models/my-llama", "reg_chaos", TASKS_DIR),
            [
                "pretrained=models/my-llama: no such folder (a relative path is resolved against the current "
                f"folder: {tmp_path / 'models' / 'my-llama'})"
            ],
        ),
        # neither a folder here nor in the Hub cache: both readings named, the folder first
        "relative model path, offline": (
            _run("my-models/my-llama", "reg_chaos", TASKS_DIR),
            [
                "pretrained=my-models/my-llama: no such folder here (a relative path is resolved against the "
                f"current folder: {tmp_path / 'my-models' / 'my-llama'}), nor a Hub id in the local Hub cache",
                "huggingface-cli download my-models/my-llama",
            ],
        ),
        "judge_check": (
            _run(unloadable, "reg", TASKS_DIR, "--metadata", json.dumps({"judge_check": "ignore"})),
            ["reg_chaos: --metadata judge_check is 'ignore', expected stop or warn"],
        ),
        # any paper's task, not only REG's: lm-eval builds tasks (and their loaders check) after the model
        "misspelled metadata key": (
            _run(unloadable, "rule_cot_faithfulness_edits", TASKS_DIR, "--metadata", json.dumps({"edit": "x.jsonl"})),
            [
                "rule_cot_faithfulness_edits: --metadata key 'edit' is read by no task of the suite: "
                "did you mean 'edits'?"
            ],
        ),
        # each generation gives six docs: a limit of two cut one apart (NaN early_aoc, with no word)
        "limit inside a generation": (
            _run(unloadable, "rule_cot_faithfulness", TASKS_DIR, "--limit", "2"),
            [
                "--limit 2: rule_cot_faithfulness builds 6 documents from each generation or question",
                "pass a multiple of 6",
            ],
        ),
    }[case]
    assert explain_eval(argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("explain-eval lm-eval: ") and all(part in line for part in expected), line
    assert captured.out == ""


def test_help_names_the_suites_model_class(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        explain_eval(["lm-eval", "--help"])
    out = capsys.readouterr().out
    assert stopped.value.code == 0 and f"--model {MODEL_NAME}" in out.splitlines()[0]
    assert "lm-eval run --model hf" in out  # lm-eval's own help follows
