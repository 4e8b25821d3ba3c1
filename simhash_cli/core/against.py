"""Decontamination (``dedupe --against REF``): which documents come within the threshold of a
reference set (an evaluation set kept out of training data), and the reference document each
one matches best.

Only pairs of a document and a reference document count: the documents are not compared with
each other, nor the reference documents. Candidates are every such pair when there are at most
:data:`EVERY_PAIR` of them, so that the answer is exact; past that, the pairs that share a block
of their fingerprints (the fewest blocks that reach 0.95 expected recall at the threshold, or
``--blocks``), made by a sorted join on each block's values. Each candidate is then verified by
its true cosine (the documents' vectors and the reference's, compared in one space of 64-bit
feature keys: :func:`~simhash_cli.core.fingerprint.feature_keys`) or by the estimate
``cos(pi * hamming / bits)``.

The documents' vectors may live elsewhere (the dask engine's workers): ``rows`` fetches those of
the documents a chunk needs, a chunk at a time, so memory follows the chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import ParameterError
from . import blocking, cosines
from .corpus import Corpus
from .cosines import ScoredPairs, Verify
from .fingerprint import estimate_cosine_rows, feature_keys, hamming_rows
from .search import AUTO, DedupeConfig, suggest_blocks
from .verifier import sorted_pairs

__all__ = [
    "EVERY_PAIR",
    "Against",
    "Decontamination",
    "KeyedRows",
    "against",
    "keyed_rows",
]

EVERY_PAIR = 20_000_000
"""Pairs of a document and a reference document compared exhaustively at the most (by a
sparse product, chunk by chunk): a training set of 100,000 against an evaluation set of
200."""

_CHUNK_PAIRS = 2_000_000  # pairs a chunk of documents makes against the whole reference

KeyedRows = Callable[[NDArray[np.int64]], tuple[sp.csr_array, NDArray[np.uint64]]]
"""The weights of some documents (rows of the result in the order asked) and each column's
64-bit feature key."""


def keyed_rows(docs: Corpus) -> KeyedRows:
    """:data:`KeyedRows` of documents whose weights are here."""
    assert docs.weights is not None
    weights = sp.csr_array(docs.weights)
    keys = feature_keys(docs.features)

    def rows(which: NDArray[np.int64]) -> tuple[sp.csr_array, NDArray[np.uint64]]:
        return sp.csr_array(weights[which]), keys

    return rows


@dataclass(frozen=True)
class Against:
    """How candidates were found: ``every`` pair, or the pairs sharing one of ``blocks``."""

    kind: Literal["every", "blocks"]
    blocks: int
    expected_recall: float

    def label(self, bits: int) -> str:
        if self.kind == "every":
            return "every pair of a document and a reference document"
        plural = "block" if self.blocks == 1 else "blocks"
        return f"{self.blocks} {plural} of {bits // self.blocks} bits"


@dataclass(frozen=True)
class Decontamination:
    """Documents against a reference set.

    Attributes:
        corpus: the documents.
        reference: the reference documents (their vectors dropped).
        config: the threshold and the verification.
        scheme: how candidates were found.
        candidates: pairs compared.
        pairs: (document row, reference row) at or above the threshold, sorted.
        matched: each document's nearest reference row at or above the threshold, or -1.
        cosine: each document's cosine to it (the estimate when verifying by estimate; NaN
            where none).
    """

    corpus: Corpus
    reference: Corpus
    config: DedupeConfig
    scheme: Against
    candidates: int
    pairs: ScoredPairs
    matched: NDArray[np.int64]
    cosine: NDArray[np.float64]

    @property
    def flagged(self) -> NDArray[np.int64]:
        """The rows of the documents within the threshold of a reference document."""
        return np.flatnonzero(self.matched >= 0)


def against(
    docs: Corpus,
    reference: Corpus,
    config: DedupeConfig,
    rows: KeyedRows | None = None,
    *,
    every_pair: int = EVERY_PAIR,
) -> Decontamination:
    """The documents of ``docs`` within ``config.threshold`` of a document of ``reference``.

    Args:
        docs: the documents (their weights here, or fetched by ``rows``).
        reference: the reference set, with its weights for exact verification.
        config: threshold, verification, ``blocks`` (an int, or auto) and ``max_candidates``.
        rows: the documents' weights where they are not in ``docs``.
        every_pair: compare every pair when there are at most this many.

    Raises:
        ParameterError: exact verification without vectors.
        CandidateBudgetError: the blocks would make more than ``config.max_candidates``.
    """
    bits = docs.settings.bits
    exact = config.verify is Verify.EXACT
    if exact and (reference.weights is None or (rows is None and docs.weights is None)):
        raise ParameterError(
            "exact verification needs the vectors of both sides; {verify} estimate compares "
            "fingerprints",
            parameters=("verify",),
        )
    fetch = rows if rows is not None else (keyed_rows(docs) if exact else None)
    scheme = _scheme(len(docs) * len(reference), bits, config, every_pair)
    found: list[ScoredPairs] = []
    candidates = 0
    for chunk in _candidates(docs.fingerprints, reference.fingerprints, bits, scheme, config):
        candidates += len(chunk)
        if scheme.kind == "every" and fetch is not None:
            chunk = chunk[_near(chunk, reference, fetch, config.threshold)]
        scored = _scored(chunk, docs, reference, fetch, bits)
        found.append(
            scored.select(
                cosines.keep_mask(scored, threshold=config.threshold, verify=config.verify)
            )
        )
    pairs = sorted_pairs(found)
    matched, best = _nearest(pairs, len(docs), exact)
    kept = Corpus(reference.ids, reference.fingerprints, reference.n_features, reference.settings)
    return Decontamination(docs, kept, config, scheme, candidates, pairs, matched, best)


def _scheme(pairs: int, bits: int, config: DedupeConfig, every_pair: int) -> Against:
    if config.blocks == "every" or (config.blocks == AUTO and pairs <= every_pair):
        return Against("every", 0, 1.0)
    blocks = int(config.blocks) if config.blocks != AUTO else suggest_blocks(bits, config.threshold)
    blocks = blocking.validate_blocks(bits, blocks if blocks is not None else bits)
    probability = blocking.candidate_probability(config.threshold, bits=bits, blocks=blocks)
    return Against("blocks", blocks, float(probability))


def _candidates(
    fa: NDArray[np.uint64],
    fr: NDArray[np.uint64],
    bits: int,
    scheme: Against,
    config: DedupeConfig,
) -> Iterator[NDArray[np.int64]]:
    """(document row, reference row) candidates, a chunk of documents at a time."""
    n, m = fa.shape[0], fr.shape[0]
    if not n or not m:
        return
    step = max(1, _CHUNK_PAIRS // m)
    if scheme.kind == "every":
        for start in range(0, n, step):
            stop = min(n, start + step)
            i = np.repeat(np.arange(start, stop, dtype=np.int64), m)
            j = np.tile(np.arange(m, dtype=np.int64), stop - start)
            yield np.column_stack([i, j])
        return
    bounds = blocking.block_bounds(bits, scheme.blocks)
    keys_r = [_block_key(fr, start, width) for start, width in bounds]
    orders = [np.argsort(keys, kind="stable") for keys in keys_r]
    sorted_r = [keys[order] for keys, order in zip(keys_r, orders, strict=True)]
    total = 0
    for start in range(0, n, step):
        part = fa[start : start + step]
        codes = []
        for (start_bit, width), order, keys in zip(bounds, orders, sorted_r, strict=True):
            mine = _block_key(part, start_bit, width)
            first = np.searchsorted(keys, mine, side="left")
            sizes = np.searchsorted(keys, mine, side="right") - first
            rows = np.repeat(np.arange(part.shape[0], dtype=np.int64), sizes)
            at = blocking.run_positions(first.astype(np.int64), sizes.astype(np.int64))
            codes.append((rows + start) * m + order[at])
        joined = np.unique(np.concatenate(codes))  # a pair sharing several blocks, once
        total += joined.size
        if config.max_candidates is not None and total > config.max_candidates:
            raise blocking.budget_error(
                bits, scheme.blocks, None, total, n + m, config.max_candidates
            )
        yield np.column_stack([joined // m, joined % m])


def _block_key(fingerprints: NDArray[np.uint64], start: int, width: int) -> NDArray[np.uint64]:
    """Bits [start, start + width) of each fingerprint as one number: the block itself up to
    64 bits, a hash of its words past that (equal blocks, equal keys; a rare shared key is
    one more candidate, which verification refuses)."""
    words = blocking.bit_slice(fingerprints, start, width)
    key: NDArray[np.uint64] = words[:, 0].copy()
    for k in range(1, words.shape[1]):
        key = blocking.splitmix64(key ^ words[:, k])
    return key


def _near(
    pairs: NDArray[np.int64], reference: Corpus, rows: KeyedRows, threshold: float
) -> NDArray[np.bool_]:
    """Which of a chunk's every pairs may reach the threshold, by one sparse product of the
    chunk's unit rows with the reference's (pairs made of rows ``start..stop`` times every
    reference row, as :func:`_candidates` makes them): the pairs left are scored one by one
    (:func:`_scored`), with the cosines the rest of the tool computes."""
    assert reference.weights is not None
    wanted, local = np.unique(pairs[:, 0], return_inverse=True)
    weights, keys = rows(wanted)
    stacked = _one_space(weights, keys, sp.csr_array(reference.weights), reference.features)
    unit, _ = cosines.unit_rows(stacked)
    top, bottom = unit[: wanted.size], unit[wanted.size :]
    dots = sp.csr_array(top @ bottom.T).toarray()
    near: NDArray[np.bool_] = dots[local.ravel(), pairs[:, 1]] >= threshold - _MARGIN
    return near


# How far below the threshold a product's cosine may be and its pair still be scored: far
# beyond the few units in the last place by which two sums of the same products differ.
_MARGIN = 1e-6


def _scored(
    pairs: NDArray[np.int64],
    docs: Corpus,
    reference: Corpus,
    rows: KeyedRows | None,
    bits: int,
) -> ScoredPairs:
    """The candidates with their Hamming distances, estimates and (with ``rows``) cosines."""
    hamming = hamming_rows(docs.fingerprints[pairs[:, 0]], reference.fingerprints[pairs[:, 1]])
    estimate = estimate_cosine_rows(hamming, bits)
    cosine = np.full(len(pairs), np.nan)
    if rows is not None and len(pairs):
        assert reference.weights is not None
        wanted, local = np.unique(pairs[:, 0], return_inverse=True)
        weights, keys = rows(wanted)
        stacked = _one_space(weights, keys, sp.csr_array(reference.weights), reference.features)
        both = np.column_stack([local.ravel(), wanted.size + pairs[:, 1]])
        cosine = cosines.cosine_pairs(stacked, both)
    return ScoredPairs(pairs, hamming, estimate, cosine)


def _one_space(
    weights: sp.csr_array,
    keys: NDArray[np.uint64],
    reference: sp.csr_array,
    features: list[str],
) -> sp.csr_array:
    """The documents' rows over the reference's, in one space of columns: their feature keys."""
    ref_keys = feature_keys(features)
    used = np.unique(weights.indices)
    names, where = np.unique(np.concatenate([keys[used], ref_keys]), return_inverse=True)
    where = where.ravel()
    column = np.zeros(keys.size, dtype=np.int64)
    column[used] = where[: used.size]
    top = sp.csr_array(
        (weights.data, column[weights.indices], weights.indptr),
        shape=(weights.shape[0], names.size),
    )
    bottom = sp.csr_array(
        (reference.data, where[used.size :][reference.indices], reference.indptr),
        shape=(reference.shape[0], names.size),
    )
    return sp.csr_array(sp.vstack([top, bottom], format="csr"))


def _nearest(
    pairs: ScoredPairs, n: int, exact: bool
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each document's nearest reference row among ``pairs`` (ties: the first), or -1."""
    matched = np.full(n, -1, dtype=np.int64)
    best = np.full(n, np.nan)
    if not len(pairs):
        return matched, best
    value = pairs.cosine if exact else pairs.estimated_cosine
    order = np.lexsort((pairs.pairs[:, 1], -value, pairs.pairs[:, 0]))
    first = order[np.r_[True, np.diff(pairs.pairs[order, 0]) != 0]]
    matched[pairs.pairs[first, 0]] = pairs.pairs[first, 1]
    best[pairs.pairs[first, 0]] = value[first]
    return matched, best
