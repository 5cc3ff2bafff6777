"""Thin hooks for the GEESE task YAMLs; the logic lives in ``custom_metrics.geese``."""

from __future__ import annotations

from typing import Any

import datasets

from custom_metrics.common.sources import to_dataset
from custom_metrics.geese import data

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.geese.anonymize import AnonymizeFilter  # noqa: F401
from custom_metrics.geese.metrics import (  # noqa: F401
    acc_no,
    acc_unknown,
    acc_yes,
    f1_macro,
    process_generation,
    process_prediction,
)
from custom_metrics.geese.prompts import m1_prompt  # noqa: F401


def load_m2(
    hint: str | None = None, explanations: str | None = None, geese_source: str | None = None, **_: Any
) -> dict[str, datasets.Dataset]:
    """M2 docs with the ``hint`` of the task's setting (``dataset_kwargs: {hint: ...}``)."""
    return {"test": to_dataset(data.hinted_docs(hint, explanations, geese_source))}


def load_m1(explanation_type: str, geese_source: str | None = None, **_: Any) -> dict[str, datasets.Dataset]:
    """M1 docs with the ``explanation_type`` the prompt asks for."""
    return {"test": to_dataset(data.m1_docs(explanation_type, geese_source))}
