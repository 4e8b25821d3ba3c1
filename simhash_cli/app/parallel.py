"""Work spread over this process and worker processes, results in order.

Shared by the local engine (batches of files) and the streaming of records (pieces of JSON
Lines or Parquet): the one place that starts worker processes.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import multiprocessing
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from .memory import keep_freed_memory

__all__ = ["ordered_map"]

Result = TypeVar("Result")

WORKERS_AFTER = 0.3
"""Seconds this process works alone on work of unknown length before it starts workers:
about what a worker takes to start (a new interpreter importing numpy and scipy), so that a
small run never waits for one to start, or to stop, and a large one loses a fraction of a
second of the others' time."""

WORKERS_PAY = 1.0
"""Seconds of work left (as this process alone would take them) above which workers are
worth starting: one takes about half a second to start and import what the work needs, and
a little more to stop. When the caller expects more than this in all, the workers start at
once; otherwise, when the work's number of parts is known, this process works alone and
judges from its own pace after each part: 825 copyright files (19 MB, about 0.6 s) took
1.1 s with a worker started after 0.3 s, where one process alone took 0.85 s."""


def ordered_map(
    function: Callable[..., Result],
    arguments: Iterable[tuple[Any, ...]],
    jobs: int,
    *,
    work: float | None = None,
) -> Iterator[Result]:
    """``function(*args)`` for each of ``arguments``, yielded in order, computed by this
    process and ``jobs - 1`` worker processes. ``arguments`` is drawn as the work needs it (a
    stream of record pieces is never all in memory): at most a few pieces per worker wait.

    This process takes a share of the work instead of waiting. It starts the workers at once
    when the caller expects more than :data:`WORKERS_PAY` seconds of ``work`` (as one process
    would take it; None when not known). Otherwise it works alone: over a sequence of
    ``arguments``, until its pace says that what is left would take it more than
    :data:`WORKERS_PAY` (a run that never gets there starts no worker); over a stream, for
    :data:`WORKERS_AFTER` seconds. Then it goes on while the workers start, handing them work
    only once one runs (a worker still starting is never waited for), and taking the next part
    nobody has started whenever the one due next is not ready.
    """
    given = iter(arguments)
    if jobs <= 1:
        yield from (function(*args) for args in given)
        return
    parts = len(arguments) if isinstance(arguments, Sized) else None
    if work is None or work <= WORKERS_PAY:
        yield from _alone(function, given, parts)
    first = next(given, None)
    if first is None:
        return
    second = next(given, None)
    if second is None:
        yield function(*first)
        return
    yield from _with_workers(function, itertools.chain((first, second), given), jobs)


def _alone(
    function: Callable[..., Result], given: Iterator[tuple[Any, ...]], parts: int | None
) -> Iterator[Result]:
    """This process alone, until its pace says that what is left of ``parts`` would take it
    more than :data:`WORKERS_PAY` (over a stream, ``parts`` None: for
    :data:`WORKERS_AFTER` seconds), or ``given`` runs out."""
    began = time.monotonic()
    for done, taken in enumerate(given, start=1):
        yield function(*taken)
        spent = time.monotonic() - began
        if parts is None and spent >= WORKERS_AFTER:
            return
        if parts is not None and spent / done * (parts - done) > WORKERS_PAY:
            return


def _with_workers(
    function: Callable[..., Result], given: Iterator[tuple[Any, ...]], jobs: int
) -> Iterator[Result]:
    """``function`` of each of ``given`` in order, by this process and ``jobs - 1`` workers
    (see :func:`ordered_map`)."""
    with _worker_pool(jobs - 1) as pool:
        # Done once a worker runs and has imported what ``function`` needs (its module comes
        # with it, by name): nothing is handed to a worker still starting, where this process
        # could not take it back (it would wait for the start to get it done).
        started = pool.submit(_ready, function)
        # Each entry: a future of the pool's, or a result this process made; in input order.
        due: collections.deque[tuple[Future[Result] | None, Result | None]] = collections.deque()
        ahead = 2 * (jobs - 1)

        def feed() -> bool:
            """Keep each worker a batch ahead once one runs; False when the arguments ran
            out."""
            while started.done() and sum(1 for future, _ in due if future is not None) < ahead:
                args = next(given, None)
                if args is None:
                    return False
                due.append((pool.submit(function, *args), None))
            return True

        def take() -> bool:
            """This process takes the next part itself; False when the arguments ran out."""
            args = next(given, None)
            if args is None:
                return False
            due.append((None, function(*args)))
            return True

        more = True
        while due or more:
            if not due:  # nothing handed out or made: this process takes the next
                more = take()
                continue
            future, result = due[0]
            if future is None:
                due.popleft()
                yield cast(Result, result)
                more = feed() and more
                continue
            if not future.done() and more and len(due) < 2 * ahead + 1:
                more = take()
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
        initializer=_worker_started,
    ) as pool:
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _worker_started() -> None:
    """A worker ignores Ctrl-C (the process that started it stops it) and keeps the memory it
    frees for its next piece (:func:`~.memory.keep_freed_memory`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    keep_freed_memory()


def _ready(function: Callable[..., Any]) -> None:
    """Nothing: a worker that has run this has imported ``function``'s module (unpickling the
    argument imports it), and is ready for the work."""
