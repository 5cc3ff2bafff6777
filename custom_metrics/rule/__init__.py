"""RULE (Kawabata & Sugawara, EMNLP 2023): does a model understand why each ReClor option is
right or wrong? Data, prompts, task variants, Table 2 metrics, the five-shot protocol and
the leaderboard spec."""

from custom_metrics.common.faithfulness import DOCS_PER_GENERATION
from custom_metrics.common.metric_ranges import MEAN_LENGTH, SHARE, Range

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({"variant", "split", "demos", "shots", "explanations", "edits"})
# Its tasks that read another run's samples -> the --metadata key naming that file (the run whose
# cut, setting and model they inherit: custom_metrics.common.lineage).
READS_SAMPLES = dict.fromkeys(
    ("rule_zeroshot_cot", "rule_cot_faithfulness", "rule_cot_edits", "rule_cot_faithfulness_edits"), "explanations"
)
# Its tasks whose documents come in groups a --limit must keep whole (custom_metrics.common.harness_args).
LIMIT_GROUPS = {"rule_cot_faithfulness": DOCS_PER_GENERATION}
# The range of each metric it reports (custom_metrics.common.metric_ranges).
METRIC_RANGES = {
    # Table 2 (its subsets of main questions answered right too), alignment, unparsed CoT answers
    **dict.fromkeys(("mainq_acc", "subq_acc", "selective_acc", "eliminative_acc", "consistency"), SHARE),
    **dict.fromkeys(("mainq_wise_subq_acc", "none_acc", "correct_option_acc", "incorrect_option_acc"), SHARE),
    **dict.fromkeys(("subq_acc_mainq_correct", "selective_acc_mainq_correct", "eliminative_acc_mainq_correct"), SHARE),
    **dict.fromkeys(("consistency_mainq_correct", "mainq_wise_subq_acc_mainq_correct", "unparsed"), SHARE),
    # chain-of-thought faithfulness: same answers, accuracies, the area over the curve, unusable docs
    **dict.fromkeys(("same_at_0", "same_at_25", "same_at_50", "same_at_75", "same_at_100", "early_aoc"), SHARE),
    **dict.fromkeys(("filler_same", "filler_acc", "no_cot_acc", "original_unread", "edit_unusable"), SHARE),
    **dict.fromkeys(("mistake_same", "mistake_acc", "paraphrase_same", "paraphrase_acc"), SHARE),
    # biased contexts: answers following the bias, CoTs mentioning the hint, the detectors' spread and agreement
    **dict.fromkeys(("bias_follow", "articulation", "articulation_range"), SHARE),
    "detector_kappa": Range(-1.0, 1.0, "not a kappa, between -1 and 1"),
    # zero-shot CoT's reasoning: its mean length in words, the share of empty ones
    "words": MEAN_LENGTH,
    "empty": SHARE,
}
# Its files known by their name (custom_metrics.common.file_kinds: a command handed one says what it is).
SUMMARY_FILE, ARGS_FILE = "rule_protocol_summary.json", "rule_protocol_args.json"  # written by rule/protocol.py
FILE_NAMES = {
    SUMMARY_FILE: ("rule_summary", "the summary of `explain-eval rule-protocol`"),
    ARGS_FILE: ("rule_summary", "the settings record of `explain-eval rule-protocol`"),
}
# Its own `explain-eval` commands (custom_metrics.cli): name -> ("module" or "module:function", help).
COMMANDS = {
    "rule-protocol": (
        "custom_metrics.rule.protocol",
        "RULE's five-shot protocol: five split runs, mean ± std, Table 3",
    ),
}
