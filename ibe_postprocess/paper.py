"""The paper's Table 1, transcribed once: ``ibe report`` prints it beside the run's numbers and
the leaderboard shows it as published rows (``custom_metrics.ibe.published``).

Table 1 (accuracy of picking the correct option's explanation): method | COPA GPT 3.5 |
COPA LLaMA 2 13B | COPA LLaMA 2 7B | E-CARE GPT 3.5 | E-CARE LLaMA 2 13B | E-CARE LLaMA 2 7B.
The source's header row is garbled ("COPA GPT 3.5 | E-CARE LlaMA 2 13B | LlaMA 2 7B |
GPT 3.5 | ..."); read as three models under COPA, then the same three under E-CARE.
"""

from __future__ import annotations

from custom_metrics.common.published import table_lines

SOURCE = "IBE-Eval (Dalal et al., arXiv 2402.10767) Table 1"
PAPER_JUDGE = "GPT 3.5"  # the paper's LLM-as-a-judge for every generator (Section 5, "Baselines")
JUDGE_ROW = "GPT3.5 Judge"
IBE_TABLE_1 = """
GPT3.5 Judge | .59 | .47 | .63 | .43 | .61 | .52
Human | .95 | 1.0 | .91 | .90 | .91 | .92
Consistency | .51 | .52 | .55 | .54 | .54 | .54
Depth (Parsimony) | .67 | .53 | .63 | .66 | .56 | .54
Drift (Parsimony) | .67 | .63 | .58 | .66 | .57 | .57
Coherence | .66 | .66 | .56 | .56 | .57 | .59
Linguistic Uncertainty | .70 | .65 | .61 | .59 | .56 | .60
Random | .50 | .50 | .50 | .50 | .50 | .50
+ Consistency | .51 | .52 | .55 | .54 | .54 | .54
+ Depth | .67 | .53 | .63 | .66 | .56 | .56
+ Drift | .70 | .65 | .65 | .72 | .66 | .65
+ Coherence | .73 | .71 | .69 | .73 | .68 | .69
+ Linguistic Uncertainty | .77 | .74 | .70 | .74 | .70 | .73
"""
IBE_MODELS = ("GPT 3.5", "LLaMA 2 13B", "LLaMA 2 7B")
IBE_COLUMNS = tuple(f"{name} {model}" for name in ("COPA", "E-CARE") for model in IBE_MODELS)


def table_1() -> dict[str, tuple[float, ...]]:
    """Table 1 as {row name: accuracies in IBE_COLUMNS order}."""
    return {method: tuple(float(value) for value in values) for method, *values in table_lines(IBE_TABLE_1)}
