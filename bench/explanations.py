"""Realistic IBE explanations for the ibe_postprocess benchmarks, templated from real COPA items.

Running ``ibe_copa`` on the embedded model to get 5,000 explanations would take hours on
CPU, so the benchmarks build them: every COPA (question, option) hypothesis becomes an
explanation in the paper's format (``Step k: IF ..., THEN ...`` + ``Assumption:`` lines +
a ``Therefore, since ...`` summary) with 1-4 steps whose intermediate clauses reuse the
item's own words, hedged assumptions, and the deviations a real model produces (markdown,
``1.`` numbering, a missing assumption or summary, trailing text, free prose, empty
answers). Deterministic for a given size and seed, so every run measures the same texts.
"""

from __future__ import annotations

import random
import re

from ibe_postprocess.inputs import ExplanationRecord, Source

STOPWORDS = set(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "was",
        "were",
        "is",
        "are",
        "be",
        "been",
        "had",
        "has",
        "have",
        "did",
        "does",
        "do",
        "it",
        "its",
        "he",
        "she",
        "they",
        "them",
        "his",
        "her",
        "their",
        "my",
        "me",
        "i",
        "we",
        "our",
        "you",
        "your",
        "this",
        "that",
        "there",
        "then",
        "than",
        "into",
        "over",
        "under",
        "after",
        "before",
        "because",
        "so",
        "as",
        "not",
        "no",
    ]
)
BRIDGES = (
    "the {w} changes",
    "someone notices the {w}",
    "there is a problem with the {w}",
    "the {w} becomes more noticeable",
    "the situation around the {w} gets worse",
    "people react to the {w}",
    "the {w} is affected",
    "the state of the {w} is different",
)
ASSUMPTIONS = (
    "A change in the {w} usually has visible effects.",
    "People often respond when something happens to the {w}.",
    "It is likely that the {w} can influence what happens next.",
    "This is common sense about how the {w} behaves.",
    "I think the {w} might matter here.",
    "Events involving the {w} typically have consequences.",
    "It seems that the {w} plays a role.",
)
TRAILING = "\n\nPremise: The man turned on the faucet.\nConclusion: The toilet filled with water.\nExplanation:"


def _clause(sentence: str) -> str:
    text = sentence.strip().rstrip(".!?")
    return text[:1].lower() + text[1:]


def _content_words(*texts: str) -> list[str]:
    words = [w.lower() for t in texts for w in re.findall(r"[A-Za-z]+", t)]
    return [w for w in words if len(w) > 3 and w not in STOPWORDS] or ["situation"]


def explanation_text(premise: str, conclusion: str, rng: random.Random) -> str:
    """One explanation in the prompt's format, or (about 1 in 8) a malformed variant."""
    words = _content_words(premise, conclusion)
    steps = rng.choice((1, 2, 2, 3, 3, 3, 4))
    clauses = [_clause(premise)] + [rng.choice(BRIDGES).format(w=rng.choice(words)) for _ in range(steps - 1)]
    clauses.append(_clause(conclusion))
    header = rng.choice(("Step {k}: ", "Step {k}: ", "Step {k}: ", "{k}. ", "**Step {k}:** "))
    lines = []
    for k in range(1, steps + 1):
        lines.append(header.format(k=k) + f"IF {clauses[k - 1]}, THEN {clauses[k]}.")
        lines.append("Assumption: " + rng.choice(ASSUMPTIONS).format(w=rng.choice(words)))
    lines.append(f"Therefore, since {clauses[0]}, {clauses[-1]}.")
    kind = rng.random()
    if kind < 0.03:
        return ""
    if kind < 0.06:
        return f"The {words[0]} explains it: {_clause(premise)}, so {_clause(conclusion)}."
    if kind < 0.09:
        lines.pop()  # no summary
    elif kind < 0.12:
        lines.pop(1)  # step 1 without its assumption
    elif kind < 0.20:
        lines.append(TRAILING)  # a base model running on into the next example
    return "\n".join(lines)


def build(size: int, seed: int = 7) -> list[ExplanationRecord]:
    """``size`` explanations over COPA's 2,000 (question, option) hypotheses, cycling with new text."""
    from custom_metrics.ibe.data import copa_docs

    docs = copa_docs()
    rng = random.Random(seed)
    records = []
    for index in range(size):
        doc = docs[index % len(docs)]
        cycle = index // len(docs)
        qid = doc["qid"] if cycle == 0 else f"{doc['qid']}#{cycle}"
        records.append(
            ExplanationRecord(
                qid,
                doc["option"],
                doc["split"],
                doc["correct"],
                doc["premise"],
                doc["conclusion"],
                explanation_text(doc["premise"], doc["conclusion"], rng),
                Source("bench", index),
            )
        )
    return records
