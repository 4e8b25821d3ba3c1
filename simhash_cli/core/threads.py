"""Work spread over a few threads: numpy's and scipy's sparse kernels let go of the
interpreter while they run, so spans of a corpus are worked on side by side."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["THREADS", "cores", "threaded"]

_T = TypeVar("_T")
_R = TypeVar("_R")


def cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or ``taskset``
    narrows)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


THREADS = max(1, min(4, cores()))
"""Threads a span's work runs on (at most four: each holds a span's arrays at once)."""


def threaded(function: Callable[[_T], _R], items: Iterable[_T]) -> Iterator[_R]:
    """``function`` of each item, in order, on :data:`THREADS` threads, at most one more
    started than are running (so that what waits to be taken stays small)."""
    if THREADS == 1:
        yield from map(function, items)
        return
    with ThreadPoolExecutor(THREADS) as pool:
        due: deque[Future[_R]] = deque()
        for item in items:
            due.append(pool.submit(function, item))
            if len(due) > THREADS:
                yield due.popleft().result()
        while due:
            yield due.popleft().result()
