"""Coherence (Algorithm 3): mean over steps of P(entailment) - P(contradiction), IF -> THEN.

The NLI model is the suite's shared judge (``custom_metrics.judge``). With no spec the
judge is the paper's ``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli`` whenever it
can be loaded (Hub access or a local Hub cache); only when it cannot does the embedded LM
stand in, and every row then says so (``Coherence.source``), as the uncertainty fallback
does. A judge the user names is used or fails: no silent substitute for an explicit
choice.

A judge's probabilities move in their last bits with the batch a pair is judged in, so the
input's sorted distinct (IF, THEN) pairs are judged in **canonical chunks** of ``CHUNK``,
each cached under a key of its judge and its pairs (DETAILS.md, "Same bytes on every run").
The judge's own per-pair cache is not used here: its entries may come from other batches.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from custom_metrics.common.errors import DataError
from custom_metrics.common.fields import is_number
from ibe_postprocess.cache import JsonlCache, key
from ibe_postprocess.parsing import ParsedExplanation

if TYPE_CHECKING:
    from custom_metrics.judge.spec import JudgeSpec

log = logging.getLogger(__name__)

PAPER_NLI_MODEL = "seqcls:ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli"
FALLBACK_JUDGE = "embedded"  # the embedded LM as a prompted NLI judge
CHUNK = 64  # pairs per canonical chunk (the judge's model batches within it)
Pair = tuple[str, str]
StepVerdict = tuple[float, float, bool]  # P(entailment), P(contradiction), unparsed


def _chunks(pairs: Iterable[Pair]) -> list[list[Pair]]:
    """The distinct pairs, sorted, in chunks of ``CHUNK``."""
    unique = sorted(set(pairs))
    return [unique[start : start + CHUNK] for start in range(0, len(unique), CHUNK)]


class Coherence:
    """The coherence scorer; ``name`` is its judge (the cache key), ``source`` what rows record."""

    def __init__(self, spec: str | JudgeSpec | None = None, cache_dir: Path | None = None):
        from custom_metrics.judge.build import build_judge
        from custom_metrics.judge.spec import JudgeSpec, resolve_judge

        # No environment: $EXPLAIN_EVAL_JUDGE picks REG's judge, a chat model; IBE's is a classifier.
        # A parsed spec (``explain-eval rejudge``) is used as parsed, its run options kept.
        resolved = spec if isinstance(spec, JudgeSpec) else resolve_judge(spec, None, PAPER_NLI_MODEL)
        self.judge = build_judge(resolved, cache_dir=cache_dir)
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
        self.computed = 0  # pairs the judge's model judged (a rerun on a full cache judges none)
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

    def cached(self, parsed: Sequence[ParsedExplanation], store: JsonlCache) -> bool:
        """Whether every chunk of ``parsed`` is in ``store`` (then no judge needs to load)."""
        pairs = ((step.condition, step.consequence) for item in parsed for step in item.steps)
        return all(key("coherence", self.name, chunk) in store for chunk in _chunks(pairs))

    def verdicts(self, pairs: Iterable[Pair], store: JsonlCache | None = None) -> dict[Pair, StepVerdict]:
        """(P(entailment), P(contradiction), unparsed) per distinct pair, judged in canonical chunks;
        ``store`` keeps each chunk's verdicts (read back when the same chunk is asked again)."""
        chunks = _chunks(pairs)
        found: dict[Pair, StepVerdict] = {}
        for chunk in tqdm(chunks, desc="coherence", unit="chunk", disable=not chunks):
            chunk_key = key("coherence", self.name, chunk)
            if store is not None and chunk_key in store:
                values = [tuple(value) for value in store[chunk_key]]
            else:
                verdicts = self.judge.backend.judge(chunk)
                self.computed += len(chunk)
                if len(verdicts) != len(chunk):
                    raise RuntimeError(f"judge {self.name} returned {len(verdicts)} verdicts for {len(chunk)} pairs")
                values = [
                    (v.probs["entailment"], v.probs["contradiction"], getattr(v, "method", "scores") == "unparsed")
                    for v in verdicts
                ]
                if store is not None:
                    store.put_many({chunk_key: [list(value) for value in values]})
            found.update(zip(chunk, values))
        return found

    def step_verdicts(
        self, parsed: Sequence[ParsedExplanation], store: JsonlCache | None = None
    ) -> list[list[StepVerdict]]:
        """Each explanation's steps' verdicts, in step order (what the sample viewer shows per step)."""
        steps = [[(step.condition, step.consequence) for step in item.steps] for item in parsed]
        verdicts = self.verdicts((pair for pairs in steps for pair in pairs), store)
        return [[verdicts[pair] for pair in pairs] for pairs in steps]

    def score_many(
        self, parsed: Sequence[ParsedExplanation], store: JsonlCache | None = None
    ) -> list[tuple[float | None, int]]:
        """(coherence, unparsed verdicts) per explanation; coherence None without steps."""
        return [coherence_of(steps) for steps in self.step_verdicts(parsed, store)]


def coherence_of(steps: Sequence[StepVerdict]) -> tuple[float | None, int]:
    """Mean P(entailment) - P(contradiction) over an explanation's steps (None without steps),
    and how many of its verdicts were unparsed.

    A judge that gave no readable label returns a uniform "unparsed" verdict; those are
    counted so the row can be flagged rather than pass for a neutral step.
    """
    strengths = [entailment - contradiction for entailment, contradiction, _ in steps]
    unparsed = sum(flag for *_, flag in steps)
    return (sum(strengths) / len(strengths) if strengths else None, unparsed)


def valid_chunk(value: Any) -> bool:
    """The shape of a cached chunk's verdicts: a line of another shape is judged again."""
    return isinstance(value, list) and all(
        isinstance(v, list) and len(v) == 3 and is_number(v[0]) and is_number(v[1]) and isinstance(v[2], bool)
        for v in value
    )
