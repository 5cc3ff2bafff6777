"""The suite's NLI judge: one interface, three interchangeable backends, verdicts cached on disk.

REG judges every (premise, hypothesis) pair three ways and IBE-Eval scores the coherence
of explanation steps; both need the same thing: a label and a probability for
entailment, neutral and contradiction. The backend is picked at run time by a spec string
(see ``build_judge``), so the same task can be judged by the embedded model on a laptop,
by a Hub NLI classifier, or by a large model behind a vLLM server.

Judging is the costly part of a REG run (two or three judge calls per generated
explanation), so every verdict is written to an sqlite file the moment its batch is
done: a rerun, or a run resumed after an interruption, recomputes nothing. This module
imports neither torch nor transformers: consumers that only read cached verdicts, or
talk to an endpoint, stay light.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

NLI_LABELS = ("entailment", "neutral", "contradiction")

JUDGE_ENV = "EXPLAIN_EVAL_JUDGE"  # judge spec for tasks whose filters get no --metadata
JUDGE_CACHE_ENV = "EXPLAIN_EVAL_JUDGE_CACHE"  # overrides <EXPLAIN_EVAL_CACHE>/nli-verdicts

# The paper's Appendix C.2 prompt. The paper prints it as one flattened paragraph; the
# " - Label:" items are a bullet list, so we restore its line breaks (task README).
NLI_PROMPT = (
    "Given a premise and a hypothesis, your task is to judge the relationship between the "
    "two texts. Specifically, you will need to assign one of three labels to the "
    "relationship:\n"
    "- Entailment: The hypothesis is most likely true given the premise.\n"
    "- Contradiction: The hypothesis is most likely false given the premise.\n"
    "- Neutral: The hypothesis is not entailed by the premise but does not contradict it "
    "either.\n"
    "Your final output should be only one word, namely the label.\n"
    "\n"
    "Premise: {premise}\n"
    "Hypothesis: {hypothesis}"
)
# The words a prompted judge answers with, in NLI_LABELS order.
LABEL_WORDS = ("Entailment", "Neutral", "Contradiction")
# Prompted verdicts depend on the prompt text: a changed prompt must not reuse old ones.
PROMPT_ID = hashlib.sha256(NLI_PROMPT.encode()).hexdigest()[:12]

_LABEL_ALIASES = {
    "entailment": "entailment", "entail": "entailment", "entails": "entailment",
    "entailed": "entailment", "neutral": "neutral", "contradiction": "contradiction",
    "contradict": "contradiction", "contradicts": "contradiction", "contradictory": "contradiction",
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


def nli_prompt(premise: str, hypothesis: str) -> str:
    return NLI_PROMPT.format(premise=premise.strip(), hypothesis=hypothesis.strip())


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


def default_cache_dir() -> Path:
    override = os.environ.get(JUDGE_CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser().resolve()
    from custom_metrics.embedded_model import cache_root

    return cache_root() / "nli-verdicts"


@dataclass
class JudgeSpec:
    """A parsed judge spec: ``kind:model[?key=value&...]`` (openai: ``openai:model@base_url``)."""

    kind: str
    model: str
    options: dict[str, str] = field(default_factory=dict)
    base_url: str | None = None

    # Options that change verdicts belong in the cache key; the rest (speed) do not.
    SEMANTIC = {"lm": ("chat", "dtype"), "seqcls": ("dtype",), "openai": ("thinking",)}

    @property
    def name(self) -> str:
        kept = [f"{key}={self.options[key]}" for key in self.SEMANTIC[self.kind] if key in self.options]
        target = f"{self.model}@{self.base_url}" if self.kind == "openai" else self.model
        return f"{self.kind}:{target}" + ("?" + "&".join(kept) if kept else "")

    @property
    def prompt_id(self) -> str:
        return "" if self.kind == "seqcls" else PROMPT_ID


KINDS = ("lm", "seqcls", "openai")


def parse_spec(spec: str | None) -> JudgeSpec:
    """Parse a judge spec; None, "" and "embedded" mean the embedded model as an LM judge."""
    spec = (spec or "").strip()
    if spec in ("", "embedded"):
        from custom_metrics.embedded_model import checkpoint_dir

        return JudgeSpec("lm", str(checkpoint_dir()))
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in KINDS or not rest:
        raise ValueError(
            f"judge spec {spec!r} is not understood; use 'lm:<hf id or path>', "
            "'seqcls:<hf id or path>', 'openai:<model>@<base_url>' (options after '?', e.g. "
            "'lm:Qwen/Qwen3-8B?chat=yes&batch_size=4'), or leave it empty for the embedded model."
        )
    target, _, query = rest.partition("?")
    options: dict[str, str] = {}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"judge spec {spec!r}: option {item!r} is not key=value")
        options[key] = value
    base_url = None
    if kind == "openai":
        target, at, base_url = target.partition("@")
        if not at or not target or not base_url:
            raise ValueError(f"judge spec {spec!r}: expected 'openai:<model>@<base_url>', e.g. openai:gemma-4-31b@http://localhost:8000/v1")
        base_url = base_url.rstrip("/")
    elif Path(target).expanduser().exists():  # local folders: absolute, so the cache key ignores the CWD
        target = str(Path(target).expanduser().resolve())
    return JudgeSpec(kind, target, options, base_url)


def _make_backend(spec: JudgeSpec) -> NLIJudge:
    from custom_metrics import nli_backends

    factory = {"lm": nli_backends.LMJudge, "seqcls": nli_backends.SeqClsJudge, "openai": nli_backends.OpenAIJudge}
    return factory[spec.kind](spec)


class CachedJudge:
    """A judge that answers from the on-disk cache and builds its backend only for misses.

    Loading a model is itself costly, so a fully cached rerun never loads one. Misses are
    sent to the backend in chunks and each chunk's verdicts are committed at once, so an
    interrupted run keeps all but the chunk in flight. ``computed`` counts the pairs the
    backend actually judged (tests use it to prove a rerun makes no model calls).
    """

    CHUNK = 64

    def __init__(self, name: str, prompt_id: str, backend_factory: Callable[[], NLIJudge], cache_dir: str | Path) -> None:
        from custom_metrics.nli_cache import VerdictCache

        self.name = name
        self.prompt_id = prompt_id
        self._factory = backend_factory
        self._backend: NLIJudge | None = None
        self.cache = VerdictCache(Path(cache_dir))
        self.computed = 0

    @property
    def backend(self) -> NLIJudge:
        if self._backend is None:
            self._backend = self._factory()
        return self._backend

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        unique = list(dict.fromkeys((str(p), str(h)) for p, h in pairs))
        found = self.cache.get_many(self.name, self.prompt_id, unique)
        missing = [pair for pair in unique if pair not in found]
        for start in range(0, len(missing), self.CHUNK):
            chunk = missing[start : start + self.CHUNK]
            verdicts = self.backend.judge(chunk)
            if len(verdicts) != len(chunk):
                raise RuntimeError(f"judge {self.name} returned {len(verdicts)} verdicts for {len(chunk)} pairs")
            self.cache.put_many(self.name, self.prompt_id, list(zip(chunk, verdicts)))
            found.update(zip(chunk, verdicts))
            self.computed += len(chunk)
        return [found[(str(p), str(h))] for p, h in pairs]


def build_judge(spec: str | None = None, cache_dir: str | Path | None = None) -> NLIJudge:
    """spec: None -> the embedded model as an LM judge; "lm:<hf id or path>";
    "seqcls:<hf id or path>" (sequence-classification NLI model); "openai:<model>@<base_url>"
    (key from OPENAI_API_KEY). The result caches verdicts on disk by (judge name, premise,
    hypothesis) under cache_dir (default: <EXPLAIN_EVAL_CACHE>/nli-verdicts, or
    $EXPLAIN_EVAL_JUDGE_CACHE). Prompted judges also key on the prompt's hash.

    Options follow a '?': lm: ``chat=auto|yes|no`` (apply the tokenizer's chat template;
    auto = when it has one), ``batch_size``, ``dtype``, ``device``; seqcls: ``batch_size``,
    ``dtype``, ``device``; openai: ``concurrency``, ``top_logprobs``, ``key_env`` (variable
    holding the key, default OPENAI_API_KEY), ``thinking=off`` (vLLM: disable thinking).
    """
    parsed = parse_spec(spec)
    return CachedJudge(parsed.name, parsed.prompt_id, lambda: _make_backend(parsed), cache_dir or default_cache_dir())


def judge_spec_from_env(explicit: str | None = None) -> str | None:
    """The judge a task should use: an explicit spec, else $EXPLAIN_EVAL_JUDGE, else the default."""
    return explicit or os.environ.get(JUDGE_ENV, "").strip() or None
