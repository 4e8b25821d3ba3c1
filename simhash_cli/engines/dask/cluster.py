"""The dask engine's cluster: a client of a new local cluster (workers on 127.0.0.1) or of an
existing scheduler, a dead worker reported as one error, and the mapper that runs batches of
files as tasks, in order."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from ...app.batches import (
    Mapper,
)
from ...core.corpus import Corpus
from ...core.events import Event
from ...errors import (
    ParameterError,
    SimhashError,
    WorkerLostError,
)
from ...io.sources.files import STDIN

__all__ = ["EXTRA_MISSING", "Cluster", "connect", "import_distributed", "mapper", "reported"]


EXTRA_MISSING = "{engine} dask needs the distributed extra: pip install 'simhash-cli[distributed]'"


CONNECT_TIMEOUT = 10.0
"""Seconds to reach a scheduler and hear it answer as one (dask's setting
``simhash.connect-timeout``)."""

POLL = 2.0
"""Seconds between looks at the cluster while waiting for a result."""

NO_WORKER_GRACE = 20.0
"""Seconds a cluster may have no worker before a run waiting on it gives up (dask's setting
``simhash.no-worker-grace``: longer where workers are replaced, as under an autoscaler)."""


def waited(name: str, default: float) -> float:
    """The seconds of dask's setting ``simhash.<name>`` (set in a YAML file of dask's
    configuration or as ``DASK_SIMHASH__<NAME>``: ``60``, ``"90s"``, ``"2 minutes"``), or
    ``default``.

    Raises:
        ParameterError: a setting that is not a positive duration.
    """
    import dask.config
    from dask.utils import parse_timedelta

    value = dask.config.get(f"simhash.{name}", default)
    try:
        seconds = parse_timedelta(value, default="seconds")
    except (KeyError, TypeError, ValueError):
        seconds = None
    if seconds is None or not seconds > 0:
        raise ParameterError(f"dask's setting simhash.{name} is not a duration: {value!r}")
    return float(seconds)


@dataclass(frozen=True)
class Cluster:
    """A client connected to a cluster: the one it started (``owned``) or an existing one.

    Every result is waited for through :meth:`result` and :meth:`gather`, which look at the
    cluster while they wait: a cluster whose workers are all gone (an external one, whose
    workers nobody restarts) ends the run with one error instead of a wait for ever.
    """

    client: Any
    workers: int
    dashboard: str | None
    owned: bool
    grace: float = NO_WORKER_GRACE

    def gather(self, futures: Sequence[Any]) -> list[Any]:
        """The results of ``futures``, in order."""
        self._wait(futures)
        return cast(list[Any], self.client.gather(list(futures)))

    def result(self, future: Any) -> Any:
        """The result of one future."""
        self._wait([future])
        return future.result()

    def _wait(self, futures: Sequence[Any]) -> None:
        distributed = import_distributed()
        alone_since: float | None = None
        while True:
            try:
                distributed.wait(list(futures), timeout=POLL)
                return
            except TimeoutError:
                pass
            except ValueError:  # "No clients found": the client closed when it lost the scheduler
                if self.client.status in ("running", "connecting"):
                    raise
            if self.client.status not in ("running", "connecting"):
                raise WorkerLostError("the dask scheduler went away (the client lost it)")
            if _workers_of(self.client) == 0:
                now = time.monotonic()
                alone_since = now if alone_since is None else alone_since
                if now - alone_since > self.grace:
                    raise WorkerLostError(
                        f"every worker of the dask cluster went away ({self.grace:g} s "
                        "without one): start workers again, then run the same command"
                    )
            else:
                alone_since = None


def _workers_of(client: Any) -> int | None:
    """How many workers the scheduler knows (None when it cannot be asked right now)."""
    try:
        return len(client.scheduler_info()["workers"])
    except Exception:  # the scheduler is away: the client's status says so on the next look
        return None


def import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ParameterError(EXTRA_MISSING, parameters=("engine",)) from exc
    return distributed


@contextmanager
def connect(scheduler: str | None = None, workers: int | None = None) -> Iterator[Cluster]:
    """A client of the cluster at ``scheduler`` (``tcp://HOST:PORT``), or of a new local
    cluster of ``workers`` processes (default: one per core) bound to 127.0.0.1, its
    dashboard too (on a free port, when bokeh is installed), closed on exit.

    Raises:
        ParameterError: the extra is not installed, or a wait set in dask's configuration is
            not a duration (:func:`waited`).
        SimhashError: the scheduler cannot be reached, or has no workers.
    """
    distributed = import_distributed()
    if scheduler is not None:
        _quiet_client_logs()
        timeout = waited("connect-timeout", CONNECT_TIMEOUT)
        grace = waited("no-worker-grace", NO_WORKER_GRACE)
        try:
            _knock(scheduler, timeout)
            client, count = _answering(distributed, scheduler, timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise SimhashError(f"cannot reach the dask scheduler at {scheduler}: {exc}") from exc
        try:
            if count == 0:
                # Tasks would wait for a worker for ever.
                raise SimhashError(f"the dask cluster at {scheduler} has no workers")
            yield Cluster(client, count, client.dashboard_link, owned=False, grace=grace)
        finally:
            client.close()
        return
    count = workers or os.cpu_count() or 1
    cluster = distributed.LocalCluster(
        n_workers=count,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        # Our own errors say what failed; the workers' logs of it would repeat it as a trace.
        silence_logs=logging.CRITICAL,
    )
    try:
        client = distributed.Client(cluster)
        try:
            yield Cluster(client, count, _dashboard(client), owned=True)
        finally:
            client.close()
    finally:
        cluster.close()


def _answering(distributed: Any, scheduler: str, timeout: float) -> tuple[Any, int]:
    """A client of ``scheduler`` and its number of workers, asked in a thread of its own: an
    address that accepts connections and never answers as a scheduler (an HTTP server, the
    dashboard's port, a silent listener) would otherwise hold the client for ever."""
    box: dict[str, Any] = {}

    def ask() -> None:
        try:
            client = distributed.Client(scheduler, timeout=f"{timeout}s")
            box["client"] = client
            box["workers"] = len(client.scheduler_info()["workers"])
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=ask, name="simhash-connect", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if "error" in box:
        raise box["error"]
    if thread.is_alive() or "workers" not in box:
        raise SimhashError(
            f"{scheduler} does not answer as a dask scheduler (no reply in "
            f"{timeout + 5:g} s): is it the scheduler's address (tcp://HOST:8786), not "
            "its dashboard's or another server's?"
        )
    return box["client"], box["workers"]


def _quiet_client_logs() -> None:
    """The client's own logs of a scheduler or worker going away (tracebacks, reconnection
    attempts): the run says what happened in one line of its own."""
    known = list(logging.root.manager.loggerDict)
    for name in ["distributed", "tornado", "asyncio", *known]:
        if name.split(".")[0] in ("distributed", "tornado", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _knock(scheduler: str, timeout: float) -> None:
    """Open and close a TCP connection to a ``tcp://`` scheduler: a refused or unknown
    address fails at once, where the client would retry until its timeout."""
    parts = urllib.parse.urlsplit(scheduler)
    if parts.scheme == "tcp":
        if parts.hostname is None or parts.port is None:
            raise ValueError("expected tcp://HOST:PORT")
        socket.create_connection((parts.hostname, parts.port), timeout).close()


def _dashboard(client: Any) -> str | None:
    """The dashboard's address, when it runs (it needs bokeh)."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return None
    return cast(str, client.dashboard_link)


@contextmanager
def reported() -> Iterator[None]:
    """A dead worker as one clear error, never a hang or a traceback."""
    distributed = import_distributed()
    try:
        yield
    except distributed.KilledWorker as exc:
        raise WorkerLostError(
            f"a dask worker died while running a task of ours ({exc.task}): killed, or out "
            "of memory; the workers' logs say which (smaller partitions need less memory)"
        ) from exc
    except (distributed.comm.CommClosedError, OSError) as exc:
        raise WorkerLostError(f"the dask cluster went away: {exc}") from exc
    except concurrent.futures.CancelledError as exc:  # the scheduler went away
        raise WorkerLostError(
            "the dask scheduler went away while it ran our tasks: start it again, then run "
            "the same command"
        ) from exc


Batch = tuple[list[Event], Corpus]


def batch_as_given(
    directory: str, function: Callable[..., Batch], files: list[str], *rest: Any
) -> Batch:
    """``function(files, *rest)`` on the paths made absolute against the client's working
    directory ``directory`` (a worker's own may differ), its ids and events named as the
    client gave them. Standard input (``-``) stays itself: only the client reads it."""
    absolute = [name if name == STDIN else os.path.join(directory, name) for name in files]
    given = dict(zip(absolute, files, strict=True))
    events, docs = function(absolute, *rest)
    docs.ids = [given[name] for name in docs.ids]
    return [dataclasses.replace(e, id=given.get(e.id, e.id)) for e in events], docs


def mapper(cluster: Cluster) -> Mapper:
    """A :class:`~simhash_cli.app.batches.Mapper` on the cluster for batches of files (functions
    whose first argument is a list of paths, returning events and a corpus, as
    :func:`fingerprint_batch`): every call a task, the results yielded in order as
    they come (``fingerprint`` and ``index add`` stream them). The cluster's workers are already
    running, so ``work`` does not matter here."""

    def run(
        function: Callable[..., Batch],
        arguments: Iterable[tuple[Any, ...]],
        jobs: int,
        /,
        *,
        work: float | None = None,
    ) -> Iterator[Batch]:
        client, here = cluster.client, os.getcwd()
        with reported():
            futures = [
                client.submit(batch_as_given, here, function, *args, pure=False)
                for args in arguments
            ]
            for future in futures:
                yield cluster.result(future)
                future.release()

    return run
