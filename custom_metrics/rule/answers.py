"""Reading the answer of a chain-of-thought generation: the option its "the answer is Option<k>" names.

Every published chain-of-thought demonstration ends with "Therefore the answer is Option<k>";
the authors published no answer extraction. The rule is strict, because a guessed answer is
worse than a counted failure:

- the answer is the option that "the answer is Option<k>" names, wherever it appears
  (any case, "Option 2", "**Option2**." and "The correct answer is Option2" too); a rationale
  that mentions options otherwise ("Option2 is wrong because ...") names no answer;
- the same option stated twice reads as that option; two different ones read as none;
- a letter ("the answer is B"), an option's text instead of its label, an option that does not
  exist ("Option4") and an empty output read as none: the prompt labels the options
  Option0-Option3, and mapping a letter or a paraphrase to one of them would be a guess.

An answer read as none counts as wrong, its reason logged as the doc's ``unparsed`` value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from custom_metrics.rule.data import N_OPTIONS

# "the answer is", then markup or punctuation, then "Option<k>".
_OPTION = re.compile(r"\banswer\s+is\W{0,4}?option\s*(\d+)\b", re.IGNORECASE)
_LETTER = re.compile(r"\b(?i:answer\s+is)[\s:*(\"']{0,4}([A-D])\b(?![-'])")

EMPTY = "empty output"
NO_ANSWER = "no 'the answer is Option<k>'"
LETTER = "a letter, not an option label"
CONFLICT = "two different answers"
NO_SUCH_OPTION = "an option that does not exist"


@dataclass(frozen=True)
class Reading:
    """The option a generation answers (None: none read) and, when none, why."""

    option: int | None
    problem: str = ""


def read_answer(text: str) -> Reading:
    """The option ``text`` answers, by the rule of the module docstring."""
    if not isinstance(text, str) or not text.strip():
        return Reading(None, EMPTY)
    named = list(dict.fromkeys(int(number) for number in _OPTION.findall(text)))
    if len(named) > 1:
        return Reading(None, f"{CONFLICT} ({', '.join(f'Option{k}' for k in named)})")
    if named and named[0] >= N_OPTIONS:
        return Reading(None, f"{NO_SUCH_OPTION} (Option{named[0]})")
    if named:
        return Reading(named[0])
    letter = _LETTER.search(text)
    if letter:
        return Reading(None, f"{LETTER} ({letter.group(1)})")
    return Reading(None, NO_ANSWER)


def problem_kind(problem: str) -> str:
    """A problem without its detail ("two different answers (Option1, Option3)" -> its kind)."""
    return problem.split(" (", 1)[0]


_SENTENCE_BREAK = re.compile(r"[.!?](?=\s)|\n")


def answer_statement(text: str) -> int:
    """Where the sentence stating the answer ("... the answer is Option<k>") begins in ``text``:
    what precedes it is the reasoning. The whole text when no answer is stated."""
    match = _OPTION.search(text)
    if match is None:
        return len(text)
    breaks = [found.end() for found in _SENTENCE_BREAK.finditer(text, 0, match.start())]
    return breaks[-1] if breaks else 0


# The asked question of a prompt: its last "Question:" line (five-shot prompts hold the
# demonstrations' questions first), in the layout of ``prompts.question_block``.
_ASKED = re.compile(r"Question: (?P<text>.*?)(?: \n (?:Option|Rationale)|$)", re.DOTALL)


def asked_question(prompt: Any) -> str | None:
    found = list(_ASKED.finditer(prompt)) if isinstance(prompt, str) else []
    return found[-1]["text"].strip() if found else None
