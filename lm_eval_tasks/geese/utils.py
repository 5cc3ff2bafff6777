"""Thin hooks for the GEESE task YAMLs; the logic lives in ``custom_metrics.geese``."""

# Re-exported for `!function utils.<name>` in the YAMLs.
from custom_metrics.geese.data import load_m1, load_m2  # noqa: F401
from custom_metrics.geese.metrics import (  # noqa: F401
    AnonymizeFilter,
    acc_no,
    acc_unknown,
    acc_yes,
    f1_macro,
    process_generation,
    process_prediction,
)
from custom_metrics.geese.prompts import m1_prompt  # noqa: F401
