"""The same dedupe on a Dask cluster (``--engine dask``): the core's stage functions, run
partition by partition on the workers; only paths, parameters and arrays travel.

partitions of files (or blocks of JSON Lines, row groups of Parquet) -> fingerprints (and
vectors) by the same functions as locally (:func:`fingerprint_batch`, ``from_*_records``)
-> for each table of the scheme, every row routed by its key (:func:`.tables.key_buckets`):
a shuffle -> in each bucket, copies collapsed, the pairs sharing this table's key and no
earlier one (:func:`.tables.shared_key_chunks`) spread over the copies and verified
(:func:`verify_candidates`) -> the pairs back to the client -> clusters.

A pair sharing several keys is found in the first table only, and every copy of a
fingerprint lands in the same bucket of every table, so the buckets' pairs add up to exactly
the local engine's. The client holds the documents' ids and fingerprints (the plan, the
summary and the output need them), never their text or vectors.

Needs the ``distributed`` extra: ``pip install 'simhash-cli[distributed]'``.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import socket
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...app.batches import MAX_BATCH_FILES, Mapper, fingerprint_batch, report_batches
from ...app.records import (
    from_fingerprint_records,
    from_text_records,
    from_vector_records,
    skipping,
)
from ...core import blocking, tables
from ...core import cluster as clustering
from ...core.corpus import Corpus, Settings, collecting, concatenate
from ...core.events import Event, OnEvent, Skipped
from ...core.fingerprint import feature_keys, n_words
from ...core.search import DedupeConfig, DedupeResult, check_config, choose_scheme, dedupe_result
from ...core.tokenizer import TokenizerConfig
from ...core.vectorize import Weighting
from ...core.verifier import (
    CandidateCount,
    Verifier,
    pair_budget_error,
    sorted_pairs,
    verify_candidates,
)
from ...core.verify import ScoredPairs, Verify
from ...errors import (
    InputError,
    ParameterError,
    PathNotFoundError,
    SettingsMismatchError,
    SimhashError,
)
from ...io.sources import parquet
from ...io.sources.files import DEFAULT_POLICY, STDIN, ReadPolicy, list_files
from ...io.sources.records import RecordKind, block_lines, parse_lines

__all__ = [
    "EXTRA_MISSING",
    "Cluster",
    "OnCluster",
    "Vectors",
    "WorkerLostError",
    "check_source",
    "connect",
    "dedupe",
    "dedupe_corpus",
    "dedupe_paths",
    "dedupe_records",
    "mapper",
    "read_paths",
    "read_records",
    "send_corpus",
]

EXTRA_MISSING = "--engine dask needs the distributed extra: pip install 'simhash-cli[distributed]'"
# Documents per partition when a corpus read here is sent to the cluster.
PARTITION_DOCS = 100_000
# Files per partition: a task of about a second, and enough partitions to keep every
# worker busy (four each).
MIN_PARTITION_FILES = 200
MAX_PARTITION_FILES = MAX_BATCH_FILES
MAX_BUCKETS = 256
# Rows a bucket task holds, summed over the tables (16 bytes each, and the vector when exact).
BUCKET_ROWS = 4_000_000
# Pairs brought to the client at the most (about 40 bytes each); past this many they stay on
# the workers: components found there in rounds, pairs read back in order as they are written.
CLIENT_PAIRS = 20_000_000
CONNECT_TIMEOUT = 10


class WorkerLostError(SimhashError):
    """A worker died (killed, or out of memory) while it held or ran a task of ours."""


@dataclass(frozen=True)
class Cluster:
    """A client connected to a cluster: the one it started (``owned``) or an existing one."""

    client: Any
    workers: int
    dashboard: str | None
    owned: bool


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ParameterError(EXTRA_MISSING) from exc
    return distributed


@contextmanager
def connect(scheduler: str | None = None, workers: int | None = None) -> Iterator[Cluster]:
    """A client of the cluster at ``scheduler`` (``tcp://HOST:PORT``), or of a new local
    cluster of ``workers`` processes (default: one per core) bound to 127.0.0.1, its
    dashboard too (on a free port, when bokeh is installed), closed on exit.

    Raises:
        ParameterError: the extra is not installed; ``workers`` given with ``scheduler``.
        SimhashError: the scheduler cannot be reached, or has no workers.
    """
    distributed = _import_distributed()
    if scheduler is not None:
        if workers is not None:
            raise ParameterError("--workers starts a local cluster; it goes without --scheduler")
        try:
            _knock(scheduler)
            client = distributed.Client(scheduler, timeout=f"{CONNECT_TIMEOUT}s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise SimhashError(f"cannot reach the dask scheduler at {scheduler}: {exc}") from exc
        try:
            count = len(client.scheduler_info()["workers"])
            if count == 0:
                # Tasks would wait for a worker for ever.
                raise SimhashError(f"the dask cluster at {scheduler} has no workers")
            yield Cluster(client, count, client.dashboard_link, owned=False)
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


def _knock(scheduler: str) -> None:
    """Open and close a TCP connection to a ``tcp://`` scheduler: a refused or unknown
    address fails at once, where the client would retry until its timeout."""
    parts = urllib.parse.urlsplit(scheduler)
    if parts.scheme == "tcp":
        if parts.hostname is None or parts.port is None:
            raise ValueError("expected tcp://HOST:PORT")
        socket.create_connection((parts.hostname, parts.port), CONNECT_TIMEOUT).close()


def _dashboard(client: Any) -> str | None:
    """The dashboard's address, when it runs (it needs bokeh)."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return None
    return cast(str, client.dashboard_link)


@contextmanager
def _reported() -> Iterator[None]:
    """A dead worker as one clear error, never a hang or a traceback."""
    distributed = _import_distributed()
    try:
        yield
    except distributed.KilledWorker as exc:
        raise WorkerLostError(
            f"a dask worker died while running a task of ours ({exc.task}): killed, or out "
            "of memory; the workers' logs say which (smaller partitions need less memory)"
        ) from exc
    except distributed.comm.CommClosedError as exc:
        raise WorkerLostError(f"the dask cluster went away: {exc}") from exc


# ------------------------------------------------------------------ what tasks carry


@dataclass(frozen=True)
class Vectors:
    """Weight vectors over 64-bit feature keys (:func:`~simhash_cli.fingerprint.feature_keys`),
    rows like a CSR matrix: vectors made on different workers compare without a shared
    vocabulary."""

    indptr: NDArray[np.int64]
    keys: NDArray[np.uint64]
    values: NDArray[np.float64]

    @classmethod
    def of(cls, weights: sp.csr_array, features: Sequence[str]) -> Vectors:
        """Rows of a weight matrix whose columns are named by ``features``."""
        csr = sp.csr_array(weights)
        return cls(
            csr.indptr.astype(np.int64),
            feature_keys(features)[csr.indices],
            csr.data.astype(np.float64),
        )

    def take(self, rows: NDArray[np.int64]) -> Vectors:
        """The vectors of ``rows``, in that order."""
        sizes = np.diff(self.indptr)[rows]
        indptr = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        entries = np.repeat(self.indptr[rows] - indptr[:-1], sizes) + np.arange(indptr[-1])
        return Vectors(indptr, self.keys[entries], self.values[entries])

    @staticmethod
    def join(parts: Sequence[Vectors]) -> Vectors:
        """The rows of all parts, in order."""
        sizes = np.concatenate([np.diff(part.indptr) for part in parts])
        indptr = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        return Vectors(
            indptr,
            np.concatenate([part.keys for part in parts]),
            np.concatenate([part.values for part in parts]),
        )

    def matrix(self) -> sp.csr_array:
        """A CSR matrix whose columns are the distinct keys of these rows."""
        keys, columns = np.unique(self.keys, return_inverse=True)
        return sp.csr_array(
            (self.values, columns.ravel(), self.indptr),
            shape=(self.indptr.size - 1, keys.size),
        )


@dataclass(frozen=True)
class Part:
    """A partition of documents as fingerprinted on a worker: the events of its reading, its
    documents (without vectors) and, for exact verification, their vectors."""

    events: list[Event]
    docs: Corpus
    vectors: Vectors | None

    @classmethod
    def of(cls, events: list[Event], docs: Corpus, keep_vectors: bool) -> Part:
        """``docs`` without their weight matrix, and with their vectors when
        ``keep_vectors`` (then ``docs`` must have weights)."""
        vectors = None
        if keep_vectors:
            assert docs.weights is not None
            vectors = Vectors.of(docs.weights, docs.features)
        return cls(events, dataclasses.replace(docs, weights=None, features=[]), vectors)


@dataclass(frozen=True)
class Piece:
    """The rows of one partition that go to one bucket of one table."""

    rows: NDArray[np.int64]
    fingerprints: NDArray[np.uint64]
    vectors: Vectors | None


@dataclass(frozen=True)
class Search:
    """What every bucket task needs to know about the run."""

    settings: Settings
    config: DedupeConfig
    tables: list[tuple[int, ...]]
    blocks: int
    max_distance: int | None

    def key(self, table: int) -> blocking.Key:
        """The bit ranges of table ``table``'s key."""
        return tables.table_key(self.settings.bits, self.blocks, self.tables[table])


@dataclass(frozen=True)
class Found:
    """A bucket's outcome: the pairs it kept (global rows) and what it counted."""

    pairs: ScoredPairs
    candidates: int
    checked: int
    key_pairs: int


# ------------------------------------------------------------------ tasks (on workers)


Batch = tuple[list[Event], Corpus]


def _batch_as_given(
    directory: str, function: Callable[..., Batch], files: list[str], *rest: Any
) -> Batch:
    """``function(files, *rest)`` on the paths made absolute against the client's working
    directory ``directory`` (a worker's own may differ), its ids and events named as the
    client gave them."""
    absolute = [os.path.join(directory, name) for name in files]
    given = dict(zip(absolute, files, strict=True))
    events, docs = function(absolute, *rest)
    docs.ids = [given[name] for name in docs.ids]
    return [dataclasses.replace(e, id=given.get(e.id, e.id)) for e in events], docs


def _fingerprint_part(
    directory: str,
    files: list[str],
    tokenizer: TokenizerConfig,
    weighting: Weighting,
    settings: Settings,
    policy: ReadPolicy,
    keep_vectors: bool,
) -> Part:
    events, batch = _batch_as_given(
        directory,
        fingerprint_batch,
        files,
        tokenizer,
        weighting,
        settings,
        policy,
        False,
        keep_vectors,
    )
    return Part.of(events, batch, keep_vectors)


def _head(part: Part) -> tuple[list[Event], Corpus]:
    return part.events, part.docs


def _count_lines(data: bytes) -> int:
    """Lines of a block as :func:`block_lines` splits them (universal newlines), counted
    on the bytes: no UTF-8 sequence holds a CR or LF byte, and a block never ends between the CR
    and LF of one line end (blocks end after an LF)."""
    ends = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
    return ends + (1 if data and data[-1:] not in (b"\n", b"\r") else 0)


@dataclass(frozen=True)
class Records:
    """What every records task needs to know: the input's kind and how to fingerprint it."""

    kind: RecordKind
    settings: Settings
    tokenizer: TokenizerConfig
    weighting: Weighting
    skip_bad_lines: bool
    keep_vectors: bool


def _records_part(
    data: bytes, name: str, first_line: int, first_block: bool, records: Records
) -> Part:
    """A block of a JSON Lines input: its records parsed as the file's reader would (line
    numbers from ``first_line``), fingerprinted as the local engine does."""
    events: list[Event] = []
    skipped: list[Skipped] = []
    on_bad_line = skipping(events.append, skipped) if records.skip_bad_lines else None
    lines = block_lines(data, name, first_line, first_block=first_block)
    parsed = parse_lines(lines, name, first_line, records.kind, on_bad_line)
    return _part_of(parsed, events, skipped, records)


def _parquet_part(url: str, name: str, row_group: int, first_row: int, records: Records) -> Part:
    """A row group of a Parquet input, as :func:`_records_part` a block of JSON Lines."""
    events: list[Event] = []
    skipped: list[Skipped] = []
    on_bad_line = skipping(events.append, skipped) if records.skip_bad_lines else None
    parsed = parquet.read_records(
        url,
        records.kind,
        name=name,
        row_group=row_group,
        first_row=first_row,
        on_bad_line=on_bad_line,
    )
    return _part_of(parsed, events, skipped, records)


def _part_of(
    parsed: Sequence[Any],
    events: list[Event],
    skipped: list[Skipped],
    records: Records,
) -> Part:
    """Records fingerprinted as the local engine does, with the events of their reading."""
    settings = records.settings
    if records.kind == "texts":
        docs = from_text_records(
            parsed, settings, records.tokenizer, records.weighting, events.append, skipped
        )
    elif records.kind == "vectors":
        docs = from_vector_records(parsed, settings, events.append, skipped)
    elif parsed:
        docs = from_fingerprint_records(parsed, events.append, skipped)
    else:
        empty = np.zeros((0, n_words(settings.bits)), np.uint64)
        docs = Corpus([], empty, np.zeros(0, np.int64), settings)
    return Part.of(events, docs, records.keep_vectors)


def _split(part: Part, offset: int, search: Search, n_buckets: int) -> list[list[Piece]]:
    """For each bucket, for each table, the partition's rows whose key in that table goes to
    that bucket (rows ascending)."""
    fingerprints = part.docs.fingerprints
    rows = offset + np.arange(fingerprints.shape[0], dtype=np.int64)
    buckets: list[list[Piece]] = [[] for _ in range(n_buckets)]
    for table in range(len(search.tables)):
        bucket_of = tables.key_buckets(fingerprints, search.key(table), n_buckets)
        order = np.argsort(bucket_of, kind="stable")
        bounds = np.searchsorted(bucket_of[order], np.arange(n_buckets + 1)).tolist()
        for bucket, (lo, hi) in enumerate(itertools.pairwise(bounds)):
            chosen = order[lo:hi]
            vectors = None if part.vectors is None else part.vectors.take(chosen)
            buckets[bucket].append(Piece(rows[chosen], fingerprints[chosen], vectors))
    return buckets


def _pick(buckets: list[list[Piece]], bucket: int) -> list[Piece]:
    return buckets[bucket]


def _search_bucket(pieces: list[list[Piece]], search: Search) -> Found:
    """The pairs of one bucket of every table (``pieces``: per partition, per table), verified:
    the local engine's work on these rows."""
    found = [
        _search_table([by_table[table] for by_table in pieces], table, search)
        for table in range(len(search.tables))
    ]
    return Found(
        sorted_pairs([one.pairs for one in found]),
        sum(one.candidates for one in found),
        sum(one.checked for one in found),
        sum(one.key_pairs for one in found),
    )


def _search_table(pieces: list[Piece], table: int, search: Search) -> Found:
    """The rows of one bucket of one table."""
    rows = np.concatenate([piece.rows for piece in pieces])
    words = np.concatenate([piece.fingerprints for piece in pieces])
    settings, config = search.settings, search.config
    weights = None
    if config.verify is Verify.EXACT:
        weights = Vectors.join([cast(Vectors, piece.vectors) for piece in pieces]).matrix()
    docs = Corpus([""] * rows.size, words, np.ones(rows.size, np.int64), settings, weights)
    copies = blocking.collapse(words, settings.bits)
    key_pairs = tables.key_pair_count(copies.fingerprints, search.key(table))
    if config.max_candidates is not None and key_pairs > config.max_candidates:
        raise blocking.budget_error(
            settings.bits,
            search.blocks,
            search.max_distance,
            key_pairs,
            copies.fingerprints.shape[0],
            config.max_candidates,
        )
    verifier = Verifier(docs, config, sketches=False)
    budget = CandidateCount(config.max_candidates, rows.size)
    chunks = tables.shared_key_chunks(
        copies.fingerprints,
        settings.bits,
        search.blocks,
        search.tables[table],
        max_distance=search.max_distance,
    )
    verify_candidates(verifier, copies, chunks, budget, with_copies=table == 0)
    kept = verifier.finish()
    return Found(
        dataclasses.replace(kept, pairs=rows[kept.pairs]),
        budget.total,
        verifier.checked,
        key_pairs,
    )


def _propose(found: Found, labels: NDArray[np.int64]) -> tuple[NDArray[np.int64], ...]:
    """One round of hooking over a bucket's edges (``labels``: every document's root): where an
    edge joins two trees, the larger root is offered the smaller; the lowest offer per root."""
    edges = found.pairs.pairs
    first, second = labels[edges[:, 0]], labels[edges[:, 1]]
    apart = first != second
    roots = np.maximum(first[apart], second[apart])
    offers = np.minimum(first[apart], second[apart])
    order = np.lexsort((offers, roots))
    roots, offers = roots[order], offers[order]
    lowest = np.concatenate(([True], roots[1:] != roots[:-1])) if roots.size else roots.astype(bool)
    return roots[lowest], offers[lowest]


def _slice(found: Found, start: int, stop: int) -> ScoredPairs:
    return found.pairs.rows(slice(start, stop))


def _counts(found: Found) -> tuple[int, int, int, int]:
    return len(found.pairs), found.candidates, found.checked, found.key_pairs


def _pairs(found: Found) -> ScoredPairs:
    return found.pairs


# ------------------------------------------------------------------ the client's side


def mapper(cluster: Cluster) -> Mapper:
    """A :data:`~simhash_cli.Mapper` on the cluster for batches of files (functions
    whose first argument is a list of paths, returning events and a corpus, as
    :func:`fingerprint_batch`): every call a task, the results yielded in order as
    they come (``fingerprint`` and ``index add`` stream them)."""

    def run(
        function: Callable[..., Batch], arguments: Sequence[tuple[Any, ...]], jobs: int
    ) -> Iterator[Batch]:
        client, here = cluster.client, os.getcwd()
        with _reported():
            futures = [
                client.submit(_batch_as_given, here, function, *args, pure=False)
                for args in arguments
            ]
            for future in futures:
                yield future.result()
                future.release()

    return run


def _partition_files(n_files: int, workers: int) -> int:
    share = -(-n_files // (4 * max(workers, 1)))
    return min(MAX_PARTITION_FILES, max(MIN_PARTITION_FILES, share))


@dataclass(frozen=True)
class OnCluster:
    """Documents fingerprinted on the cluster: what the client holds (ids, fingerprints,
    stamps, skips), and the partitions the workers hold (futures, ``sizes`` documents each, in
    the order of ``docs``), with their vectors when ``vectors``."""

    docs: Corpus
    parts: list[Any]
    sizes: list[int]
    vectors: bool


def dedupe_paths(
    cluster: Cluster, paths: Sequence[str], config: DedupeConfig, **reading: Any
) -> DedupeResult:
    """:func:`read_paths` then :func:`dedupe`: the local engine's result for these files."""
    keep_vectors = config.verify is Verify.EXACT
    return dedupe(cluster, read_paths(cluster, paths, keep_vectors=keep_vectors, **reading), config)


def read_paths(
    cluster: Cluster,
    paths: Sequence[str],
    *,
    settings: Settings,
    tokenizer: TokenizerConfig,
    weighting: Weighting,
    keep_vectors: bool,
    policy: ReadPolicy = DEFAULT_POLICY,
    on_event: OnEvent = lambda event: None,
    on_listed: Callable[[int], None] | None = None,
    on_read: Callable[[], None] | None = None,
    partition_files: int | None = None,
) -> OnCluster:
    """Files listed here (the workers must see the same paths) and read, tokenized and
    fingerprinted by the workers, ``partition_files`` to a task.

    Raises:
        ParameterError: tfidf (its weights need the whole corpus), standard input.
        WorkerLostError: a worker died.
    """
    if weighting is Weighting.TFIDF:
        raise ParameterError("--engine dask does not offer tfidf (its weights need the corpus)")
    if STDIN in paths:
        raise ParameterError("--engine dask reads files the workers can open, not standard input")
    listing: list[Skipped] = []
    files = list_files(paths, collecting(on_event, listing), follow_symlinks=policy.follow_symlinks)
    if on_listed is not None:
        on_listed(len(files))
    size = partition_files or _partition_files(len(files), cluster.workers)
    batches = [files[i : i + size] for i in range(0, len(files), size)]
    client = cluster.client
    with _reported():
        parts = [
            client.submit(
                _fingerprint_part,
                os.getcwd(),
                batch,
                tokenizer,
                weighting,
                settings,
                policy,
                keep_vectors,
                pure=False,
            )
            for batch in batches
        ]
        heads = (client.submit(_head, part).result() for part in parts)
        docs_parts = list(report_batches(batches, heads, on_event, on_read, listing))
    if docs_parts:
        docs = concatenate(docs_parts)
    else:
        width = n_words(settings.bits)
        docs = Corpus([], np.zeros((0, width), np.uint64), np.zeros(0, np.int64), settings)
        docs.skipped = listing
    return OnCluster(docs, parts, [len(part) for part in docs_parts], keep_vectors)


BLOCK_BYTES = 32 * 2**20


def dedupe_records(
    cluster: Cluster, source: str, kind: RecordKind, config: DedupeConfig, **reading: Any
) -> DedupeResult:
    """:func:`read_records` then :func:`dedupe`: the local engine's result for these records."""
    keep_vectors = config.verify is Verify.EXACT and kind != "fingerprints"
    fingerprinted = read_records(cluster, source, kind, keep_vectors=keep_vectors, **reading)
    return dedupe(cluster, fingerprinted, config)


def read_records(
    cluster: Cluster,
    source: str,
    kind: RecordKind,
    *,
    settings: Settings,
    keep_vectors: bool,
    tokenizer: TokenizerConfig | None = None,
    weighting: Weighting = Weighting.TF,
    on_event: OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    check_settings: Callable[[Settings], None] | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> OnCluster:
    """JSON Lines records (``kind``: texts, vectors or fingerprints) read by the workers a
    block of ``block_bytes`` at a time, or Parquet (``.parquet``) a row group at a time: a
    local path, a glob, or a URL that fsspec opens on the workers (s3://, gs://, https://, with
    that file system's package installed). ``check_settings`` is shown the settings of
    fingerprint records.

    Raises:
        PathNotFoundError: no such file. InputError: one that cannot be read, a malformed
        line (naming file and line), fingerprints made with different settings.
    """
    job = Records(
        kind, settings, tokenizer or TokenizerConfig(), weighting, skip_bad_lines, keep_vectors
    )
    with _reported():
        if parquet.is_parquet(source):
            parts = _parquet_parts(cluster, source, job)
        else:
            parts = _json_lines_parts(cluster, source, job, block_bytes)
        heads = (cluster.client.submit(_head, part).result() for part in parts)
        everything = list(report_batches([[]] * len(parts), heads, on_event, None, []))
    kept = [(part, docs) for part, docs in zip(parts, everything, strict=True) if len(docs)]
    skipped = [skip for docs in everything for skip in docs.skipped]
    if kind == "fingerprints":
        if not kept:
            raise InputError(f"no fingerprint records in {source}")
        settings = _same_settings([docs for _, docs in kept])
        if check_settings is not None:
            check_settings(settings)
    if kept:
        docs = concatenate(docs for _, docs in kept)
    else:
        width = n_words(settings.bits)
        docs = Corpus([], np.zeros((0, width), np.uint64), np.zeros(0, np.int64), settings)
    docs.skipped = skipped
    sizes = [len(docs_part) for _, docs_part in kept]
    return OnCluster(docs, [part for part, _ in kept], sizes, keep_vectors)


def check_source(source: str) -> None:
    """A local path that does not exist, refused before a cluster is started (a URL or a glob
    is the workers' to open).

    Raises:
        PathNotFoundError: no such file.
    """
    local = "://" not in source and not any(char in source for char in "*?[")
    if local and not os.path.exists(source):
        raise PathNotFoundError(f"no such file or directory: {source}")


def _json_lines_parts(cluster: Cluster, source: str, job: Records, block_bytes: int) -> list[Any]:
    """Futures of the parts of a JSON Lines input, a block of bytes each: the blocks' lines
    counted first, so that each part knows the number of its first line."""
    from dask.bytes.core import read_bytes

    try:
        _, per_file, names = read_bytes(  # type: ignore[no-untyped-call]
            source, delimiter=b"\n", blocksize=block_bytes, sample=False, include_path=True
        )
    except FileNotFoundError:
        raise PathNotFoundError(f"no such file or directory: {source}") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {source}: {exc}") from None
    if not per_file:
        raise PathNotFoundError(f"no such file or directory: {source}")
    if len(per_file) == 1:
        names = [source]  # named as given, as the local reader names it
    client = cluster.client
    blocks = [
        (name, n, block)
        for name, file in zip(names, per_file, strict=True)
        for n, block in enumerate(file)
    ]
    data = client.compute([block for _, _, block in blocks])
    counts = client.gather([client.submit(_count_lines, one) for one in data])
    parts, first_line = [], 1
    for one, (name, n, _), count in zip(data, blocks, counts, strict=True):
        first_line = 1 if n == 0 else first_line
        parts.append(client.submit(_records_part, one, name, first_line, n == 0, job))
        first_line += count
    return parts


def _parquet_parts(cluster: Cluster, source: str, job: Records) -> list[Any]:
    """Futures of the parts of a Parquet input (a path, glob or URL), a row group each (the
    files' footers are read here)."""
    import fsspec

    try:
        fs, _, paths = fsspec.core.get_fs_token_paths(source)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {source}: {exc}") from None
    if not paths:
        raise PathNotFoundError(f"no such file or directory: {source}")
    urls = [fs.unstrip_protocol(path) if "://" in source else path for path in paths]
    names = [source] if len(urls) == 1 else urls
    parts = []
    for url, name in zip(urls, names, strict=True):
        first_row = 1
        for group, rows in enumerate(parquet.row_groups(url)):
            parts.append(cluster.client.submit(_parquet_part, url, name, group, first_row, job))
            first_row += rows
    return parts


def _same_settings(parts: list[Corpus]) -> Settings:
    """The settings of fingerprint records read in parts (each part's are its own)."""
    first = parts[0]
    for part in parts[1:]:
        if part.settings != first.settings:
            raise SettingsMismatchError(
                f"fingerprints made with different settings cannot be compared: "
                f"{first.ids[0]!r} has {first.settings.describe()}, "
                f"{part.ids[0]!r} has {part.settings.describe()}"
            )
    return first.settings


def dedupe_corpus(
    cluster: Cluster,
    docs: Corpus,
    config: DedupeConfig,
    *,
    partition_docs: int = PARTITION_DOCS,
) -> DedupeResult:
    """:func:`send_corpus` then :func:`dedupe`: the local engine's result for these documents."""
    check_config(docs, config, has_vectors=docs.weights is not None)
    keep_vectors = config.verify is Verify.EXACT
    sent = send_corpus(cluster, docs, keep_vectors=keep_vectors, partition_docs=partition_docs)
    return dedupe(cluster, sent, config)


def send_corpus(
    cluster: Cluster, docs: Corpus, *, keep_vectors: bool, partition_docs: int = PARTITION_DOCS
) -> OnCluster:
    """Documents read here (fingerprints, or vectors) sent to the cluster in partitions of
    ``partition_docs``, with their vectors when ``keep_vectors``."""
    client = cluster.client
    parts, sizes = [], []
    with _reported():
        for start in range(0, len(docs), partition_docs):
            rows = np.arange(start, min(start + partition_docs, len(docs)), dtype=np.int64)
            parts.append(client.scatter(Part.of([], docs.select(rows), keep_vectors)))
            sizes.append(rows.size)
    return OnCluster(docs, parts, sizes, keep_vectors)


def dedupe(cluster: Cluster, fingerprinted: OnCluster, config: DedupeConfig) -> DedupeResult:
    """The shuffle and the buckets' search over documents already on the cluster.

    Raises:
        ParameterError: an audit, empty documents, exact verification without vectors.
        CandidateBudgetError, PairBudgetError: as the local engine, over the whole run.
        WorkerLostError: a worker died.
    """
    docs, parts, sizes = fingerprinted.docs, fingerprinted.parts, fingerprinted.sizes
    if config.audit:
        raise ParameterError("--audit compares all pairs in one process: use the local engine")
    if np.any(docs.n_features == 0):
        raise ParameterError("--engine dask does not take --include-empty yet")
    check_config(docs, config, has_vectors=fingerprinted.vectors)
    bits = docs.settings.bits
    scheme, planned = choose_scheme(docs, config)
    if len(docs) < 2:
        none = sorted_pairs([])
        return dedupe_result(docs, config, scheme, planned, 0, 0, none)
    keys = tables.scheme_tables(bits, scheme.blocks, scheme.max_distance)
    search = Search(docs.settings, config, keys, scheme.blocks, scheme.max_distance)
    offsets = (np.cumsum(sizes) - sizes).tolist()
    # Buckets: two per worker at least, and about BUCKET_ROWS rows (of all tables) each.
    wanted = -(-len(docs) * len(keys) // BUCKET_ROWS)
    n_buckets = min(MAX_BUCKETS, max(2 * cluster.workers, wanted))
    client = cluster.client
    with _reported():
        splits = [
            client.submit(_split, part, offset, search, n_buckets)
            for part, offset in zip(parts, offsets, strict=True)
        ]
        found = [
            client.submit(
                _search_bucket, [client.submit(_pick, split, bucket) for split in splits], search
            )
            for bucket in range(n_buckets)
        ]
        counts = client.gather([client.submit(_counts, one) for one in found])
        kept, candidates, checked, key_pairs = (sum(column) for column in zip(*counts, strict=True))
        _check_budgets(docs, config, scheme, kept, candidates, key_pairs)
        if kept > CLIENT_PAIRS:
            # Too many edges to hold here: they stay on the workers, the components are found
            # there in rounds, and the pairs come back in order a chunk at a time, to be written.
            sizes_of = [count[0] for count in counts]
            labels = _labels_in_rounds(cluster, found, len(docs))
            streamed = StreamedPairs(cluster, found, sizes_of, len(docs))
            return dedupe_result(
                docs,
                config,
                scheme,
                planned,
                candidates,
                checked,
                streamed,
                clusters=clustering.clusters_of_labels(labels),
            )
        pairs = sorted_pairs(client.gather([client.submit(_pairs, one) for one in found]))
    del splits, found
    return dedupe_result(docs, config, scheme, planned, candidates, checked, pairs)


def _labels_in_rounds(cluster: Cluster, found: list[Any], n_docs: int) -> NDArray[np.int64]:
    """Connected components of the edges held by the buckets, without bringing them here
    (Shiloach and Vishkin's hooking and pointer jumping): every document points to a root,
    at first itself; each round the roots go to every bucket, which offers each root joined
    by an edge to a smaller one that smaller one; each root takes its lowest offer, and every
    document then follows its pointers to its new root. When no edge joins two roots, each
    document's root is the smallest member of its component. The roots fall fast: a chain
    of 100,000 documents in random order takes 11 rounds (3,000: 9), not 100,000."""
    client = cluster.client
    labels = np.arange(n_docs, dtype=np.int64)
    while True:
        shared = client.scatter(labels, broadcast=True)
        offers = client.gather([client.submit(_propose, one, shared) for one in found])
        roots = np.concatenate([root for root, _ in offers])
        if roots.size == 0:
            return labels
        np.minimum.at(labels, roots, np.concatenate([offer for _, offer in offers]))
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped


class StreamedPairs(ScoredPairs):
    """Pairs that stay on the workers, sorted in each bucket, read in order a chunk at a time
    (:meth:`chunks`: a merge of the buckets' sorted runs); the arrays themselves are empty."""

    _where: tuple[Cluster, list[Any], list[int], int]

    def __init__(self, cluster: Cluster, found: list[Any], sizes: list[int], n_docs: int):
        empty = np.zeros(0, np.float64)
        super().__init__(np.zeros((0, 2), np.int64), np.zeros(0, np.int64), empty, empty)
        object.__setattr__(self, "_where", (cluster, found, sizes, n_docs))

    def __len__(self) -> int:
        return int(sum(self._where[2]))

    def chunks(self, size: int) -> Iterator[ScoredPairs]:
        """All pairs in order (as the local engine sorts them), about ``size`` per bucket at
        a time: the buckets' sorted runs merged, never more than a chunk of each held here."""
        cluster, found, sizes, n_docs = self._where
        client = cluster.client
        read = [0] * len(found)
        held = [_nothing() for _ in found]

        def codes(pairs: ScoredPairs) -> NDArray[np.int64]:
            coded: NDArray[np.int64] = pairs.pairs[:, 0] * np.int64(n_docs) + pairs.pairs[:, 1]
            return coded

        with _reported():
            while True:
                for bucket, one in enumerate(found):
                    if len(held[bucket]) == 0 and read[bucket] < sizes[bucket]:
                        stop = min(read[bucket] + size, sizes[bucket])
                        held[bucket] = client.submit(_slice, one, read[bucket], stop).result()
                        read[bucket] = stop
                live = [bucket for bucket in range(len(found)) if len(held[bucket])]
                if not live:
                    return
                # A bucket with pairs still unread has none below the last it holds: every
                # pair up to the lowest such last one can go out now.
                open_ = [int(codes(held[b])[-1]) for b in live if read[b] < sizes[b]]
                bound = min(open_) if open_ else None
                out = []
                for bucket in live:
                    taken = len(held[bucket])
                    if bound is not None:
                        taken = int(np.searchsorted(codes(held[bucket]), bound, side="right"))
                    out.append(held[bucket].rows(slice(0, taken)))
                    held[bucket] = held[bucket].rows(slice(taken, None))
                yield sorted_pairs(out)


def _nothing() -> ScoredPairs:
    return sorted_pairs([])


def _check_budgets(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Any,
    kept: int,
    candidates: int,
    key_pairs: int,
) -> None:
    """The local engine's budgets over the whole run (each bucket checked its own share)."""
    limit = config.max_candidates
    if limit is not None and key_pairs > limit:
        n_distinct = blocking.collapse(docs.fingerprints, docs.settings.bits).fingerprints.shape[0]
        raise blocking.budget_error(
            docs.settings.bits, scheme.blocks, scheme.max_distance, key_pairs, n_distinct, limit
        )
    CandidateCount(limit, len(docs)).add(candidates)
    if config.max_pairs is not None and kept > config.max_pairs:
        raise pair_budget_error(config, docs)
