"""Exact verification from fingerprints, reading again only what needs vectors: the answer of
a run that held every document's vectors, in the memory of the fingerprints.

Two inputs take this way: an index's stored files (``dedupe --index``), and ``--texts`` or
``--vectors`` records with ``--memory fingerprints``, read piece by piece for their
fingerprints, then read again for the planner's sample, for their MinHash signatures when the
planner chooses MinHash, and for the documents of candidate pairs.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...core import blocking
from ...core.config import AUTO, EVERY, DedupeConfig
from ...core.corpus import EMPTY_TEXT, Corpus, from_weights
from ...core.cosines import Verify, hamming_gate
from ...core.distinct import distinct
from ...core.keyed import Vectors
from ...core.pilot import Pilot, PilotPart
from ...core.pilot_pieces import KeyCounts, anchor_pairs
from ...core.planner import choose_scheme, measures, pilot_in_pieces, planner_rows, scheme_for
from ...core.result import DedupeResult
from ...core.search import dedupe
from ...core.tokenizer import TokenizerConfig
from ...core.vectorize import Weighting, apply_weighting, count_matrix, from_mappings, merge_counts
from ...errors import InputError
from ...io.sources.fields import Fields
from ...io.sources.pieces import Piece, Placed
from ..hooks import Hooks
from ..loading import fingerprinted_pieces, pieces_of
from ..parallel import ordered_map
from ..records import count_wanted, sign_piece
from ..settings import Input, Reading, Source

__all__ = [
    "BandKeysOf",
    "PilotOf",
    "VectorsOf",
    "dedupe_records_rereading",
    "placed_vectors",
    "verified_from_candidates",
]

VectorsOf = Callable[[Corpus, NDArray[np.int64], str], Corpus]
"""``docs`` with the vectors of ``rows`` (the other rows empty), read again (``why``: for
what, as the run says)."""

PilotOf = Callable[[Corpus, DedupeConfig], Pilot | str]
"""The pilot of the documents at the config's threshold, made where their vectors are
(:func:`~simhash_cli.core.planner.pilot_in_pieces`), or why none runs."""

BandKeysOf = Callable[[Corpus, tuple[int, int]], NDArray[np.uint64]]
"""The keys of the bands (so many bands of so many bins) of the MinHash signatures of one
document of each distinct fingerprint (the representatives of ``blocking.collapse``, in
order), made by reading them again."""

_CHUNK = 200_000


def verified_from_candidates(
    docs: Corpus,
    config: DedupeConfig,
    vectors_of: VectorsOf,
    hooks: Hooks,
    band_keys_of: BandKeysOf | None = None,
    pilot_of: PilotOf | None = None,
) -> DedupeResult:
    """Verification of ``docs``' fingerprints, reading again only what needs vectors.

    The pilot runs first (``pilot_of``: its anchors' products with every document, made where
    the documents are), whatever the scheme: it measures the run's recall. With ``--blocks
    auto``, the planner prices its schemes on it (without it, at the threshold), reads the
    documents whose word sets the planner samples (as a run holding every vector prices
    MinHash on them) and chooses as it would. When it chooses
    MinHash, every document's band keys are made (``band_keys_of``; without it, every
    document is read with its vectors). The scheme's candidates are then found, with the
    Hamming gate of exact verification (a pair it passes over is never checked), only the
    documents they name are read again, and the same scheme runs with those vectors. By
    estimate, the scheme runs on the fingerprints (and signatures) alone.

    Raises:
        InputError: a document that changed since its fingerprint was made.
    """
    bits = docs.settings.bits
    # The pilot measures the recall of any scheme, named or chosen, and prices the planner's.
    made = pilot_of(docs, config) if pilot_of is not None and measures(config) else None
    pilot = made if isinstance(made, Pilot) else None
    unpiloted = made if isinstance(made, str) else None
    if config.blocks == AUTO and config.max_distance is None and config.minhash is None:
        sampled = vectors_of(docs, planner_rows(docs), "the planner's sample")
        with hooks.status(f"planning among {len(docs):,} fingerprints"):
            copies = blocking.collapse(sampled.fingerprints, bits)
            scheme, planned = scheme_for(sampled, config, copies, pilot=pilot)
    else:
        scheme, planned = choose_scheme(docs, config)
    band_keys = None
    if scheme.kind == "every" or (scheme.rows is not None and band_keys_of is None):
        every = dataclasses.replace(config, blocks=EVERY, minhash=None)
        if scheme.rows is not None:
            every = dataclasses.replace(config, minhash=(scheme.blocks, scheme.rows))
        # Every pair's product, or MinHash without band keys made elsewhere: the pilot's pairs
        # when it held them all, else every document's vector.
        rows = np.arange(len(docs), dtype=np.int64)
        why = "every pair is compared"
        if scheme.rows is not None:
            why = "MinHash needs every document's words"
        if scheme.kind == "every" and pilot is not None and pilot.complete:
            rows = distinct(np.concatenate([planner_rows(docs), pilot.pairs.ravel()]))
            why = "those of the pilot's pairs"
        words = vectors_of(docs, rows, why)
        with hooks.status(f"finding and verifying candidates among {len(docs):,} documents"):
            found = dedupe(words, every, pilot=pilot, planned=planned, unpiloted=unpiloted)
            return dataclasses.replace(found, config=config)
    if scheme.rows is not None:  # MinHash, its band keys made where the documents are
        same = dataclasses.replace(config, minhash=(scheme.blocks, scheme.rows))
        assert band_keys_of is not None
        band_keys = band_keys_of(docs, (scheme.blocks, scheme.rows))
    else:
        same = dataclasses.replace(config, blocks=scheme.blocks, max_distance=scheme.max_distance)
    if config.verify is Verify.ESTIMATE:
        with hooks.status(f"finding and verifying candidates among {len(docs):,} fingerprints"):
            found = dedupe(docs, same, band_keys=band_keys, planned=planned)
            return dataclasses.replace(found, config=config)
    gate = hamming_gate(config.threshold, bits) if config.hamming_gate else bits
    within_gate = float(np.cos(np.pi * gate / bits))
    with hooks.status(f"finding candidates among {len(docs):,} fingerprints"):
        first = dedupe(
            docs,
            dataclasses.replace(
                same, verify=Verify.ESTIMATE, threshold=within_gate, max_pairs=None, group_pairs=0
            ),
            band_keys=band_keys,
        )
    # The planner's sample too: the advice of a run whose share found is low prices its
    # schemes on those documents, as when every vector is held.
    ends = [chunk.pairs.ravel() for chunk in first.pairs.chunks(_CHUNK)]
    rows = distinct(np.concatenate([planner_rows(docs), *ends]))
    vectors = vectors_of(docs, rows, "those of candidate pairs and the planner's sample")
    with hooks.status(f"verifying candidates among {len(docs):,} documents"):
        found = dedupe(
            vectors, same, band_keys=band_keys, pilot=pilot, planned=planned, unpiloted=unpiloted
        )
        return dataclasses.replace(found, config=config)  # as asked, not as the scheme named


def placed_vectors(docs: Corpus, rows: NDArray[np.int64], read: Corpus) -> Corpus:
    """``docs`` with ``read``'s vectors (those of ``rows``, in order) at their rows.

    Raises:
        InputError: a document read again whose fingerprint is not the one it had.
    """
    if read.ids != [docs.ids[r] for r in rows.tolist()] or not np.array_equal(
        read.fingerprints, docs.fingerprints[rows]
    ):
        raise InputError(
            "a document changed while it was deduplicated (read again, its fingerprint is not "
            "the one it had): run the command again"
        )
    assert read.weights is not None
    given = sp.csr_array(read.weights)
    sizes = np.zeros(len(docs), dtype=np.int64)
    sizes[rows] = np.diff(given.indptr)  # rows ascend: the entries stay in their order
    indptr = np.zeros(len(docs) + 1, dtype=given.indptr.dtype)
    np.cumsum(sizes, out=indptr[1:])
    weights = sp.csr_array((given.data, given.indices, indptr), shape=(len(docs), given.shape[1]))
    return dataclasses.replace(docs, weights=weights, features=read.features)


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
    (:func:`~simhash_cli.core.planner.pilot_in_pieces`)."""
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

        def pairs_with(anchors: Vectors, rows: NDArray[np.int64]) -> list[PilotPart]:
            sets = kind == "texts"
            with hooks.status(f"reading the records again for the pilot's {rows.size:,} anchors"):
                return list(each_piece(docs, piece_pairs, anchors, rows, config.threshold, sets))

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
) -> PilotPart:
    """One piece's pairs with the pilot's anchors (its second pass); the piece's documents are
    rows ``first`` onwards."""
    vectors = _keyed_piece(piece, ids, kind, tokenizer, weighting, max_line, fields)
    rows = first + np.arange(len(ids), dtype=np.int64)
    return anchor_pairs(anchors, anchor_rows, vectors, rows, threshold, sets=sets)


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
