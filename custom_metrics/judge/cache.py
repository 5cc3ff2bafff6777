"""On-disk store of NLI verdicts, keyed by (judge, prompt, premise, hypothesis).

sqlite because several processes (``accelerate`` ranks, a trainer's reward function, an
analysis) may share one cache, and each committed batch survives a crash of the writer. WAL
journal (readers never block the writer) plus a busy timeout (no "database is locked"); each
batch is one ``BEGIN IMMEDIATE`` transaction. A key is written once, the first verdict winning
(``INSERT OR IGNORE``), so every reader agrees. On NFS point the cache at local disk.

Any sqlite failure is a ``VerdictCacheError`` naming the file and what to do: the cache holds
nothing that cannot be recomputed. A full disk (whatever error sqlite gives) says "disk full at
<folder>" and to keep the cache, which is sound.
"""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from custom_metrics.judge.types import NLI_LABELS, NLIJudge, Pair, Verdict

BUSY_TIMEOUT_S = 120  # a writer waits this long for another process's batch to commit
# Below this much free space, a failure is the full disk's, whatever sqlite calls it: on a full
# tmpfs it reports "disk I/O error" (SQLITE_IOERR_SHMSIZE: the WAL index cannot grow), not FULL.
FULL_BELOW_BYTES = 1024 * 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    premise TEXT NOT NULL,
    hypothesis TEXT NOT NULL,
    label TEXT NOT NULL,
    p_entailment REAL NOT NULL,
    p_neutral REAL NOT NULL,
    p_contradiction REAL NOT NULL,
    method TEXT NOT NULL,
    answer TEXT NOT NULL DEFAULT ''
)
"""
_COLUMNS = ("key", "judge", "premise", "hypothesis", "label", "p_entailment", "p_neutral", "p_contradiction", "method")


class VerdictCacheError(RuntimeError):
    """The verdict cache cannot be opened, read or written; the message names the file."""


def cache_key(judge: str, prompt_id: str, premise: str, hypothesis: str) -> str:
    return hashlib.sha256(json.dumps([judge, prompt_id, premise, hypothesis]).encode()).hexdigest()


class VerdictCache:
    FILE = "verdicts.sqlite"

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / self.FILE
        with self._errors("open"):
            Path(directory).mkdir(parents=True, exist_ok=True)
            # autocommit mode: transactions are begun explicitly, so their kind is ours to choose
            self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(_SCHEMA)
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(verdicts)")]
            if "answer" not in columns:  # caches written before answers were kept
                self._db.execute("ALTER TABLE verdicts ADD COLUMN answer TEXT NOT NULL DEFAULT ''")
                columns.append("answer")
            missing = [name for name in _COLUMNS if name not in columns]
            if missing:
                raise sqlite3.DatabaseError(f"table 'verdicts' lacks column(s) {', '.join(missing)}")

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError, ValueError) as err:  # ValueError: a stored row that is no verdict
            free = free_bytes(self.path.parent)
            if _disk_full(err) or (free is not None and free < FULL_BELOW_BYTES):  # deleting would only lose verdicts
                left = "" if free is None else f"{_size(free)} free; "
                raise VerdictCacheError(
                    f"verdict cache {self.path}: cannot {action} it: disk full at {self.path.parent} (the disk "
                    f"holding it is full: {left}{type(err).__name__}: {err}). The cache itself is sound: keep it, "
                    "free space on that disk, or point EXPLAIN_EVAL_JUDGE_CACHE (or --metadata judge_cache) at a "
                    "folder on another disk."
                ) from err
            raise VerdictCacheError(
                f"verdict cache {self.path}: cannot {action} it ({type(err).__name__}: {err}). It holds only "
                f"cached judge verdicts: delete {self.path} (with any {self.FILE}-wal and -shm beside it) and "
                "they are recomputed, or point EXPLAIN_EVAL_JUDGE_CACHE (or --metadata judge_cache) at a "
                "writable folder on local disk."
            ) from err

    def check_writable(self) -> None:
        """Take the write lock and release it: fails now, not after a long generation, on a read-only cache."""
        with self._errors("write"):
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("CREATE TABLE IF NOT EXISTS write_check (at REAL)")
            self._db.execute("INSERT INTO write_check VALUES (julianday('now'))")
            self._db.execute("ROLLBACK")

    def get_many(self, judge: str, prompt_id: str, pairs: Sequence[Pair]) -> dict[Pair, Verdict]:
        keys = {cache_key(judge, prompt_id, p, h): (p, h) for p, h in pairs}
        found: dict[Pair, Verdict] = {}
        key_list = list(keys)
        with self._errors("read"), self._db:  # the connection ends the transaction begun here
            self._db.execute("BEGIN")  # one snapshot for all the chunks below
            for start in range(0, len(key_list), 500):  # sqlite caps the number of bound variables
                batch = key_list[start : start + 500]
                rows = self._db.execute(
                    "SELECT key, label, p_entailment, p_neutral, p_contradiction, method, answer FROM verdicts "
                    f"WHERE key IN ({','.join('?' * len(batch))})",
                    batch,
                ).fetchall()
                for key, label, *probs, method, answer in rows:
                    found[keys[key]] = Verdict(label, dict(zip(NLI_LABELS, probs)), method, answer)
        return found

    def put_many(self, judge: str, prompt_id: str, items: Sequence[tuple[Pair, Verdict]]) -> None:
        rows = [
            (
                cache_key(judge, prompt_id, p, h),
                judge,
                p,
                h,
                v.label,
                *(v.probs[n] for n in NLI_LABELS),
                v.method,
                v.answer,
            )
            for (p, h), v in items
        ]
        with self._errors("write"), self._db:  # committed, or rolled back on any error
            self._db.execute("BEGIN IMMEDIATE")  # one transaction: the whole batch is on disk, or none of it
            self._db.executemany("INSERT OR IGNORE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._errors("read"):
            return self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]

    def close(self) -> None:
        self._db.close()


def free_bytes(folder: Path) -> int | None:
    """The bytes an unprivileged writer can still put on the disk holding ``folder`` (its
    nearest existing ancestor), or None where the system does not say."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            try:
                return shutil.disk_usage(candidate).free
            except OSError:
                return None
    return None


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    return f"{count / 1024:.0f} KiB" if count < 1024**2 else f"{count / 1024**2:.0f} MiB"


