"""IBE-Eval (Dalal et al., ACL 2024): the harness side and the leaderboard's view. COPA and
e-CARE as explanation docs, the explanation and judge prompts, format metrics, the
leaderboard spec (split by what it reads) and the sweep's hooks. The parser, the reader of
logged explanations, the feature scoring, the selector and IBE's files are in
``ibe_postprocess``, whose light modules this package imports (never the reverse)."""

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({"dataset", "ecare_train_size", "ecare_test_size", "ecare_seed", "explanations"})
