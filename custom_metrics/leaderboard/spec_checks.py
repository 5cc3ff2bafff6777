"""What ties each paper's ``PaperSpec`` to its package and task folder, as problems, each naming its fix.

A spec describes a paper's task folder to the leaderboard and the sweep, but nothing at run
time compares the two: a spec left out of the registry puts the paper's rows under "Other
tasks", a typo in its pattern, a headline or a label puts a number or a word nowhere, a data
file left out of ``datasets`` is never downloaded by ``explain-eval download``. Each is silent
on a page; here each is a line saying what to change.

Two depths. ``spec_faults.load_problems`` reads the specs alone (no task YAML, no further
import), so the registry runs it on every load and a broken spec stops any command at once.
``spec_problems`` also reads the task folders, their READMEs and ``utils.py``, and imports every module of each
paper's package to find the ``Source`` objects it defines (however they were built): that is
``explain-eval check``, for contributors, and the tests.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.leaderboard.spec_faults import REGISTRY, load_problems, regex_fault
from custom_metrics.leaderboard.task_configs import folder_configs, folder_groups, paper_metrics

RECIPE = 'docs/development.md, "Adding a paper"'


def spec_problems(specs: Sequence[PaperSpec], tasks_root: Path, repo: Path, only: Sequence[str] = ()) -> list[str]:
    """Every way the registered specs, their packages and the task folders under ``tasks_root``
    disagree; ``only``: the papers whose package and folder are read (default: all)."""
    problems = load_problems(specs)
    keys = {spec.key for spec in specs}
    for folder in sorted(path for path in tasks_root.iterdir() if path.is_dir() and any(path.glob("*.yaml"))):
        if folder.name not in keys:
            problems.append(
                f"lm_eval_tasks/{folder.name}/ has no spec in {REGISTRY}: add {folder.name!r} to PAPER_KEYS "
                f"there, with SPEC in custom_metrics/{folder.name}/leaderboard.py (its runs land in 'Other tasks' "
                "until then)"
            )
    for spec in specs:
        if only and spec.key not in only:
            continue
        folder = tasks_root / spec.key
        if not folder.is_dir():
            problems.append(f"{spec.key}: no task folder lm_eval_tasks/{spec.key}/ (a spec's key names its folder)")
            continue
        problems += _folder_problems(spec, specs, folder)
        problems += _column_problems(spec)
        problems += _range_problems(spec)
        problems += _word_problems(spec)
        problems += _data_problems(spec, repo)
        if not (folder / "README.md").is_file():
            problems.append(
                f"{spec.key}: lm_eval_tasks/{spec.key}/README.md is missing: write it in the harness' format (title, "
                f"### Paper, ### Citation, ### Groups, Tags, and Tasks, ### Checklist; {RECIPE}, step 3)"
            )
        problems += _utils_problems(spec, folder)
    return list(dict.fromkeys(problems))


def _folder_problems(spec: PaperSpec, specs: Sequence[PaperSpec], folder: Path) -> list[str]:
    if regex_fault(spec.pattern):
        return []  # named by load_problems
    problems = []
    for task in folder_configs(folder):
        if not re.match(spec.pattern, task):
            problems.append(
                f"{spec.key}: task {task} (lm_eval_tasks/{spec.key}/) does not match the spec's pattern "
                f"{spec.pattern!r}: fix the pattern (or leave it out: the default is the key, then '_' or the end)"
            )
        for other in specs:
            if other is not spec and not regex_fault(other.pattern) and re.match(other.pattern, task):
                problems.append(f"{spec.key}: task {task} also matches {other.key}'s pattern {other.pattern!r}")
    problems += [
        f"{spec.key}: group {group!r} (lm_eval_tasks/{spec.key}/) does not match the spec's pattern "
        f"{spec.pattern!r}: name it {spec.key!r} (or {spec.key}_<name>), its rows land in 'Other tasks' otherwise"
        for group in folder_groups(folder)
        if not re.match(spec.pattern, group)
    ]
    known = paper_metrics(spec)
    problems += [
        f"{spec.key}: task_order names {task}, which is no task of lm_eval_tasks/{spec.key}/ nor of extra_tasks"
        for task in spec.board.task_order
        if task not in known
    ]
    return problems


def _column_problems(spec: PaperSpec) -> list[str]:
    """Headlines, comparisons, charts and published rows name columns that some run or the paper fills."""
    known = paper_metrics(spec)
    derived = set(spec.board.derived_metrics)

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

    found = [missing(key, f"headline {headline.label!r}") for headline in spec.board.headlines for key in headline.keys]
    for comparison in spec.board.comparisons:  # a baseline_metric is an outcome only, no task's metric
        for task in (comparison.task,) if comparison.baseline_metric else (comparison.task, comparison.baseline):
            found.append(missing(f"{task}/{comparison.metric}", f"comparison {comparison.label!r}"))
    for row in spec.board.published():
        found += [missing(key, f"published row {row.model!r}") for key in row.cells if not key.endswith("/n")]
    return [problem for problem in found if problem]


def _range_problems(spec: PaperSpec) -> list[str]:
    """Every metric the paper's tasks report, or its board derives, has a declared range: a
    results file's 1.5 or -500 under a name without one would be shown (``common.metric_ranges``)."""
    ranges = getattr(importlib.import_module(f"custom_metrics.{spec.key}"), "METRIC_RANGES", {})
    reported: dict[str, str] = {}
    for task, metrics in paper_metrics(spec).items():
        for metric in metrics:
            reported.setdefault(metric, f"{task}'s metric_list")
    reported |= {metric: "the board's derived_metrics" for metric in spec.board.derived_metrics}
    return [
        f"{spec.key}: {where} names {metric!r}, whose range custom_metrics/{spec.key}/__init__.py does not declare: "
        "add it to METRIC_RANGES there (SHARE, COUNT, MEAN_LENGTH, ... of custom_metrics.common.metric_ranges)"
        for metric, where in sorted(reported.items())
        if metric not in ranges
    ]


