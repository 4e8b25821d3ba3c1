"""Reading on the dask engine: files, JSON Lines blocks and Parquet row groups fingerprinted by
the workers as the local engine does (the same functions), each partition kept there with its
vectors when exact verification needs them; the client gets ids, fingerprints and stamps."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...app.batches import (
    MAX_BATCH_FILES,
    batches_of,
    fingerprint_batch,
    listing,
    report_batches,
)
from ...app.records import (
    from_fingerprint_records,
    from_text_records,
    from_vector_records,
    skipping,
)
from ...core.corpus import DEFAULT_ADMISSION, Admission, Corpus, Settings, concatenate
from ...core.events import Event, OnEvent, Skipped
from ...core.sketch.fingerprint import feature_keys, n_words
from ...core.text.keyed import Vectors
from ...errors import (
    InputError,
    MalformedLineError,
    PathNotFoundError,
    SettingsMismatchError,
)
from ...io.sources import parquet
from ...io.sources.fields import DEFAULT_FIELDS, Fields
from ...io.sources.files import DEFAULT_MAX_BYTES, DEFAULT_POLICY, STDIN, ReadPolicy
from ...io.sources.records import (
    IdPlaces,
    RecordKind,
    UniqueIds,
    duplicate_ids,
    repeated_id,
)
from ...io.sources.shards import holds_parquet
from .blocks import Block, Lines, RowGroup, blocks_of, count_lines, files_of, read_block
from .cluster import Cluster, batch_as_given, reported

__all__ = [
    "BLOCK_BYTES",
    "OnCluster",
    "Part",
    "Records",
    "check_source",
    "read_paths",
    "read_records",
    "send_corpus",
]


# Documents per partition when a corpus read here is sent to the cluster.
PARTITION_DOCS = 100_000


# Files per partition: a task of about a second, and enough partitions to keep every
# worker busy (four each).
MIN_PARTITION_FILES = 200


MAX_PARTITION_FILES = MAX_BATCH_FILES


@dataclass(frozen=True)
class Part:
    """A partition of documents as fingerprinted on a worker: the events of its reading, its
    documents (without vectors) and, for exact verification, their vectors, with the name of
    each feature key (``names``: the keys ascending, and their features)."""

    events: list[Event]
    docs: Corpus
    vectors: Vectors | None
    names: tuple[NDArray[np.uint64], list[str]] | None = None

    @classmethod
    def of(cls, events: list[Event], docs: Corpus, keep_vectors: bool) -> Part:
        """``docs`` without their weight matrix, and with their vectors when
        ``keep_vectors`` (then ``docs`` must have weights)."""
        vectors, names = None, None
        if keep_vectors:
            assert docs.weights is not None
            vectors = Vectors.of(docs.weights, docs.features)
            keys = feature_keys(docs.features)
            order = np.argsort(keys, kind="stable")
            names = (keys[order], [docs.features[k] for k in order.tolist()])
        return cls(events, dataclasses.replace(docs, weights=None, features=[]), vectors, names)

    def named(self, keys: NDArray[np.uint64]) -> list[str]:
        """The features of some of this partition's keys (ascending)."""
        assert self.names is not None
        known, names = self.names
        places: list[int] = np.searchsorted(known, keys).tolist()
        return [names[k] for k in places]


def _fingerprint_part(
    directory: str,
    files: list[str],
    settings: Settings,
    policy: ReadPolicy,
    keep_vectors: bool,
    admission: Admission = DEFAULT_ADMISSION,
) -> Part:
    events, batch = batch_as_given(
        directory, fingerprint_batch, files, settings, policy, admission, keep_vectors
    )
    return Part.of(events, batch, keep_vectors)


def _head(part: Part) -> tuple[list[Event], Corpus]:
    return part.events, part.docs


@dataclass(frozen=True)
class Records:
    """What every records task needs to know: the input's kind, its line bound and how to
    fingerprint it."""

    kind: RecordKind
    settings: Settings
    skip_bad_lines: bool
    keep_vectors: bool
    max_line: int | None
    fields: Fields = DEFAULT_FIELDS
    admission: Admission = DEFAULT_ADMISSION


Piece = Lines | RowGroup


def _records_part(piece: Piece, records: Records) -> Part:
    """A block of JSON Lines or a row group of Parquet: its records parsed as the file's reader
    would (lines and rows numbered in the whole file), fingerprinted as the local engine does."""
    events: list[Event] = []
    skipped: list[Skipped] = []
    on_bad_line = skipping(events.append, skipped) if records.skip_bad_lines else None
    parsed = piece.parse(records.kind, records.max_line, on_bad_line, UniqueIds(), records.fields)
    return _part_of(parsed, events, skipped, records)


