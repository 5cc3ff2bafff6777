"""GEESE (Zaninello & Magnini, CLiC-it 2024): does an explanation help a model predict
Italian textual entailment? Data, prompts, anonymization, metrics and leaderboard spec."""

from custom_metrics.common.metric_ranges import DIFFERENCE, MEAN_LENGTH, SHARE

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({"hint", "explanations", "geese_source", "explanation_type"})
# The range of each metric it reports (custom_metrics.common.metric_ranges).
METRIC_RANGES = {
    # M2 (Table 2): accuracy, per gold label and macro F1
    **dict.fromkeys(("acc", "acc_yes", "acc_no", "acc_unknown", "f1_macro"), SHARE),
    # M1: the explanations' mean length in words and anonymized terms, the share with no word
    **dict.fromkeys(("words", "masked_terms"), MEAN_LENGTH),
    "empty": SHARE,
    # derived on the leaderboard: accuracy with a hint minus without, and its leakage-adjusted form
    **dict.fromkeys(("effectiveness", "las"), DIFFERENCE),
}
# Its tasks that read another run's samples -> the --metadata key naming that file (the run whose
# cut, setting and model they inherit: custom_metrics.common.lineage).
READS_SAMPLES = {"geese_selfexp": "explanations", "geese_selfexp_only": "explanations"}
