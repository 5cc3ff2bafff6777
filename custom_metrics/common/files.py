"""Files that one command writes and another reads: written whole or not at all, read only
when they are plain files of a sane size.

Why: a runs folder is shared, copied and interrupted. A reader that opens whatever a glob
finds hangs on a FIFO or reads ``/dev/zero`` until memory runs out; a writer that writes in
place leaves a cut file that the next command trusts. Every such file goes through here.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import fnmatch
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from custom_metrics.common.errors import DataError

MiB = 1024 * 1024
# How large each kind of file the suite reads may be (docs/guarantees.md lists them): far
# above any real file of the kind, far below what exhausts a login node's memory.
RESULTS_MAX_BYTES = 64 * MiB  # lm-eval results_*.json: tens of KB, a few MB with many tasks
REPORT_MAX_BYTES = 16 * MiB  # IBE report.json: a few KB
MARKER_MAX_BYTES = 1 * MiB  # sweep_pair.json and the sweep's other small records
JSON_MAX_BYTES = 64 * MiB  # other whole-JSON inputs (RULE's prompts.json: 40 KB)
JSONL_MAX_BYTES = 4096 * MiB  # samples_*.jsonl, features.jsonl, explanation rows (streamed line by line)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode an ordinary ``open`` gives a new file: 0666 less the umask (mkstemp gives 0600)."""
    return 0o666 & ~_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename,
    so a reader sees the old file or the new one, never a cut one, with ``file_mode``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, file_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def unwritable(folder: Path) -> str | None:
    """Why no file can be made in ``folder`` (or, where it is still to be made, in the nearest
    folder above it that exists), or None. Asked before hours of work, not after them. The
    permission bits are asked first, then a temporary file is made and removed: root passes
    every permission check, and only a write says whether the disk takes one."""
    target = Path(folder)
    while not target.exists() and target != target.parent:
        target = target.parent
    if not target.is_dir():
        return f"{target} is not a folder"
    if os.statvfs(target).f_flag & os.ST_RDONLY:
        return f"{target}: the file system is read-only"
    if not os.access(target, os.W_OK | os.X_OK):
        return f"{target}: permission denied"
    try:
        descriptor, temporary = tempfile.mkstemp(dir=target, prefix=".write-check.", suffix=".tmp")
    except OSError as error:
        return f"{target}: {error.strerror or error}"
    os.close(descriptor)
    os.unlink(temporary)
    return None


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


@contextmanager
def _open_regular(path: Path, max_bytes: int, what: str) -> Iterator[BinaryIO]:
    """The file open for reading, once it is known to be a regular file within the bound.
    Opened non-blocking and checked again on the descriptor: a FIFO swapped in after the
    first check would otherwise block the open."""
    problem = regular_file_problem(path, max_bytes)
    if problem:
        raise _refused(path, what, problem)
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        handle = os.fdopen(descriptor, "rb")
    except OSError as err:
        raise _refused(path, what, f"cannot be read ({err.strerror or err})") from err
    with handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise _refused(path, what, "is not a regular file")
        try:
            yield handle
        except OSError as err:
            raise _refused(path, what, f"cannot be read ({err.strerror or err})") from err


def _refused(path: Path, what: str, problem: str) -> DataError:
    return DataError(f"{path}: {what} {problem}." if what else f"{path}: {problem}.")


def _over(path: Path, what: str, max_bytes: int) -> DataError:
    return _refused(path, what, f"is over the {max_bytes:,}-byte bound for this kind of file")


