"""Thin hooks for the IBE-Eval task YAMLs; the logic lives in ``custom_metrics.ibe``."""

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.ibe.data import load_explain, load_judge  # noqa: F401
from custom_metrics.ibe.metrics import (  # noqa: F401
    first_slot_share,
    judge_chat_results,
    judge_position_results,
    judge_results,
    position_bias_share,
    process_generation,
)
from custom_metrics.ibe.prompts import explanation_prompt, judge_answer, judge_prompt, judge_target  # noqa: F401
