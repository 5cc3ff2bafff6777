"""Coherence (Algorithm 3): mean over steps of P(entailment) - P(contradiction), IF -> THEN.

The NLI model is the suite's shared judge (``custom_metrics.judge``). With no spec the
judge is the paper's ``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli`` whenever it
can be loaded (Hub access or a local Hub cache); only when it cannot does the embedded LM
stand in, and every row then says so (``Coherence.source``), as the uncertainty fallback
does. A judge the user names is used or fails: no silent substitute for an explicit
choice. All steps of all explanations go to the judge in one batched call; the judge
caches verdicts on disk, so a rerun asks nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from custom_metrics.common.errors import DataError
from ibe_postprocess.parsing import ParsedExplanation

log = logging.getLogger(__name__)

PAPER_NLI_MODEL = "seqcls:ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli"
FALLBACK_JUDGE = "embedded"  # the embedded LM as a prompted NLI judge


class Coherence:
    """The coherence scorer; ``name`` is its judge (the cache key), ``source`` what rows record."""

    def __init__(self, spec: str | None = None, cache_dir: Path | None = None):
        from custom_metrics.judge.build import build_judge
        from custom_metrics.judge.spec import resolve_judge

        # No environment: $EXPLAIN_EVAL_JUDGE picks REG's judge, a chat model; IBE's is a classifier.
        self.judge = build_judge(resolve_judge(spec, None, PAPER_NLI_MODEL), cache_dir=cache_dir)
        self.source = self.judge.name
        if not spec:
            try:
                self.judge.backend  # noqa: B018  (load it now: whether it loads decides which judge scores)
            except Exception as err:  # offline, no cached copy, broken files: all fall back
                log.warning(
                    "IBE coherence: %s could not be loaded (%s); the embedded LM judges instead.", PAPER_NLI_MODEL, err
                )
                self.judge = build_judge(FALLBACK_JUDGE, cache_dir=cache_dir)
                self.source = f"{self.judge.name} ({PAPER_NLI_MODEL} unavailable: {type(err).__name__})"
        self.name = self.judge.name
        self.spec = spec

    def load(self) -> None:
        """Load the judge now: run before the slow stages (spaCy, Prolog), a judge that
        cannot load stops ``ibe score`` in seconds, with one line saying what to pass."""
        try:
            self.judge.backend  # noqa: B018  (loads the model, or opens the endpoint's client)
        except Exception as err:
            reason = (str(err).strip().splitlines() or [""])[0]
            raise DataError(
                f"--nli-judge {self.spec}: the NLI judge cannot be loaded ({type(err).__name__}: {reason}); pass "
                "seqcls:<model folder that exists, or Hub id in the local Hub cache>, lm:<...>, "
                f"openai:<model>@<url>, '{FALLBACK_JUDGE}' for the embedded LM, or leave --nli-judge out for "
                f"{PAPER_NLI_MODEL}."
            ) from err

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