def read_regular_bytes(path: Path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else is a DataError
    naming the path. The bound is enforced on the read too, so a file that grows between the
    check and the read is still refused."""
    with _open_regular(path, max_bytes, what) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _over(path, what, max_bytes)
    return data


def iter_regular_lines(path: Path, max_bytes: int, what: str = "file") -> Iterator[bytes]:
    """The lines (bytes, with their ``\\n``) of a regular file of at most ``max_bytes``, read
    one at a time: a JSONL reader streams gigabytes of samples without holding them."""
    with _open_regular(path, max_bytes, what) as handle:
        read = 0
        while line := handle.readline(max_bytes + 1 - read):
            read += len(line)
            if read > max_bytes:
                raise _over(path, what, max_bytes)
            yield line


def find_files(roots: Iterable[Path], pattern: str, max_bytes: int) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Files named like ``pattern`` under each folder of ``roots`` (and each root that is a file),
    then the ones that must not be read, with why: a FIFO, device or oversized file bearing the
    name is a problem to name, never opened (``rglob`` plus ``open`` hangs on a FIFO called
    ``report.json``). Links to folders are not followed; each file is given once, resolved.
    """
    found: list[Path] = []
    problems: list[tuple[Path, str]] = []
    for root in map(Path, roots):
        if root.is_dir():
            candidates = sorted(
                Path(folder, name)
                for folder, _, names in os.walk(root)
                for name in names
                if fnmatch.fnmatchcase(name, pattern)
            )
        elif os.path.lexists(root):
            candidates = [root]
        else:
            continue
        for path in candidates:
            problem = regular_file_problem(path, max_bytes)
            if problem:
                problems.append((path, problem))
            else:
                found.append(path.resolve())
    return list(dict.fromkeys(found)), problems


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or its file system cannot, and the caller renames twice instead."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))


@contextmanager
def replaced_folder(target: Path, replaceable: Callable[[Path], bool], what: str = "folder") -> Iterator[Path]:
    """A fresh folder beside ``target`` to fill; when the block ends, it takes ``target``'s place
    whole, so a reader (or a second writer) never sees a folder half of one run and half of
    another. The swap is one ``renameat2`` exchange where Linux offers it, else two renames
    under a lock on the parent folder; an existing ``target`` must pass ``replaceable`` (never
    a folder of someone else's files). An error inside the block leaves ``target`` as it was,
    and an OSError names the path under ``target``, not the temporary folder."""
    target = Path(os.path.realpath(target))
    if target.exists() and (not target.is_dir() or not replaceable(target)):
        raise DataError(
            f"{target} exists and is not a {what} (it would be replaced whole): choose a new or empty folder."
        )
    stage: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.new-"))
        os.chmod(stage, 0o777 & ~_umask())
        yield stage
        with _locked(target.parent):
            if not target.exists():
                os.rename(stage, target)
            elif not _exchange(stage, target):
                old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
                os.rename(target, old)  # onto an empty folder: allowed
                os.rename(stage, target)
                stage = old
    except OSError as err:
        raise _named_under(err, target) from err
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)


def _named_under(err: OSError, target: Path) -> OSError:
    """``err`` naming the path the user gave: a file in a temporary folder beside ``target`` by
    its place under ``target``, and ``target`` where the system named no file (a full disk on
    ``write``)."""
    if err.errno is None:  # not the system's error (no errno to keep): as it is
        return err
    temporary = str(target.parent / f".{target.name}.")

    def named(name: object) -> str | None:
        if name is None:
            return None
        text = str(name)
        if not text.startswith(temporary):
            return text
        inside = text[len(temporary) :].partition(os.sep)[2]
        return str(target / inside) if inside else str(target)

    return OSError(err.errno, err.strerror, named(err.filename) or str(target), None, named(err.filename2))


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def refuse_linked_folders(root: Path, folder: Path, what: str) -> None:
    """A DataError naming the first symbolic link among the folders from ``root`` (excluded: the
    user chose it) down to ``folder``, or among the folders under ``folder``; parts not made yet pass.

    Why: ``O_NOFOLLOW`` guards a path's last component only. A folder under ``root`` planted as
    a link to someone else's folder had a command rename that folder's files and write its own
    there. ``what``: the command, as the message names it."""
    root, folder = Path(root), Path(folder)
    parts = folder.relative_to(root).parts
    on_the_way = (root.joinpath(*parts[:depth]) for depth in range(1, len(parts) + 1))
    link = next((path for path in on_the_way if path.is_symlink()), None)
    if link is None and folder.is_dir():  # os.walk lists a linked folder without entering it
        walked = (Path(parent, name) for parent, names, _ in os.walk(folder) for name in sorted(names))
        link = next((path for path in walked if path.is_symlink()), None)
    if link is not None:
        raise _refused(
            link,
            "",
            f"is a symbolic link; {what} walks, renames and writes nothing through a linked folder under {root} "
            "(remove the link)",
        )


def open_unlinked(path: Path, flags: int, what: str = "file") -> int:
    """A descriptor of ``path`` opened with ``flags`` plus ``O_NOFOLLOW``, refused (a
    DataError naming the path) when it is a symbolic link, a hard link, or not a regular file.

    Why: anyone who can create a file in a shared folder can plant ``.sweep.lock`` or a log
    as a link to a file of the user's; opening it to append or truncate would then write
    through it. ``O_NONBLOCK`` keeps a FIFO of that name from blocking the open."""
    try:
        descriptor = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o666)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise _refused(path, what, "is a symbolic link; nothing is written through a link (remove it)") from err
        raise _refused(path, what, f"cannot be opened ({err.strerror or err})") from err
    info = os.fstat(descriptor)
    problem = (
        "is not a regular file (a FIFO, device or socket)"
        if not stat.S_ISREG(info.st_mode)
        else "has other hard links; nothing is written through a link (remove it)"
        if info.st_nlink > 1
        else ""
    )
    if problem:
        os.close(descriptor)
        raise _refused(path, what, problem)
    os.set_blocking(descriptor, True)
    return descriptor
