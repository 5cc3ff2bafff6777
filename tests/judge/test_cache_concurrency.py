"""The verdict cache under real concurrency and damage: 4 writer processes and a reader on one
sqlite file (every verdict stored exactly once, no "database is locked", no batch ever seen
half-written), and truncated, foreign or unwritable cache files (an error naming the file)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from custom_metrics.judge.cache import VerdictCache, VerdictCacheError, check_cache
from custom_metrics.judge.types import NLI_LABELS, Verdict

WRITERS, BATCHES, OWN, SHARED = 4, 25, 40, 8  # per batch: OWN pairs of its own, SHARED written by every writer


def _verdict(text: str) -> Verdict:
    label = NLI_LABELS[len(text) % 3]
    return Verdict(label, {name: float(name == label) for name in NLI_LABELS})


def _batch(writer: int, batch: int) -> list[tuple[tuple[str, str], Verdict]]:
    pairs = [(f"w{writer}-b{batch}-{i}", "h") for i in range(OWN)] + [
        (f"shared-b{batch}-{i}", "h") for i in range(SHARED)
    ]
    return [(pair, _verdict(pair[0])) for pair in pairs]


def _write(directory: str, writer: int, start) -> None:
    cache = VerdictCache(Path(directory))
    start.wait()
    for batch in range(BATCHES):
        cache.put_many("judge", "prompt", _batch(writer, batch))


def _read(directory: str, start, done, report) -> None:
    """Poll while the writers run: each of a writer's batches is either fully visible or not at all."""
    cache = VerdictCache(Path(directory))
    start.wait()
    polls, partial = 0, []
    while not done.is_set() or polls == 0:
        counts: dict[str, int] = {}
        for (premise,) in cache._db.execute("SELECT premise FROM verdicts WHERE premise LIKE 'w%'"):
            group = premise.rsplit("-", 1)[0]
            counts[group] = counts.get(group, 0) + 1
        partial += [group for group, count in counts.items() if count != OWN]
        polls += 1
    report.put((polls, partial))


def test_four_writer_processes_and_a_reader_share_one_cache(tmp_path):
    context = multiprocessing.get_context("spawn")
    start, done, report = context.Barrier(WRITERS + 1), context.Event(), context.Queue()
    writers = [context.Process(target=_write, args=(str(tmp_path), w, start)) for w in range(WRITERS)]
    reader = context.Process(target=_read, args=(str(tmp_path), start, done, report))
    for process in [*writers, reader]:
        process.start()
    for process in writers:
        process.join(timeout=300)
    done.set()
    polls, partial = report.get(timeout=300)
    reader.join(timeout=60)
    assert [p.exitcode for p in [*writers, reader]] == [0] * (WRITERS + 1), "a process failed (database locked?)"
    assert polls > 0 and partial == [], f"a reader saw a half-written batch: {partial[:5]}"
    db = sqlite3.connect(tmp_path / VerdictCache.FILE)
    rows = db.execute("SELECT premise, label FROM verdicts").fetchall()
    expected = {pair[0]: v.label for w in range(WRITERS) for b in range(BATCHES) for pair, v in _batch(w, b)}
    assert len(rows) == len(expected) == WRITERS * BATCHES * OWN + BATCHES * SHARED  # each verdict exactly once
    assert dict(rows) == expected
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _filled(directory: Path, count: int = 300) -> Path:
    cache = VerdictCache(directory)
    cache.put_many("judge", "prompt", [((f"premise {i} " * 20, "h"), _verdict(str(i))) for i in range(count)])
    cache.close()
    return directory / VerdictCache.FILE


def _assert_names_the_file(directory: Path, action) -> None:
    with pytest.raises(VerdictCacheError) as err:
        action()
    message = str(err.value)
    assert str(directory / VerdictCache.FILE) in message and "delete" in message and "recomputed" in message


def test_a_truncated_cache_names_its_file(tmp_path):
    path = _filled(tmp_path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])

    def read_everything():
        cache = VerdictCache(tmp_path)
        cache.get_many("judge", "prompt", [(f"premise {i} " * 20, "h") for i in range(300)])
        len(cache)

    _assert_names_the_file(tmp_path, read_everything)


def test_a_foreign_file_and_an_unwritable_folder_name_the_file(tmp_path):
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / VerdictCache.FILE).write_bytes(b"\x00garbage" * 1000)
    _assert_names_the_file(tmp_path / "garbage", lambda: VerdictCache(tmp_path / "garbage"))
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE verdicts (x TEXT)").connection.commit()
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / VerdictCache.FILE).write_bytes(other.read_bytes())
    _assert_names_the_file(tmp_path / "foreign", lambda: VerdictCache(tmp_path / "foreign"))
    (tmp_path / "blocker").write_text("a file where the folder should be")
    _assert_names_the_file(tmp_path / "blocker", lambda: check_cache(tmp_path / "blocker"))


def test_an_old_cache_gains_the_answer_column(tmp_path):
    db = sqlite3.connect(tmp_path / VerdictCache.FILE)
    db.execute(
        "CREATE TABLE verdicts (key TEXT PRIMARY KEY, judge TEXT NOT NULL, premise TEXT NOT NULL, "
        "hypothesis TEXT NOT NULL, label TEXT NOT NULL, p_entailment REAL NOT NULL, p_neutral REAL NOT NULL, "
        "p_contradiction REAL NOT NULL, method TEXT NOT NULL)"
    )
    db.commit()
    db.close()
    cache = VerdictCache(tmp_path)
    cache.put_many("judge", "prompt", [(("p", "h"), _verdict("x"))])
    assert cache.get_many("judge", "prompt", [("p", "h")]) == {("p", "h"): _verdict("x")}
