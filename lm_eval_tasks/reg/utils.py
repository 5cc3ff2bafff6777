"""Thin hooks for the REG task YAMLs; the logic lives in ``custom_metrics.reg``."""

from __future__ import annotations

from typing import Any

import datasets

from custom_metrics.common.classification import choice_accuracy
from custom_metrics.common.metadata import check_metadata_keys
from custom_metrics.common.sources import to_dataset
from custom_metrics.reg import data, generation, judging

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.reg.judging import REGJudgeFilter  # noqa: F401
from custom_metrics.reg.metrics import (  # noqa: F401
    judge_select_results,
    mean_over_n,
    process_results,
    size_of_n,
    unparsed_share,
)
from custom_metrics.reg.prompts import generation_prompt, judge_choices, judge_prompt, judge_target  # noqa: F401


def load_reg(
    judge: str | None = None,
    judge_cache: str | None = None,
    mode: str = generation.NON_THINKING.name,
    backend: str = generation.IN_PROCESS,
    judge_check: str = "stop",
    **run_args: Any,
) -> dict[str, datasets.Dataset]:
    """ChaosNLI-MNLI-C (275 items), each doc carrying the judge and cache folder and the
    run's generation settings (mode, the tokenizer that counts output tokens, the seed).
    ``run_args`` are the model arguments and ``--metadata``, which lm-eval merges. Runs at
    task build, before any generation: the keys, the settings and the judge are checked here."""
    task = generation.TASKS.get((mode, backend), "reg_chaos")
    check_metadata_keys(task, run_args)
    located = judging.locate_judge(task, judge, judge_cache)  # seconds: before anything loads
    settings = generation.generation_columns(mode, backend, run_args)
    judging.check_before_generation(task, located, judge_check)
    docs = data.with_judge(data.reg_docs(data.load_items()), located.spec, located.cache_dir)
    return {"test": to_dataset([{**doc, **settings} for doc in docs])}


def load_judge_select(agreement: float = data.AGREEMENT_THRESHOLD, **run_args: Any) -> dict[str, datasets.Dataset]:
    """ChaosNLI-MNLI items whose majority label has >= 80% agreement (289 items)."""
    check_metadata_keys("reg_judge_select", run_args)
    return {"test": to_dataset(data.judge_select_docs(data.load_items(), float(agreement)))}


def judge_select_loglik_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    return choice_accuracy(results, judge_target(doc), f"reg_judge_select_loglik item {doc.get('uid')}")
