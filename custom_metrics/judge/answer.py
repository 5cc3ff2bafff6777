"""Reading a judge's one-word answer (the paper's C.2 protocol: "Your final output should be
only one word, namely the label").

Every text answer goes through ``parse_label``. The rule is strict, because a wrong label is
worse than a counted failure: the answer is the first line that names a label, and it must name
exactly one, not negated ("not entailment but contradiction" and "Neutral or contradiction" are
unparsed, never guessed). A model that thinks anyway is read after its closed traces
(``traces.split_traces``); an answer that stops inside an unclosed trace names no label.
"""

from __future__ import annotations

import re

from custom_metrics.judge.traces import split_traces
from custom_metrics.judge.types import normalize_label

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEGATIONS = frozenset(
    {"not", "no", "non", "never", "neither", "nor", "without", "cannot", "isn't", "aren't", "doesn't", "don't", "can't"}
)
_NEGATION_REACH = 3  # "not an entailment", "does not entail", "is not a contradiction"


def _first_label_line(text: str) -> tuple[list[str], bool] | None:
    """The words of the first line outside any trace that names a label, and whether that
    line is finished; None also when the text stops inside a trace."""
    traces = split_traces(text)
    if traces.unclosed:
        return None
    lines = traces.rest.split("\n")
    for index, line in enumerate(lines):
        words = _WORD.findall(line.lower())
        if any(normalize_label(word) for word in words):
            return words, index < len(lines) - 1
    return None


def parse_label(text: str) -> str | None:
    """The NLI label the answer asserts, or None when it names none, several, or a negated one."""
    found = _first_label_line(text or "")
    if found is None:
        return None
    words, _ = found
    labels = {normalize_label(word) for word in words} - {None}
    if len(labels) != 1:
        return None
    for position, word in enumerate(words):
        if normalize_label(word) and _NEGATIONS.intersection(words[max(0, position - _NEGATION_REACH) : position]):
            return None
    return labels.pop()


def answer_complete(text: str) -> bool:
    """True once the line that decides ``parse_label`` has ended: generation may stop there."""
    found = _first_label_line(text or "")
    return found is not None and found[1]


# An answer is read whole (``parse_label``) but kept cut: a server that ignores max_tokens
# must not put megabytes into the verdict cache and every samples file that logs verdicts.
ANSWER_CHARS_PER_TOKEN = 16


def cut_answer(text: str, max_tokens: int) -> str:
    """The answer as cached and logged: at most 16 characters per token asked for, the cut said."""
    limit = ANSWER_CHARS_PER_TOKEN * max(max_tokens, 1)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text):,} characters, asked for max_tokens={max_tokens}]"
