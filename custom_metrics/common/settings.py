"""Every environment variable the suite reads, and the folders derived from them.

One place, so a user (or a test) can see all the knobs at once and no module invents
its own default cache path. A paper's own variable is its package's (GEESE's data source:
``custom_metrics.geese.data``).
"""

from __future__ import annotations

import os
from pathlib import Path

from custom_metrics.common.errors import DataError

DATA_ENV = "EXPLAIN_EVAL_DATA"  # a local mirror laid out like shared/data; wins over downloads
CACHE_ENV = "EXPLAIN_EVAL_CACHE"  # the suite's cache: embedded model, SWI-Prolog, downloads
JUDGE_ENV = "EXPLAIN_EVAL_JUDGE"  # default NLI judge spec for REG (IBE coherence: --nli-judge)
JUDGE_CACHE_ENV = "EXPLAIN_EVAL_JUDGE_CACHE"  # overrides <cache>/nli-verdicts
# Seconds an endpoint judge has to answer all of REG's check on gold items before generation (60)
JUDGE_CHECK_DEADLINE_ENV = "EXPLAIN_EVAL_JUDGE_CHECK_DEADLINE"
GITHUB_RAW_ENV = "EXPLAIN_EVAL_GITHUB_RAW"  # replaces https://raw.githubusercontent.com in pinned URLs
DOWNLOAD_TIMEOUT_ENV = "EXPLAIN_EVAL_DOWNLOAD_TIMEOUT"  # seconds to connect and between bytes (30)
DOWNLOAD_RETRIES_ENV = "EXPLAIN_EVAL_DOWNLOAD_RETRIES"  # further attempts after a failed one (4)
DOWNLOAD_BACKOFF_ENV = "EXPLAIN_EVAL_DOWNLOAD_BACKOFF"  # first wait before a retry, doubled each time (2 s)
DOWNLOAD_DEADLINE_ENV = "EXPLAIN_EVAL_DOWNLOAD_DEADLINE"  # seconds for one file, all attempts and waits (900)
TASK_COPY_ENV = "EXPLAIN_EVAL_TASK_COPY"  # 1: run task YAMLs that differ from the installed ones (a modified copy)
# The Hugging Face switches for "no network": the suite's own downloads obey them too, so a
# compute node fails at once with a clear message instead of waiting out timeouts.
OFFLINE_ENVS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def env_value(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def env_number(name: str, default: float, minimum: float = 0.0) -> float:
    """A numeric setting; a typo fails naming the variable instead of silently using the default."""
    value = env_value(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not number >= minimum:  # also rejects nan
        raise DataError(f"{name}={value!r} is not a number >= {minimum:g}.")
    return number


def offline_variable() -> str | None:
    """The variable that forbids network access (``HF_HUB_OFFLINE=1`` ...), or None."""
    return next((name for name in OFFLINE_ENVS if (env_value(name) or "").upper() in ("1", "ON", "YES", "TRUE")), None)


def cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "explain-eval"
    return Path(env_value(CACHE_ENV) or default).expanduser().resolve()


def judge_cache_dir() -> Path:
    override = env_value(JUDGE_CACHE_ENV)
    return Path(override).expanduser().resolve() if override else cache_root() / "nli-verdicts"


def downloads_dir() -> Path:
    return cache_root() / "downloads"
