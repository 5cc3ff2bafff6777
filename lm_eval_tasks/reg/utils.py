"""Thin hooks for the REG task YAMLs; the logic lives in ``custom_metrics.reg``."""

# Re-exported for `!function utils.<name>` in the YAMLs; importing this module also registers the
# suite's lm-eval model class for API reasoning models (custom_metrics/reg/api_model.py).
from custom_metrics.reg.api_model import ReasoningChatCompletions  # noqa: F401
from custom_metrics.reg.faithfulness import (  # noqa: F401
    early_aoc,
    faithfulness_context,
    filler_same,
    load_cot_faithfulness,
    process_cot_faithfulness,
    same_at_0,
    same_at_25,
    same_at_50,
    same_at_75,
    same_at_100,
)
from custom_metrics.reg.judging import REGJudgeFilter  # noqa: F401
from custom_metrics.reg.loaders import load_judge_humans, load_judge_select, load_reg  # noqa: F401
from custom_metrics.reg.metrics import (  # noqa: F401
    judge_humans_results,
    judge_select_loglik_results,
    judge_select_results,
    mean_comparable,
    mean_over_n,
    mean_tokens_successful,
    mean_tokens_unsuccessful,
    process_results,
    size_of_n,
    unparsed_share,
)
from custom_metrics.reg.prompts import generation_prompt, judge_choices, judge_prompt, judge_target  # noqa: F401
from custom_metrics.reg.task import REGChaosTask  # noqa: F401
