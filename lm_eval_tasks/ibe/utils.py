"""Thin hooks for the IBE-Eval task YAMLs; the logic lives in ``custom_metrics.ibe``."""

from __future__ import annotations

from typing import Any

import datasets

from custom_metrics.common.classification import choice_accuracy
from custom_metrics.common.errors import DataError
from custom_metrics.common.sources import to_dataset
from custom_metrics.ibe import data

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.ibe.metrics import process_generation  # noqa: F401
from custom_metrics.ibe.prompts import explanation_prompt, judge_prompt  # noqa: F401


def load_explain(
    dataset: str,
    ecare_train_size: int = data.ECARE_TRAIN_SIZE,
    ecare_test_size: int = data.ECARE_TEST_SIZE,
    ecare_seed: int = data.ECARE_SEED,
    **_: Any,
) -> dict[str, datasets.Dataset]:
    """One doc per (question, option) of ``dataset`` (``dataset_kwargs``); e-CARE's sample
    sizes and seed can be changed with ``--metadata``."""
    if dataset == "copa":
        return {"test": to_dataset(data.copa_docs())}
    if dataset == "ecare":
        docs = data.ecare_docs(int(ecare_train_size), int(ecare_test_size), int(ecare_seed))
        return {"test": to_dataset(docs)}
    raise DataError(f"IBE: unknown dataset {dataset!r} in dataset_kwargs; expected copa or ecare.")


def load_judge(dataset: str, explanations: str | None = None, **_: Any) -> dict[str, datasets.Dataset]:
    """The two explanations of each test question, from an ``ibe_<dataset>`` samples file."""
    return {"test": to_dataset(data.judge_docs(dataset, explanations))}


def judge_target(doc: dict) -> int:
    return doc["gold"] - 1


def judge_results(doc: dict, results: list[tuple[float, bool]]) -> dict[str, float]:
    return choice_accuracy(results, judge_target(doc), f"IBE judge question {doc.get('qid')}")
