"""``OUT/.sweep.lock``: one sweep at a time decides what runs in a sweep folder.

A Slurm sweep holds it while it submits; a local sweep while it runs its pairs, so a second
sweep into the same ``--out`` waits, saying for whom, then finds those pairs done. An ``flock``,
which the kernel releases when its holder dies (even by ``kill -9``): no stale lock to remove.
A lock file that is a link is refused, naming it.
"""

from __future__ import annotations

import fcntl
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from custom_metrics.common.files import open_unlinked

LOCK_FILE = ".sweep.lock"


@contextmanager
def sweep_lock(out: Path, say: Callable[[str], None], doing: str = "submitting") -> Iterator[None]:
    """Held while a sweep decides and submits (``doing``: what it is doing, shown to a sweep that waits)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_FILE
    # created if missing, never truncated on open, never through a link (files.open_unlinked)
    descriptor = open_unlinked(path, os.O_RDWR | os.O_CREAT, "sweep lock")
    with os.fdopen(descriptor, "r+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder, doing = _holder(handle.read())
            say(f"another sweep ({holder}) is {doing} into {out}; waiting for it to finish")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{socket.gethostname()} pid {os.getpid()} since {time.strftime('%H:%M:%S')} ({doing})\n")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _holder(line: str) -> tuple[str, str]:
    """Who holds the lock and what it does, from the line it wrote (an older sweep's line says no more than who)."""
    match = re.fullmatch(r"(.+) \((.+)\)", line.strip())
    if match:
        return match.group(1), match.group(2)
    return line.strip() or "another process", "submitting"