def _word_problems(spec: PaperSpec) -> list[str]:
    """Labels and definitions are for tasks and metrics that exist (a typo shows the bare name)."""
    known = paper_metrics(spec)
    metrics = {metric for listed in known.values() for metric in listed} | set(spec.board.derived_metrics)
    where = f"custom_metrics/{spec.key}/leaderboard.py (or the words.yaml it reads)"
    problems = [
        f"{spec.key}: task_labels names {task!r}, which is no task of lm_eval_tasks/{spec.key}/: fix it in {where}"
        for task in spec.board.task_labels
        if task not in known
    ]
    for hook, names in (("metric_labels", spec.board.metric_labels), ("metric_names", spec.board.metric_names)):
        problems += [
            f"{spec.key}: {hook} names {metric!r}, which no task of lm_eval_tasks/{spec.key}/ reports: fix it in "
            f"{where}"
            for metric in names
            if metric not in metrics
        ]
    for key in spec.board.definitions:
        task, _, metric = key.rpartition("/")
        if (task and (task not in known or metric not in {*known[task], *spec.board.derived_metrics})) or (
            not task and metric not in metrics
        ):
            problems.append(
                f"{spec.key}: definitions names {key!r}, which is no metric (or task/metric) of "
                f"lm_eval_tasks/{spec.key}/: fix it in {where}"
            )
    return problems


def _sources(value: Any, depth: int = 0) -> Iterator[Any]:
    """The ``Source`` objects in a module-level value: itself, or inside containers and dataclasses."""
    from custom_metrics.common.sources import Source

    if isinstance(value, Source):
        yield value
    elif depth > 3 or isinstance(value, type):
        return
    elif isinstance(value, (dict, tuple, list, set, frozenset)):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _sources(item, depth + 1)
    elif is_dataclass(value):
        for item in fields(value):
            yield from _sources(getattr(value, item.name, None), depth + 1)


