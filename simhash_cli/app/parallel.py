"""Work spread over this process and worker processes, results in order.

Shared by the local engine (batches of files) and the streaming of records (pieces of JSON
Lines or Parquet): the one place that starts worker processes.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar, cast

__all__ = ["ordered_map"]

Result = TypeVar("Result")

WORKERS_AFTER = 0.3
"""Seconds this process works alone before it starts workers: about what a worker takes to
start (a new interpreter importing numpy and scipy), so that a small run never waits for one
to start, or to stop, and a large one loses a fraction of a second of the others' time."""

WORKERS_AT_ONCE = 2 * WORKERS_AFTER
"""Seconds of work (as the caller expects one process to take) above which the workers start
at once: a run that long would start them anyway, and they start while this process works
rather than after its first :data:`WORKERS_AFTER` seconds alone."""


def ordered_map(
    function: Callable[..., Result],
    arguments: Iterable[tuple[Any, ...]],
    jobs: int,
    *,
    work: float = 0.0,
) -> Iterator[Result]:
    """``function(*args)`` for each of ``arguments``, yielded in order, computed by this
    process and ``jobs - 1`` worker processes. ``arguments`` is drawn as the work needs it (a
    stream of record pieces is never all in memory): at most a few pieces per worker wait.

    This process takes a share of the work instead of waiting: it works alone for
    :data:`WORKERS_AFTER` seconds (a run that ends by then starts no worker), then goes on
    while the workers start, taking the next batch nobody has started whenever the one due
    next is not ready. When the caller expects more than :data:`WORKERS_AT_ONCE` seconds of
    ``work`` (as one process would take; 0 when not known), the workers start at once.
    """
    given = iter(arguments)
    if jobs <= 1:
        yield from (function(*args) for args in given)
        return
    began = time.monotonic()
    alone = 0.0 if work > WORKERS_AT_ONCE else WORKERS_AFTER
    while time.monotonic() - began < alone:  # work that ends before a worker starts needs none
        taken = next(given, None)
        if taken is None:
            return
        yield function(*taken)
    first = next(given, None)
    if first is None:
        return
    second = next(given, None)
    if second is None:
        yield function(*first)
        return
    with _worker_pool(jobs - 1) as pool:
        # Each entry: a future of the pool's, or a result this process made; in input order.
        due: collections.deque[tuple[Future[Result] | None, Result | None]] = collections.deque()
        ahead = 2 * (jobs - 1)
        waiting = [second]  # drawn but not handed out

        def draw() -> tuple[Any, ...] | None:
            return waiting.pop() if waiting else next(given, None)

        def feed() -> bool:
            """Keep each worker a batch ahead; False when the arguments ran out."""
            while sum(1 for future, _ in due if future is not None) < ahead:
                args = draw()
                if args is None:
                    return False
                due.append((pool.submit(function, *args), None))
            return True

        feed()
        due.appendleft((None, function(*first)))
        more = True
        while due:
            future, result = due[0]
            if future is None:
                due.popleft()
                yield cast(Result, result)
                more = feed() and more
                continue
            if not future.done() and more and len(due) < 2 * ahead + 1:
                args = draw()
                if args is None:
                    more = False
                else:
                    due.append((None, function(*args)))
                continue
            due.popleft()
            yield future.result()
            more = feed() and more


@contextmanager
def _worker_pool(jobs: int) -> Iterator[concurrent.futures.ProcessPoolExecutor]:
    """Worker processes that ignore Ctrl-C: this process stops them and reports it once."""
    # Named through the package, which loads its process pool when first asked for: a run on
    # one process does not import it.
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=signal.signal,
        initargs=(signal.SIGINT, signal.SIG_IGN),
    ) as pool:
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
