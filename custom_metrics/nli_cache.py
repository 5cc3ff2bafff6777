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
from pathlib import Path
from typing import Sequence

from custom_metrics.nli_judge import NLI_LABELS, Verdict

Pair = tuple[str, str]

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
                    (cache_key(judge, prompt_id, p, h), judge, p, h, v.label, *(v.probs[l] for l in NLI_LABELS), v.method)
                    for (p, h), v in items
                ],
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
