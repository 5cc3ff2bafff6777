"""Files that one command writes and another reads: written whole or not at all, read only
when they are plain files of a sane size.

Why: a runs folder is shared, copied and interrupted. A reader that opens whatever a glob
finds hangs on a FIFO or reads ``/dev/zero`` until memory runs out; a writer that writes in
place leaves a cut file that the next command trusts. Every such file goes through here.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from custom_metrics.common.errors import DataError

MiB = 1024 * 1024


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename,
    so a reader sees the old file or the new one, never a cut one. The file gets the mode
    an ordinary ``open`` would give it (0666 less the umask), not mkstemp's 0600, so a shared
    cache stays readable to the group."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """``atomic_write_bytes`` of UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def regular_file_problem(path: Path, max_bytes: int) -> str | None:
    """Why ``path`` must not be opened (not a regular file after following links, or larger
    than ``max_bytes``), or None when it may be read. Checked without opening it: opening a
    FIFO blocks."""
    try:
        info = os.stat(path)
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, device or socket)"
        return f"is {kind}"
    if info.st_size > max_bytes:
        return f"is {info.st_size:,} bytes, over the {max_bytes:,}-byte bound for this kind of file"
    return None


def read_regular_bytes(path: Path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else is a DataError
    naming the path. The bound is enforced on the read too, so a file that grows between the
    check and the read is still refused."""
    problem = regular_file_problem(path, max_bytes)
    if problem:
        raise DataError(f"{path}: {what} {problem}.")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise DataError(f"{path}: {what} is not a regular file.")
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise DataError(f"{path}: {what} cannot be read ({err.strerror or err}).") from err
    if len(data) > max_bytes:
        raise DataError(f"{path}: {what} is over the {max_bytes:,}-byte bound for this kind of file.")
    return data
