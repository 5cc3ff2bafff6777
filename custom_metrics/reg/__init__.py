"""REG (Chan, Zhao & Gaizauskas, 2026): reconciliatory explanations of ChaosNLI
contradictions, judged twice by an NLI judge. Data, prompts, output parsing, judging,
metrics, the RL reward, the section 6 analysis and the leaderboard spec."""

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({
    "judge", "judge_cache", "judge_check", "mode", "backend", "tokenizer", "agreement", "reasoning_effort",
    "trace_markers", "server", "explanations",
})  # fmt: skip
# (task, the name a run may have logged) -> the name now: lm-eval 0.5 refuses a registered
# metric name (acc) on a task of another output type, so the generated judge's accuracy has
# its own; the leaderboard reads earlier runs' name as this one.
RENAMED_METRICS = {
    ("reg_judge_select", "acc"): "answer_acc",
    ("reg_judge_select_reasoning_served", "acc"): "answer_acc",
}
