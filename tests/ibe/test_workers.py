"""The process pool behind ``ibe score --processes``: chunk order, errors, and the one-process path."""

from __future__ import annotations

import os
import time

import pytest

from ibe_postprocess.workers import Workers

SEEN: list[int] = []


def _square_with_pid(chunk: list[int]) -> tuple[list[int], int]:
    SEEN.extend(chunk)
    return [value * value for value in chunk], os.getpid()


def _fail_on_three(chunk: list[int]) -> list[int]:
    if 3 in chunk:
        raise ValueError("chunk with 3")
    return chunk


def _start_after_nap(chunk: str) -> float:
    started = time.monotonic()  # the system-wide clock: comparable between processes
    time.sleep(0.3)
    return started


def test_waited_for_work_goes_before_filler_that_was_queued_first() -> None:
    with Workers(2) as workers:
        filler = workers.queue(_start_after_nap, [f"filler {i}" for i in range(6)], filler=True)
        urgent = workers.queue(_start_after_nap, ["urgent 0", "urgent 1"])
        urgent_starts, filler_starts = urgent(), sorted(filler())
    # at most the two filler chunks handed out before the urgent ones were queued go first
    assert max(urgent_starts) < filler_starts[2]


def test_leaving_on_an_error_drops_the_queued_work() -> None:
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt), Workers(2) as workers:
        workers.queue(_start_after_nap, [str(i) for i in range(20)], filler=True)
        raise KeyboardInterrupt
    assert time.monotonic() - start < 2.0  # not the 3 s that all 20 naps on 2 workers take


def test_results_come_back_in_chunk_order_from_forked_workers() -> None:
    chunks = [[i, i + 1] for i in range(0, 40, 2)]
    with Workers(2) as workers:
        first = workers.queue(_square_with_pid, chunks)
        second = workers.queue(_square_with_pid, chunks[:3])  # queued behind the first, same pool
        results, later = first(), second()
    assert [values for values, _ in results] == [[i * i, (i + 1) ** 2] for i in range(0, 40, 2)]
    assert [values for values, _ in later] == [values for values, _ in results[:3]]
    assert os.getpid() not in {pid for _, pid in results + later}
    assert len({pid for _, pid in results + later}) <= 2


def test_one_process_runs_nothing_until_asked() -> None:
    SEEN.clear()
    with Workers(1) as workers:
        results = workers.queue(_square_with_pid, [[1], [2]])
        assert SEEN == []  # the serial path computes in the order it asks for results
        assert [values for values, _ in results()] == [[1], [4]]
    assert SEEN == [1, 2]


@pytest.mark.parametrize("processes", [1, 2])
def test_an_error_in_a_chunk_reaches_the_caller(processes: int) -> None:
    with pytest.raises(ValueError, match="chunk with 3"), Workers(processes) as workers:
        workers.map(_fail_on_three, [[1, 2], [3, 4], [5, 6]])
