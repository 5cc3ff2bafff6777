"""Reading the LLM judge's generated answer (Appendix A.4, Figure 10: 'Answer with "explanation 1"
or "explanation 2"').

Chat APIs return text, not the log-likelihood of " explanation 1" and " explanation 2", so the
chat variants of the judge baseline (``ibe_judge_*_chat``) generate the answer and this module
reads it, inside the harness (the task's metrics) and in ``ibe score`` (the report's judge
row) alike. The rule is strict, because a wrong choice is worse than a counted failure: an
answer it cannot read is ``unparsed`` (None), scored as a wrong choice and counted. The task's
DETAILS.md ("The chat judge's answer") states it with examples: a reasoning trace and markdown
are dropped; the first clause that names an explanation by number decides, and must name
exactly one of 1 and 2, no other number and no negating word; without one, a bare choice
("2", "Answer: 2") is read.
"""

from __future__ import annotations

import re

from ibe_postprocess.parsing import MAX_CHARS  # an answer is read as far as an explanation is

CHOICES = (1, 2)
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_MARKUP = re.compile(r"[*_`#]")
_CLAUSES = re.compile(r"[.;:!?,\n]|\b(?:because|since|whereas|while|but)\b")
_NUMBER_WORDS = {"one": 1, "two": 2}
# Patterns run on text whose blanks are single spaces (``_SPACES``), so none can backtrack over a run.
_SPACES = re.compile(r"[^\S\n]+")
_MENTION = re.compile(r"\bexplanations? ?(?:number )?\(? ?(\d+|one|two)\b")
_DIGIT = re.compile(r"\b\d+\b")
_INVERTING = frozenset(
    {
        "not", "no", "never", "neither", "nor", "cannot", "less", "least", "worse", "worst", "weaker", "weakest",
        "implausible", "incorrect", "wrong", "unlikely", "fails", "flawed", "isn't", "doesn't", "aren't", "wasn't",
    }
)  # fmt: skip
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_BARE = re.compile(r"(?:(?:final )?answer ?(?:is ?)?:? ?)?\(? ?([12]) ?\)? ?\.?")


def without_trace(text: str) -> str | None:
    """The answer after any reasoning trace, or None when it is still inside one."""
    if _THINK_CLOSE in text:
        text = text.rsplit(_THINK_CLOSE, 1)[1]
    return None if _THINK_OPEN in text else text


def _clause_choice(clause: str) -> tuple[bool, int | None]:
    """Whether a clause names an explanation by number, and the one choice it asserts (None when
    it names several, another number, or negates)."""
    mentions = _MENTION.findall(clause)
    if not mentions:
        return False, None
    named = {_NUMBER_WORDS.get(number) or int(number) for number in mentions}
    numbers = named | {int(digit) for digit in _DIGIT.findall(clause)}
    if len(numbers) != 1 or not named <= set(CHOICES) or _INVERTING.intersection(_WORD.findall(clause)):
        return True, None
    return True, named.pop()


def parse_choice(text: str | None) -> int | None:
    """The explanation (1 or 2) the judge's answer picks, or None when it cannot be read."""
    answer = without_trace(text or "")
    if answer is None:
        return None
    answer = _SPACES.sub(" ", _MARKUP.sub("", answer[:MAX_CHARS]).lower())
    for clause in _CLAUSES.split(answer):
        mentioned, choice = _clause_choice(clause)
        if mentioned:
            return choice
    bare = _BARE.fullmatch(" ".join(answer.split()))
    return int(bare[1]) if bare else None
