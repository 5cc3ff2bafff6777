"""The model stages of ``ibe score`` across processes, with the single-process result to the bit.

Why it is exact: the work is cut into fixed chunks first (the same chunks whatever the
number of processes), every chunk is computed in one call exactly as the single-process
path computes it, and results come back in chunk order. A chunk's result therefore cannot
depend on how many processes there are or which one ran it. Workers are forked after
the models are loaded (no reload, pages shared); torch work runs on one thread in workers
and in this process alike (``one_thread``), so matrix products split the same way everywhere.

Why one pool per run, with filler work: the stages that stay in this process
(formalization, proofs) and the last chunks of each stage would leave cores idle if every
stage waited for the previous one. ``score`` queues drift's spaCy reading as filler at the
start, and workers take it up whenever nothing more urgent is queued, so the run keeps
every core busy almost all the time.
"""

from __future__ import annotations

import gc
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from multiprocessing import get_all_start_methods, get_context
from types import TracebackType
from typing import TypeVar

C = TypeVar("C")
R = TypeVar("R")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def one_thread() -> Iterator[None]:
    """Torch on one thread while inside: how a product is split over threads can change its
    last bits, and the result must not depend on the number of cores or processes."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Workers:
    """Up to ``processes`` forked workers for one run, forked at the first queued work.

    Every model a queued function needs must be loaded before that first ``queue`` call,
    so that the fork shares it; functions must be module-level (workers find them by name).
    On one process (or where there is no fork) nothing runs until the results are asked
    for, so the single-process path computes in the order it asks. A free worker takes the
    chunks this process will wait for first, in the order queued, then ``filler`` chunks.
    """

    def __init__(self, processes: int = 1):
        self.processes = processes if "fork" in get_all_start_methods() else 1
        self._pool: ProcessPoolExecutor | None = None
        self._free = threading.Condition()
        self._busy = 0
        self._waiting: dict[bool, deque[tuple[Callable, object, Future]]] = {False: deque(), True: deque()}
        self._closing = False
        self._dispatcher: threading.Thread | None = None

    def queue(self, function: Callable[[C], R], chunks: Sequence[C], filler: bool = False) -> Callable[[], list[R]]:
        """Start ``[function(chunk) for chunk in chunks]``; call the result to wait for it."""
        chunks = list(chunks)
        if self.processes <= 1 or len(chunks) <= 1:
            return lambda: [function(chunk) for chunk in chunks]
        if self._pool is None:
            gc.freeze()  # collections would write to every object's page, copying it in each process
            self._pool = ProcessPoolExecutor(self.processes, mp_context=get_context("fork"))
            self._pool.submit(os.getpid)  # a fork pool forks every worker at its first task: from this thread
            self._dispatcher = threading.Thread(target=self._dispatch, name="workers-dispatch", daemon=True)
            self._dispatcher.start()
        futures: list[Future] = [Future() for _ in chunks]
        with self._free:
            self._waiting[filler].extend(zip([function] * len(chunks), chunks, futures))
            self._free.notify()
        return lambda: [future.result() for future in futures]

    def map(self, function: Callable[[C], R], chunks: Sequence[C]) -> list[R]:
        return self.queue(function, chunks)()

    def _next(self) -> tuple[Callable, object, Future] | None:
        """The next chunk for a free worker (None: closing with nothing left)."""
        with self._free:
            self._free.wait_for(
                lambda: (
                    (self._busy < self.processes and (self._waiting[False] or self._waiting[True]))
                    or (self._closing and not (self._waiting[False] or self._waiting[True]))
                )
            )
            if not (self._waiting[False] or self._waiting[True]):
                return None
            self._busy += 1
            return (self._waiting[False] or self._waiting[True]).popleft()

    def _dispatch(self) -> None:
        """Hand chunks to free workers, from this thread: submitting from a done-callback,
        which runs in the pool's own thread, can deadlock it."""
        assert self._pool is not None
        while (item := self._next()) is not None:
            function, chunk, result = item
            if not result.set_running_or_notify_cancel():
                self._finished(None, None)
                continue
            try:
                done = self._pool.submit(function, chunk)
            except Exception as error:  # a broken pool: the caller gets the error instead of waiting forever
                self._finished(None, None)
                result.set_exception(error)
                continue
            done.add_done_callback(partial(self._finished, result))

    def _finished(self, result: Future | None, done: Future | None) -> None:
        with self._free:
            self._busy -= 1
            self._free.notify()
        if result is None or done is None:
            return
        error = done.exception()
        if error is None:
            result.set_result(done.result())
        else:
            result.set_exception(error)

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._pool is None:
            return
        with self._free:
            if error is not None:  # nobody will wait for what is still queued
                for waiting in self._waiting.values():
                    for _, _, future in waiting:
                        future.cancel()
            self._closing = True
            self._free.notify()
        assert self._dispatcher is not None
        self._dispatcher.join()
        self._pool.shutdown(wait=True)
        self._pool = None
        gc.unfreeze()
