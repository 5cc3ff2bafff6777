"""The REG task YAMLs' loaders (``custom_dataset: !function utils.load_reg``), called as
``load(**metadata, **dataset_kwargs)`` while the harness builds the task, before any request.

They live apart from ``data.py`` because ``load_reg`` checks the judge (``judging``), which
itself reads the gold items from ``data``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import datasets

from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.sources import to_dataset
from custom_metrics.common.task_loading import task_loader
from custom_metrics.reg import data, generation, judging


@task_loader
def load_reg(
    judge: str | None = None,
    judge_cache: str | None = None,
    mode: str = generation.NON_THINKING.name,
    backend: str = generation.IN_PROCESS,
    judge_check: str = "stop",
    **run_args: Any,
) -> dict[str, datasets.Dataset]:
    """ChaosNLI-MNLI-C (275 items), each doc carrying the judge, its cache folder and the run's
    generation settings, all checked here, cheapest first (``with_checked_judge``)."""
    task = generation.TASKS.get((mode, backend), "reg_chaos")
    check_metadata_keys(task, run_args)
    docs = with_checked_judge(
        task,
        lambda: data.reg_docs(data.load_items()),
        judge,
        judge_cache,
        judge_check,
        run_args,
        lambda: generation.generation_columns(mode, backend, run_args),
    )
    return {"test": to_dataset(docs)}


def with_checked_judge(
    task: str,
    docs: Callable[[], Sequence[dict[str, Any]]],
    judge: str | None,
    judge_cache: str | None,
    judge_check: str,
    run_args: dict[str, Any],
    settings: Callable[[], dict[str, Any]],
    default: str = judging.DEFAULT_JUDGE,
) -> list[dict[str, Any]]:
    """A judged REG task's docs (``docs``, built last) carrying its judge, the generation
    ``settings`` and whether the judge was checked, for every task whose filter is ``REGJudgeFilter``.
    The judge is checked here when the run names a model or a judge; a task built with neither (a
    plain ``TaskManager``) only parses the judge's spec, and its filter checks the judge."""
    if judging.judge_named(judge) or generation.names_a_model(run_args):
        chosen = judge if judging.judge_named(judge) else default
        spec, cache, located = judging.locate_judge(task, chosen, judge_cache)  # seconds: before anything loads
        columns = settings()
        judging.check_before_generation(task, located, judge_check)
        checked = True
    else:
        columns = settings()
        spec, cache = judging.default_judge(task, judge_cache, default)
        checked = False
    return [{**doc, **columns, judging.CHECKED_COLUMN: checked} for doc in data.with_judge(docs(), spec, cache)]


@task_loader
def load_judge_select(
    agreement: float = data.AGREEMENT_THRESHOLD, backend: str = generation.IN_PROCESS, **run_args: Any
) -> dict[str, datasets.Dataset]:
    """ChaosNLI-MNLI items whose majority label has >= 80% agreement (289 items), after
    checking that the model judges non-thinking, as Table 1's candidates did."""
    task = "reg_judge_select_reasoning_served" if backend == generation.REASONING else "reg_judge_select"
    check_metadata_keys(task, run_args)
    generation.check_judge_non_thinking(task, run_args)
    return {"test": to_dataset(data.judge_select_docs(data.load_items(), float(agreement)))}


@task_loader
def load_judge_humans(**run_args: Any) -> dict[str, datasets.Dataset]:
    """Every ChaosNLI-MNLI item (1,599), each with its 100 human labels: the set on which
    ChaosNLI scored models' distributions, so its reference rows compare."""
    check_metadata_keys("reg_judge_humans", run_args)
    return {"test": to_dataset(data.load_items())}
