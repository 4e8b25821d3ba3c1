"""The work of one batch of files, the same on every engine: read, count, weight, fingerprint;
and the batching of a listing (its size and order), done once here for all of them.

An engine supplies a :class:`Mapper`, which runs :func:`fingerprint_batch` over the batches
somewhere (this process, worker processes, a cluster) and yields the results in order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..core.corpus import (
    DEFAULT_ADMISSION,
    Admission,
    Corpus,
    Settings,
    collecting,
    from_counts,
    stamp_array,
    text_settings,
)
from ..core.events import Event, OnEvent, Skipped, Stamp
from ..core.sketch.fingerprint import n_words
from ..core.text.tokenizer import TokenizerConfig
from ..core.text.vectorize import Weighting, count_matrix
from ..errors import ParameterError
from ..io.sources.files import (
    DEFAULT_POLICY,
    STDIN,
    Listed,
    ReadPolicy,
    list_sized,
    read_documents,
)

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_BATCH_FILES",
    "MIN_BATCH_FILES",
    "Mapper",
    "batch_size",
    "batchable",
    "batches_of",
    "count_files",
    "expected_work",
    "file_sizes",
    "fingerprint_batch",
    "fingerprint_files",
    "in_process",
    "iter_fingerprints",
    "listing",
    "report_batches",
]

Result = TypeVar("Result")


class Mapper(Protocol):
    """``mapper(function, arguments, jobs, work=seconds)``: ``function(*args)`` for each
    argument tuple, in order (``arguments`` drawn as the work goes, so that a stream of them is
    never all in memory). ``work`` is how long the whole would take in one process, about (None
    when not known): the local engine starts its workers at once for a long run, and none for
    a short one."""

    def __call__(
        self,
        function: Callable[..., Any],
        arguments: Iterable[tuple[Any, ...]],
        jobs: int,
        /,
        *,
        work: float | None = None,
    ) -> Iterable[Any]: ...


def batchable(settings: Settings) -> tuple[TokenizerConfig, Weighting]:
    """The tokenizer and weighting of text fingerprinted a batch at a time.

    Raises:
        ParameterError: tfidf, whose weights come from the whole corpus, not a batch.
    """
    tokenizer, weighting = text_settings(settings)
    if weighting.corpus_wide:
        raise ParameterError("tfidf weights need the whole corpus; use corpus_from_paths")
    return tokenizer, weighting


def fingerprint_batch(
    files: list[str],
    settings: Settings,
    policy: ReadPolicy,
    admission: Admission = DEFAULT_ADMISSION,
    keep_vectors: bool = False,
) -> tuple[list[Event], Corpus]:
    """One batch read, counted, weighted and fingerprinted as ``settings`` say (in a worker or
    here), with the events of its reading; the vectors come back too with ``keep_vectors``.

    Raises:
        ParameterError: tfidf, whose weights come from the whole corpus, not a batch.
    """
    tokenizer, weighting = batchable(settings)
    # Vectors given back are in their canonical order; fingerprints of whole-number weights
    # alone do not need it, nor the sort of the batch's vocabulary that it takes.
    ordered = keep_vectors or not weighting.whole
    ids, stamps, events, counts, features = count_files(files, tokenizer, policy, ordered=ordered)
    batch = from_counts(
        ids, counts, features, settings, events.append, [], stamps=stamps, admission=admission
    )
    if keep_vectors:
        return events, batch
    return events, Corpus(
        batch.ids, batch.fingerprints, batch.n_features, settings, stamps=batch.stamps
    )


def iter_fingerprints(
    paths: Sequence[str],
    settings: Settings = Settings(),  # noqa: B008 (frozen, shared)
    *,
    on_event: OnEvent = lambda event: None,
    on_listed: Callable[[int], None] | None = None,
    on_read: Callable[[], None] | None = None,
    jobs: int = 1,
    batch_files: int | None = None,
    policy: ReadPolicy = DEFAULT_POLICY,
    admission: Admission = DEFAULT_ADMISSION,
    mapper: Mapper | None = None,
) -> Iterator[Corpus]:
    """Fingerprints of files made as ``settings`` say, batch by batch, in file order: memory
    follows the batch, not the corpus (no vectors are kept). Each batch's documents depend on
    that batch alone, which is why tfidf, whose weights come from the whole corpus, is not
    offered here.

    ``mapper(function, arguments, jobs)`` computes the batches (default: one after the other
    in this process; the local engine's spreads them over ``jobs`` processes); it must yield
    the results in the order of ``arguments``.

    Yields:
        One Corpus per batch (ids, fingerprints, feature counts; weights None).

    Raises:
        ParameterError: tfidf weighting.
        PathNotFoundError: a path does not exist (before anything is read).
    """
    batchable(settings)  # before anything is listed
    skipped: list[Skipped] = []
    listed = listing(paths, on_event, skipped, policy=policy, on_listed=on_listed)
    yield from fingerprint_files(
        listed.files,
        settings,
        sizes=listed.sizes,
        on_event=on_event,
        on_read=on_read,
        jobs=jobs,
        batch_files=batch_files,
        policy=policy,
        admission=admission,
        mapper=mapper,
        listing_skipped=skipped,
    )


def listing(
    paths: Sequence[str],
    on_event: OnEvent,
    skipped: list[Skipped],
    *,
    policy: ReadPolicy = DEFAULT_POLICY,
    distinct: bool = True,
    on_listed: Callable[[int], None] | None = None,
) -> Listed:
    """The files below ``paths``, in order, as every engine and the index list them, each with
    its size as listed: what listing skipped goes to ``on_event`` and into ``skipped``;
    ``on_listed`` is told how many.

    Raises:
        PathNotFoundError: a path does not exist (before anything is read).
    """
    handle = collecting(on_event, skipped)
    listed = list_sized(
        paths,
        handle,
        distinct=distinct,
        follow_symlinks=policy.follow_symlinks,
        selection=policy.selection,
    )
    if on_listed is not None:
        on_listed(len(listed.files))  # the files, not the (files, sizes) pair
    return listed


def fingerprint_files(
    files: list[str],
    settings: Settings,
    *,
    on_event: OnEvent = lambda event: None,
    on_read: Callable[[], None] | None = None,
    jobs: int = 1,
    batch_files: int | None = None,
    policy: ReadPolicy = DEFAULT_POLICY,
    admission: Admission = DEFAULT_ADMISSION,
    mapper: Mapper | None = None,
    listing_skipped: Sequence[Skipped] = (),
    sizes: Sequence[int] | None = None,
) -> Iterator[Corpus]:
    """Listed files fingerprinted batch by batch, in order (see :func:`iter_fingerprints`);
    the first batch carries ``listing_skipped``, the files listing left out. ``sizes``: the
    files' sizes as listed, else asked of the system."""
    batchable(settings)
    per_batch = batch_files or batch_size(len(files), jobs)
    sizes = file_sizes(files) if sizes is None else sizes
    batches = batches_of(files, per_batch, MAX_BATCH_BYTES, sizes)
    if not batches:
        empty = np.zeros((0, n_words(settings.bits)), np.uint64)
        none = stamp_array([])
        skipped = list(listing_skipped)
        yield Corpus([], empty, np.zeros(0, np.int64), settings, skipped=skipped, stamps=none)
        return
    jobs = jobs if STDIN not in files else 1  # standard input is this process's
    arguments = [(batch, settings, policy, admission) for batch in batches]
    work = expected_work(sizes)
    results = (mapper or in_process)(fingerprint_batch, arguments, jobs, work=work)
    yield from report_batches(batches, results, on_event, on_read, list(listing_skipped))


def report_batches(
    batches: list[list[str]],
    results: Iterable[tuple[list[Event], Corpus]],
    on_event: OnEvent,
    on_read: Callable[[], None] | None,
    listing: list[Skipped],
) -> Iterator[Corpus]:
    """Pass each batch's events on, in order; the first batch also carries the files that
    listing skipped, so that the batches' skips add up to the run's."""
    for number, (files, (events, batch)) in enumerate(zip(batches, results, strict=True)):
        for event in events:
            on_event(event)
        if on_read is not None:
            for _ in files:
                on_read()
        skipped = [event for event in events if isinstance(event, Skipped)]
        batch.skipped = (listing if number == 0 else []) + skipped
        yield batch


def count_files(
    files: list[str],
    tokenizer: TokenizerConfig,
    policy: ReadPolicy = DEFAULT_POLICY,
    on_event: OnEvent | None = None,
    on_read: Callable[[], None] | None = None,
    *,
    ordered: bool = True,
) -> tuple[list[str], NDArray[np.void], list[Event], sp.csr_array, list[str]]:
    """Read and count files: (ids read, their stamps, events, term counts, their columns, in
    canonical order unless not ``ordered``: see
    :func:`~simhash_cli.core.text.vectorize.count_matrix`).
    In a worker the events are collected and returned; given ``on_event`` they go there as
    they happen."""
    events: list[Event] = []
    ids: list[str] = []
    stamps: list[Stamp] = []

    def texts() -> Iterator[str]:
        documents = read_documents(files, on_event or events.append, on_read=on_read, policy=policy)
        for document in documents:
            ids.append(document.id)
            stamps.append(document.stamp)
            yield document.text

    counts, features = count_matrix(texts(), tokenizer, ordered=ordered)
    return ids, stamp_array(stamps), events, counts, features


# Below this many files a batch is not worth a process: starting one costs about 0.3 s.
MIN_BATCH_FILES = 1000

BATCHES_PER_PROCESS = 8
"""Small batches share the work out evenly, and let this process judge its pace early: a
worker joins late (about half a second to start), and with two batches a process it was
handed half the run at once, which left this one waiting for it (24,725 short files at -j2:
1.44 -> 1.36 s; 8 against 2)."""


# A batch holds its documents' vectors while it is counted: this many files at the most.
MAX_BATCH_FILES = 20_000


def batch_size(n_files: int, jobs: int) -> int:
    """Files per batch: :data:`BATCHES_PER_PROCESS` batches per process, at least 1,000 (a
    batch's own costs), at most 20,000 (memory)."""
    per_process = BATCHES_PER_PROCESS * max(jobs, 1)
    return min(MAX_BATCH_FILES, max(MIN_BATCH_FILES, -(-n_files // per_process)))


MAX_BATCH_BYTES = 2 << 20
"""Bytes of files a batch holds at most (a larger file is a batch of its own): a batch's
arrays take about 25 bytes per byte of text while it is tokenized, so this bounds the memory of
a process, whatever the size of the files. Smaller batches also share the work out more evenly
and keep their arrays nearer the processor's caches: on five copies of the copyright files
(93 MB), 8 MiB -> 2 MiB took ``fingerprint`` from 5.6 to 4.5 s at -j1 and 3.5 to 3.0 s at
-j2; below 2 MiB nothing more was gained."""


def batches_of(
    files: list[str],
    per_batch: int,
    max_bytes: int | None = None,
    sizes: Sequence[int] | None = None,
) -> list[list[str]]:
    """``files`` cut into consecutive batches of ``per_batch`` (the last one shorter), each
    also cut where its files' sizes (``sizes``, else asked of the system) pass ``max_bytes``."""
    if max_bytes is None:
        return [files[i : i + per_batch] for i in range(0, len(files), per_batch)]
    batches: list[list[str]] = []
    batch: list[str] = []
    held = 0
    for path, size in zip(files, file_sizes(files) if sizes is None else sizes, strict=True):
        if batch and (len(batch) == per_batch or held + size > max_bytes):
            batches.append(batch)
            batch, held = [], 0
        batch.append(path)
        held += size
    if batch:
        batches.append(batch)
    return batches


def file_sizes(files: Sequence[str]) -> list[int]:
    """The bytes each file holds now, 0 for what cannot be asked (its reading will say why)."""
    sizes = []
    for path in files:
        try:
            sizes.append(os.stat(path).st_size)
        except (OSError, ValueError):
            sizes.append(0)
    return sizes


SECONDS_PER_FILE = 20e-6
SECONDS_PER_BYTE = 30e-9


def expected_work(sizes: Sequence[int]) -> float:
    """Seconds one process takes to read and fingerprint files of these sizes, about: on this
    project's 2-core machine, 20 us a file (opening, reading, a document's own arrays) and 30 ns
    a byte (tokens and their hashes), a little less for text with few tokens, about three
    times more for Chinese, Japanese or Thai. It tells the mapper whether to start its workers
    at once; a shorter guess lets the work's own pace decide (see
    :func:`~simhash_cli.app.parallel.ordered_map`)."""
    return len(sizes) * SECONDS_PER_FILE + sum(sizes) * SECONDS_PER_BYTE


def in_process(
    function: Callable[..., Result],
    arguments: Iterable[tuple[Any, ...]],
    jobs: int,
    /,
    *,
    work: float | None = None,
) -> Iterator[Result]:
    """The plainest :class:`Mapper`: ``function(*args)`` for each of ``arguments``, in order,
    in this process (``jobs`` and ``work`` are not used)."""
    return (function(*args) for args in arguments)
