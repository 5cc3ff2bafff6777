"""IBE-Eval (Dalal et al., ACL 2024): the harness side and the leaderboard's view. COPA and
e-CARE as explanation docs, the explanation and judge prompts, format metrics, the
leaderboard spec (split by what it reads) and the sweep's hooks. The parser, the reader of
logged explanations, the feature scoring, the selector and IBE's files are in
``ibe_postprocess``, whose light modules this package imports (never the reverse)."""

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset(
    {"dataset", "ecare_train_size", "ecare_test_size", "ecare_seed", "explanations", "both_orders"}
)
# Its files known by their header key (custom_metrics.common.file_kinds), the keys of
# ibe_postprocess.features_file and report_file (tests/common/test_file_kinds.py holds them equal).
FILE_HEADERS = {
    "ibe_features": ("ibe_features", "an IBE features file, written by `explain-eval ibe score`"),
    "ibe_report": ("ibe_report", "an IBE report, written by `explain-eval ibe report`"),
}
