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

    return {"lm": LMJudge, "seqcls": SeqClsJudge, "openai": OpenAIJudge}[spec.kind](spec)


def build_judge(spec: JudgeSpec | str | None = None, cache_dir: str | Path | None = None) -> CachedJudge:
    """A judge from a ``JudgeSpec`` or a spec string (None: the embedded model), its verdicts cached
    under ``cache_dir`` (default ``judge_cache_dir()``); ``spec.OPTIONS`` lists each backend's options."""
    parsed = spec if isinstance(spec, JudgeSpec) else parse_spec(spec)
    return CachedJudge(parsed.name, parsed.prompt_id, lambda: _make_backend(parsed), cache_dir or judge_cache_dir())
