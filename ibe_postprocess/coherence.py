"""Coherence (Algorithm 3): mean over steps of P(entailment) - P(contradiction), IF -> THEN.

The NLI model is the suite's shared judge (``custom_metrics.judge``): the paper's
``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli`` is ``seqcls:<that id>``; with no
spec the judge is the embedded LM. All steps of all explanations go to the judge in one
batched call; the judge caches verdicts on disk, so a rerun asks nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from custom_metrics.ibe.parsing import ParsedExplanation

PAPER_NLI_MODEL = "seqcls:ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli"


class Coherence:
    def __init__(self, spec: str | None = None, cache_dir: Path | None = None):
        from custom_metrics.judge.build import build_judge

        self.judge = build_judge(spec, cache_dir=cache_dir)
        self.name = self.judge.name

    def score_many(self, parsed: Sequence[ParsedExplanation]) -> list[tuple[float | None, int]]:
        """(coherence, unparsed verdicts) per explanation; coherence None without steps.

        A judge that gave no readable label returns a uniform "unparsed" verdict; those
        are counted so the row can be flagged rather than pass for a neutral step.
        """
        pairs = [(step.condition, step.consequence) for item in parsed for step in item.steps]
        verdicts = iter(self.judge.judge(pairs)) if pairs else iter(())
        scores: list[tuple[float | None, int]] = []
        for item in parsed:
            strengths, unparsed = [], 0
            for _step in item.steps:
                verdict = next(verdicts)
                unparsed += getattr(verdict, "method", "scores") == "unparsed"
                strengths.append(verdict.probs["entailment"] - verdict.probs["contradiction"])
            scores.append((sum(strengths) / len(strengths) if strengths else None, unparsed))
        return scores
