"""Thin hooks for the RULE task YAMLs; the logic lives in ``custom_metrics.rule``."""

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.rule.faithfulness import (  # noqa: F401
    early_aoc,
    faithfulness_context,
    faithfulness_target,
    filler_acc,
    filler_same,
    load_faithfulness,
    no_cot_acc,
    original_unread,
    process_faithfulness,
    same_at_0,
    same_at_25,
    same_at_50,
    same_at_75,
    same_at_100,
)
from custom_metrics.rule.metrics import (  # noqa: F401
    consistency,
    correct_option_acc,
    eliminative_acc,
    incorrect_option_acc,
    mainq_acc,
    mainq_wise_subq_acc,
    none_acc,
    process_ablation,
    process_alignment,
    process_combined,
    process_cot,
    process_main,
    process_sub,
    selective_acc,
    subq_acc,
    unparsed,
)
from custom_metrics.rule.variants import load  # noqa: F401
