"""The run functions of ``simhash index ...`` and of ``dedupe --index``: requests in, results
out. Files are added in batches on the engine they are given (the index never chooses one);
what is read whole (queries, files read again for their vectors) is read here."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.config import DedupeConfig
from ...core.corpus import Corpus, Settings
from ...core.cosines import Verify, estimate_limit
from ...core.keyed import Vectors
from ...core.matches import Matches
from ...core.pilot import Pilot, PilotPart
from ...core.pilot_pieces import KeyCounts, anchor_pairs
from ...core.planner import pilot_in_pieces
from ...core.result import DedupeResult
from ...core.search import dedupe
from ...errors import BadValueError, InputError
from ...index.reading import stats as stats_of
from ...index.store import Store
from ...index.writing import Writer
from ...io.sinks.formats import counted
from ...io.sources.files import DEFAULT_POLICY, ReadPolicy
from ..dedupe.request import DedupeRequest
from ..engine import Engine
from ..files import read_files
from ..from_fingerprints import PilotOf, placed_vectors, verified_from_candidates
from ..guard import Reads, refuse_overwrites
from ..hooks import Hooks
from ..keep.rule import kept
from ..loading import fingerprinted_records, load_records
from ..settings import Input, Reading
from .adding import (
    AddReport,
    add_files,
    add_records,
    open_for_adding,
    search,
    stored_corpus,
    stored_files,
    text_reading,
)
from .request import IndexAddRequest, IndexDedupeRequest, IndexQueryRequest

__all__ = [
    "Pruned",
    "Queried",
    "add",
    "dedupe_stored",
    "dedupe_through_index",
    "prune",
    "query",
    "stats",
]


def _added(db: str, report: AddReport, store: Store, hooks: Hooks) -> None:
    hooks.info(
        f"{db}: {report.new:,} new, {report.updated:,} updated, "
        f"{report.unchanged:,} unchanged (not read), {len(report.removed):,} removed, "
        f"{len(report.skipped):,} skipped; {store.count():,} documents stored"
    )


def _add_files(
    writer: Writer, paths: tuple[str, ...], reading: Reading, engine: Engine, hooks: Hooks
) -> AddReport:
    with hooks.progress("reading files") as progress:
        return add_files(
            writer,
            paths,
            on_event=hooks.event,
            on_listed=progress.on_listed,
            on_read=progress.on_read,
            jobs=reading.jobs,
            policy=reading.policy,
            mapper=engine.mapper,
        )


def _open(db: str, reading: Reading, default: Settings) -> Writer:
    """The index, made with ``default`` if missing; one that exists must hold fingerprints
    made with the settings the user named (if any)."""
    return open_for_adding(db, default if reading.settings_given else None, default)


def add(request: IndexAddRequest, engine: Engine, hooks: Hooks) -> None:
    """``simhash index add``: files (only new and changed ones read) or records, stored a
    batch per transaction."""
    source, reading = request.source, request.reading
    docs: Corpus | None = None
    if source.kind is Input.FINGERPRINTS:
        docs = load_records(source, Reading(), hooks)  # the records say their settings
        writer = open_for_adding(request.db, docs.settings, docs.settings)
    elif source.kind is Input.VECTORS:
        writer = _open(request.db, reading, reading.vector_settings)
        settings = writer.store.settings
        docs = fingerprinted_records(source, _reading_of(settings, jobs=reading.jobs), hooks)
    elif source.kind is Input.TEXTS:
        writer = _open(request.db, reading, reading.settings)
        settings = writer.store.settings
        text_reading(settings)  # texts are tokenized as the index's files are
        docs = fingerprinted_records(source, _reading_of(settings, jobs=reading.jobs), hooks)
    else:
        writer = _open(request.db, reading, reading.settings)
    with writer:
        if docs is not None:
            report = add_records(writer, docs)
        else:
            report = _add_files(writer, source.paths, reading, engine, hooks)
        _added(request.db, report, writer.store, hooks)


def dedupe_through_index(request: DedupeRequest, engine: Engine, hooks: Hooks) -> DedupeResult:
    """``dedupe --index DB PATH...``: the index brought up to date (only new and changed files
    read), then the stored fingerprints of the listed files deduplicated: the answer of a run
    without the index (:func:`verified_from_candidates`)."""
    assert request.index is not None
    reading = request.reading
    with _open(request.index, reading, reading.settings) as writer:
        report = _add_files(writer, request.source.paths, reading, engine, hooks)
        _added(request.index, report, writer.store, hooks)
        docs = stored_files(writer.store, report)
    if request.config.verify is Verify.ESTIMATE:
        return _searched(docs, request.config, hooks)

    def vectors_of(docs: Corpus, rows: NDArray[np.int64], why: str) -> Corpus:
        return _with_vectors(docs, rows, hooks, why)

    pilot = _files_pilot(hooks, reading.jobs)
    return verified_from_candidates(docs, request.config, vectors_of, hooks, pilot_of=pilot)


_PILOT_FILES = 2_000
"""Files read again at a time for the pilot (each piece's vectors held while it is used)."""


def _files_pilot(hooks: Hooks, jobs: int) -> PilotOf:
    """The pilot of stored files (:func:`~simhash_cli.core.planner.pilot_in_pieces`), their
    files read again in pieces: once for the features' document frequencies, once a round
    for every piece's pairs with that round's anchors. A cache must not change the answer,
    and the planner's choice rests on the pilot."""

    def keyed(docs: Corpus, rows: NDArray[np.int64]) -> Vectors:
        read = _with_vectors(docs, rows, hooks, "the pilot", jobs=jobs, quiet=True)
        assert read.weights is not None
        return Vectors.of(read.weights[rows], read.features)

    def pilot(docs: Corpus, config: DedupeConfig) -> Pilot | str:
        pieces = [
            np.arange(start, min(start + _PILOT_FILES, len(docs)), dtype=np.int64)
            for start in range(0, len(docs), _PILOT_FILES)
        ]
        with hooks.status("reading the files again for the pilot's document frequencies"):
            counts = KeyCounts.merged([KeyCounts.of(keyed(docs, rows)) for rows in pieces])

        passes = [1]  # the counts' pass, then one a round of anchors

        def pairs_with(anchors: Vectors, anchor_rows: NDArray[np.int64]) -> list[PilotPart]:
            threshold = config.threshold
            passes[0] += 1
            with hooks.status(
                f"reading the files again for the pilot's {anchor_rows.size:,} anchors"
            ):
                return [
                    anchor_pairs(
                        anchors, anchor_rows, keyed(docs, rows), rows, threshold, sets=True
                    )
                    for rows in pieces
                ]

        found = pilot_in_pieces(docs, config, counts, lambda rows: keyed(docs, rows), pairs_with)
        times = {1: "once", 2: "twice"}.get(passes[0], f"{passes[0]} times")
        hooks.info(f"read the {len(docs):,} files again {times} for the pilot")
        return found

    return pilot


def _with_vectors(
    docs: Corpus,
    rows: NDArray[np.int64],
    hooks: Hooks,
    why: str,
    *,
    jobs: int = 1,
    quiet: bool = False,
) -> Corpus:
    """``docs`` with the vectors of ``rows`` (the other rows empty), their files read again
    (in ``jobs`` processes; ``quiet``: a piece of a larger reading, not said line by line).

    Raises:
        InputError: a file whose fingerprint is no longer the stored one.
    """
    paths = [docs.ids[r] for r in rows.tolist()]
    with hooks.progress("reading files again", shown=not quiet) as progress:
        read = read_files(paths, _reading_of(docs.settings, jobs=jobs), hooks, progress)
    if not quiet:
        hooks.info(
            f"read {len(paths):,} of the {len(docs):,} files again for their vectors ({why})"
        )
    return placed_vectors(docs, rows, read)


@dataclass(frozen=True)
class Queried:
    """What ``index query`` found: ``matches`` of the ``queries`` (by position) among the
    stored documents (``names`` by row), within ``limit`` bits of ``bits``."""

    matches: Matches
    names: dict[int, str]
    queries: list[str]
    bits: int
    limit: int
    by_distance: bool
    threshold: float
    stored: int

    def summary(self) -> str:
        """``4 of 75 documents have stored documents ...; 4 matches among 150 stored``."""
        how = (
            f"within {self.limit} bits"
            if self.by_distance
            else f"at estimated cosine >= {self.threshold:g} (within {self.limit} bits)"
        )
        matched = len(set(self.matches.query.tolist()))
        have = "has" if matched == 1 else "have"
        return (
            f"{matched:,} of {counted(len(self.queries), 'document')} {have} stored documents "
            f"{how}; {counted(len(self.matches.query), 'match', 'matches')} among "
            f"{self.stored:,} stored"
        )


def _reading_of(
    settings: Settings, *, jobs: int = 1, policy: ReadPolicy = DEFAULT_POLICY
) -> Reading:
    """How documents are read to be compared with an index made with ``settings``: its
    bits and seed, and for files its tokenizer and weighting (read as ``policy`` says)."""
    return Reading(jobs=jobs, policy=policy).adopting(settings)


def _queries(request: IndexQueryRequest, store: Store, hooks: Hooks) -> Corpus:
    """The documents to look up, fingerprinted with the index's settings."""
    source = request.source
    if source.kind is Input.FINGERPRINTS:
        return load_records(source, _reading_of(store.settings), hooks)
    if source.is_records:  # only their fingerprints are looked up
        return fingerprinted_records(source, _reading_of(store.settings), hooks)
    text_reading(store.settings)  # an index of given vectors is not queried with files
    reading = _reading_of(store.settings, policy=request.policy)
    with hooks.progress("reading files", shown=False) as progress:
        return read_files(source.paths, reading, hooks, progress)


def query(request: IndexQueryRequest, hooks: Hooks) -> Queried:
    """``simhash index query``: the stored documents near each given one (a stored file is not
    its own match).

    Raises:
        BadValueError: a threshold no Hamming distance estimates at the index's width.
    """
    with Store.open(request.db, readonly=True) as store:
        docs = _queries(request, store, hooks)
        bits = store.settings.bits
        by_distance = request.max_distance is not None
        limit = (
            request.max_distance
            if request.max_distance is not None
            else estimate_limit(request.threshold, bits)
        )
        if limit < 0:
            raise BadValueError(
                f"no Hamming distance at {bits} bits estimates a cosine of {request.threshold:g}",
                parameter="threshold",
            )
        matches, names = search(store, docs, min(limit, bits))
        matches = matches.nearest(request.limit)
        return Queried(
            matches, names, docs.ids, bits, limit, by_distance, request.threshold, store.count()
        )


def _read_again(docs: Corpus, jobs: int, hooks: Hooks) -> Corpus:
    """The stored files read again, for their vectors.

    Raises:
        InputError: the index holds records that are not files, or a stored file is gone.
    """
    text_reading(docs.settings)  # records that are not files cannot be read again
    for path in docs.ids:
        if not os.path.lexists(path):
            raise InputError(
                f"a stored file is gone: {path} (simhash index prune forgets such files)"
            )
    with hooks.progress("reading files") as progress:
        reading = _reading_of(docs.settings, jobs=jobs)
        return read_files(docs.ids, reading, hooks, progress)


def reference_of(db: str) -> Corpus:
    """What the index ``db`` holds, as a reference set (``dedupe --against DB``)."""
    with Store.open(db, readonly=True) as store:
        return stored_corpus(store)


def dedupe_stored(request: IndexDedupeRequest, hooks: Hooks) -> DedupeResult:
    """``simhash index dedupe``: every stored document, by estimate (nothing read), or read
    again for the true cosine."""
    with Store.open(request.db, readonly=True) as store:
        docs = stored_corpus(store)
    if request.verify is Verify.EXACT:
        docs = _read_again(docs, request.jobs, hooks)
    if request.plan is not None:  # never over a stored file
        refuse_overwrites({"plan": request.plan}, Reads(files=tuple(docs.ids)))
    result = _searched(docs, request.config, hooks)
    return kept(result, request.keep_rule)


def stats(db: str) -> dict[str, Any]:
    """``simhash index stats``: documents, settings, tables and size of the index."""
    with Store.open(db, readonly=True) as store:
        return stats_of(store)


@dataclass(frozen=True)
class Pruned:
    """What ``index prune`` forgot, and how many documents stay."""

    db: str
    removed: list[str]
    remaining: int

    def summary(self) -> str:
        """``crawl.db: 2 removed; 148 documents stored``."""
        return f"{self.db}: {len(self.removed):,} removed; {self.remaining:,} documents stored"


def prune(db: str) -> Pruned:
    """``simhash index prune``: forget the stored files that no longer exist (records from
    vectors and fingerprints stay)."""
    with Writer.open(db) as writer:
        removed = writer.prune(lambda path, size, mtime: _still_there(path))
        return Pruned(db, removed, writer.store.count())


def _still_there(path: str) -> bool:
    """False only when the file is known to be gone (ENOENT, ENOTDIR): one that cannot be
    looked at (an unreadable directory, EACCES) is not forgotten."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def _searched(docs: Corpus, config: DedupeConfig, hooks: Hooks) -> DedupeResult:
    """The search on the stored documents (read again, for exact verification), here."""
    with hooks.status(f"finding and verifying candidates among {len(docs):,} documents"):
        return dedupe(docs, config)
