"""A raw-GitHub server per test, with the suite pointed at it and a fresh, empty cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from custom_metrics.common.settings import (
    CACHE_ENV,
    DATA_ENV,
    DOWNLOAD_BACKOFF_ENV,
    DOWNLOAD_RETRIES_ENV,
    DOWNLOAD_TIMEOUT_ENV,
    GITHUB_RAW_ENV,
    OFFLINE_ENVS,
)
from tests.common.raw_github import RawGitHub


@pytest.fixture()
def raw_github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RawGitHub]:
    """Downloads allowed (no offline flag, no mirror), served locally; timeouts and retries short."""
    server = RawGitHub()
    monkeypatch.setenv(GITHUB_RAW_ENV, server.url)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(DATA_ENV, raising=False)
    for name in OFFLINE_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(DOWNLOAD_TIMEOUT_ENV, "1")
    monkeypatch.setenv(DOWNLOAD_RETRIES_ENV, "1")
    monkeypatch.setenv(DOWNLOAD_BACKOFF_ENV, "0.05")
    yield server
    server.close()
