"""The candidates of each scheme: pairs of distinct fingerprints (their positions in
``blocking.Copies``) with their Hamming distances, chunk by chunk, for the verifier.

Blocks and Manku's tables pair fingerprints; MinHash pairs the word sets of one document of
each fingerprint, then takes its fingerprint part's pairs that share no band (a union, each
pair once); every pair is the pairs whose documents' products come near the threshold.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
from numpy.typing import NDArray

from ...errors import ParameterError
from ..corpus import Corpus
from ..distinct import distinct_rows
from ..sketch import minhash
from ..sketch.fingerprint import feature_keys, hamming_rows
from . import allpairs, blocking, tables
from .pilot import Pilot
from .pricing import Scheme

__all__ = ["every_chunks", "fingerprint_chunks", "minhash_chunks"]


def fingerprint_chunks(
    docs: Corpus, scheme: Scheme, copies: blocking.Copies, max_candidates: int | None
) -> Iterable[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Candidates among distinct fingerprints from blocks or Manku's tables, with their
    Hamming distances."""
    bits, fps = docs.settings.bits, copies.fingerprints
    if scheme.max_distance is None:
        return blocking.candidate_chunks(fps, bits, scheme.blocks, max_candidates=max_candidates)
    within = tables.pairs_within(
        fps,
        scheme.max_distance,
        bits=bits,
        blocks=scheme.blocks if scheme.max_distance else None,
        max_pairs=max_candidates,
    )
    return [(within, hamming_rows(fps[within[:, 0]], fps[within[:, 1]]))]


def every_chunks(
    docs: Corpus, threshold: float, copies: blocking.Copies, pilot: Pilot | None
) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Every pair of distinct fingerprints that two of whose documents' product comes near
    the threshold (the pilot's pairs when it compared them all), once, with their Hamming
    distances. Documents, not one of each fingerprint, are compared: two texts may share a
    fingerprint and not their cosines with a third."""
    assert docs.weights is not None
    if pilot is not None and pilot.complete:
        pairs = pilot.pairs
    else:
        pairs = allpairs.near_pairs(docs.unit, threshold)
    label = np.empty(len(docs), dtype=np.int64)
    label[copies.members] = np.repeat(np.arange(copies.counts.size), copies.counts)
    grouped = np.sort(label[pairs], axis=1)
    grouped = distinct_rows(grouped[grouped[:, 0] != grouped[:, 1]])
    fps = copies.fingerprints
    yield grouped, hamming_rows(fps[grouped[:, 0]], fps[grouped[:, 1]])


def minhash_chunks(
    docs: Corpus,
    scheme: Scheme,
    copies: blocking.Copies,
    max_candidates: int | None,
    band_keys: NDArray[np.uint64] | None = None,
) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Candidates among distinct fingerprints from the bands of their first documents'
    MinHash signatures (seeded by the corpus's seed, or ``band_keys`` made elsewhere), with
    their Hamming distances; then those of the scheme's fingerprint part that share no band."""
    assert scheme.rows is not None
    if band_keys is not None:
        assert band_keys.shape == (copies.representatives.size, scheme.blocks)
        keys = band_keys
    else:
        if not docs.has_word_sets:
            raise ParameterError(
                "{minhash} needs documents of words with their vectors (files or {texts}, "
                "verified exactly)",
                parameters=("minhash", "texts"),
            )
        assert docs.weights is not None
        keys = minhash.banded(
            docs.weights,
            feature_keys(docs.features),
            bands=scheme.blocks,
            rows=scheme.rows,
            seed=docs.settings.seed,
            chosen=copies.representatives,
        )
    fps = copies.fingerprints
    for pairs in minhash.band_candidate_chunks(keys):
        yield pairs, hamming_rows(fps[pairs[:, 0]], fps[pairs[:, 1]])
    if scheme.also is None:
        return
    for pairs, distance in fingerprint_chunks(docs, scheme.also, copies, max_candidates):
        # Each pair once: those that share a band came above (a row of no features has the
        # key 0 in every band and shares none).
        banded = keys[pairs[:, 0], 0] != 0
        shared = np.zeros(pairs.shape[0], dtype=bool)
        for band in range(keys.shape[1]):
            shared |= keys[pairs[:, 0], band] == keys[pairs[:, 1], band]
        alone = ~(shared & banded)
        yield pairs[alone], distance[alone]
