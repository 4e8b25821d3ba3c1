"""An index of files kept up to date, as the index commands and ``dedupe --index`` both use
it: the index opened for adding, the files added (only new and changed ones read), and stored
files read again for their vectors (for exact verification, and for the planner's pilot)."""

from __future__ import annotations

import os

import numpy as np
from numpy.typing import NDArray

from ...core.config import DedupeConfig
from ...core.corpus import Corpus, Settings
from ...core.pipeline import dedupe
from ...core.result import DedupeResult
from ...core.search.pilot import LargeCopies, Pilot, PilotPart
from ...core.search.pilot_pieces import KeyCounts, anchor_pairs
from ...core.search.planner import pilot_in_pieces
from ...core.text.keyed import Vectors
from ...errors import InputError
from ...index.store import Store
from ...index.writing import Writer
from ...io.sources.files import DEFAULT_POLICY, ReadPolicy
from ..engine import Engine
from ..files import read_files
from ..from_fingerprints import PilotOf, placed_vectors
from ..hooks import Hooks
from ..settings import Reading
from .adding import (
    AddReport,
    add_files,
    open_for_adding,
    text_reading,
)

__all__ = [
    "add_files_of",
    "files_pilot",
    "open_index",
    "read_again",
    "reading_of",
    "say_added",
    "searched",
    "with_vectors",
]


def say_added(db: str, report: AddReport, store: Store, hooks: Hooks) -> None:
    """The line that says what an add did to ``db``."""
    hooks.info(
        f"{db}: {report.new:,} new, {report.updated:,} updated, "
        f"{report.unchanged:,} unchanged (not read), {len(report.removed):,} removed, "
        f"{len(report.skipped):,} skipped; {store.count():,} documents stored"
    )


def add_files_of(
    writer: Writer, paths: tuple[str, ...], reading: Reading, engine: Engine, hooks: Hooks
) -> AddReport:
    """The files of ``paths`` added to the index on the engine's mapper, a bar shown."""
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


def open_index(db: str, reading: Reading, default: Settings) -> Writer:
    """The index, made with ``default`` if missing; one that exists must hold fingerprints
    made with the settings the user named (if any)."""
    return open_for_adding(db, default if reading.settings_given else None, default)


_PILOT_FILES = 2_000
"""Files read again at a time for the pilot (each piece's vectors held while it is used)."""


def files_pilot(hooks: Hooks, jobs: int) -> PilotOf:
    """The pilot of stored files (:func:`~simhash_cli.core.search.planner.pilot_in_pieces`), their
    files read again in pieces: once for the features' document frequencies, once a round
    for every piece's pairs with that round's anchors. A cache must not change the answer,
    and the planner's choice rests on the pilot."""

    def keyed(docs: Corpus, rows: NDArray[np.int64]) -> Vectors:
        read = with_vectors(docs, rows, hooks, "the pilot", jobs=jobs, quiet=True)
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
        copies = LargeCopies.of(docs.fingerprints, docs.settings.bits)

        def pairs_with(anchors: Vectors, anchor_rows: NDArray[np.int64]) -> list[PilotPart]:
            threshold = config.threshold
            passes[0] += 1
            with hooks.status(
                f"reading the files again for the pilot's {anchor_rows.size:,} anchors"
            ):
                return [
                    anchor_pairs(
                        anchors,
                        anchor_rows,
                        keyed(docs, rows),
                        rows,
                        threshold,
                        sets=True,
                        copies=copies,
                    )
                    for rows in pieces
                ]

        found = pilot_in_pieces(docs, config, counts, lambda rows: keyed(docs, rows), pairs_with)
        times = {1: "once", 2: "twice"}.get(passes[0], f"{passes[0]} times")
        hooks.info(f"read the {len(docs):,} files again {times} for the pilot")
        return found

    return pilot


def with_vectors(
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
        read = read_files(paths, reading_of(docs.settings, jobs=jobs), hooks, progress)
    if not quiet:
        hooks.info(
            f"read {len(paths):,} of the {len(docs):,} files again for their vectors ({why})"
        )
    return placed_vectors(docs, rows, read)


def reading_of(
    settings: Settings, *, jobs: int = 1, policy: ReadPolicy = DEFAULT_POLICY
) -> Reading:
    """How documents are read to be compared with an index made with ``settings``: its
    bits and seed, and for files its tokenizer and weighting (read as ``policy`` says)."""
    return Reading(jobs=jobs, policy=policy).adopting(settings)


def read_again(docs: Corpus, jobs: int, hooks: Hooks) -> Corpus:
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


def searched(docs: Corpus, config: DedupeConfig, hooks: Hooks) -> DedupeResult:
    """The search on the stored documents (read again, for exact verification), here."""
    with hooks.status(f"finding and verifying candidates among {len(docs):,} documents"):
        return dedupe(docs, config)
