"""Concept drift (Algorithm 2): new noun lemmas the explanation steps bring in.

Drift = |nouns(steps) - (nouns(premise) | nouns(conclusion))|, nouns being lemmas of
tokens spaCy tags NOUN (the paper's choice; PEIRCE's NOUN+ADJ surface forms are not
used). The steps are the IF and THEN clauses, read as one text (``step_text``);
assumptions and summary are not steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ibe_postprocess.nlp import Word, nouns, nouns_of, words_of
from ibe_postprocess.parsing import ParsedExplanation


def step_text(parsed: ParsedExplanation) -> str:
    return " ".join(f"{s.condition}. {s.consequence}." for s in parsed.steps)


def step_texts(items: Sequence[tuple[str, str, ParsedExplanation]]) -> list[str]:
    """The joined step text of every item that has steps (what ``nouns_of`` reads for drift)."""
    return [step_text(parsed) for _, _, parsed in items if parsed.steps]


def new_concepts_many(
    items: Sequence[tuple[str, str, ParsedExplanation]],
    words: Mapping[str, Sequence[Word]] | None = None,
    step_nouns: Mapping[str, frozenset[str]] | None = None,
) -> list[list[str] | None]:
    """The noun lemmas each (premise, conclusion, parsed) item's steps bring in, sorted (the
    concepts drift counts); None when there are no steps to measure.

    ``words`` holds the premises' and conclusions' words when formalization already read
    them (``nlp.words_of``), ``step_nouns`` the nouns of ``step_texts(items)`` when they were
    read alongside other work (``nlp.queue_nouns_of``); otherwise they are read here.
    """
    if words is None:
        words = words_of(text for premise, conclusion, _ in items for text in (premise, conclusion))
    if step_nouns is None:
        step_nouns = nouns_of(step_texts(items))
    results: list[list[str] | None] = []
    for premise, conclusion, parsed in items:
        if not parsed.steps:
            results.append(None)
            continue
        known = nouns(words[premise]) | nouns(words[conclusion])
        results.append(sorted(step_nouns[step_text(parsed)] - known))
    return results


def drift_many(
    items: Sequence[tuple[str, str, ParsedExplanation]],
    words: Mapping[str, Sequence[Word]] | None = None,
) -> list[int | None]:
    """Drift per item: how many new concepts its steps bring in (``new_concepts_many``)."""
    return [None if found is None else len(found) for found in new_concepts_many(items, words)]
