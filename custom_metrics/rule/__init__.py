"""RULE (Kawabata & Sugawara, EMNLP 2023): does a model understand why each ReClor option is
right or wrong? Data, prompts, task variants, Table 2 metrics, the five-shot protocol and
the leaderboard spec."""

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({"variant", "split", "demos", "shots"})
