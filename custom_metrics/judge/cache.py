"""On-disk store of NLI verdicts, keyed by (judge, prompt, premise, hypothesis).

sqlite because several processes (a harness run, a reward function in a trainer, an
analysis) may share one cache, and each committed batch survives a crash of the writer.
The key is a hash, so texts of any length cost the same; the texts themselves are kept
beside it so the cache can be inspected.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from custom_metrics.judge.types import NLI_LABELS, NLIJudge, Pair, Verdict

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
    method TEXT NOT NULL
)
"""


def cache_key(judge: str, prompt_id: str, premise: str, hypothesis: str) -> str:
    return hashlib.sha256(json.dumps([judge, prompt_id, premise, hypothesis]).encode()).hexdigest()


class VerdictCache:
    FILE = "verdicts.sqlite"

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / self.FILE
        self._db = sqlite3.connect(self.path, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, judge: str, prompt_id: str, pairs: Sequence[Pair]) -> dict[Pair, Verdict]:
        keys = {cache_key(judge, prompt_id, p, h): (p, h) for p, h in pairs}
        found: dict[Pair, Verdict] = {}
        key_list = list(keys)
        for start in range(0, len(key_list), 500):  # sqlite caps the number of bound variables
            batch = key_list[start : start + 500]
            rows = self._db.execute(
                f"SELECT key, label, p_entailment, p_neutral, p_contradiction, method FROM verdicts "
                f"WHERE key IN ({','.join('?' * len(batch))})",
                batch,
            )
            for key, label, *probs, method in rows:
                found[keys[key]] = Verdict(label, dict(zip(NLI_LABELS, probs)), method)
        return found

    def put_many(self, judge: str, prompt_id: str, items: Sequence[tuple[Pair, Verdict]]) -> None:
        with self._db:  # one transaction: the whole batch is on disk, or none of it
            self._db.executemany(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        cache_key(judge, prompt_id, p, h),
                        judge,
                        p,
                        h,
                        v.label,
                        *(v.probs[name] for name in NLI_LABELS),
                        v.method,
                    )
                    for (p, h), v in items
                ],
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]


class CachedJudge:
    """A judge that answers from the on-disk cache and builds its backend only for misses.

    Loading a model is itself costly, so a fully cached rerun never loads one. Misses are
    sent to the backend in chunks and each chunk's verdicts are committed at once, so an
    interrupted run keeps all but the chunk in flight. ``computed`` counts the pairs the
    backend actually judged (tests use it to prove a rerun makes no model calls).
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
