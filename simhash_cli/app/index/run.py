"""The run functions of ``simhash index ...``: requests in, results out. Files are added in
batches on the engine they are given (the index never chooses one); what is read whole
(queries, files read again for their vectors) is read here."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from ...core.corpus import Corpus
from ...core.matches import Matches
from ...core.result import DedupeResult
from ...core.verify.cosines import estimate_limit
from ...errors import BadValueError, InputError
from ...index.reading import stats as stats_of
from ...index.store import Store
from ...index.writing import Writer
from ...io.sinks.formats import counted
from ..engine import Engine
from ..files import read_files
from ..guard import Reads, refuse_overwrites
from ..hooks import Hooks
from ..indexing.adding import (
    add_records,
    open_for_adding,
    search,
    stored_corpus,
    text_reading,
)
from ..indexing.updating import add_files_of, open_index, reading_of, say_added, searched
from ..keep.rule import kept
from ..loading import fingerprinted_records, load_records
from ..settings import Input, Reading
from .request import IndexAddRequest, IndexDedupeRequest, IndexQueryRequest

__all__ = [
    "Pruned",
    "Queried",
    "add",
    "dedupe_stored",
    "prune",
    "query",
    "stats",
]


def add(request: IndexAddRequest, engine: Engine, hooks: Hooks) -> None:
    """``simhash index add``: files (only new and changed ones read) or records, stored a
    batch per transaction."""
    source, reading = request.source, request.reading
    docs: Corpus | None = None
    if source.kind is Input.FINGERPRINTS:
        docs = load_records(source, Reading(), hooks)  # the records say their settings
        writer = open_for_adding(request.db, docs.settings, docs.settings)
    elif source.kind is Input.VECTORS:
        writer = open_index(request.db, reading, reading.vector_settings)
        settings = writer.store.settings
        docs = fingerprinted_records(source, reading_of(settings, jobs=reading.jobs), hooks)
    elif source.kind is Input.TEXTS:
        writer = open_index(request.db, reading, reading.settings)
        settings = writer.store.settings
        text_reading(settings)  # texts are tokenized as the index's files are
        docs = fingerprinted_records(source, reading_of(settings, jobs=reading.jobs), hooks)
    else:
        writer = open_index(request.db, reading, reading.settings)
    with writer:
        if docs is not None:
            report = add_records(writer, docs)
        else:
            report = add_files_of(writer, source.paths, reading, engine, hooks)
        say_added(request.db, report, writer.store, hooks)


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


def _queries(request: IndexQueryRequest, store: Store, hooks: Hooks) -> Corpus:
    """The documents to look up, fingerprinted with the index's settings."""
    source = request.source
    if source.kind is Input.FINGERPRINTS:
        return load_records(source, reading_of(store.settings), hooks)
    if source.is_records:  # only their fingerprints are looked up
        return fingerprinted_records(source, reading_of(store.settings), hooks)
    text_reading(store.settings)  # an index of given vectors is not queried with files
    reading = reading_of(store.settings, policy=request.policy)
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


def dedupe_stored(request: IndexDedupeRequest, hooks: Hooks) -> DedupeResult:
    """``simhash index dedupe``: every stored document, by estimate (nothing read), or read
    again for the true cosine."""
    with Store.open(request.db, readonly=True) as store:
        docs = stored_corpus(store)
    # The schemes against the index's width, which only the index says: as dedupe refuses them.
    request.search.check(dataclasses.replace(request.PLACE, width=docs.settings.bits))
    if request.exact:
        docs = _read_again(docs, request.jobs, hooks)
    if request.plan is not None:  # never over a stored file
        refuse_overwrites({"plan": request.plan}, Reads(files=tuple(docs.ids)))
    result = searched(docs, request.config, hooks)
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
        reading = reading_of(docs.settings, jobs=jobs)
        return read_files(docs.ids, reading, hooks, progress)
