"""``build_judge``: the one module that knows every backend (the rest of the package
imports only downward, so there is no import cycle).

The backend is picked at run time by a spec string, so the same task can be judged by
the embedded model on a laptop, by a Hub NLI classifier, or by a large model behind a
vLLM server. Every verdict is cached on disk (``custom_metrics.judge.cache``).
"""

from __future__ import annotations

from pathlib import Path

from custom_metrics.common.settings import judge_cache_dir
from custom_metrics.judge.cache import CachedJudge
from custom_metrics.judge.spec import JudgeSpec, parse_spec
from custom_metrics.judge.types import NLIJudge


def _make_backend(spec: JudgeSpec) -> NLIJudge:
    # Backends import torch/transformers when built, so a cached rerun loads nothing.
    from custom_metrics.judge.endpoint import OpenAIJudge
    from custom_metrics.judge.lm import LMJudge
    from custom_metrics.judge.seqcls import SeqClsJudge

    factory = {"lm": LMJudge, "seqcls": SeqClsJudge, "openai": OpenAIJudge}
    return factory[spec.kind](spec)


def build_judge(spec: JudgeSpec | str | None = None, cache_dir: str | Path | None = None) -> CachedJudge:
    """spec: a parsed ``JudgeSpec`` (``spec.resolve_judge``), or a spec string.

    None -> the embedded model as an LM judge; "lm:<hf id or path>";
    "seqcls:<hf id or path>" (sequence-classification NLI model); "openai:<model>@<base_url>"
    (key from OPENAI_API_KEY). The result caches verdicts on disk by (judge name, prompt,
    premise, hypothesis) under cache_dir (default: <EXPLAIN_EVAL_CACHE>/nli-verdicts, or
    $EXPLAIN_EVAL_JUDGE_CACHE); the name carries every option that changes verdicts.

    Options follow a '?' (``spec.OPTIONS`` lists them; unknown or repeated ones are errors):
    lm: and openai: ``mode=loglik|generate`` (default loglik for lm:, generate for openai:)
    and, for generate, ``temperature``, ``top_p``, ``top_k``, ``seed``, ``max_tokens``;
    lm: ``chat=auto|yes|no``, ``batch_size``, ``dtype``, ``device``, ``share=auto|no``
    (shared KV cache, see ``shared_kv``); seqcls: ``batch_size``, ``dtype``, ``device``;
    openai: ``concurrency``, ``top_logprobs``, ``key_env``, ``thinking=off|on|unset`` (the chat
    template's switch in each request; ``off`` by default), ``timeout`` (seconds for one request,
    retries included; 300 by default).
    """
    parsed = spec if isinstance(spec, JudgeSpec) else parse_spec(spec)
    return CachedJudge(parsed.name, parsed.prompt_id, lambda: _make_backend(parsed), cache_dir or judge_cache_dir())
