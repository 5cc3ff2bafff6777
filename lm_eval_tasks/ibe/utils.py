"""Thin hooks for the IBE-Eval task YAMLs; the logic lives in ``custom_metrics.ibe``."""

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.ibe.data import load_explain, load_judge  # noqa: F401
from custom_metrics.ibe.metrics import judge_chat_results, judge_results, process_generation  # noqa: F401
from custom_metrics.ibe.prompts import explanation_prompt, judge_answer, judge_prompt, judge_target  # noqa: F401