def _data_problems(spec: PaperSpec, repo: Path) -> list[str]:
    """Every ``Source`` a module of the paper's package holds is pinned in ``spec.datasets``: each
    module is imported and its values read, so a ``Source`` made by ``dataclasses.replace`` counts."""
    listed = {source for sources in spec.datasets.values() for source in sources}
    defined: dict[Any, str] = {}
    problems = []
    for path in sorted((repo / "custom_metrics" / spec.key).glob("*.py")):
        name = f"custom_metrics.{spec.key}.{path.stem}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:  # an optional extra (trl, ...) not installed here: say so
            if err.name and err.name.split(".")[0] in ("custom_metrics", "ibe_postprocess"):
                raise
            problems.append(
                f"{spec.key}: custom_metrics/{spec.key}/{path.name} needs {err.name}, not installed here: its data "
                "files were not checked (install the extras: pip install -e '.[all]')"
            )
            continue
        for attribute, value in vars(module).items():
            for source in _sources(value):
                defined.setdefault(source, f"custom_metrics/{spec.key}/{path.name}: {attribute}")
    problems += [
        f"{spec.key}: {where} defines the data file {source.name!r}, which the spec's datasets leave out: "
        f"add it to datasets= in custom_metrics/{spec.key}/leaderboard.py (explain-eval download never fetches it)"
        for source, where in defined.items()
        if source not in listed
    ]
    return problems


def _utils_problems(spec: PaperSpec, folder: Path) -> list[str]:
    """The task folder's ``utils.py`` only re-exports the package's hooks: logic there is tested
    by nothing that imports the package, and is copied by the next task folder."""
    path = folder / "utils.py"
    if not path.is_file():
        return []
    where = f"lm_eval_tasks/{spec.key}/utils.py"
    fix = f"move it into custom_metrics/{spec.key}/ and re-export it here (utils.py only re-exports the hooks)"
    problems = []
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "__future__" or node.module.split(".")[:2] == ["custom_metrics", spec.key]:
                continue
            problems.append(
                f"{where}:{node.lineno}: imports from {node.module}: import only from custom_metrics.{spec.key} "
                "(its package re-exports what it needs)"
            )
            continue
        what = {
            ast.FunctionDef: "defines a function",
            ast.AsyncFunctionDef: "defines a function",
            ast.ClassDef: "defines a class",
        }.get(type(node), "holds a statement")
        name = getattr(node, "name", "")
        problems.append(f"{where}:{node.lineno}: {what}{f' {name!r}' if name else ''}: {fix}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``explain-eval check [KEY ...]``: every spec check, on the installed tree; exit 1 on a problem."""
    parser = argparse.ArgumentParser(
        prog="explain-eval check",
        description="Check each paper's spec against its package and task folder (for contributors; "
        f"{RECIPE}). Prints one line per problem, naming its fix.",
    )
    parser.add_argument("papers", nargs="*", help="paper keys whose package and folder are read (default: all)")
    args = parser.parse_args(argv)
    from custom_metrics.common.task_folders import TASKS_PATH

    try:
        from custom_metrics.leaderboard.registry import PAPERS
    except ModuleNotFoundError as err:  # a key of PAPER_KEYS whose package or spec module is not there
        key = re.fullmatch(r"custom_metrics\.(\w+)(\.leaderboard)?", err.name or "")
        if key is None:
            raise
        raise DataError(
            f"{REGISTRY}: PAPER_KEYS names {key[1]!r}, which has no package custom_metrics/{key[1]}/ with a "
            f"leaderboard.py defining SPEC: add them ({RECIPE}), or drop the key"
        ) from err

    # a key with a task folder but no spec is checked: the check names the missing registry line
    unknown = sorted(key for key in set(args.papers) - {spec.key for spec in PAPERS} if not (TASKS_PATH / key).is_dir())
    if unknown:
        papers = ", ".join(spec.key for spec in PAPERS)
        parser.error(f"no paper {', '.join(unknown)} in {REGISTRY} nor a task folder of it (papers: {papers})")
    repo = Path(importlib.import_module("custom_metrics").__file__).resolve().parent.parent
    problems = spec_problems(PAPERS, TASKS_PATH, repo, args.papers)
    for problem in problems:
        print(problem)
    checked = args.papers or [spec.key for spec in PAPERS]
    print(f"{len(checked)} paper(s) checked ({', '.join(checked)}): {len(problems) or 'no'} problem(s)")
    return 1 if problems else 0
