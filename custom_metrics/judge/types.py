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
# The label of a verdict whose answer named no label (or several): never one of NLI_LABELS,
# so no consumer can take it for a neutral call by accident; each handles it explicitly.
UNPARSED = "unparsed"
Pair = tuple[str, str]

_LABEL_ALIASES = {
    **dict.fromkeys(("entailment", "entail", "entails", "entailed"), "entailment"),
    "neutral": "neutral",
    **dict.fromkeys(("contradiction", "contradict", "contradicts", "contradicted", "contradictory"), "contradiction"),
}


class JudgeError(RuntimeError):
    """A judge could not produce a verdict; the message names the judge (and its URL or pair)."""


@dataclass(frozen=True)
class Verdict:
    """One judgment. ``method`` says how it was made: ``scores`` (probabilities from the
    model's scores or log-likelihoods), ``text`` (an endpoint without usable logprobs: parsed
    from its answer, one-hot), ``generated`` (the paper's protocol: a sampled one-word answer,
    parsed, one-hot) or ``unparsed`` (the answer named no label, or more than one: label
    ``UNPARSED``, uniform probabilities). ``answer`` keeps the judge's text where there was one."""

    label: str
    probs: dict[str, float]
    method: str = "scores"
    answer: str = ""

    def __post_init__(self) -> None:
        if self.label not in (*NLI_LABELS, UNPARSED):
            raise ValueError(f"Verdict label {self.label!r} is not one of {(*NLI_LABELS, UNPARSED)}")
        if (self.label == UNPARSED) != (self.method == UNPARSED):
            raise ValueError(f"Verdict label {self.label!r} with method {self.method!r}: unparsed goes with unparsed")
        values = list(self.probs.values())
        if (
            set(self.probs) != set(NLI_LABELS)
            or not all(math.isfinite(p) and p >= 0 for p in values)
            or not math.isclose(sum(values), 1.0, abs_tol=1e-4)
        ):
            raise ValueError(f"Verdict probs must give {NLI_LABELS} summing to 1, got {self.probs}")

    @property
    def parsed(self) -> bool:
        return self.label != UNPARSED


class NLIJudge(Protocol):
    name: str

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]: ...


def normalize_label(text: str) -> str | None:
    """Map a label name as models and configs spell it ("ENTAILMENT", "Contradiction.") to NLI_LABELS."""
    word = re.sub(r"[^a-z]", "", text.lower())
    return _LABEL_ALIASES.get(word)


def verdict_from_scores(scores: Sequence[float]) -> Verdict:
    """Softmax over three scores (logits or log-likelihoods) in NLI_LABELS order.

    A NaN, or no finite score at all, is an error (a half-precision overflow, a broken
    model), never a verdict: the caller names the judge and the pair.
    """
    if any(math.isnan(score) for score in scores) or not any(math.isfinite(score) for score in scores):
        raise ValueError(f"non-finite label scores {list(scores)}")
    top = max(scores)
    return verdict_from_probs([math.exp(score - top) for score in scores])


def verdict_from_probs(probs: Sequence[float]) -> Verdict:
    """Probabilities (or weights) in NLI_LABELS order, normalised to sum to 1."""
    total = sum(probs)
    normalized = {label: p / total for label, p in zip(NLI_LABELS, probs)}
    return Verdict(label=max(NLI_LABELS, key=normalized.__getitem__), probs=normalized, method="scores")


def answer_verdict(label: str | None, answer: str, method: str) -> Verdict:
    """A verdict read from a text answer: one-hot for a label, ``UNPARSED`` (uniform) for None."""
    if label is None:
        return Verdict(UNPARSED, dict.fromkeys(NLI_LABELS, 1 / 3), method=UNPARSED, answer=answer)
    return Verdict(label, {name: float(name == label) for name in NLI_LABELS}, method=method, answer=answer)
