"""REG (Chan, Zhao & Gaizauskas, 2026): reconciliatory explanations of ChaosNLI
contradictions, judged twice by an NLI judge. Data, prompts, output parsing, judging,
metrics, the RL reward, the section 6 analysis and the leaderboard spec."""

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({
    "judge", "judge_cache", "judge_check", "mode", "backend", "tokenizer", "agreement", "reasoning_effort",
    "trace_markers", "server", "explanations",
})  # fmt: skip
