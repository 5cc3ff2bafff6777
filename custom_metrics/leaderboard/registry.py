"""The papers of the suite, each described by its own ``leaderboard.py`` spec: the one list.

The leaderboard, the sweep, ``explain-eval download`` (``custom_metrics.pinned``) and the
tests read the papers from ``PAPERS``; a new paper adds its key to ``PAPER_KEYS`` and changes
nothing else here (docs/development.md, "Adding a paper"). Loading the registry checks the
specs themselves (``spec_faults.load_problems``: a broken spec stops every command, naming the
fix); ``explain-eval check`` (``spec_checks``) also reads each paper's package and task folder.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.leaderboard_types import Board, SampleView
from custom_metrics.common.logits_memory import logits_warning
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.paper_spec import PaperSpec
from custom_metrics.common.task_folders import paper_packages
from custom_metrics.leaderboard.spec_faults import REGISTRY, load_problems

# The papers, in the leaderboard's tab order: each key names the paper's package
# (custom_metrics/<key>/, whose leaderboard.py defines SPEC) and its task folder (lm_eval_tasks/<key>/).
PAPER_KEYS = ("geese", "rule", "reg", "ibe")


def _spec(key: str) -> PaperSpec:
    spec = importlib.import_module(f"custom_metrics.{key}.leaderboard").SPEC
    if spec.key != key:
        raise DataError(
            f"custom_metrics/{key}/leaderboard.py: SPEC's key is {spec.key!r}, expected {key!r} (a paper's key names "
            "its package and its task folder)"
        )
    return spec


def _checked(specs: tuple[PaperSpec, ...]) -> tuple[PaperSpec, ...]:
    """The specs, once what they get wrong on their own is none: else every command stops here."""
    problems = load_problems(specs)
    if problems:
        raise DataError("\n".join([f"{REGISTRY}: the papers' specs have {len(problems)} problem(s):", *problems]))
    return specs


PAPERS: tuple[PaperSpec, ...] = _checked(tuple(_spec(key) for key in PAPER_KEYS))
# Per-document 0/1 outcomes any harness task may log, compared between runs of it.
GENERIC_OUTCOMES = ("acc", "acc_norm", "exact_match")


def generic_outcomes(task: str, sample: dict[str, Any]) -> dict[str, float | None]:
    return {
        name: float(sample[name])
        for name in GENERIC_OUTCOMES
        if isinstance(sample.get(name), (int, float)) and not isinstance(sample.get(name), bool)
    }


# Tasks of no paper still get a table, so a run of any harness task is never dropped.
OTHER = PaperSpec(
    key="other",
    title="Other tasks",
    pattern=r".*",
    board=Board(samples=SampleView(outcomes=generic_outcomes)),
)


def check_run(
    tasks: Sequence[str], metadata: Mapping[str, Any], *, here: bool = True, limit: float | str | None = None
) -> None:
    """Every paper's own checks of a run before a model loads (``RunSteps.check_run``;
    ``here``: the run is on this machine, so what it needs on disk can be looked for), after
    the checks every paper shares: a ``--metadata`` key that looks like a misspelled suite key,
    and a ``--limit`` that would cut inside the groups of documents a task declares (its
    package's ``LIMIT_GROUPS``)."""
    from custom_metrics.common.harness_args import check_group_limit

    suite_task = next((task for task in tasks if paper_of(task) is not OTHER), None)
    if suite_task is not None:
        check_metadata_keys(suite_task, metadata)
    groups = {task: size for package in paper_packages() for task, size in getattr(package, "LIMIT_GROUPS", {}).items()}
    for task in tasks:
        if task in groups:
            check_group_limit(task, groups[task], limit)
    for spec in PAPERS:
        if spec.runs.check_run is not None:
            spec.runs.check_run(tasks, metadata, here)


def request_tokens(tasks: Sequence[str]) -> dict[str, int]:
    """Each log-likelihood task of ``tasks`` (a group's own tasks, one level) whose paper states its
    longest request: that request's tokens. A generation task holds logits of its last position only."""
    from custom_metrics.leaderboard.task_configs import suite_configs, suite_groups

    configs, groups = suite_configs(), suite_groups()
    stated = {}
    for task in (member for name in tasks for member in groups.get(name, [name])):
        if configs.get(task, {}).get("output_type") not in ("multiple_choice", "loglikelihood"):
            continue
        found = (tokens for pattern, tokens in paper_of(task).runs.request_tokens if re.fullmatch(pattern, task))
        tokens = next(found, None)
        if tokens is not None:
            stated[task] = tokens
    return stated


def logits_memory_warning(config: Any, tasks: Sequence[str]) -> str | None:
    """For lm-eval's configuration of a run (``EvaluatorConfig``) of ``tasks``: the warning that a
    batch of their longest requests would hold more ``hf`` logits than this machine has free."""
    return logits_warning(
        config.model or "hf",
        dict(config.model_args or {}),
        str(config.batch_size),
        config.device,
        request_tokens(tasks),
    )


def paper_of(task: str) -> PaperSpec:
    return next((spec for spec in PAPERS if re.match(spec.pattern, task)), OTHER)