def _places(piece: Piece, records: Records, doc_id: str) -> list[str]:
    """Where in ``piece`` the id ``doc_id`` was given (its records read again)."""
    places = IdPlaces(doc_id)
    piece.parse(records.kind, records.max_line, lambda error: None, places, records.fields)
    return places.places


def _part_of(
    parsed: Sequence[Any],
    events: list[Event],
    skipped: list[Skipped],
    records: Records,
) -> Part:
    """Records fingerprinted as the local engine does, with the events of their reading."""
    settings = records.settings
    if records.kind == "texts":
        docs = from_text_records(parsed, settings, events.append, skipped, records.admission)
    elif records.kind == "vectors":
        docs = from_vector_records(parsed, settings, events.append, skipped, records.admission)
    elif parsed:
        docs = from_fingerprint_records(parsed, events.append, skipped, records.admission)
    else:
        empty = np.zeros((0, n_words(settings.bits)), np.uint64)
        docs = Corpus([], empty, np.zeros(0, np.int64), settings)
    return Part.of(events, docs, records.keep_vectors)


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


def read_paths(
    cluster: Cluster,
    paths: Sequence[str],
    *,
    settings: Settings,
    keep_vectors: bool,
    policy: ReadPolicy = DEFAULT_POLICY,
    on_event: OnEvent = lambda event: None,
    on_listed: Callable[[int], None] | None = None,
    on_read: Callable[[], None] | None = None,
    partition_files: int | None = None,
    admission: Admission = DEFAULT_ADMISSION,
) -> OnCluster:
    """Files listed here (the workers must see the same paths) and read, tokenized and
    fingerprinted by the workers, ``partition_files`` to a task (the documents the
    ``admission`` takes); the partition holding standard input (``-``) is read
    here and sent.

    Raises:
        WorkerLostError: a worker died.
    """
    skipped: list[Skipped] = []
    files = listing(paths, on_event, skipped, policy=policy, on_listed=on_listed).files
    size = partition_files or _partition_files(len(files), cluster.workers)
    batches = batches_of(files, size)
    client, here = cluster.client, os.getcwd()
    job = (settings, policy, keep_vectors, admission)
    with reported():
        # The batch holding standard input (``-``) is read here, where it is, and sent.
        parts = [
            client.scatter(_fingerprint_part(here, batch, *job), hash=False)
            if STDIN in batch
            else client.submit(_fingerprint_part, here, batch, *job, pure=False)
            for batch in batches
        ]
        heads = (cluster.result(client.submit(_head, part)) for part in parts)
        docs_parts = list(report_batches(batches, heads, on_event, on_read, skipped))
    if docs_parts:
        docs = concatenate(docs_parts)
    else:
        width = n_words(settings.bits)
        docs = Corpus([], np.zeros((0, width), np.uint64), np.zeros(0, np.int64), settings)
        docs.skipped = skipped
    return OnCluster(docs, parts, [len(part) for part in docs_parts], keep_vectors)


BLOCK_BYTES = 32 * 2**20


