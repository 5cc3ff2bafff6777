"""The shared file primitives: whole-or-nothing writes, and reads that never block or balloon."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes, read_regular_bytes


def test_a_fifo_a_device_and_an_oversized_file_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        read_regular_bytes(fifo, 1024, "report")
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    with pytest.raises(DataError, match="not a regular file"):
        read_regular_bytes(zero, 1024, "report")
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(DataError, match="2,048 bytes, over the 1,024-byte bound"):
        read_regular_bytes(big, 1024, "report")
    assert read_regular_bytes(big, 4096) == b"x" * 2048


def test_an_atomic_write_leaves_no_temporary_and_takes_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "features.jsonl"
    old = os.umask(0o022)
    try:
        atomic_write_bytes(target, b"one\n")
        atomic_write_bytes(target, b"two\n")
    finally:
        os.umask(old)
    assert target.read_text() == "two\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in target.parent.iterdir()) == ["features.jsonl"]
