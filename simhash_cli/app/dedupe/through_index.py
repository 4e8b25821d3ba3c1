"""``dedupe --index DB PATH...``: the index brought up to date, then the stored fingerprints
of the listed files deduplicated, with the answer of a run without the index."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ...core.config import DedupeConfig
from ...core.corpus import Corpus
from ...core.result import DedupeResult
from ...core.search.blocking import LargeCopies
from ...core.search.pilot import Pilot, PilotPart
from ...core.search.pilot_pieces import KeyCounts, anchor_pairs
from ...core.search.planner import pilot_in_pieces
from ...core.text.keyed import Vectors
from ...core.verify.cosines import Verify
from ..engine import Engine
from ..files import read_files
from ..from_fingerprints import PilotOf, placed_vectors, verified_from_candidates
from ..hooks import Hooks
from ..indexing.adding import (
    stored_files,
)
from ..indexing.updating import add_files_of, open_index, reading_of, say_added, searched
from .request import DedupeRequest

__all__ = ["dedupe_through_index"]


def dedupe_through_index(request: DedupeRequest, engine: Engine, hooks: Hooks) -> DedupeResult:
    """``dedupe --index DB PATH...``: the index brought up to date (only new and changed files
    read), then the stored fingerprints of the listed files deduplicated: the answer of a run
    without the index (:func:`verified_from_candidates`)."""
    assert request.index is not None
    reading = request.reading
    with open_index(request.index, reading, reading.settings) as writer:
        report = add_files_of(writer, request.source.paths, reading, engine, hooks)
        say_added(request.index, report, writer.store, hooks)
        docs = stored_files(writer.store, report)
    if request.config.verify is Verify.ESTIMATE:
        return searched(docs, request.config, hooks)

    def vectors_of(docs: Corpus, rows: NDArray[np.int64], why: str) -> Corpus:
        return _with_vectors(docs, rows, hooks, why)

    pilot = _files_pilot(hooks, reading.jobs)
    return verified_from_candidates(docs, request.config, vectors_of, hooks, pilot_of=pilot)


_PILOT_FILES = 2_000
"""Files read again at a time for the pilot (each piece's vectors held while it is used)."""


def _files_pilot(hooks: Hooks, jobs: int) -> PilotOf:
    """The pilot of stored files (:func:`~simhash_cli.core.search.planner.pilot_in_pieces`), their
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
        read = read_files(paths, reading_of(docs.settings, jobs=jobs), hooks, progress)
    if not quiet:
        hooks.info(
            f"read {len(paths):,} of the {len(docs):,} files again for their vectors ({why})"
        )
    return placed_vectors(docs, rows, read)
