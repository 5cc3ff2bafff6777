"""What ties each paper's ``PaperSpec`` to its task folder, as a list of problems, each naming its fix.

A spec describes a paper's task folder to the leaderboard and the sweep, but nothing at run
time compares the two: a spec left out of the registry puts the paper's rows under "Other
tasks", a typo in its pattern or a headline puts a number nowhere, a data file left out of
``datasets`` is never downloaded by ``explain-eval download``. Each is silent on a page; here
each is a line saying what to change. ``tests/test_paper_specs.py`` runs these checks on the
suite, and on a copy of it with a fixture fifth paper added the way docs/development.md says.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from custom_metrics.common.download import GitHubFile, HubFile
from custom_metrics.common.leaderboard_types import PaperSpec
from custom_metrics.common.sources import Source
from custom_metrics.leaderboard.task_configs import folder_configs, paper_metrics

REGISTRY = "custom_metrics/leaderboard/registry.py"
_HEX40, _HEX64 = re.compile(r"[0-9a-f]{40}"), re.compile(r"[0-9a-f]{64}")


def spec_problems(specs: Sequence[PaperSpec], tasks_root: Path, repo: Path) -> list[str]:
    """Every way the registered specs and the task folders under ``tasks_root`` disagree."""
    problems: list[str] = []
    keys = {spec.key for spec in specs}
    for folder in sorted(path for path in tasks_root.iterdir() if path.is_dir() and any(path.glob("*.yaml"))):
        if folder.name not in keys:
            problems.append(
                f"lm_eval_tasks/{folder.name}/ has no spec in {REGISTRY}: add {folder.name!r} to PAPER_KEYS "
                f"there, with SPEC in custom_metrics/{folder.name}/leaderboard.py (its runs land in 'Other tasks' "
                "until then)"
            )
    for spec in specs:
        problems += _folder_problems(spec, specs, tasks_root)
        problems += _column_problems(spec)
        problems += _data_problems(spec, repo)
    seen: dict[str, str] = {}
    for spec in specs:
        for name in spec.datasets:
            if name in seen:
                problems.append(f"dataset {name!r} is named by both {seen[name]} and {spec.key}: rename one")
            seen[name] = spec.key
    return problems


def _folder_problems(spec: PaperSpec, specs: Sequence[PaperSpec], tasks_root: Path) -> list[str]:
    folder = tasks_root / spec.key
    if not folder.is_dir():
        return [f"{spec.key}: no task folder lm_eval_tasks/{spec.key}/ (a spec's key names its task folder)"]
    problems = []
    for task in folder_configs(folder):
        if not re.match(spec.pattern, task):
            problems.append(
                f"{spec.key}: task {task} (lm_eval_tasks/{spec.key}/) does not match the spec's pattern "
                f"{spec.pattern!r}: fix the pattern (or leave it out: the default is the key, then '_' or the end)"
            )
        for other in specs:
            if other is not spec and re.match(other.pattern, task):
                problems.append(f"{spec.key}: task {task} also matches {other.key}'s pattern {other.pattern!r}")
    known = paper_metrics(spec)
    problems += [
        f"{spec.key}: task_order names {task}, which is no task of lm_eval_tasks/{spec.key}/ nor of extra_tasks"
        for task in spec.task_order
        if task not in known
    ]
    return problems


def _column_problems(spec: PaperSpec) -> list[str]:
    """Headlines, comparisons and published rows name columns that some run or the paper fills."""
    known = paper_metrics(spec)
    derived = set(spec.derived_metrics)

    def missing(key: str, where: str) -> str | None:
        task, _, metric = key.partition("/")
        if task not in known:
            folder = f"lm_eval_tasks/{spec.key}/"
            return f"{spec.key}: {where} names {key}, but {task} is no task of {folder} nor of extra_tasks"
        if metric not in known[task] and metric not in derived:
            return (
                f"{spec.key}: {where} names {key}, but {task}'s metric_list has no {metric!r} "
                f"(it has {', '.join(known[task]) or 'none'}); fix the name, or list a derived metric in "
                "derived_metrics"
            )
        return None

    found = [missing(key, f"headline {headline.label!r}") for headline in spec.headlines for key in headline.keys]
    for comparison in spec.comparisons:
        for task in (comparison.task, comparison.baseline):
            found.append(missing(f"{task}/{comparison.metric}", f"comparison {comparison.label!r}"))
    for row in spec.published():
        found += [missing(key, f"published row {row.model!r}") for key in row.cells if not key.endswith("/n")]
    found += [
        f"{spec.key}: headline {headline.label!r} is of family {headline.family!r}, which families does not define"
        for headline in spec.headlines
        if headline.family not in spec.families
    ]
    return [problem for problem in dict.fromkeys(found) if problem]


def _sources(value: Any) -> Iterator[Source]:
    if isinstance(value, Source):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _sources(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _sources(item)


def _data_problems(spec: PaperSpec, repo: Path) -> list[str]:
    """Every ``Source`` a module of the paper's package defines is pinned in ``spec.datasets``, by a real pin."""
    listed = {source for sources in spec.datasets.values() for source in sources}
    problems = []
    defined: dict[Source, str] = {}
    for path in sorted((repo / "custom_metrics" / spec.key).glob("*.py")):
        if "Source(" not in path.read_text(encoding="utf-8"):
            continue
        module = importlib.import_module(f"custom_metrics.{spec.key}.{path.stem}")
        for name, value in vars(module).items():
            for source in _sources(value):
                defined.setdefault(source, f"custom_metrics/{spec.key}/{path.name}: {name}")
    problems += [
        f"{spec.key}: {where} defines the data file {source.name!r}, which the spec's datasets leave out: "
        f"add it to datasets= in custom_metrics/{spec.key}/leaderboard.py (explain-eval download never fetches it)"
        for source, where in defined.items()
        if source not in listed
    ]
    for source in listed:
        problems += [f"{spec.key}: data file {source.name!r}: {fault}" for fault in pin_faults(source.remote)]
    return problems


def pin_faults(remote: GitHubFile | HubFile) -> list[str]:
    """What makes a pin a placeholder rather than a fixed public file."""
    commit = remote.commit if isinstance(remote, GitHubFile) else remote.revision
    faults = []
    if not _HEX40.fullmatch(commit) or set(commit) == {"0"}:
        faults.append(f"commit {commit!r} is not a 40-digit commit hash (a branch or a placeholder is no pin)")
    if not _HEX64.fullmatch(remote.sha256) or set(remote.sha256) == {"0"}:
        faults.append(f"sha256 {remote.sha256!r} is not the file's hash")
    if remote.size <= 0:
        faults.append(f"size {remote.size} is not the file's size")
    return faults
