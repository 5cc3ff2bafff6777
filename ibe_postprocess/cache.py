"""Append-only JSONL key-value store for per-explanation results.

Each finished batch is appended and flushed at once, so an interrupted run keeps every
batch it completed and a rerun recomputes only the rest. Keys hash everything a result
depends on (the input text and the stage's settings), so a changed setting never reuses
a stale value.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class JsonlCache:
    def __init__(self, path: Path):
        self.path = path
        self.values: dict[str, Any] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the last line of an interrupted write
                self.values[entry["key"]] = entry["value"]

    def __contains__(self, item: str) -> bool:
        return item in self.values

    def __getitem__(self, item: str) -> Any:
        return self.values[item]

    def put_many(self, entries: dict[str, Any]) -> None:
        if not entries:
            return
        self.values.update(entries)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps({"key": k, "value": v}) + "\n" for k, v in entries.items()))
            handle.flush()
