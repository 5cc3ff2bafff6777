"""Thin hooks for the RULE task YAMLs; the logic lives in ``custom_metrics.rule*``."""

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.rule import (  # noqa: F401
    correct_option_acc,
    incorrect_option_acc,
    load,
    process_alignment,
    process_combined,
    process_main,
    process_sub,
)
from custom_metrics.rule_metrics import (  # noqa: F401
    consistency,
    eliminative_acc,
    mainq_acc,
    mainq_wise_subq_acc,
    none_acc,
    selective_acc,
    subq_acc,
)
