"""REG on the leaderboard: Tables 1 (judge accuracy) and 2 (explanation quality, judge
Gemma-4-31B-it), non-thinking and thinking rows."""

from __future__ import annotations

from custom_metrics.common.leaderboard_types import PaperSpec
from custom_metrics.common.published import PublishedRow, cell, table_lines

SOURCE = "REG (Chan, Zhao & Gaizauskas, arXiv 2603.22735) Tables 1-2"

# Table 1, in percent: judge model | accuracy on ChaosNLI-MNLI items with >= 80% agreement
# (every candidate tested in non-thinking mode).
REG_TABLE_1 = """
Qwen3.5-0.8B | 59.17
Qwen3.5-2B | 62.28
Qwen3.5-4B | 88.58
Qwen3.5-9B | 91.35
Qwen3.5-27B | 93.08
Gemma-4-E2B-it | 74.74
Gemma-4-E4B-it | 80.97
Gemma-4-12B-it | 93.08
Gemma-4-26B-A4B-it | 89.27
Gemma-4-31B-it | 94.46
gpt-5.6-luna | 91.70
gpt-5.6-terra | 93.08
gpt-5.6-sol | 92.39
"""
# Table 2, in percent, judge Gemma-4-31B-it: model | coherence non-thinking | thinking |
# effectiveness non-thinking | thinking | success non-thinking | thinking.
REG_TABLE_2 = """
Qwen3.5-0.8B | 72.31 | 72.82 | 26.67 | 22.05 | 11.28 | 16.41
Qwen3.5-2B | 66.15 | 66.15 | 38.46 | 57.95 | 18.46 | 33.33
Qwen3.5-4B | 76.41 | 74.36 | 17.95 | 57.44 | 13.33 | 40.51
Qwen3.5-9B | 86.67 | 81.54 | 30.26 | 64.10 | 24.62 | 51.28
Qwen3.5-27B | 75.90 | 80.51 | 61.54 | 70.77 | 44.10 | 54.36
Gemma-4-E2B-it | 87.18 | 82.05 | 26.67 | 30.77 | 20.00 | 23.08
Gemma-4-E4B-it | 90.77 | 85.13 | 18.46 | 38.46 | 13.33 | 31.28
Gemma-4-12B-it | 82.56 | 80.51 | 43.59 | 57.95 | 30.77 | 46.67
Gemma-4-26B-A4B-it | 80.51 | 85.13 | 47.69 | 55.38 | 34.36 | 44.10
Gemma-4-31B-it | 81.54 | 81.03 | 57.44 | 62.05 | 45.64 | 47.18
gpt-5.6-luna | 81.54 | 89.23 | 49.23 | 70.26 | 35.38 | 62.05
gpt-5.6-terra | 84.10 | 81.03 | 55.90 | 77.44 | 44.10 | 61.03
gpt-5.6-sol | 85.64 | 80.00 | 73.33 | 79.49 | 62.05 | 62.56
"""


def published_rows() -> list[PublishedRow]:
    judge = {model: cell(acc, percent=True) for model, acc in table_lines(REG_TABLE_1)}
    rows = []
    for model, coh_nt, coh_t, eff_nt, eff_t, suc_nt, suc_t in table_lines(REG_TABLE_2):
        for mode, (coh, eff, suc) in (
            ("non-thinking", (coh_nt, eff_nt, suc_nt)),
            ("thinking", (coh_t, eff_t, suc_t)),
        ):
            cells = {
                "reg_chaos/coherence": cell(coh, percent=True),
                "reg_chaos/effectiveness": cell(eff, percent=True),
                "reg_chaos/success": cell(suc, percent=True),
            }
            if mode == "non-thinking":  # Table 1 tested every judge in non-thinking mode
                cells["reg_judge_select/acc"] = judge[model]
            source = f"{SOURCE}, {mode}; judge Gemma-4-31B-it"
            rows.append(PublishedRow("reg", f"{model} ({mode})", source, cells))
    return rows


SPEC = PaperSpec(
    "reg",
    "REG: reconciliatory explanations on ChaosNLI-MNLI contradictions",
    r"reg(_|$)",
    ("reg_chaos", "reg_judge_select"),
    ("coherence", "effectiveness", "success", "n", "acc"),
    ("coherence", "effectiveness", "success", "acc"),
    "Published rows print no ± (the paper's bootstrap intervals are in its Appendix J). "
    "Published reg_judge_select acc is REG Table 1 (judge accuracy, non-thinking mode).",
    published=published_rows,
)
