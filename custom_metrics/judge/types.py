"""What every judge returns and how labels are spelled: the bottom of the judge package.

REG judges every (premise, hypothesis) pair and IBE-Eval scores the coherence of
explanation steps; both need a label and a probability for entailment, neutral and
contradiction, whichever backend produced them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

NLI_LABELS = ("entailment", "neutral", "contradiction")
Pair = tuple[str, str]

_LABEL_ALIASES = {
    "entailment": "entailment",
    "entail": "entailment",
    "entails": "entailment",
    "entailed": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "contradict": "contradiction",
    "contradicts": "contradiction",
    "contradictory": "contradiction",
}


@dataclass(frozen=True)
class Verdict:
    """One judgment. ``method`` (an addition to the shared interface) says how it was made:
    ``scores`` (probabilities from the model's scores), ``text`` (an endpoint without
    usable logprobs: parsed from its answer, one-hot) or ``unparsed`` (no label found in
    the answer: uniform probabilities, label ``neutral``, so consumers can flag it)."""

    label: str
    probs: dict[str, float]
    method: str = "scores"

    def __post_init__(self) -> None:
        if self.label not in NLI_LABELS:
            raise ValueError(f"Verdict label {self.label!r} is not one of {NLI_LABELS}")
        if set(self.probs) != set(NLI_LABELS) or not math.isclose(sum(self.probs.values()), 1.0, abs_tol=1e-4):
            raise ValueError(f"Verdict probs must give {NLI_LABELS} summing to 1, got {self.probs}")


class NLIJudge(Protocol):
    name: str

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]: ...


def normalize_label(text: str) -> str | None:
    """Map a label name as models and configs spell it ("ENTAILMENT", "Contradiction.") to NLI_LABELS."""
    word = re.sub(r"[^a-z]", "", text.lower())
    return _LABEL_ALIASES.get(word)


def verdict_from_scores(scores: Sequence[float], method: str = "scores") -> Verdict:
    """Softmax over three scores (logits or log-likelihoods) in NLI_LABELS order."""
    top = max(scores)
    weights = [math.exp(score - top) for score in scores]
    total = sum(weights)
    probs = {label: weight / total for label, weight in zip(NLI_LABELS, weights)}
    return Verdict(label=max(NLI_LABELS, key=probs.__getitem__), probs=probs, method=method)


def verdict_from_probs(probs: Sequence[float], method: str = "scores") -> Verdict:
    total = sum(probs)
    normalized = {label: p / total for label, p in zip(NLI_LABELS, probs)}
    return Verdict(label=max(NLI_LABELS, key=normalized.__getitem__), probs=normalized, method=method)
