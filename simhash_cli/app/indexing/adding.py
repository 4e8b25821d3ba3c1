"""Documents into and out of a persistent index (:mod:`simhash_cli.index`): files are read
only when they are new or changed, queries and dedupe run on the stored fingerprints.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...core.corpus import Corpus, Settings
from ...core.events import Event, OnEvent, Skipped
from ...core.matches import Matches
from ...core.text.tokenizer import TokenizerConfig
from ...core.text.vectorize import Weighting
from ...errors import InputError, ParameterError
from ...index.reading import documents, documents_of, find, ids_of
from ...index.search import within
from ...index.store import Store
from ...index.writing import Writer
from ...io.sources.files import DEFAULT_POLICY, STDIN, ReadPolicy
from ..batches import Mapper, fingerprint_files, listing

__all__ = [
    "NO_STANDARD_INPUT",
    "RECORD_BATCH",
    "AddReport",
    "add_files",
    "add_records",
    "open_for_adding",
    "search",
    "stored_corpus",
    "stored_files",
]

NO_STANDARD_INPUT = (
    "index add stores files by their path; standard input has none "
    "(give {vectors} -, {texts} - or {fingerprints} - for records)"
)

RECORD_BATCH = 50_000
"""Records (--vectors, --fingerprints) stored per transaction."""


@dataclass
class AddReport:
    """What an add did: new and updated documents, files left as they were (not read)."""

    new: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    """Stored files that changed into something that is no document (empty, binary)."""
    skipped: list[Skipped] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """Every file listed, by absolute path, in order."""
    listed: list[str] = field(default_factory=list)
    """The same files named as the listing named them (as the user would write them)."""


def open_for_adding(path: str, requested: Settings | None, default: Settings) -> Writer:
    """The index at ``path``, made with ``requested`` (or ``default``) settings if there is
    none yet; an existing one must hold fingerprints made as ``requested``, when given.

    Raises:
        SettingsMismatchError: the index's settings are not the requested ones.
        ParameterError: tfidf weights, which depend on the other documents of a run.
    """
    wanted = requested or default
    if wanted.corpus_wide:
        raise ParameterError(
            "an index keeps fingerprints that depend on their document alone; tfidf weights "
            "depend on the documents of one run: use tf, binary or log"
        )
    if os.path.exists(path):
        writer = Writer.open(path)
        if requested is not None:
            try:
                writer.store.check(requested)
            except BaseException:
                writer.close()
                raise
        return writer
    return Writer.open(path, create=wanted)


def text_reading(settings: Settings) -> tuple[TokenizerConfig, Weighting]:
    """How an index's files are read (its settings' tokenizer and weighting).

    Raises:
        InputError: the index holds fingerprints of given vectors, not of text.
    """
    if settings.tokenizer is None or settings.weighting is None:
        raise InputError(
            "this index holds fingerprints of given vectors: add and query with {vectors} or "
            "{fingerprints}",
            parameters=("vectors", "fingerprints"),
        )
    return settings.tokenizer, settings.weighting


def add_files(
    writer: Writer,
    paths: tuple[str, ...],
    *,
    on_event: OnEvent,
    on_listed: Callable[[int], None] | None = None,
    on_read: Callable[[], None] | None = None,
    jobs: int = 1,
    policy: ReadPolicy = DEFAULT_POLICY,
    mapper: Mapper | None = None,
) -> AddReport:
    """Fingerprint the files below ``paths`` that the index does not hold as they are now
    (same absolute path, size and mtime) and store them, a batch per transaction: a killed
    add keeps its finished batches, and running it again reads only the rest. ``mapper``
    computes the batches elsewhere (a Dask cluster; see :func:`fingerprint_files`)."""
    store = writer.store
    text_reading(store.settings)
    report = AddReport()

    def collect(event: Event) -> None:
        if isinstance(event, Skipped):
            report.skipped.append(event)
        on_event(event)

    files = listing(paths, collect, [], policy=policy).files
    if STDIN in files:
        raise InputError(NO_STANDARD_INPUT, parameters=("vectors", "texts", "fingerprints"))
    absolute = [os.path.abspath(path) for path in files]
    report.files, report.listed = absolute, files
    stored = {
        path: (size, mtime)
        for path, (_, size, mtime) in find(store, absolute).items()
        if size is not None
    }
    changed: list[str] = []
    sizes: list[int] = []  # of the changed files, as asked here: how their batches are cut
    for path in absolute:
        try:
            info = os.stat(path)
        except OSError:
            changed.append(path)  # the reader will say what is wrong with it
            sizes.append(0)
            continue
        if stored.get(path) == (info.st_size, info.st_mtime_ns):
            report.unchanged += 1
            if on_read is not None:
                on_read()
        else:
            changed.append(path)
            sizes.append(info.st_size)
    if on_listed is not None:
        on_listed(len(absolute))
    stored_before = set(stored)
    seen: set[str] = set()
    for batch in fingerprint_files(
        changed,
        store.settings,
        on_event=collect,
        on_read=on_read,
        jobs=jobs,
        policy=policy,
        mapper=mapper,
        sizes=sizes,
    ):
        assert batch.stamps is not None
        read_as = list(
            zip(batch.stamps["size"].tolist(), batch.stamps["mtime_ns"].tolist(), strict=True)
        )
        writer.add(batch.ids, batch.fingerprints, batch.n_features, read_as, expected=len(changed))
        seen.update(batch.ids)
    writer.finish()
    report.updated = len(seen & stored_before)
    report.new = len(seen) - report.updated
    report.removed = sorted(set(changed) & stored_before - seen)
    writer.remove(report.removed)
    return report


def add_records(writer: Writer, docs: Corpus) -> AddReport:
    """Store fingerprinted records (``--vectors``, ``--fingerprints``) under their ids, a batch
    of :data:`RECORD_BATCH` per transaction."""
    writer.store.check(docs.settings)
    known = find(writer.store, docs.ids)
    for start in range(0, len(docs), RECORD_BATCH):
        stop = min(start + RECORD_BATCH, len(docs))
        writer.add(
            docs.ids[start:stop],
            docs.fingerprints[start:stop],
            docs.n_features[start:stop],
            expected=len(docs),
        )
    writer.finish()
    updated = len(known)
    return AddReport(new=len(set(docs.ids)) - updated, updated=updated, skipped=docs.skipped)


def stored_files(store: Store, report: AddReport) -> Corpus:
    """The stored fingerprints of the files an add listed (those that are documents), in
    listing order and named as listed, with what the add skipped."""
    present, fingerprints, features = documents_of(store, report.files)
    named = dict(zip(report.files, report.listed, strict=True))
    ids = [named[path] for path in present]
    return Corpus(ids, fingerprints, features, store.settings, skipped=report.skipped)


def stored_corpus(store: Store) -> Corpus:
    """Every stored document as a corpus of fingerprints (no vectors): ``index dedupe``."""
    _, ids, fingerprints, features = documents(store)
    return Corpus(ids, fingerprints, features, store.settings)


def search(store: Store, docs: Corpus, max_distance: int) -> tuple[Matches, dict[int, str]]:
    """The stored documents within ``max_distance`` bits of each document of ``docs`` (a
    stored file is not its own match), and the stored ids by row."""
    store.check(docs.settings)
    matches = within(store, docs.fingerprints, max_distance)
    # A query that is itself stored (a file by its absolute path, a record by its id) is not
    # reported as its own match.
    names = [
        doc_id if doc_id == STDIN or docs.stamps is None else os.path.abspath(doc_id)
        for doc_id in docs.ids
    ]
    stored = find(store, names)
    own = np.array([stored.get(name, (-1,))[0] for name in names], dtype=np.int64)
    if len(matches.query):
        keep = matches.doc != own[matches.query]
        matches = Matches(matches.query[keep], matches.doc[keep], matches.hamming[keep])
    return matches, ids_of(store, matches.doc)
