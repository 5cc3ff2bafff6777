"""Waiting on real processes in the sweep's end-to-end tests: a condition polled until it holds
(never a fixed sleep), failing early when the process it depends on has exited."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")
POLL_S = 0.2


def until(what: str, check: Callable[[], T], process: subprocess.Popen | None = None, timeout_s: float = 600) -> T:
    """The first truthy ``check()``; fails after ``timeout_s`` or once ``process`` has exited."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if process is not None and process.poll() is not None:
            pytest.fail(f"the sweep exited {process.returncode} while waiting for {what}")
        time.sleep(POLL_S)
    pytest.fail(f"timed out after {timeout_s} s waiting for {what}")


def gone(pid: int) -> bool:
    """The process has ended: no such process, or a zombie that only its parent's end will reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")
