"""What every task loader of the suite does around its work: refuse a stale copy of the task
YAMLs, and end the ``lm_eval`` command with the suite's one-line error.

lm-eval calls a task's loader while it builds the tasks, with the YAML's path in the metadata
(``config_source``), so a newcomer's first mistakes are caught there:

- ``--include_path .`` in a clone that ``pip install`` built in indexes its ``build/lib`` copy
  of the task folders, and lm-eval runs whichever copy it indexed last (an old prompt with this
  version's code, exit status 0): a differing copy is refused unless ``EXPLAIN_EVAL_TASK_COPY=1``;
- a ``DataError`` came at the end of a 40-line harness traceback: under the ``lm_eval`` command
  it becomes one line and exit status 2 (``SystemExit``, which lm-eval's ``except Exception``
  lets through); a Python caller (``simple_evaluate``) still gets the ``DataError``;
- ``--include_path .`` in a clone with its ``.venv`` inside indexes lm-eval's own tasks twice
  (``include_path``);
- ``--model openai-chat-completions`` with a "5" in the model name sends temperature 1 and no
  stop sequences (``api_sampling``); only the command line names the model class.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from custom_metrics.common.api_sampling import check_command_line
from custom_metrics.common.errors import DataError
from custom_metrics.common.harness_api import option_value
from custom_metrics.common.harness_args import check_group_limit, check_include_path
from custom_metrics.common.settings import TASK_COPY_ENV, env_value
from custom_metrics.common.task_folders import TASKS_PATH

log = logging.getLogger(__name__)

T = TypeVar("T")
LM_EVAL_COMMANDS = ("lm_eval", "lm-eval")  # the console scripts lm-eval installs
EXIT_BAD_INPUT = 2  # as every command of the suite exits on bad input


def under_lm_eval_command() -> bool:
    """Whether this process is the ``lm_eval`` command (its console script or ``python -m lm_eval``,
    as ``accelerate launch`` and ``explain-eval sweep`` start it), not a Python program calling lm-eval."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name in ("lm_eval", "lm_eval.__main__"):
        return True
    return bool(sys.argv) and Path(sys.argv[0]).name in LM_EVAL_COMMANDS


def task_loader(load: Callable[..., T]) -> Callable[..., T]:
    """Decorate a task YAML's loader: the task folder is checked first, and a ``DataError`` under
    the ``lm_eval`` command is its one line and exit status 2."""

    @functools.wraps(load)
    def checked(*args: Any, **run_args: Any) -> T:
        try:
            source = Path(str(run_args.get("config_source", "")))
            if source.suffix == ".yaml":  # lm-eval writes "inline" for a config given in Python
                check_task_folder(source)
            if under_lm_eval_command():  # the model class is named on its command line only
                check_command_line(sys.argv[1:], run_args)
                check_include_option(sys.argv[1:])
            return load(*args, **run_args)
        except DataError as error:
            if not under_lm_eval_command():
                raise
            sys.stdout.flush()
            print(f"error: {error}", file=sys.stderr, flush=True)
            raise SystemExit(EXIT_BAD_INPUT) from None

    return checked


def refuse_cut_groups(task: str, group: int) -> None:
    """Under the ``lm_eval`` command, a ``--limit`` that would cut inside ``task``'s groups of
    ``group`` documents, refused before the first request (``explain-eval lm-eval`` and the sweep
    refuse it before the model loads: ``LIMIT_GROUPS``)."""
    if under_lm_eval_command():
        check_group_limit(task, group, option_value(sys.argv[1:], "limit"))


def check_include_option(argv: list[str]) -> None:
    """The ``--include_path`` of the ``lm_eval`` command line ``argv`` holds lm-eval's own tasks,
    or the suite's twice: refused here too, where plain ``lm_eval`` first runs the suite's code."""
    include = option_value(argv, "include_path")
    for folder in include if isinstance(include, list) else [include] if include else []:
        check_include_path(Path(folder))


def check_task_folder(yaml_path: Path) -> None:
    """Refuse a task YAML whose folder is a copy of the installed one that differs from it."""
    yaml_path = yaml_path.resolve()
    folder = yaml_path.parent
    installed = TASKS_PATH / folder.name
    if folder == installed:
        return
    if installed.is_dir() and _digest(folder) == _digest(installed):
        _note_once(f"task folder {folder} is a copy of the installed {installed} (identical files); running it")
        return
    what = (
        f"{yaml_path} is not the installed suite's task YAML: its folder {folder} differs from the installed "
        f"{installed}"
        if installed.is_dir()
        else f"{yaml_path} lies in {folder}, which the installed suite ({TASKS_PATH}) does not have"
    )
    if (env_value(TASK_COPY_ENV) or "") == "1":
        _note_once(f"{what}; running it because {TASK_COPY_ENV}=1", logging.WARNING)
        return
    raise DataError(
        f"{what}, so an old prompt, template or loader would run with this version's code (a `pip install` from "
        f"a clone leaves such a copy under build/lib, and `--include_path .` indexes it). Pass "
        f'--include_path "$(explain-eval tasks-path)" (or the folder of your editable install) and delete any '
        f"stale build/ folder; to run a modified copy on purpose, set {TASK_COPY_ENV}=1."
    )


@functools.cache
def _digest(folder: Path) -> str:
    """The task folder as the harness reads it: its YAMLs, templates and hooks module."""
    digest = hashlib.sha256()
    names = sorted({*folder.glob("*.yaml"), *folder.glob("_*_yaml"), *folder.glob("utils.py")})
    for path in names:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def _note_once(message: str, level: int = logging.INFO) -> None:
    log.log(level, message)
