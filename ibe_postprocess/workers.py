"""The model stages of ``ibe score`` across processes, with the single-process result to the bit.

Why it is exact: the work is cut into fixed chunks first (the same chunks whatever the
number of processes), every chunk is computed in one call exactly as the single-process
path computes it, and results come back in chunk order. A chunk's result therefore cannot
depend on how many processes there are or which one ran it. Workers are forked after
the models are loaded (no reload, pages shared); torch work runs on one thread in workers
and in this process alike (``one_thread``), so matrix products split the same way everywhere.

Why one pool per run, with work queued ahead: the stages that stay in this process
(formalization, proofs) would leave the other cores idle if every stage waited for the
previous one. ``score`` queues drift's spaCy reading before the proofs, so the workers read
while this process proves, and the run uses every core almost all the time.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
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
    for, so the single-process path computes in the order it asks.
    """

    def __init__(self, processes: int = 1):
        self.processes = processes if "fork" in get_all_start_methods() else 1
        self._pool: ProcessPoolExecutor | None = None

    def queue(self, function: Callable[[C], R], chunks: Sequence[C]) -> Callable[[], list[R]]:
        """Start ``[function(chunk) for chunk in chunks]``; call the result to wait for it."""
        chunks = list(chunks)
        if self.processes <= 1 or len(chunks) <= 1:
            return lambda: [function(chunk) for chunk in chunks]
        if self._pool is None:
            gc.freeze()  # collections would write to every object's page, copying it in each process
            self._pool = ProcessPoolExecutor(self.processes, mp_context=get_context("fork"))
        futures = [self._pool.submit(function, chunk) for chunk in chunks]
        return lambda: [future.result() for future in futures]

    def map(self, function: Callable[[C], R], chunks: Sequence[C]) -> list[R]:
        return self.queue(function, chunks)()

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=error is not None)
            self._pool = None
            gc.unfreeze()
