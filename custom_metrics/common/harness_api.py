"""The one place where the suite meets what differs between lm-eval 0.4.13 and 0.5.

Why one module: the harness is a moving host. Its next major version (0.5) changed the shape
of what a filter returns, the class a generation task derives from, the ``Instance``
constructor and how task names are matched, and it has no public replacement for a few
private parts the suite needs. Each difference gets one small function here, named after
what it adapts, so the rest of the suite has one code path and a test
(``tests/common/test_harness_api.py``) names the harness change when one of them moves.

Everything imports lm-eval lazily: the leaderboard and the light readers import this module
without the harness' import cost.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Iterable, Sequence
from importlib import metadata
from typing import Any

from packaging.version import Version

# The first lm-eval whose filters return a list per document (and whose other changes below
# came with it): 0.5's pre-releases included.
LISTS_PER_DOCUMENT_SINCE = Version("0.5.0.dev0")


@functools.cache
def harness_version() -> Version:
    """The installed lm-eval's version (from its distribution, without importing it)."""
    return Version(metadata.version("lm_eval"))


def lists_per_document() -> bool:
    """Whether the harness expects a filter to return a list (of repeats) per document: 0.5
    flattens what a filter returns one level, so a bare string would become its characters."""
    return harness_version() >= LISTS_PER_DOCUMENT_SINCE


def filter_output(per_document: Iterable[Any]) -> list[Any]:
    """A filter's result, one value per document, in the shape the installed harness reads:
    each value wrapped in a list on 0.5, as it is on 0.4.13."""
    values = list(per_document)
    return [[value] for value in values] if lists_per_document() else values


def generation_task_base() -> type:
    """The harness' concrete generation task class, for a task class of the suite to extend:
    0.5's ``GenerateTask`` (its ``ConfigurableTask`` is the abstract base, which builds no
    request), 0.4.13's ``ConfigurableTask``."""
    import lm_eval.api.task as tasks

    return getattr(tasks, "GenerateTask", tasks.ConfigurableTask)


def new_instance(
    request_type: str, arguments: tuple[Any, ...], idx: int, *, task_name: str = "", doc_id: int | None = None
) -> Any:
    """An ``lm_eval.api.instance.Instance`` for a request built outside a task (benchmarks,
    judges): 0.5 requires ``task_name`` and ``doc_id`` by keyword, 0.4.13 takes them as
    ``metadata``. The document id is ``idx`` unless given."""
    from lm_eval.api.instance import Instance

    doc_id = idx if doc_id is None else doc_id
    if lists_per_document():
        return Instance(request_type, {}, arguments, task_name, doc_id=doc_id, idx=idx)
    return Instance(request_type, {}, arguments, idx, metadata=(task_name, doc_id, 1))


def unknown_task_names(manager: Any, names: Sequence[str]) -> list[str]:
    """The names (or glob patterns) among ``names`` that match no task, group or tag the task
    manager indexed. 0.5's ``TaskManager.match_tasks`` returns an unmatched name unchanged, so
    the match is made here with the harness' public ``pattern_match`` on ``all_tasks``."""
    from lm_eval.utils import pattern_match

    known = manager.all_tasks
    return [name for name in names if not pattern_match([name.split("@", 1)[0]], known)]


def evaluation_docs(task: Any) -> Any:
    """A built task's evaluation documents, loading its dataset now: 0.5 loads a dataset at
    its first document access rather than when the task is built, so a loader's DataError
    comes here instead of at ``TaskManager.load``."""
    return task.eval_docs


# -- Private parts with no public replacement (each checked by tests/common/test_harness_api.py), and their readers --


class Refused(Exception):
    """argparse's complaint about an ``lm_eval`` command line, raised instead of exiting."""


def run_command_parser() -> argparse.ArgumentParser:
    """lm-eval's own ``lm_eval run`` argument parser (``lm_eval._cli.run.Run``), to read a
    command line exactly as the harness will, raising ``Refused`` instead of printing usage and
    exiting. No public function returns it."""
    from lm_eval._cli.run import Run

    commands = argparse.ArgumentParser(prog="lm_eval").add_subparsers(dest="command")
    Run.create(commands)
    parser = commands.choices["run"]

    def refuse(message: str) -> None:
        raise Refused(message)

    parser.error = refuse  # type: ignore[method-assign]
    return parser


def options_given(argv: Sequence[str]) -> set[str]:
    """The ``lm_eval`` options ``argv`` sets, by their long name (``--tasks``), however spelt:
    ``-t``, an abbreviation such as ``--task``, or ``--tasks=x``."""
    parser = run_command_parser()
    try:
        given, empty = vars(parser.parse_known_args(list(argv))[0]), vars(parser.parse_known_args([])[0])
    except Refused:
        return set()  # check_harness_args names the problem
    return {f"--{name}" for name, value in given.items() if name not in empty or empty[name] != value}


def option_value(argv: Sequence[str], name: str) -> Any:
    """The value of option ``name`` (its ``dest``: ``model``, ``limit``, ``include_path``) an ``lm_eval``
    command line gives, with or without the ``run`` lm-eval inserts (lm-eval's default where it gives
    none), or None when lm-eval would refuse the line anyway."""
    args = list(argv)
    try:
        return getattr(run_command_parser().parse_known_args(args[1:] if args[:1] == ["run"] else args)[0], name, None)
    except Refused:
        return None


def read_task_yaml(path: Any) -> dict[str, Any]:
    """A task YAML as the harness reads it (``include:`` followed, ``!function`` resolved):
    ``lm_eval.tasks._yaml_loader.load_yaml``, which neither version makes public."""
    from lm_eval.tasks._yaml_loader import load_yaml

    return load_yaml(path)
