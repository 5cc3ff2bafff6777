"""REG (Chan, Zhao & Gaizauskas, 2026): reconciliatory explanations of ChaosNLI
contradictions, judged twice by an NLI judge. Data, prompts, output parsing, judging,
metrics, the RL reward, the section 6 analysis and the leaderboard spec."""

import math

from custom_metrics.common.faithfulness import DOCS_PER_GENERATION
from custom_metrics.common.metric_ranges import COUNT, DIVERGENCE, MEAN_LENGTH, SHARE, Range

# The --metadata keys its loaders and tasks read (custom_metrics.common.metadata: a misspelling is an error).
METADATA_KEYS = frozenset({
    "judge", "judge_cache", "judge_check", "mode", "backend", "tokenizer", "agreement", "reasoning_effort",
    "trace_markers", "server", "explanations",
})  # fmt: skip
# Its tasks that read another run's samples -> the --metadata key naming that file (the run whose
# cut, setting and model they inherit: custom_metrics.common.lineage).
READS_SAMPLES = {"reg_cot_faithfulness": "explanations"}
# Its tasks whose documents come in groups a --limit must keep whole (custom_metrics.common.harness_args).
LIMIT_GROUPS = {"reg_cot_faithfulness": DOCS_PER_GENERATION}
# (task, the name a run may have logged) -> the name now: lm-eval 0.5 refuses a registered
# metric name (acc) on a task of another output type, so the generated judge's accuracy has
# its own; the leaderboard reads earlier runs' name as this one.
RENAMED_METRICS = {
    ("reg_judge_select", "acc"): "answer_acc",
    ("reg_judge_select_reasoning_served", "acc"): "answer_acc",
}
# The range of each metric it reports (custom_metrics.common.metric_ranges).
METRIC_RANGES = {
    # reg_chaos*: |N|, Table 3's shares of N, the outputs without an explanation, the judge's check
    "n": COUNT,
    **dict.fromkeys(("coherence", "effectiveness", "success", "malformed", "cut_off", "no_explanation"), SHARE),
    **dict.fromkeys(("unparsed", "judge_check_acc", "judge_degenerate"), SHARE),
    # mean output lengths in the generator's tokens (all, successful, unsuccessful), traces in tokens and words
    **dict.fromkeys(("output_tokens", "output_tokens_successful", "output_tokens_unsuccessful"), MEAN_LENGTH),
    **dict.fromkeys(("thinking_tokens", "thinking_words"), MEAN_LENGTH),
    # reg_cot_faithfulness: same answers, the area over the curve, docs not compared
    **dict.fromkeys(("same_at_0", "same_at_25", "same_at_50", "same_at_75", "same_at_100", "early_aoc"), SHARE),
    **dict.fromkeys(("filler_same", "not_compared", "original_unusable"), SHARE),
    # the judges: accuracy; against ChaosNLI's humans, the Jensen-Shannon distance (natural log) and KL
    **dict.fromkeys(("acc", "answer_acc", "not_comparable"), SHARE),
    "jsd": Range(0.0, math.sqrt(math.log(2)), "not a Jensen-Shannon distance, between 0 and sqrt(ln 2)"),
    "kl": DIVERGENCE,
}
# Its own `explain-eval` commands (custom_metrics.cli): name -> ("module" or "module:function", help).
COMMANDS = {
    "reg-analysis": (
        "custom_metrics.reg.analysis",
        "REG section 6: GLM of success on output length (needs [analysis])",
    ),
    # `explain-eval rejudge OUT --complete`, kept under its first name; it writes beside the run (no --out)
    "reg-rejudge": (
        "custom_metrics.rejudge:reg_rejudge",
        "judge a REG run whose judge failed after generation, in place (= rejudge OUT --complete)",
        "copy the run's folder there and pass the copy; the verdict cache: --judge-cache",
    ),
    "reg-dapo": (
        "custom_metrics.reg.dapo",
        "REG section 7: DAPO training with TRL on REG's reward, then MuSR through lm_eval (needs [trl])",
    ),
}
