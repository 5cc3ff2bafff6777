"""RULE prompts in the layout of the authors' published prompt file, option texts verbatim
(trailing spaces included), as in the published demonstrations.
"""

from __future__ import annotations

from collections.abc import Sequence

from custom_metrics.rule.data import MainQuestion

# prompts.json "0shot" / "vanilla" (a full-data test checks it is verbatim).
INSTRUCTION = (
    "In this task, you are expected to answer the multiple-choice question about the given "
    "context. The question has only one correct answer. \n"
)
# Appendix J's prompt is only shown as a figure; this instruction is ours (see README).
ALIGNMENT_INSTRUCTION = (
    "In this task, you are expected to select the rationale that explains why the given "
    "option is a correct or an incorrect answer to the multiple-choice question about the "
    "given context. Only one rationale is about the given option. \n"
)
LINE = " \n "
ANSWER = "Answer: The answer is Option"  # the option digit is scored after it
COT_ANSWER = "Answer:"  # chain of thought: the model writes the rest
COT_CUE = "Therefore the answer is Option"  # the published CoT demonstrations' answer sentence
# Zero-shot chain of thought (Kojima et al. 2022): their reasoning trigger after the answer cue.
ZEROSHOT_COT_ANSWER = "Answer: Let's think step by step."


def question_block(
    context: str | None,
    question: str,
    options: Sequence[str],
    rationale: str | None = None,
    answer: str = ANSWER,
    note: str | None = None,
) -> str:
    """One question in the prompt-file layout, ending where the answer is scored or generated
    (``note``: a line of its own before the answer, a biased task's suggested answer)."""
    lines = [] if context is None else [f"Context: {context}"]
    lines.append(f"Question: {question}")
    lines += [f"Option{i}: {option}" for i, option in enumerate(options)]
    if rationale is not None:
        lines.append(f"Rationale: {rationale}")
    if note is not None:
        lines.append(note)
    lines.append(answer)
    return LINE.join(lines)


def demonstration(
    context: str | None, question: str, options: Sequence[str], label: int, rationale: str | None = None
) -> str:
    """A solved question as it appears in the published few-shot prompts (``context`` None:
    the context-ablated layout of Appendix M; ``rationale``: Table 5's ``Rationale:`` line)."""
    return f"{question_block(context, question, options, rationale)}{label}"


def cot_demonstration(context: str, question: str, options: Sequence[str], label: int, rationale: str) -> str:
    """A solved question as the published chain-of-thought prompts show it (``cot_step_random``):
    its rationale, then "Therefore the answer is Option<label>"."""
    return f"{question_block(context, question, options, answer=f'{COT_ANSWER} {rationale} {COT_CUE}')}{label}"


def demonstrations(shots: Sequence[str]) -> str:
    """Solved questions joined as in the published prompts: one per line, the last ending the line."""
    return LINE.join(shots) + " \n"


def ahead_of_question(demonstrated: str) -> str:
    """A published prompt as the test question follows it: exactly as one demonstration follows
    another (" \n " between them; the prompts end in " \n", the ``cot_step_complex`` ones in " \n ")."""
    return demonstrated if demonstrated.endswith(" ") else demonstrated + " "


def alignment_block(main: MainQuestion, option_index: int, rationales: Sequence[str]) -> str:
    lines = [f"Context: {main.context}", f"Question: {main.question}", f"Option: {main.options[option_index]}"]
    lines += [f"Rationale{i}: {rationale}" for i, rationale in enumerate(rationales)]
    lines.append("Answer: The answer is Rationale")
    return LINE.join(lines)
