"""Thin hooks for the IBE-Eval task YAMLs; the logic lives in ``ibe_postprocess``."""

from __future__ import annotations

from typing import Any

import datasets

from ibe_postprocess import tasks

# Re-exported for `!function utils.<name>` in the YAMLs.
from ibe_postprocess.prompts import explanation_prompt, judge_prompt  # noqa: F401
from ibe_postprocess.tasks import load_copa, load_ecare, process_generation  # noqa: F401


def load_judge_copa(explanations: str | None = None, **_: Any) -> dict[str, datasets.Dataset]:
    return tasks.load_judge("copa", explanations)


def load_judge_ecare(explanations: str | None = None, **_: Any) -> dict[str, datasets.Dataset]:
    return tasks.load_judge("ecare", explanations)


def judge_target(doc: dict) -> int:
    return doc["gold"] - 1
