"""Every environment variable the suite reads, and the folders derived from them.

One place, so a user (or a test) can see all the knobs at once and no module invents
its own default cache path.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "EXPLAIN_EVAL_DATA"  # a local mirror laid out like shared/data; wins over downloads
CACHE_ENV = "EXPLAIN_EVAL_CACHE"  # the suite's cache: embedded model, SWI-Prolog, downloads
JUDGE_ENV = "EXPLAIN_EVAL_JUDGE"  # default NLI judge spec for REG (and IBE coherence)
JUDGE_CACHE_ENV = "EXPLAIN_EVAL_JUDGE_CACHE"  # overrides <cache>/nli-verdicts


def env_value(name: str) -> str | None:
    """The stripped value of ``name``, or None when unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


def cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "explain-eval"
    return Path(env_value(CACHE_ENV) or default).expanduser().resolve()


def judge_cache_dir() -> Path:
    override = env_value(JUDGE_CACHE_ENV)
    return Path(override).expanduser().resolve() if override else cache_root() / "nli-verdicts"
