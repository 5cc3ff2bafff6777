"""REG prompts: explanation generation (Appendix C.1) and the judge-selection tasks, which
use the same Appendix C.2 prompt as the prompted judge (generated, or scored)."""

from __future__ import annotations

from typing import Any

from custom_metrics.judge.prompt import LABEL_WORDS, nli_prompt
from custom_metrics.judge.types import NLI_LABELS

# Appendix C.1, printed flattened in the paper; we put the two fields on their own lines
# and use ASCII quotes (task README). Stop strings are the task YAMLs'; token budgets and
# sampling the mode's (custom_metrics/reg/modes.py).
GENERATION_PROMPT = (
    "Given a premise and a hypothesis, your task is to generate a plausible explanation that "
    "reconciles the apparent contradiction between the premise and the hypothesis. "
    "Specifically, when the explanation is combined with the premise, the hypothesis should "
    "follow from this combined context. The explanation should be succinct and no more than a "
    "single sentence long. It should not trivially repeat the premise or the hypothesis and "
    "must not itself contradict the premise. The explanation should also read naturally in the "
    "context as a continuation of the premise, without explicitly using the term 'premise' or "
    "'hypothesis' to refer to the premise or hypothesis. Your final output should be a single "
    "sentence without any preamble.\n"
    "\n"
    "Premise: {premise}\n"
    "Hypothesis: {hypothesis}"
)


def generation_prompt(doc: dict[str, Any]) -> str:
    return GENERATION_PROMPT.format(premise=doc["premise"].strip(), hypothesis=doc["hypothesis"].strip())


def judge_prompt(doc: dict[str, Any]) -> str:
    return nli_prompt(doc["premise"], doc["hypothesis"])


def judge_choices(doc: dict[str, Any]) -> list[str]:
    return list(LABEL_WORDS)


def judge_target(doc: dict[str, Any]) -> int:
    return NLI_LABELS.index(doc["majority_label"])
