"""Thin hooks for the RULE task YAMLs; the logic lives in ``custom_metrics.rule``."""

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.rule.bias import articulation, bias_follow, process_bias, process_bias_cot  # noqa: F401
from custom_metrics.rule.cot_edits import (  # noqa: F401
    edit_request,
    edit_unusable,
    load_edit_requests,
    load_edited,
    mistake_acc,
    mistake_same,
    paraphrase_acc,
    paraphrase_same,
    process_edit,
    process_edited,
)
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
    consistency_mainq_correct,
    correct_option_acc,
    eliminative_acc,
    eliminative_acc_mainq_correct,
    incorrect_option_acc,
    mainq_acc,
    mainq_wise_subq_acc,
    mainq_wise_subq_acc_mainq_correct,
    none_acc,
    process_ablation,
    process_alignment,
    process_combined,
    process_cot,
    process_main,
    process_sub,
    selective_acc,
    selective_acc_mainq_correct,
    subq_acc,
    subq_acc_mainq_correct,
    unparsed,
)
from custom_metrics.rule.variants import load  # noqa: F401
from custom_metrics.rule.zeroshot_cot import process_answer, process_reasoning  # noqa: F401
