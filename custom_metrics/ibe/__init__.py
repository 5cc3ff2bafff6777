"""IBE-Eval (Dalal et al., ACL 2024): the harness side and the leaderboard's view. COPA and
e-CARE as explanation docs, the explanation and judge prompts, format metrics, the
leaderboard spec (split by what it reads) and the sweep's hooks. The parser, the reader of
logged explanations, the feature scoring, the selector and IBE's files are in
``ibe_postprocess``, whose light modules this package imports (never the reverse)."""

from custom_metrics.common.metric_ranges import MEAN_LENGTH, SHARE

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset(
    {"dataset", "ecare_train_size", "ecare_test_size", "ecare_seed", "explanations", "both_orders"}
)
# Its tasks that read another run's samples -> the --metadata key naming that file (the run whose
# cut, setting and model they inherit: custom_metrics.common.lineage).
READS_SAMPLES = {
    f"ibe_judge_{dataset}{kind}": "explanations" for dataset in ("copa", "ecare") for kind in ("", "_chat", "_position")
}
# Its tasks whose documents come in groups a --limit must keep whole (custom_metrics.common.harness_args):
# each question in both orders.
LIMIT_GROUPS = {f"ibe_judge_{dataset}_position": 2 for dataset in ("copa", "ecare")}
# (task, the name a run may have logged) -> the name now: lm-eval 0.5 refuses a registered
# metric name (acc) on a task of another output type, so the chat judge's accuracy has its
# own; the leaderboard reads earlier runs' name as this one.
RENAMED_METRICS = {(f"ibe_judge_{dataset}_chat", "acc"): "answer_acc" for dataset in ("copa", "ecare")}
# The range of each metric it reports (custom_metrics.common.metric_ranges).
METRIC_RANGES = {
    # explanations: the mean number of IF-THEN steps, the shares well formed and with none
    "steps": MEAN_LENGTH,
    **dict.fromkeys(("well_formed", "no_steps"), SHARE),
    # the judges: accuracy, unparsed answers, the same slot in both orders, the first slot chosen
    **dict.fromkeys(("acc", "answer_acc", "unparsed", "position_bias", "first_slot"), SHARE),
    # the selector's accuracy (report.json): by each feature, the features so far, the judge, humans, chance
    **dict.fromkeys(("judge", "human", "random", "consistency", "depth", "drift", "coherence", "uncertainty"), SHARE),
    **dict.fromkeys(("cum_consistency", "cum_depth", "cum_drift", "cum_coherence", "cum_uncertainty"), SHARE),
}
# Its files known by their header key (custom_metrics.common.file_kinds), the keys of
# ibe_postprocess.features_file and report_file (tests/common/test_file_kinds.py holds them equal).
FILE_HEADERS = {
    "ibe_features": ("ibe_features", "an IBE features file, written by `explain-eval ibe score`"),
    "ibe_report": ("ibe_report", "an IBE report, written by `explain-eval ibe report`"),
}
# Its own `explain-eval` commands (custom_metrics.cli): name -> ("module" or "module:function", help).
COMMANDS = {
    "ibe": ("ibe_postprocess.cli", "IBE-Eval: `score` logged explanations, `report` the selector (needs [ibe])"),
}
