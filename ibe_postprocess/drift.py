"""Concept drift (Algorithm 2): new noun lemmas the explanation steps bring in.

Drift = |nouns(steps) - (nouns(premise) | nouns(conclusion))|, nouns being lemmas of
tokens spaCy tags NOUN (the paper's choice; PEIRCE's NOUN+ADJ surface forms are not
used). The steps are the IF and THEN clauses; assumptions and summary are not steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from custom_metrics.ibe.parsing import ParsedExplanation
from ibe_postprocess.nlp import parse_many


def _nouns(doc) -> set[str]:
    return {token.lemma_.lower() for token in doc if token.pos_ == "NOUN"}


def drift_many(items: Sequence[tuple[str, str, ParsedExplanation]]) -> list[int | None]:
    """Drift per (premise, conclusion, parsed) item; None when there are no steps to measure."""
    texts: list[str] = []
    for premise, conclusion, parsed in items:
        texts += [premise, conclusion, " ".join(f"{s.condition}. {s.consequence}." for s in parsed.steps)]
    docs = iter(parse_many(texts))
    results: list[int | None] = []
    for _premise, _conclusion, parsed in items:
        premise_nouns, conclusion_nouns, step_nouns = _nouns(next(docs)), _nouns(next(docs)), _nouns(next(docs))
        results.append(len(step_nouns - (premise_nouns | conclusion_nouns)) if parsed.steps else None)
    return results