def _disk_full(err: BaseException) -> bool:
    """Whether the error is a full disk or quota (sqlite's SQLITE_FULL, or the system's ENOSPC/EDQUOT)."""
    if isinstance(err, OSError):
        return err.errno in (errno.ENOSPC, errno.EDQUOT)
    code = getattr(err, "sqlite_errorcode", None)  # Python 3.11+
    return code == sqlite3.SQLITE_FULL or (code is None and "database or disk is full" in str(err))


def check_cache(directory: str | Path) -> Path:
    """Open the cache under ``directory`` and take its write lock once; its file, or a VerdictCacheError."""
    cache = VerdictCache(Path(directory))
    try:
        cache.check_writable()
    finally:
        cache.close()
    return cache.path


class CachedJudge:
    """A judge that answers from the on-disk cache and builds its backend only for misses, so a
    fully cached rerun loads no model. Misses are judged and committed in chunks (an interrupted run
    keeps all but the chunk in flight); ``computed`` counts the pairs the backend judged.
    """

    CHUNK = 64

    def __init__(
        self, name: str, prompt_id: str, backend_factory: Callable[[], NLIJudge], cache_dir: str | Path
    ) -> None:
        self.name = name
        self.prompt_id = prompt_id
        self._factory = backend_factory
        self._backend: NLIJudge | None = None
        self.cache = VerdictCache(Path(cache_dir))
        self.computed = 0

    @property
    def backend(self) -> NLIJudge:
        if self._backend is None:
            self._backend = self._factory()
        return self._backend

    def release(self) -> None:
        """Drop the loaded backend (its model and memory); the next miss loads it again."""
        self._backend = None

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        unique = list(dict.fromkeys((str(p), str(h)) for p, h in pairs))
        found = self.cache.get_many(self.name, self.prompt_id, unique)
        missing = [pair for pair in unique if pair not in found]
        for start in range(0, len(missing), self.CHUNK):
            chunk = missing[start : start + self.CHUNK]
            verdicts = self.backend.judge(chunk)
            if len(verdicts) != len(chunk):
                raise RuntimeError(f"judge {self.name} returned {len(verdicts)} verdicts for {len(chunk)} pairs")
            self.cache.put_many(self.name, self.prompt_id, list(zip(chunk, verdicts)))
            found.update(zip(chunk, verdicts))
            self.computed += len(chunk)
        return [found[(str(p), str(h))] for p, h in pairs]
