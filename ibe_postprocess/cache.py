"""Append-only JSONL files for per-explanation results and predicate embeddings.

Each finished batch is appended and flushed at once, so an interrupted run keeps every
batch it completed and a rerun recomputes only the rest. Keys hash everything a result
depends on (the input text and the stage's settings), so a changed setting never reuses
a stale value.

A kill can leave the last line cut short. Reading skips any line that is not a whole
entry of the expected shape (and says how many it skipped, naming the file and the
first line); appending first ends such a line, so the next entry never lands on the
broken one and gets lost with it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


def key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def read_entries(path: Path, read: Callable[[dict[str, Any]], T | None]) -> Iterator[T]:
    """``read(entry)`` for each JSON object line of ``path``; lines that are not objects, or that
    ``read`` rejects by returning None, are skipped and reported."""
    if not path.is_file():
        return
    skipped: list[int] = []
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                entry = None
            value = read(entry) if isinstance(entry, dict) else None
            if value is None:
                skipped.append(lineno)
            else:
                yield value
    if skipped:
        log.warning(
            "%s: skipped %d unreadable cache line(s) (first: line %d); their values are computed again.",
            path,
            len(skipped),
            skipped[0],
        )


def append_lines(path: Path, lines: Iterable[str]) -> None:
    """Append JSON lines, starting on a fresh line if the file ends in a line cut short."""
    text = "".join(line + "\n" for line in lines)
    if not text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab+") as handle:
        if handle.tell() > 0:
            handle.seek(-1, 2)
            if handle.read(1) != b"\n":
                text = "\n" + text
        handle.write(text.encode("utf-8"))
        handle.flush()


class JsonlCache:
    """Values by key; ``valid`` checks a stored value's shape (one of the wrong shape is computed again)."""

    def __init__(self, path: Path, valid: Callable[[Any], bool] = lambda value: True):
        self.path = path

        def read(entry: dict[str, Any]) -> tuple[str, Any] | None:
            ok = isinstance(entry.get("key"), str) and "value" in entry and valid(entry["value"])
            return (entry["key"], entry["value"]) if ok else None

        self.values: dict[str, Any] = dict(read_entries(path, read))

    def __contains__(self, item: str) -> bool:
        return item in self.values

    def __getitem__(self, item: str) -> Any:
        return self.values[item]

    def put_many(self, entries: dict[str, Any]) -> None:
        if not entries:
            return
        self.values.update(entries)
        append_lines(self.path, (json.dumps({"key": k, "value": v}) for k, v in entries.items()))
