"""The NLI judgment prompt of REG's Appendix C.2, shared by every prompted judge."""

from __future__ import annotations

import hashlib

# The paper's Appendix C.2 prompt. The paper prints it as one flattened paragraph; the
# " - Label:" items are a bullet list, so we restore its line breaks (task README).
NLI_PROMPT = (
    "Given a premise and a hypothesis, your task is to judge the relationship between the "
    "two texts. Specifically, you will need to assign one of three labels to the "
    "relationship:\n"
    "- Entailment: The hypothesis is most likely true given the premise.\n"
    "- Contradiction: The hypothesis is most likely false given the premise.\n"
    "- Neutral: The hypothesis is not entailed by the premise but does not contradict it "
    "either.\n"
    "Your final output should be only one word, namely the label.\n"
    "\n"
    "Premise: {premise}\n"
    "Hypothesis: {hypothesis}"
)
# The words a prompted judge answers with, in NLI_LABELS order.
LABEL_WORDS = ("Entailment", "Neutral", "Contradiction")
# Prompted verdicts depend on the prompt text: a changed prompt must not reuse old ones.
PROMPT_ID = hashlib.sha256(NLI_PROMPT.encode()).hexdigest()[:12]


def nli_prompt(premise: str, hypothesis: str) -> str:
    return NLI_PROMPT.format(premise=premise.strip(), hypothesis=hypothesis.strip())
