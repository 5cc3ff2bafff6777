"""RULE (Kawabata & Sugawara, EMNLP 2023): does a model understand why each ReClor option is
right or wrong? Data, prompts, task variants, Table 2 metrics, the five-shot protocol and
the leaderboard spec."""

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({"variant", "split", "demos", "shots", "explanations", "edits"})
# Its files known by their name (custom_metrics.common.file_kinds: a command handed one says what it is).
SUMMARY_FILE, ARGS_FILE = "rule_protocol_summary.json", "rule_protocol_args.json"  # written by rule/protocol.py
FILE_NAMES = {
    SUMMARY_FILE: ("rule_summary", "the summary of `explain-eval rule-protocol`"),
    ARGS_FILE: ("rule_summary", "the settings record of `explain-eval rule-protocol`"),
}
