"""Judge specs: the string a user passes (``lm:...``, ``seqcls:...``, ``openai:...``) parsed and checked.

A spec is validated before any model runs (a typo must not cost a generation run), and
its ``name`` is the cache key prefix: options that change verdicts are part of it,
options that only change speed are not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from custom_metrics.common.settings import JUDGE_ENV, env_value
from custom_metrics.judge.prompt import PROMPT_ID

# Options that change verdicts belong in the cache key; the rest (speed) do not.
SEMANTIC_OPTIONS = {"lm": ("chat", "dtype"), "seqcls": ("dtype",), "openai": ("thinking",)}


@dataclass
class JudgeSpec:
    """A parsed judge spec: ``kind:model[?key=value&...]`` (openai: ``openai:model@base_url``)."""

    kind: str
    model: str
    options: dict[str, str] = field(default_factory=dict)
    base_url: str | None = None

    @property
    def name(self) -> str:
        kept = [f"{key}={self.options[key]}" for key in SEMANTIC_OPTIONS[self.kind] if key in self.options]
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
            raise ValueError(
                f"judge spec {spec!r}: expected 'openai:<model>@<base_url>', e.g. openai:gemma-4-31b@http://localhost:8000/v1"
            )
        base_url = base_url.rstrip("/")
    elif Path(target).expanduser().exists():  # local folders: absolute, so the cache key ignores the CWD
        target = str(Path(target).expanduser().resolve())
    return JudgeSpec(kind, target, options, base_url)


def judge_spec_from_env(explicit: str | None = None) -> str | None:
    """The judge a task should use: an explicit spec, else $EXPLAIN_EVAL_JUDGE, else the default."""
    return explicit or env_value(JUDGE_ENV)
