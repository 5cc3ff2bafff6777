"""Judge specs: the string a user passes (``lm:...``, ``seqcls:...``, ``openai:...``) parsed and checked.

A spec is validated completely before any model runs (a typo must not cost a generation run), and
its ``name`` is the cache key prefix: options that change verdicts are part of it, defaults
included; options that only change speed are not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from custom_metrics.common.settings import JUDGE_ENV, env_value
from custom_metrics.judge.prompt import PROMPT_ID

KINDS = ("lm", "seqcls", "openai")
MODES = ("loglik", "generate")
THINKING = ("off", "on", "unset")
# Why these defaults: lm_eval_tasks/reg/DETAILS.md, "Choosing the judge". In-process LMs score the three label
# words (deterministic, never unparsed; the embedded default is a base model that cannot
# answer in one word). Endpoints serve chat models, the paper's kind of judge, and many
# return no logprobs, so they answer as the paper's judge did: a sampled word.
DEFAULT_MODE = {"lm": "loglik", "openai": "generate"}

# An API reasoning model's effort (OpenAI's names): sent instead of every sampling field (by REG's generation too).
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
# Why 20: ``Sampling``. The OpenAI API refuses top_k and min_p: ``top_k=0`` sends neither.
DEFAULT_TOP_K = {"lm": 20, "openai": 20}
SERVERS = ("vllm", "transformers")  # how a server takes top_k and min_p: ``server_fields``


@dataclass(frozen=True)
class Sampling:
    """The generated mode's decoding. Defaults: the paper samples every model, judge
    included, with Qwen's recommended non-thinking parameters (section 4.4; Qwen3.5:
    temperature 0.7, top_p 0.8, top_k 20, min_p 0). top_k is off here and on by default for
    ``lm:`` and ``openai:`` judges (``DEFAULT_TOP_K``); min_p 0 is sent with it."""

    temperature: float = 0.7
    top_p: float = 0.8
    top_k: int = 0
    seed: int = 0
    max_tokens: int = 16

    def pair_seed(self, premise: str, hypothesis: str) -> int:
        """A seed per pair, so a verdict does not depend on batch, order or process."""
        digest = hashlib.sha256(json.dumps([self.seed, premise, hypothesis]).encode()).hexdigest()
        return int(digest[:15], 16)

    def key(self) -> list[str]:
        """The cache-key parts: every parameter, defaults included, so a changed default never reuses old verdicts."""
        return [
            f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}" for name, value in vars(self).items()
        ]


def server_fields(server: str, fields: dict[str, Any], do_sample: bool = True) -> dict[str, Any]:
    """top_k and min_p as ``server`` takes them (an endpoint judge's and REG's served generation):
    request fields (vLLM, SGLang), or, for ``transformers serve``, which refuses them (HTTP 422) but
    reads a request's ``generation_config`` JSON, in that field with do_sample, which it otherwise
    takes from the served folder only."""
    if server == SERVERS[0]:
        return fields
    return {"generation_config": json.dumps({"do_sample": do_sample, **fields}, sort_keys=True)}


def _choice(*values: str) -> tuple[Callable[[str], bool], str]:
    return (lambda value: value in values), " or ".join(values)


def _number(low: float, high: float, integer: bool = False) -> tuple[Callable[[str], bool], str]:
    def check(value: str) -> bool:
        if integer and not re.fullmatch(r"-?\d+", value):
            return False
        try:  # an integer compared as one: 2**63 - 1 is no float
            number = int(value) if integer else float(value)
        except ValueError:
            return False
        return low <= number <= high

    kind = "an integer" if integer else "a number"
    return check, f"{kind} in [{low:g}, {high:g}]"


_ANY: tuple[Callable[[str], bool], str] = ((lambda value: bool(value)), "a value")
_POSITIVE = _number(1, 1e9, integer=True)
_DTYPES = _choice("float32", "float16", "bfloat16", "float64")
_GENERATION = {
    "mode": _choice(*MODES),
    "temperature": _number(0, 10),
    "top_p": _number(1e-9, 1),
    "top_k": _number(0, 1e9, integer=True),
    "seed": _number(0, 2**63 - 1, integer=True),
    "max_tokens": _POSITIVE,
}
# Every option a backend accepts: (check, what is expected), and which change verdicts.
OPTIONS: dict[str, dict[str, tuple[Callable[[str], bool], str]]] = {
    "lm": {
        "chat": _choice("auto", "yes", "no"),
        "dtype": _DTYPES,
        "device": _ANY,
        "batch_size": _POSITIVE,
        "share": _choice("auto", "no"),
        **_GENERATION,
    },
    "seqcls": {"dtype": _DTYPES, "device": _ANY, "batch_size": _POSITIVE},
    "openai": {
        "concurrency": _POSITIVE,
        "top_logprobs": _number(0, 20, integer=True),
        "key_env": (lambda value: bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value)), "a variable name"),
        # The chat template's thinking switch, sent as ``chat_template_kwargs`` (vLLM, SGLang,
        # ``transformers serve``): off by default, as the paper's judge ran (section 4.4);
        # ``unset`` sends no switch, for APIs that refuse the field (api.openai.com).
        "thinking": _choice(*THINKING),
        # An API reasoning model (OpenAI's): this effort and a token budget are all a request
        # carries (no sampling fields, no thinking switch, no logprobs: such APIs refuse them).
        "reasoning_effort": _choice(*REASONING_EFFORTS),
        # Seconds for one request, every attempt and wait included (custom_metrics/judge/http_client.py).
        "timeout": _number(1, 86400),
        # Where top_k and min_p go: request fields (vLLM, SGLang) or transformers serve's
        # generation_config field; the same sampling either way, so not in the name.
        "server": _choice(*SERVERS),
        **_GENERATION,
    },
}
SEMANTIC_OPTIONS = {"lm": ("chat", "dtype"), "seqcls": ("dtype",), "openai": ()}  # openai: thinking, always named


@dataclass
class JudgeSpec:
    """A parsed judge spec: ``kind:model[?key=value&...]`` (openai: ``openai:model@base_url``)."""

    kind: str
    model: str
    options: dict[str, str] = field(default_factory=dict)
    base_url: str | None = None

    @property
    def mode(self) -> str | None:
        """``loglik`` or ``generate`` for prompted judges; None for a classifier (it has scores only)."""
        return self.options.get("mode", DEFAULT_MODE[self.kind]) if self.kind in DEFAULT_MODE else None

    @property
    def sampling(self) -> Sampling:
        """``Sampling``'s defaults (this kind's top_k), each option given read as its field's type."""
        defaults = Sampling(top_k=DEFAULT_TOP_K.get(self.kind, Sampling.top_k))
        given = {key: type(value)(self.options[key]) for key, value in vars(defaults).items() if key in self.options}
        return replace(defaults, **given)

    @property
    def reasoning_effort(self) -> str | None:
        """An API reasoning model's effort (``openai:`` only), or None for every other judge."""
        return self.options.get("reasoning_effort") if self.kind == "openai" else None

    @property
    def thinking(self) -> str | None:
        """An endpoint judge's thinking switch (``off`` unless chosen); None for in-process judges,
        whose chat template is always rendered with thinking disabled, and for API reasoning
        models, whose effort says whether they think."""
        if self.kind != "openai" or self.reasoning_effort is not None:
            return None
        return self.options.get("thinking", "off")

    @property
    def name(self) -> str:
        """The canonical spec: every option that changes verdicts, defaults included (the cache
        key, and what docs, records and results store); it parses back to this judge."""
        kept = [f"{key}={self.options[key]}" for key in SEMANTIC_OPTIONS[self.kind] if key in self.options]
        if self.mode is not None:
            kept.insert(0, f"mode={self.mode}")
        if self.thinking is not None:
            kept.append(f"thinking={self.thinking}")
        if self.reasoning_effort is not None:  # nothing but the effort and the budget is sent
            kept += [f"reasoning_effort={self.reasoning_effort}", f"max_tokens={self.sampling.max_tokens}"]
        elif self.mode == "generate":
            kept += self.sampling.key()
        target = f"{self.model}@{self.base_url}" if self.kind == "openai" else self.model
        return f"{self.kind}:{target}" + ("?" + "&".join(kept) if kept else "")

    @property
    def spec(self) -> str:
        """The whole spec as given: ``name`` keeps only what changes verdicts, this every option
        (the transport's too: ``server``, ``timeout``, ``key_env``, ...), so a judge rebuilt from
        it (REG's filter, from the docs) sends what the checked one sent."""
        target = f"{self.model}@{self.base_url}" if self.kind == "openai" else self.model
        options = "&".join(f"{key}={value}" for key, value in sorted(self.options.items()))
        return f"{self.kind}:{target}" + (f"?{options}" if options else "")

    @property
    def display_name(self) -> str:
        """The name for people: ``name`` with machine paths replaced by what they point at
        (the embedded checkpoint reads ``gemma-3-270m (embedded)``)."""
        from custom_metrics.common.results import friendly_spec

        return friendly_spec(self.name)

    @property
    def prompt_id(self) -> str:
        return "" if self.kind == "seqcls" else PROMPT_ID

    def device_and_dtype(self) -> tuple[Any, Any]:
        """Where an in-process judge runs and in which dtype (both checked by ``parse_spec``):
        CUDA in bfloat16 where there is a GPU, else the CPU in float32."""
        import torch

        device = torch.device(self.options.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
        return device, getattr(torch, self.options.get("dtype") or ("bfloat16" if device.type == "cuda" else "float32"))


def _options(spec: str, kind: str, query: str) -> dict[str, str]:
    options: dict[str, str] = {}
    accepted = OPTIONS[kind]
    for item in query.split("&") if query else []:
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"judge spec {spec!r}: option {item!r} is not key=value")
        if key not in accepted:
            raise ValueError(
                f"judge spec {spec!r}: unknown option {key!r} for {kind}: (accepted: {', '.join(accepted)})"
            )
        if key in options:
            raise ValueError(f"judge spec {spec!r}: option {key!r} is given twice ({options[key]!r} and {value!r})")
        check, expected = accepted[key]
        if not check(value):
            raise ValueError(f"judge spec {spec!r}: option {key}={value!r} is not valid; expected {expected}")
        options[key] = value
    if "reasoning_effort" in options:
        refused = [key for key in ("temperature", "top_p", "top_k", "seed", "thinking") if key in options]
        if options.get("mode", DEFAULT_MODE[kind]) != "generate" or refused:
            raise ValueError(
                f"judge spec {spec!r}: an API reasoning model (reasoning_effort) takes no "
                f"{', '.join(refused) or 'mode=loglik (it returns no logprobs)'}: it is sent its effort and "
                "max_tokens only; drop them"
            )
    if kind != "seqcls" and options.get("mode", DEFAULT_MODE[kind]) != "generate":
        unused = [key for key in ("temperature", "top_p", "top_k", "seed", "max_tokens") if key in options]
        if unused:
            raise ValueError(
                f"judge spec {spec!r}: {', '.join(unused)} only apply to mode=generate (this judge scores "
                f"the label words, mode=loglik); add mode=generate or drop them"
            )
    return options


