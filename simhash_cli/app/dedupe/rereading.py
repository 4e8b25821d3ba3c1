"""``dedupe --texts|--vectors FILE --memory fingerprints``: the records fingerprinted piece by
piece, then read again for the planner's sample, for their MinHash signatures when the planner
chooses MinHash, and for the documents of candidate pairs
(:func:`~simhash_cli.app.from_fingerprints.verified_from_candidates`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...core.config import DedupeConfig
from ...core.corpus import EMPTY_TEXT, Corpus, from_weights
from ...core.result import DedupeResult
from ...core.search import blocking
from ...core.search.blocking import LargeCopies
from ...core.search.pilot import Pilot, PilotPart
from ...core.search.pilot_pieces import KeyCounts, anchor_pairs
from ...core.search.planner import pilot_in_pieces
from ...core.text.keyed import Vectors
from ...core.text.tokenizer import TokenizerConfig
from ...core.text.vectorize import (
    Weighting,
    apply_weighting,
    count_matrix,
    from_mappings,
    merge_counts,
)
from ...errors import InputError
from ...io.sources.fields import Fields
from ...io.sources.pieces import Piece, Placed
from ..from_fingerprints import (
    BandKeysOf,
    PilotOf,
    VectorsOf,
    placed_vectors,
    verified_from_candidates,
)
from ..hooks import Hooks
from ..loading import fingerprinted_pieces, pieces_of
from ..parallel import ordered_map
from ..records import count_wanted, sign_piece
from ..settings import Input, Reading, Source

__all__ = ["dedupe_records_rereading", "piece_counts", "piece_pairs"]


def dedupe_records_rereading(
    source: Source, reading: Reading, config: DedupeConfig, hooks: Hooks
) -> DedupeResult:
    """``dedupe --texts|--vectors FILE --memory fingerprints``: the records' fingerprints
    made piece by piece (``reading.jobs`` processes), then :func:`verified_from_candidates`,
    the records read again for what needs vectors (the pilot's two passes among them)."""
    docs, sizes = fingerprinted_pieces(source, reading, hooks)
    return verified_from_candidates(
        docs,
        config,
        _vectors_of(source, reading, sizes, hooks),
        hooks,
        _band_keys_of(source, reading, hooks) if source.kind is Input.TEXTS else None,
        _pilot_of(source, reading, sizes, hooks),
    )


def _pilot_of(source: Source, reading: Reading, sizes: list[int], hooks: Hooks) -> PilotOf:
    """The pilot of records read again in pieces: one pass for the features' document
    frequencies, the anchors' vectors, one pass for every piece's pairs with them
    (:func:`~simhash_cli.core.search.planner.pilot_in_pieces`)."""
    kind = source.kind.value
    bounds = np.cumsum([0, *sizes]).tolist()

    def each_piece(docs: Corpus, work: Callable[..., Any], *extra: Any) -> Iterator[Any]:
        common = (kind, reading.tokenizer, reading.weighting, reading.policy.max_bytes)
        arguments = (
            (piece, tuple(docs.ids[a:b]), a, *common, source.fields, *extra)
            for piece, (a, b) in zip(
                pieces_of(source, reading).pieces, itertools.pairwise(bounds), strict=False
            )
        )
        return ordered_map(work, arguments, reading.jobs)

    def pilot(docs: Corpus, config: DedupeConfig) -> Pilot | str:
        with hooks.status("reading the records again for the pilot's document frequencies"):
            counts = KeyCounts.merged(list(each_piece(docs, piece_counts)))

        def anchors_vectors(rows: NDArray[np.int64]) -> Vectors:
            read = vectors_of(docs, rows, "the pilot's anchors")
            assert read.weights is not None
            return Vectors.of(read.weights[rows], read.features)

        copies = LargeCopies.of(docs.fingerprints, docs.settings.bits)

        def pairs_with(anchors: Vectors, rows: NDArray[np.int64]) -> list[PilotPart]:
            sets = kind == "texts"
            extra = (anchors, rows, config.threshold, sets, copies)
            with hooks.status(f"reading the records again for the pilot's {rows.size:,} anchors"):
                return list(each_piece(docs, piece_pairs, *extra))

        return pilot_in_pieces(docs, config, counts, anchors_vectors, pairs_with)

    vectors_of = _vectors_of(source, reading, sizes, hooks)
    return pilot


def _keyed_piece(
    piece: Piece,
    ids: tuple[str, ...],
    kind: str,
    tokenizer: TokenizerConfig,
    weighting: Weighting,
    max_line: int | None,
    fields: Fields,
) -> Vectors:
    """The keyed vectors of the records of one piece that the first reading made documents
    (``ids``, in order: an id given twice, its first record), read again.

    Raises:
        InputError: the piece no longer holds those records.
    """
    wanted, records = set(ids), []
    parsed: list[Any] = piece.parse(kind, max_line, lambda error: None, Placed(), fields)
    for record in parsed:
        if record.id in wanted:
            wanted.discard(record.id)
            records.append(record)
    if tuple(record.id for record in records) != ids:
        raise InputError(
            "the records changed while they were deduplicated (read again, a piece does not "
            "hold the documents it held): run the command again"
        )
    if kind == "texts":
        counts, features = count_matrix((record.text for record in records), tokenizer)
        return Vectors.of(apply_weighting(counts, weighting), features)
    weights, features = from_mappings(record.features for record in records)
    return Vectors.of(weights, features)


def piece_counts(piece: Piece, ids: tuple[str, ...], first: int, *reading: Any) -> KeyCounts:
    """How many of one piece's documents hold each feature (the pilot's first pass)."""
    return KeyCounts.of(_keyed_piece(piece, ids, *reading))


def piece_pairs(
    piece: Piece,
    ids: tuple[str, ...],
    first: int,
    kind: str,
    tokenizer: TokenizerConfig,
    weighting: Weighting,
    max_line: int | None,
    fields: Fields,
    anchors: Vectors,
    anchor_rows: NDArray[np.int64],
    threshold: float,
    sets: bool,
    copies: LargeCopies | None = None,
) -> PilotPart:
    """One piece's pairs with the pilot's anchors (its second pass); the piece's documents are
    rows ``first`` onwards."""
    vectors = _keyed_piece(piece, ids, kind, tokenizer, weighting, max_line, fields)
    rows = first + np.arange(len(ids), dtype=np.int64)
    return anchor_pairs(anchors, anchor_rows, vectors, rows, threshold, sets=sets, copies=copies)


def _vectors_of(source: Source, reading: Reading, sizes: list[int], hooks: Hooks) -> VectorsOf:
    """Records read again, piece by piece in ``reading.jobs`` processes (each piece gave
    ``sizes`` documents), for the vectors of some of them: a piece parses its records and
    counts the wanted ones only."""
    kind = source.kind.value
    bounds = np.cumsum([0, *sizes])

    def vectors(docs: Corpus, rows: NDArray[np.int64], why: str) -> Corpus:
        cut = np.searchsorted(rows, bounds)
        wanted = [
            frozenset(docs.ids[r] for r in rows[lo:hi].tolist())
            for lo, hi in itertools.pairwise(cut.tolist())
        ]
        # The pieces split as the first reading split them (an input that changed since is
        # found out by the fingerprints of what is read).
        arguments = (
            (piece, kind, ids, reading.tokenizer, reading.policy.max_bytes, source.fields)
            for piece, ids in zip(pieces_of(source, reading).pieces, wanted, strict=False)
            if ids
        )
        found: list[str] = []

        def parts() -> Iterator[tuple[sp.csr_array, list[str]]]:
            for ids, counts, features in ordered_map(count_wanted, arguments, reading.jobs):
                found.extend(ids)
                yield counts, features

        with hooks.status(f"reading {len(rows):,} records again ({why})"):
            counts, features = merge_counts(parts())
        settings = reading.settings_for(source.kind)
        weights = apply_weighting(counts, reading.weighting) if kind == "texts" else counts
        read = from_weights(found, weights, features, settings, lambda event: None, [], EMPTY_TEXT)
        hooks.info(f"read {len(rows):,} of the {len(docs):,} records again ({why})")
        return placed_vectors(docs, rows, read)

    return vectors


def _changed(source: Source) -> InputError:
    return InputError(
        f"{source.location} changed while it was deduplicated (read again, its records are not "
        "the ones it had): run the command again"
    )


def _band_keys_of(source: Source, reading: Reading, hooks: Hooks) -> BandKeysOf:
    """Records read again, piece by piece in ``reading.jobs`` processes, for the band keys of
    the MinHash signature of each one's words."""

    def band_keys(docs: Corpus, bands: tuple[int, int]) -> NDArray[np.uint64]:
        representatives = blocking.collapse(docs.fingerprints, docs.settings.bits).representatives
        wanted = np.full(len(docs), -1, dtype=np.int64)
        wanted[representatives] = np.arange(representatives.size)
        signed = np.empty((representatives.size, bands[0]), dtype=np.uint64)
        pieces = pieces_of(source, reading)
        arguments = (
            (piece, reading.tokenizer, reading.policy.max_bytes, source.fields, bands, reading.seed)
            for piece in pieces.pieces
        )
        row = 0
        what = f"{bands[0]} bands of {bands[1]} bins"
        with hooks.status(f"reading the records again for their MinHash signatures ({what})"):
            for done in ordered_map(sign_piece, arguments, reading.jobs):
                repeats = pieces.repeats(done.ids, done.lines, done.name, lambda event: None)
                worded = [done.ids[k] for k in np.flatnonzero(done.worded).tolist()]
                keep = np.ones(len(worded), dtype=bool)
                if repeats:  # (rare: an id given twice, its later records skipped)
                    keep = np.array([doc_id not in repeats for doc_id in worded], dtype=bool)
                ids = [doc_id for doc_id, kept in zip(worded, keep.tolist(), strict=True) if kept]
                if docs.ids[row : row + len(ids)] != ids:
                    raise _changed(source)
                at = wanted[row : row + len(ids)]
                signed[at[at >= 0]] = done.band_keys[keep][at >= 0]
                row += len(ids)
        if row != len(docs):
            raise _changed(source)
        return signed

    return band_keys
