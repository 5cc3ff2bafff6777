"""Linguistic uncertainty (§4 and Algorithm 4) and hedge cues by category.

A sentence's certainty c is the regression output (1-6) of Pei & Jurgens'
``pedropei/sentence-level-certainty``; its uncertainty is the scale inverted, a setting since
the paper only says "we invert the scale" (``INVERSIONS``). An explanation's uncertainty is
its assumptions' aggregated, plus its summary's, as the paper gives it three ways
(``AGGREGATIONS``); PEIRCE's halving is not used. The task's DETAILS.md sets the readings
against Figure 1. Inputs are encoded exactly as the
authors' ``certainty-estimator`` package does (60 tokens, padded with the pad id, no
attention mask), so scores match theirs.

Where the model cannot be loaded (offline, no Hub) a lexicon estimate stands in: certainty
= 6 - min(5, epistemic + doxastic + 0.5 * conditional hedge cues in the sentence), so a
sentence without a cue is fully certain, and it is inverted like the model's. Every row
records which estimate it holds (``uncertainty_source``) and the report says so. Hedge
cues are always counted with the lexicon below (the paper's CoNLL-2010 token classifier is
not public), over the explanation's clauses, assumptions and summary, without the IF/THEN
scaffolding the prompt asks for.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from custom_metrics.common.errors import DataError
from ibe_postprocess.parsing import ParsedExplanation

log = logging.getLogger(__name__)

PAPER_CERTAINTY_MODEL = "pedropei/sentence-level-certainty"
MAX_TOKENS = 60  # certainty-estimator's max_length and padding length
LEXICON_SOURCE = "lexicon"
# How an explanation's sentence uncertainties combine, as report.md names each reading.
AGGREGATION_NAMES = {
    "sum": "sum (the paper's §4 equation)",
    "mean": "mean (the paper's Algorithm 4)",
    "mean-all": "mean over every sentence, summary included (the paper's Appendix A.8)",
}
AGGREGATIONS = tuple(AGGREGATION_NAMES)
DEFAULT_AGGREGATION = "sum"
# How a certainty c on the 1-6 scale becomes an uncertainty: c subtracted from this top.
INVERSIONS = {"6-c": 6.0, "7-c": 7.0}
DEFAULT_INVERSION = "6-c"
INVERSION_NAMES = {
    "6-c": "6 − certainty (0-5; the authors' PEIRCE code)",
    "7-c": "7 − certainty (1-6: the 1-6 scale reversed)",
}
CERTAINTY_MAX = 6.0  # the top of the certainty scale: a sentence without a hedge cue

# Categories of the CoNLL-2010 hedge detection task (Farkas et al., 2010).
HEDGE_CUES: dict[str, tuple[str, ...]] = {
    "epistemic": (
        "may",
        "might",
        "could",
        "can",
        "possibly",
        "possible",
        "perhaps",
        "probably",
        "probable",
        "likely",
        "unlikely",
        "potentially",
        "potential",
        "maybe",
        "presumably",
        "apparently",
        "seem",
        "seems",
        "seemed",
        "appear",
        "appears",
        "appeared",
        "suggest",
        "suggests",
        "indicate",
        "indicates",
        "tend",
        "tends",
        "often",
        "sometimes",
        "usually",
        "generally",
        "typically",
        "somewhat",
        "approximately",
        "roughly",
    ),
    "doxastic": (
        "believe",
        "believes",
        "believed",
        "think",
        "thinks",
        "thought",
        "assume",
        "assumes",
        "assumed",
        "suppose",
        "supposes",
        "supposed",
        "suspect",
        "suspects",
        "expect",
        "expects",
        "expected",
        "consider",
        "considers",
        "feel",
        "feels",
        "guess",
        "doubt",
        "doubts",
        "hypothesize",
        "presume",
        "presumes",
        "imagine",
    ),
    "conditional": ("if", "unless", "whether", "provided", "assuming", "depending", "otherwise", "in case"),
}
CUE_WEIGHTS = {"epistemic": 1.0, "doxastic": 1.0, "conditional": 0.5}
_CUE_PATTERNS = {
    category: re.compile(r"\b(" + "|".join(re.escape(cue) for cue in cues) + r")\b", re.IGNORECASE)
    for category, cues in HEDGE_CUES.items()
}
_CATEGORY = {cue: category for category, cues in HEDGE_CUES.items() for cue in cues}
_ANY_CUE = re.compile(r"\b(?:" + "|".join(re.escape(cue) for cue in sorted(_CATEGORY, key=len, reverse=True)) + r")\b")


def cues_by_pattern(text: str) -> dict[str, int]:
    """Whole-word, case-insensitive cue counts per category: the definition."""
    return {category: len(pattern.findall(text)) for category, pattern in _CUE_PATTERNS.items()}


def hedge_cues(text: str) -> dict[str, int]:
    """``cues_by_pattern``, in one pass over the lower-cased text when it is ASCII.

    Every cue is a whole word (or "in case") in exactly one category, so one pattern over
    all cues counts the same matches as one pattern per category, four times faster. For
    other text the per-category patterns run as defined, because case-insensitive matching
    also folds some non-ASCII letters onto the cues' (Kelvin K, long s, dotted I).
    """
    if not text.isascii():
        return cues_by_pattern(text)
    counts = dict.fromkeys(HEDGE_CUES, 0)
    for cue in _ANY_CUE.findall(text.lower()):
        counts[_CATEGORY[cue]] += 1
    return counts


def cues_found(text: str) -> list[tuple[str, str]]:
    """The hedge cues of ``text`` in reading order, each (cue as written, lower-cased; its
    category): the matches ``cues_by_pattern`` counts, for the sample viewer."""
    found = [
        (match.start(), match.group(0).lower(), category)
        for category, pattern in _CUE_PATTERNS.items()
        for match in pattern.finditer(text)
    ]
    return [(cue, category) for _, cue, category in sorted(found)]


def hedge_text(parsed: ParsedExplanation) -> str:
    """What hedge cues are counted over: the clauses, assumptions and summary, without the
    IF/THEN scaffolding the prompt asks for."""
    texts = [t for s in parsed.steps for t in (s.condition, s.consequence)] + parsed.assumptions
    return " ".join(texts + ([parsed.summary] if parsed.summary else []))


def lexicon_certainty(sentence: str) -> float:
    """The lexicon's stand-in for the certainty model: 6 without a hedge cue, down to 1."""
    cues = hedge_cues(sentence)
    return CERTAINTY_MAX - min(5.0, sum(CUE_WEIGHTS[category] * count for category, count in cues.items()))