def parse_spec(spec: str | None) -> JudgeSpec:
    """Parse and check a judge spec; None, "" and "embedded" mean the embedded model as an LM judge."""
    spec = (spec or "").strip()
    if spec in ("", "embedded"):
        from custom_metrics.common.embedded_model import checkpoint_dir

        return JudgeSpec("lm", str(checkpoint_dir()))
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in KINDS or not rest:
        raise ValueError(
            f"judge spec {spec!r} is not understood; use 'lm:<hf id or path>', "
            "'seqcls:<hf id or path>', 'openai:<model>@<base_url>' (options after '?', e.g. "
            "'lm:Qwen/Qwen3-8B?chat=yes&batch_size=4'), or leave it empty for the embedded model."
        )
    target, _, query = rest.partition("?")
    options = _options(spec, kind, query)
    base_url = None
    if kind == "openai":
        target, at, base_url = target.partition("@")
        if not at or not target or not base_url:
            raise ValueError(
                f"judge spec {spec!r}: expected 'openai:<model>@<base_url>', e.g. openai:gemma-4-31b@http://localhost:8000/v1"
            )
        base_url = base_url.rstrip("/")
    elif Path(target).expanduser().exists():  # local folders: absolute, so the cache key ignores the CWD
        target = str(Path(target).expanduser().resolve())
    return JudgeSpec(kind, target, options, base_url)


def resolve_judge(explicit: str | None, environment: str | None, default: str) -> JudgeSpec:
    """The judge a scorer uses, parsed once: the spec passed explicitly (``--metadata judge``,
    ``--nli-judge``), else the environment's (``$EXPLAIN_EVAL_JUDGE``, see ``judge_from_environment``),
    else the scorer's default. REG and IBE coherence choose their judge through this one rule."""
    return parse_spec((explicit or "").strip() or (environment or "").strip() or default)


def judge_from_environment() -> str | None:
    """The judge spec set in ``$EXPLAIN_EVAL_JUDGE``, or None."""
    return env_value(JUDGE_ENV)
