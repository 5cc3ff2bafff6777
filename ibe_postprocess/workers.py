"""The model stages of ``ibe score`` across processes, with the single-process result to the bit.

Why it is exact: the work is cut into fixed chunks first (the same chunks whatever the
number of processes), every chunk is computed in one call exactly as the single-process
path computes it, and results come back in chunk order. A chunk's result therefore cannot
depend on how many processes there are or which one ran it. Workers are forked after
the models are loaded (no reload, pages shared); torch work runs on one thread in workers
and in this process alike (``one_thread``), so matrix products split the same way everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_all_start_methods, get_context
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


def map_chunks(function: Callable[[C], R], chunks: Sequence[C], processes: int) -> list[R]:
    """``[function(chunk) for chunk in chunks]``, on up to ``processes`` forked workers.

    ``function`` must be a module-level function (workers find it by name) whose models
    are loaded before the call, so that the fork shares them.
    """
    if processes <= 1 or len(chunks) <= 1 or "fork" not in get_all_start_methods():  # no fork: one process
        return [function(chunk) for chunk in chunks]
    workers = min(processes, len(chunks))
    with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
        return list(pool.map(function, chunks))
