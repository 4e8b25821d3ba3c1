"""Exact verification from fingerprints, reading again only what needs vectors: the answer of
a run that held every document's vectors, in the memory of the fingerprints. The documents'
vectors, the planner's pilot and MinHash signatures are fetched by functions each caller
hands in (:data:`VectorsOf`, :data:`PilotOf`, :data:`BandKeysOf`): an index's stored files
read again (``dedupe --index``), records read again in pieces (``dedupe --memory
fingerprints``), or a cluster's workers (the dask engine).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..core.config import AUTO, EVERY, DedupeConfig
from ..core.corpus import Corpus
from ..core.distinct import distinct
from ..core.pipeline import dedupe
from ..core.result import DedupeResult
from ..core.search import blocking
from ..core.search.pilot import Pilot
from ..core.search.planner import choose_scheme, measures, planner_rows, scheme_for
from ..core.verify.cosines import Verify, hamming_gate
from ..errors import InputError
from .hooks import Hooks

__all__ = [
    "BandKeysOf",
    "PilotOf",
    "VectorsOf",
    "placed_vectors",
    "verified_from_candidates",
]

VectorsOf = Callable[[Corpus, NDArray[np.int64], str], Corpus]
"""``docs`` with the vectors of ``rows`` (the other rows empty), read again (``why``: for
what, as the run says)."""

PilotOf = Callable[[Corpus, DedupeConfig], Pilot | str]
"""The pilot of the documents at the config's threshold, made where their vectors are
(:func:`~simhash_cli.core.search.planner.pilot_in_pieces`), or why none runs."""

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
