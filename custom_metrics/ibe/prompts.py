"""The paper's prompts: explanation generation (Figure 8) and the LLM-as-a-judge (Figure 10).

The figures are images; their wording is rebuilt from the paper's description and the
closest public code (the PEIRCE demo's explanation prompt): an instruction asking for a
short step-by-step proof of IF-THEN rules, each with its causal or commonsense
assumption, closed by a "Therefore, since ..." summary, and the Figure 8 in-context
example ("The woman banished the children from her property"), one worked explanation
per option. The task README lists this as a reconstruction.
"""

from __future__ import annotations

from typing import Any

EXPLANATION_INSTRUCTION = (
    "You are given a premise and a conclusion. Provide a short step-by-step logical proof that "
    "explains how the premise can result in the conclusion. For each step provide an IF-THEN rule "
    'and the underlying causal or commonsense assumption. Write each step as "Step k: IF ..., '
    'THEN ..." followed by a line "Assumption: ...", and end with a line that starts with '
    '"Therefore, since".'
)

# Figure 8's example question: "The woman banished the children from her property. What
# was the cause? (a) The children trampled through her garden. (b) The children hit a
# ball into her yard." Option (a) chains damage -> anger -> banishment, option (b)
# invasion of privacy -> anger -> banishment, as the figure does.
IN_CONTEXT_EXAMPLES = (
    "Premise: The children trampled through her garden.\n"
    "Conclusion: The woman banished the children from her property.\n"
    "Explanation:\n"
    "Step 1: IF children trample through a garden, THEN the plants in the garden are damaged.\n"
    "Assumption: Walking over plants crushes them.\n"
    "Step 2: IF someone's garden is damaged, THEN the owner becomes upset and angry.\n"
    "Assumption: People are upset when their property is damaged.\n"
    "Step 3: IF the owner is angry at the children, THEN she banishes the children from her property.\n"
    "Assumption: People keep away those who damage their property to prevent further damage.\n"
    "Therefore, since the children trampled through her garden, they damaged it and angered the "
    "woman, who banished them from her property to prevent further damage.\n"
    "\n"
    "Premise: The children hit a ball into her yard.\n"
    "Conclusion: The woman banished the children from her property.\n"
    "Explanation:\n"
    "Step 1: IF children hit a ball into someone's yard, THEN the owner feels that her privacy is invaded.\n"
    "Assumption: Objects entering a private yard uninvited can be seen as an intrusion.\n"
    "Step 2: IF the owner feels that her privacy is invaded, THEN she becomes angry.\n"
    "Assumption: People are annoyed when their privacy is disturbed.\n"
    "Step 3: IF the owner is angry at the children, THEN she banishes the children from her property.\n"
    "Assumption: People send away those who bother them.\n"
    "Therefore, since the children hit a ball into her yard, the woman felt her privacy was invaded "
    "and became angry, so she banished them from her property.\n"
)


def explanation_prompt(doc: dict[str, Any]) -> str:
    return (
        f"{EXPLANATION_INSTRUCTION}\n\n{IN_CONTEXT_EXAMPLES}\n"
        f"Premise: {doc['premise'].strip()}\n"
        f"Conclusion: {doc['conclusion'].strip()}\n"
        "Explanation:\n"
    )


JUDGE_INSTRUCTION = (
    "You are given two competing explanations. A good explanation is logically consistent and "
    "arrives at the correct conclusion. Which explanation is the more plausible? Answer with "
    '"explanation 1" or "explanation 2".'
)


def judge_target(doc: dict[str, Any]) -> int:
    """The index among the task's two choices ("explanation 1", "explanation 2") of the
    correct option's explanation (``gold`` is 1 or 2)."""
    return doc["gold"] - 1


def judge_answer(doc: dict[str, Any]) -> str:
    """What the chat judge (``ibe_judge_*_chat``) should answer: the correct option's explanation,
    in the words the prompt asks for."""
    return f"explanation {doc['gold']}"


def judge_prompt(doc: dict[str, Any]) -> str:
    """Each explanation as the judge sees it: its hypothesis in entailment form, then the text."""
    shown = (
        f"Explanation {number}:\nPremise: {e['premise'].strip()}\nConclusion: {e['conclusion'].strip()}\n"
        f"{e['explanation'].strip()}\n\n"
        for number, e in enumerate(doc["explanations"], 1)
    )
    return f"{JUDGE_INSTRUCTION}\n\n{''.join(shown)}Answer:"
