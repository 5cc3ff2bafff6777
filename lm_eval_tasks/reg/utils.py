"""Thin hooks for the REG task YAMLs; the logic lives in ``custom_metrics.reg``."""

from __future__ import annotations

from typing import Any

import datasets

from custom_metrics import reg
from custom_metrics.data import to_dataset

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.reg import (  # noqa: F401
    REGJudgeFilter,
    generation_prompt,
    judge_choices,
    judge_prompt,
    judge_target,
    mean_over_n,
    process_results,
    size_of_n,
)


def load_reg(judge: str | None = None, judge_cache: str | None = None, **_: Any) -> dict[str, datasets.Dataset]:
    """ChaosNLI-MNLI-C (275 items); remembers the judge chosen with --metadata for the filter."""
    reg.configure(judge=judge, judge_cache=judge_cache)
    return {"test": to_dataset(reg.reg_docs(reg.load_items()))}


def load_judge_select(agreement: float = reg.AGREEMENT_THRESHOLD, **_: Any) -> dict[str, datasets.Dataset]:
    """ChaosNLI-MNLI items whose majority label has >= 80% agreement (289 items)."""
    return {"test": to_dataset(reg.judge_select_docs(reg.load_items(), float(agreement)))}
