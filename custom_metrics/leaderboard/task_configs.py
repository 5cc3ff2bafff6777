"""Is a logged run a run of *this suite's* task? Its logged config against the suite's YAML.

A results file records each task's config (``configs``: prompt template, dataset, ...)
and version (``versions``). A run made with an older release of the suite, or with
someone else's task of the same name (the GEESE authors' early files call their tasks
``geese_noexp``... with another template and dataset), reads like a run of ours unless
these are compared. The suite's side is read from the installed ``lm_eval_tasks/``
(``include`` files merged, ``!function`` kept as the function's name), no harness needed.

Compared, each named when it differs: the prompt (a template after the paper's
``normalize_template``: the GEESE authors write their hint's field where we write ``{{hint}}``),
the dataset (where ours is a ``custom_dataset`` loader, one it reads the same rows of:
``Board.suite_datasets``) and the version. A run that logged no config (older harness
layouts) is not checked.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.common.task_folders import TASKS_PATH  # the installed task folders (explain-eval tasks-path)

SHOWN = 48  # characters of each template shown where they differ


class FunctionRef(str):
    """A ``!function module.name`` entry of a task YAML (its text is the dotted name)."""

    @property
    def name(self) -> str:
        return self.rsplit(".", 1)[-1]


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml where installed: 10x faster
    pass


_Loader.add_constructor("!function", lambda loader, node: FunctionRef(loader.construct_scalar(node)))


def _load(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    if not isinstance(data, dict):
        return {}
    include = data.pop("include", None)
    if isinstance(include, str) and path.parent / include not in seen:
        data = {**_load(path.parent / include, (*seen, path)), **data}
    return data


@lru_cache(maxsize=1)
def suite_configs() -> dict[str, dict[str, Any]]:
    """The suite's task configs by task name (group YAMLs left out)."""
    return {task: config for folder in sorted(TASKS_PATH.iterdir()) for task, config in folder_configs(folder).items()}


@lru_cache(maxsize=16)
def _folder_yamls(folder: Path) -> list[dict[str, Any]]:
    """Every YAML of one task folder, in file order (a broken one left out: tests/test_task_configs.py
    holds them valid, and a broken one checks nothing)."""
    found = []
    for path in sorted(folder.glob("*.yaml")):
        with contextlib.suppress(OSError, yaml.YAMLError):
            found.append(_load(path))
    return found


def folder_configs(folder: Path) -> dict[str, dict[str, Any]]:
    """The task configs of one task folder by task name, in file order (group YAMLs left out)."""
    return {c["task"]: c for c in _folder_yamls(folder) if isinstance(c.get("task"), str) and "group" not in c}


def suite_groups() -> dict[str, list[str]]:
    """The suite's groups by name, each with the task names its YAML lists."""
    return {
        config["group"]: [name for name in config.get("task") or () if isinstance(name, str)]
        for folder in sorted(TASKS_PATH.iterdir())
        for config in _folder_yamls(folder)
        if isinstance(config.get("group"), str)
    }


def metric_names(entries: Any) -> list[str]:
    """The metrics of a ``metric_list`` (or ``aggregate_metric_list``), in order."""
    return [e["metric"] for e in entries or () if isinstance(e, Mapping) and isinstance(e.get("metric"), str)]


def folder_groups(folder: Path) -> dict[str, list[str]]:
    """The groups of one task folder, each with the metrics it aggregates (``aggregate_metric_list``)."""
    return {
        config["group"]: metric_names(config.get("aggregate_metric_list"))
        for config in _folder_yamls(folder)
        if isinstance(config.get("group"), str)
    }


def paper_metrics(spec: PaperSpec) -> dict[str, list[str]]:
    """Each task (and group) of the paper's folder (``lm_eval_tasks/<key>/``) and each task the
    spec adds, with the metrics it reports."""
    folder = TASKS_PATH / spec.key
    tasks = {task: metric_names(config.get("metric_list")) for task, config in folder_configs(folder).items()}
    return tasks | folder_groups(folder) | {task: list(metrics) for task, metrics in spec.board.extra_tasks.items()}


def config_difference(spec: PaperSpec, task: str, logged: Mapping[str, Any] | None, version: Any) -> str:
    """How a run's logged config of ``task`` differs from the suite's, in words ("" if it does not)."""
    ours = suite_configs().get(task)
    if ours is None or not isinstance(logged, Mapping):
        return ""
    found = [_prompt(spec, task, ours.get("doc_to_text"), logged.get("doc_to_text"))]
    found.append(_dataset(spec, ours, logged))
    found.append(_version(ours, version))
    return "; ".join(part for part in found if part)


def _prompt(spec: PaperSpec, task: str, ours: Any, theirs: Any) -> str:
    if theirs is None or ours is None:
        return ""
    if isinstance(ours, FunctionRef):
        if isinstance(theirs, str) and re.match(rf"\s*def {re.escape(ours.name)}\(", theirs):
            return ""
        return f"prompt: not the suite's {ours.name}()"
    if not isinstance(theirs, str):
        return "prompt: not a template"
    if spec.board.normalize_template(task, theirs) == ours:
        return ""
    return f'prompt template "{_start_of_difference(theirs, ours)}" (the suite: "{_start_of_difference(ours, theirs)}")'


def _start_of_difference(text: str, other: str) -> str:
    """``text`` from a little before where it parts from ``other``, cut to ``SHOWN`` characters."""
    start = next((i for i, (a, b) in enumerate(zip(text, other)) if a != b), min(len(text), len(other)))
    start = max(0, start - 12)
    shown = text[start : start + SHOWN].replace("\n", " ")
    return ("…" if start else "") + shown + ("…" if start + SHOWN < len(text) else "")


def _dataset(spec: PaperSpec, ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    path, name = theirs.get("dataset_path"), theirs.get("dataset_name")
    if isinstance(ours.get("custom_dataset"), FunctionRef):
        if isinstance(path, str) and path:
            if path in spec.board.suite_datasets:
                return ""
            known = f" (the suite reads {', '.join(spec.board.suite_datasets)})" if spec.board.suite_datasets else ""
            return f"dataset {path}{known}"
        if "dataset_kwargs" not in theirs:
            return ""  # not logged: nothing to compare
        kwargs, logged_kwargs = ours.get("dataset_kwargs") or {}, theirs.get("dataset_kwargs") or {}
        if isinstance(logged_kwargs, Mapping) and dict(logged_kwargs) != dict(kwargs):
            return f"dataset_kwargs {dict(logged_kwargs)} (the suite: {dict(kwargs)})"
        return ""
    if (path, name) != (ours.get("dataset_path"), ours.get("dataset_name")) and path is not None:
        return f"dataset {path}{f' ({name})' if name else ''} (the suite: {ours.get('dataset_path')})"
    return ""


def _version(ours: Mapping[str, Any], version: Any) -> str:
    metadata = ours.get("metadata") if isinstance(ours.get("metadata"), Mapping) else {}
    suite = metadata.get("version")
    comparable = isinstance(version, (int, float)) and isinstance(suite, (int, float)) and not isinstance(version, bool)
    return f"version {version:g} (the suite: {suite:g})" if comparable and float(version) != float(suite) else ""
