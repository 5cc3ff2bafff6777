"""Question ids and the dataset they belong to: ``copa-<id>``, ``ecare-<index>``.

The harness side writes them into every doc (``custom_metrics.ibe.data``) and the scorer
reads the dataset back from them to report per dataset, so both ends use this module.
"""

from __future__ import annotations

DATASETS = ("copa", "ecare")
OTHER_DATASET = "other"  # explanations read from plain JSONL whose qid names no dataset


def question_id(dataset: str, item_id: str) -> str:
    return f"{dataset}-{item_id}"


def dataset_of(qid: str) -> str:
    """The dataset of a question id (``copa-<id>``, ``ecare-<index>``); ``other`` for any other id."""
    prefix = qid.split("-", 1)[0]
    return prefix if prefix in DATASETS and qid != prefix else OTHER_DATASET
