"""The range each metric of a results file can take, checked where the file is read.

A results file is a JSON file anyone can write or damage. A value outside its metric's
range is no measurement: ``acc: 1e308`` stopped the whole leaderboard (an OverflowError
counting its items), ``acc: 1.5`` was shown as "accuracy 1.5000", ``Infinity`` as "∞" and
a stderr of -0.1 as "± -0.1000". ``out_of_range`` says what is wrong with a value, so the
reader leaves it out and names it, and nothing downstream ever sees it.

Shares (accuracies and the other proportions the suite's tasks and lm-eval's common tasks
report) lie in [0, 1]; counts are whole and non-negative; means of lengths are
non-negative; every other metric (another harness task's bleu, a perplexity) need only be
finite. NaN stays what the harness means by it: undefined (no document of a kind).
"""

from __future__ import annotations

import math

# lm-eval's common proportions, and the suite's shares (the papers' definitions: the
# leaderboard specs' ``definitions``); any ``*_acc`` and ``acc_*`` metric is an accuracy too.
SHARES = frozenset(
    {
        "acc",
        "acc_norm",
        "exact_match",
        "f1",
        "f1_macro",
        "consistency",  # RULE, IBE
        "bias_follow",  # RULE's biased contexts
        "articulation",  # RULE's biased contexts
        "coherence",  # REG: share of N (IBE's selection accuracy by coherence too)
        "effectiveness",  # REG: share of N
        "success",  # REG
        "malformed",  # REG
        "unparsed",  # REG, RULE, IBE chat judges
        "judge_degenerate",  # REG: 0 or 1
        "empty",  # GEESE
        "well_formed",  # IBE
        "no_steps",  # IBE
    }
)
COUNTS = frozenset({"n"})  # REG's |N|
# Means of lengths and counts per item: never negative, no upper bound.
NON_NEGATIVE = frozenset(
    {"words", "masked_terms", "thinking_words", "output_tokens_successful", "output_tokens_unsuccessful", "steps"}
)


def is_share(metric: str) -> bool:
    return metric in SHARES or metric.endswith("_acc") or metric.startswith("acc_")


def out_of_range(metric: str, value: float) -> str | None:
    """Why ``value`` cannot be a value of ``metric`` (in words), or None when it can. NaN can."""
    if math.isnan(value):
        return None
    if not math.isfinite(value):
        return "not a finite number"
    if is_share(metric) and not 0.0 <= value <= 1.0:
        return "not a share between 0 and 1"
    if metric in COUNTS and (value < 0 or not value.is_integer()):
        return "not a whole, non-negative count"
    if metric in NON_NEGATIVE and value < 0:
        return "negative, for a mean length"
    return None


def stderr_out_of_range(value: float) -> str | None:
    """Why ``value`` cannot be a standard error, or None when it can (NaN: none computed)."""
    if math.isnan(value):
        return None
    if not math.isfinite(value):
        return "not a finite standard error"
    if value < 0:
        return "a negative standard error"
    return None