def read_records(
    cluster: Cluster,
    source: str,
    kind: RecordKind,
    *,
    settings: Settings,
    keep_vectors: bool,
    on_event: OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    check_settings: Callable[[Settings], None] | None = None,
    block_bytes: int = BLOCK_BYTES,
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
    admission: Admission = DEFAULT_ADMISSION,
) -> OnCluster:
    """JSON Lines records (``kind``: texts, vectors or fingerprints) read by the workers a
    block of ``block_bytes`` at a time, or Parquet (``.parquet``) a row group at a time: a
    local path, a glob, or a URL that fsspec opens on the workers (s3://, gs://, https://, with
    that file system's package installed). ``check_settings`` is shown the settings of
    fingerprint records. A line longer than ``max_line`` characters is a malformed line, passed
    over unread. ``fields``: where the records' texts and ids are.

    Raises:
        PathNotFoundError: no such file. InputError: one that cannot be read, a malformed
        line (naming file and line), an id given twice (naming both), fingerprints made with
        different settings.
    """
    job = Records(kind, settings, skip_bad_lines, keep_vectors, max_line, fields, admission)
    with reported():
        if holds_parquet(source):
            pieces = _parquet_pieces(source)
        else:
            pieces = _json_lines_pieces(cluster, source, job, block_bytes)
        parts = [cluster.client.submit(_records_part, piece, job) for piece in pieces]
        heads = (cluster.result(cluster.client.submit(_head, part)) for part in parts)
        everything = list(report_batches([[]] * len(parts), heads, on_event, None, []))
    kept = [(index, docs) for index, docs in enumerate(everything) if len(docs)]
    skipped = [skip for docs in everything for skip in docs.skipped]
    if kind == "fingerprints":
        if not kept:
            raise InputError(f"no fingerprint records in {source}")
        settings = _same_settings([docs for _, docs in kept])
        if check_settings is not None:
            check_settings(settings)
    if kept:
        docs = concatenate(docs for _, docs in kept)
        twice = duplicate_ids(docs.ids)  # each part could check only its own records
        if twice is not None:
            with reported():
                raise _repeated(cluster, job, pieces, kept, twice)
    else:
        width = n_words(settings.bits)
        docs = Corpus([], np.zeros((0, width), np.uint64), np.zeros(0, np.int64), settings)
    docs.skipped = skipped
    sizes = [len(docs_part) for _, docs_part in kept]
    return OnCluster(docs, [parts[index] for index, _ in kept], sizes, keep_vectors)


def check_source(source: str) -> None:
    """A local path that does not exist, refused before a cluster is started (a URL or a glob
    is the workers' to open).

    Raises:
        PathNotFoundError: no such file.
    """
    local = "://" not in source and not any(char in source for char in "*?[")
    if local and not os.path.exists(source):
        raise PathNotFoundError(f"no such file or directory: {source}")


def _json_lines_pieces(
    cluster: Cluster, source: str, job: Records, block_bytes: int
) -> list[Piece]:
    """The blocks of a JSON Lines input, their lines counted by the workers first, so that
    each block knows the number of its first line."""
    blocks = blocks_of(source, block_bytes)
    client = cluster.client
    counts = cluster.gather(
        [client.submit(_count_block, block, job.max_line, pure=False) for block in blocks]
    )
    pieces: list[Piece] = []
    first_line = 1
    for block, count in zip(blocks, counts, strict=True):
        first_line = 1 if block.offset == 0 else first_line
        pieces.append(Lines(block, first_line))
        first_line += count
    return pieces


def _count_block(block: Block, max_line: int | None) -> int:
    return count_lines(read_block(block, max_line))


def _parquet_pieces(source: str) -> list[Piece]:
    """The row groups of a Parquet input (a path, glob or URL; the files' footers are read
    here), each with the number of its first row."""
    pieces: list[Piece] = []
    for url, name, _ in files_of(source):
        first_row = 1
        for group, rows in enumerate(parquet.row_groups(url)):
            pieces.append(RowGroup(url, name, group, first_row))
            first_row += rows
    return pieces


def _repeated(
    cluster: Cluster, job: Records, pieces: list[Piece], kept: list[tuple[int, Corpus]], doc_id: str
) -> MalformedLineError:
    """The error for an id given in two pieces, naming both places (in input order)."""
    holding = [index for index, docs in kept if doc_id in docs.ids]
    found = cluster.gather(
        [cluster.client.submit(_places, pieces[i], job, doc_id, pure=False) for i in holding]
    )
    places = [place for one in found for place in one]
    if len(places) < 2:  # (the input changed while it was read)
        return MalformedLineError(pieces[holding[0]].name, f"the id {doc_id!r} is given twice")
    return repeated_id(doc_id, places[1], places[0])


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


def send_corpus(
    cluster: Cluster, docs: Corpus, *, keep_vectors: bool, partition_docs: int = PARTITION_DOCS
) -> OnCluster:
    """Documents read here (fingerprints, or vectors) sent to the cluster in partitions of
    ``partition_docs``, with their vectors when ``keep_vectors``."""
    client = cluster.client
    parts, sizes = [], []
    with reported():
        for start in range(0, len(docs), partition_docs):
            rows = np.arange(start, min(start + partition_docs, len(docs)), dtype=np.int64)
            # A key of its own (not the data's hash): a second run of the same documents must
            # not take over, or see released, the first one's partitions.
            part = Part.of([], docs.select(rows), keep_vectors)
            parts.append(client.scatter(part, hash=False))
            sizes.append(rows.size)
    return OnCluster(docs, parts, sizes, keep_vectors)
