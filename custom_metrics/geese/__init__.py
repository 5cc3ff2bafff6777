"""GEESE (Zaninello & Magnini, CLiC-it 2024): does an explanation help a model predict
Italian textual entailment? Data, prompts, anonymization, metrics and leaderboard spec."""

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({"hint", "explanations", "geese_source", "explanation_type"})