def overall_uncertainty(
    assumption_scores: Sequence[float], summary_score: float | None, aggregation: str = DEFAULT_AGGREGATION
) -> float | None:
    """UC(A) + UC(S): the assumptions' uncertainties summed (§4) or averaged (Algorithm 4), plus
    the summary's; or (A.8, ``mean-all``) the mean of the assumptions' and the summary's
    together. A missing part counts as absent, and None when both are."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"uncertainty aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation!r}")
    if aggregation == "mean-all":
        scores = [*assumption_scores, *([summary_score] if summary_score is not None else [])]
        return sum(scores) / len(scores) if scores else None
    parts: list[float] = []
    if assumption_scores:
        total = sum(assumption_scores)
        parts.append(total if aggregation == "sum" else total / len(assumption_scores))
    if summary_score is not None:
        parts.append(summary_score)
    return sum(parts) if parts else None


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


class CertaintyModel:
    """The sentence-level certainty regressor, batched, on CUDA when present."""

    def __init__(self, spec: str = PAPER_CERTAINTY_MODEL, batch_size: int = 64):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(spec)
        self.model = AutoModelForSequenceClassification.from_pretrained(spec, num_labels=1).to(self.device).eval()
        self.batch_size = batch_size

    def certainty(self, sentences: Sequence[str]) -> list[float]:
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        scores: list[float] = []
        for start in range(0, len(sentences), self.batch_size):
            batch = sentences[start : start + self.batch_size]
            ids = [
                self.tokenizer.encode(text, add_special_tokens=True, max_length=MAX_TOKENS, truncation=True)
                for text in batch
            ]
            ids = [row + [pad] * (MAX_TOKENS - len(row)) for row in ids]
            with self.torch.no_grad():
                logits = self.model(input_ids=self.torch.tensor(ids, device=self.device)).logits
            scores.extend(float(value) for value in logits.reshape(-1).cpu())
        return scores


@dataclass(frozen=True)
class UncertaintyResult:
    uncertainty: float | None
    epistemic: int
    doxastic: int
    conditional: int
    hedge_ratio: float


class UncertaintyScorer:
    """UC(A) + UC(S) with the certainty model, or the documented lexicon estimate.

    ``spec`` None is the paper's model, the lexicon where it cannot be loaded (offline); a
    model the user names is loaded here, at once, or is a DataError naming it: never
    replaced silently, and never found out only after the slow stages of a run.
    """

    def __init__(
        self, spec: str | None = None, aggregation: str = DEFAULT_AGGREGATION, inversion: str = DEFAULT_INVERSION
    ):
        overall_uncertainty([], None, aggregation)  # an unknown setting fails before any model loads
        if inversion not in INVERSIONS:
            raise ValueError(f"uncertainty inversion must be one of {', '.join(INVERSIONS)}, got {inversion!r}")
        self.aggregation = aggregation
        self.inversion = inversion
        self.model: CertaintyModel | None = None
        self.source = LEXICON_SOURCE
        if spec == LEXICON_SOURCE:
            return
        try:
            self.model = CertaintyModel(spec or PAPER_CERTAINTY_MODEL)
            self.source = spec or PAPER_CERTAINTY_MODEL
        except Exception as err:  # offline, missing files, wrong architecture
            if spec:
                reason = (str(err).strip().splitlines() or [""])[0]
                raise DataError(
                    f"--certainty-model {spec}: cannot be loaded ({type(err).__name__}: {reason}); pass a model "
                    f"folder that exists, a Hub id in the local Hub cache, '{LEXICON_SOURCE}' for the lexicon "
                    f"estimate, or leave the option out for {PAPER_CERTAINTY_MODEL} (the lexicon where it cannot "
                    "be loaded)."
                ) from err
            unavailable = f"certainty model {PAPER_CERTAINTY_MODEL} unavailable: {type(err).__name__}"
            self.source = f"{LEXICON_SOURCE} ({unavailable})"
            log.warning(
                "IBE uncertainty: %s could not be loaded (%s); using the lexicon estimate.", PAPER_CERTAINTY_MODEL, err
            )

    def sentence_certainty(self, sentences: Sequence[str]) -> list[float]:
        if self.model is None:
            return [lexicon_certainty(text) for text in sentences]
        return self.model.certainty(list(sentences))

    def score_many(self, parsed: Sequence[ParsedExplanation]) -> list[UncertaintyResult]:
        sentences: list[str] = []
        for item in parsed:
            sentences += [_sentence(text) for text in item.assumptions]
            if item.summary:
                sentences.append(_sentence(item.summary))
        # A sentence's uncertainty: its certainty subtracted from the inversion's top.
        values = iter([INVERSIONS[self.inversion] - value for value in self.sentence_certainty(sentences)])
        results = []
        for item in parsed:
            assumption_scores = [next(values) for _ in item.assumptions]
            summary_score = next(values) if item.summary else None
            joined = hedge_text(item)
            cues = hedge_cues(joined)
            words = max(1, len(re.findall(r"\w+", joined)))
            uncertainty = overall_uncertainty(assumption_scores, summary_score, self.aggregation)
            results.append(UncertaintyResult(uncertainty, **cues, hedge_ratio=sum(cues.values()) / words))
        return results
