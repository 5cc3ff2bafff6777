"""The paper's Table 1, §6 and Figure 19, transcribed once (the tables as data files in
``tables/``, read by ``custom_metrics.common.published``): ``ibe report`` prints them beside the
run's numbers and the leaderboard shows Table 1 as published rows (``custom_metrics.ibe.published``).

Table 1 (accuracy of picking the correct option's explanation): method | COPA GPT 3.5 |
COPA LLaMA 2 13B | COPA LLaMA 2 7B | E-CARE GPT 3.5 | E-CARE LLaMA 2 13B | E-CARE LLaMA 2 7B.
The source's header row is garbled ("COPA GPT 3.5 | E-CARE LlaMA 2 13B | LlaMA 2 7B |
GPT 3.5 | ..."); read as three models under COPA, then the same three under E-CARE.
"""

from __future__ import annotations

import re
from pathlib import Path

from custom_metrics.common.published import TableRow, read_table

TABLES = Path(__file__).with_name("tables")
TABLE_1 = TABLES / "table_1.csv"  # its columns: the method, then IBE_COLUMNS
SOURCE = "IBE-Eval (Dalal et al., arXiv 2402.10767) Table 1"
PAPER_JUDGE = "GPT 3.5"  # the paper's LLM-as-a-judge for every generator (Section 5, "Baselines")
JUDGE_ROW = "GPT3.5 Judge"
IBE_MODELS = ("GPT 3.5", "LLaMA 2 13B", "LLaMA 2 7B")
IBE_COLUMNS = tuple(f"{name} {model}" for name in ("COPA", "E-CARE") for model in IBE_MODELS)


def table_1() -> dict[str, tuple[float, ...]]:
    """Table 1 as {row name: accuracies in IBE_COLUMNS order}."""
    return {row["method"]: tuple(float(row.number(column)) for column in IBE_COLUMNS) for row in read_table(TABLE_1)}


# §6 (Preliminary Analysis), in its words: "about 2% of the cases consist of self-evident
# explanations. For GPT 3.5, LLaMA 2 13B, and LLaMA 2 7B, 2% of the generated explanations exhibit
# a concept drift of 0, and on average 1.5% of the explanations have a proof depth of 1. [...]
# Across all LLMs, less than 0.1% of the errors were caused by the selection of such explanations."
SECTION_6 = {
    "self_evident": "about 2%",
    "drift_zero": "2%",
    "depth_one": "on average 1.5%",
    "error_share": "less than 0.1%",
}
# Figure 19 (Appendix A.11), "Accuracy in predicting the most plausible causes vs effects on COPA",
# the bar labels as printed (tables/figure_19.csv; the figure names GPT 3.5 "ChatGPT").


def figure_19() -> dict[str, tuple[float, float]]:
    """Figure 19 as {model: (cause accuracy, effect accuracy)}, in [0, 1]."""
    rows = read_table(TABLES / "figure_19.csv")
    return {row["model"]: (_percent(row, "Cause"), _percent(row, "Effect")) for row in rows}


def _percent(row: TableRow, column: str) -> float:
    """A bar label as printed (``64%``) as a fraction."""
    if not re.fullmatch(r"\d+(\.\d+)?%", row[column]):
        raise row.error(column, "is not a percentage")
    return float(row[column][:-1]) / 100
