"""Candidate pairs -> scored pairs: Hamming distance, estimated cosine and true cosine.

The estimate needs only the fingerprints: cos(pi * hamming / bits).  The true cosine needs the
weighted vectors; it is computed for every candidate in chunks of sparse row products, so the
cost is the candidates' non-zeros, never all pairs.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...errors import ParameterError
from ..config import Verify
from ..search.blocking import size_spans
from ..sketch.fingerprint import (
    estimate_cosine_rows,
    fingerprint_matrix,
    hamming_rows,
    validate_bits,
)
from ..threads import threaded

__all__ = [
    "ScoredPairs",
    "UnitRows",
    "Verify",
    "column_counts",
    "column_order",
    "cosine_pairs",
    "cross_cosine_pairs",
    "estimate_cosine_rows",
    "estimate_limit",
    "hamming_gate",
    "in_key_order",
    "keep_mask",
    "score_pairs",
    "sketch",
    "unit_cosine_pairs",
    "unit_rows",
    "unit_scales",
    "validate_threshold",
]

# A pair whose cosine rounds to within this of the threshold is at the threshold: two copies
# of one document must not be lost because their cosine came out as 0.9999999999999998.
THRESHOLD_TOLERANCE = 1e-9
# Stored entries gathered per chunk of pairs (both rows of every pair): bounds memory by a
# budget instead of by the number of candidates.
_CHUNK_ENTRIES = 1 << 22


def validate_threshold(threshold: float) -> float:
    """Return ``threshold`` if it is a cosine in [-1, 1], else raise ParameterError."""
    if not -1.0 <= threshold <= 1.0:
        raise ParameterError(f"threshold must be a cosine from -1 to 1, not {threshold}")
    return float(threshold)


# A candidate further than this quantile of the Hamming distance of a pair exactly at the
# threshold is not checked exactly: a pair at or above the threshold lands there with odds
# below this (pairs above the threshold even less often).
GATE_MISS = 1e-4


def hamming_gate(threshold: float, bits: int, *, miss: float = GATE_MISS) -> int:
    """Largest Hamming distance worth an exact check for pairs at cosine ``threshold``.

    A pair at cosine c differs in each bit with p = arccos(c) / pi, so its distance follows
    Binomial(bits, p); the gate is that distribution's (1 - miss) quantile: the least distance
    whose cumulative probability reaches 1 - miss (scipy.special's binomial CDF: importing
    scipy.stats for its ppf took a second of every run).
    """
    from scipy.special import bdtr  # here: a command that verifies nothing does not import it

    bits = validate_bits(bits)
    p = float(np.arccos(np.clip(validate_threshold(threshold), -1.0, 1.0)) / np.pi)
    cumulative = bdtr(np.arange(bits + 1), bits, p)
    return int(np.argmax(cumulative >= 1.0 - miss))


# A second gate, for when the fingerprints leave too many candidates to check exactly: a
# SimHash of this many bits of the same vectors, made for the candidates' documents only.
SKETCH_BITS = 256
# ... worth making when more candidates than this per document passed the first gate: a
# sketch costs about a 256-column product per document; an exact check, a merge of two rows.
SKETCH_PAIRS_PER_DOC = 16


def sketch(
    weights: sp.csr_array, features: Sequence[str], *, seed: int, bits: int = SKETCH_BITS
) -> NDArray[np.uint64]:
    """A ``bits``-bit SimHash of every row, for a second Hamming gate (:func:`hamming_gate` at
    ``bits``) when the fingerprints' own gate lets too many candidates through.

    At 256 bits a pair at cosine 0.9 lies within 59 bits with odds 1 - 1e-4, where unrelated
    pairs (cosine 0.5, about 85 bits) almost never do; at 64 bits the same quantile (21 bits
    of 64) lets a large share of them through. On 20,000 synthetic documents (bench/corpus.py,
    tfidf, 8 blocks) 2.9 million candidates passed the first gate and 2,418 this one.
    """
    return fingerprint_matrix(
        weights, features, bits=bits, seed=seed, batch_rows=2048, approximate=True
    )


def estimate_limit(threshold: float, bits: int) -> int:
    """Largest Hamming distance whose estimate cos(pi * d / bits) reaches ``threshold``
    (within :data:`THRESHOLD_TOLERANCE`, as :func:`keep_mask` judges it); -1 when none does."""
    distances = np.arange(validate_bits(bits) + 1)
    reaching = (
        estimate_cosine_rows(distances, bits) >= validate_threshold(threshold) - THRESHOLD_TOLERANCE
    )
    return int(distances[reaching].max()) if reaching.any() else -1


_COUNT_ENTRIES = 1 << 24
"""Column indices counted at once: bincount copies its input to 64-bit integers, which for a
million documents' 200 million entries would be 1.6 GB."""


def column_counts(weights: sp.csr_array) -> NDArray[np.int64]:
    """How many rows hold each column (the document frequency of each feature), counted a
    slice of the entries at a time."""
    df = np.zeros(weights.shape[1], dtype=np.int64)
    for start in range(0, weights.indices.size, _COUNT_ENTRIES):
        part = weights.indices[start : start + _COUNT_ENTRIES]
        df += np.bincount(part, minlength=weights.shape[1])
    return df


@dataclass(frozen=True)
class UnitRows:
    """A weight matrix whose rows are made unit (L2 norm 1) when they are asked for, so that
    the corpus is not held twice: the per-row scales are kept, the scaled rows are not.

    Cosine does not depend on scale, so neither may its arithmetic: each row is first divided
    by its largest absolute weight (entry by entry, so that a subnormal largest weight gives 1,
    not an infinite reciprocal), which keeps the squares of the norm between 1 and the row's
    length for every finite weight, 1e308 and 5e-324 alike; then by that scaled norm.

    Attributes:
        weights: the matrix, as given.
        largest: each row's largest absolute weight (0 for an all-zero row).
        norms: each row's norm after that first division (0 for an all-zero row).
    """

    weights: sp.csr_array
    largest: NDArray[np.float64]
    norms: NDArray[np.float64]
    order: NDArray[np.int64] | None = None
    """Each column's place in the one order every sum of a row's entries takes: its
    feature's rank among the features' 64-bit keys (:func:`column_order`); None when the
    columns are numbered in that order already (vectors keyed on a worker)."""

    @functools.cached_property
    def column_counts(self) -> NDArray[np.int64]:
        """:func:`column_counts` of the weights, counted once (the planner, the pilot's
        work and its suffixes each read them)."""
        return column_counts(self.weights)

    @property
    def has_norm(self) -> NDArray[np.bool_]:
        """Which rows have a direction (all-zero rows stay 0 and have no cosine)."""
        has: NDArray[np.bool_] = self.norms > 0
        return has

    def rows(self, which: NDArray[np.int64], *, reordered: bool = True) -> sp.csr_array:
        """Rows ``which`` (in that order), made unit: float64, summed, no zeros, their columns
        renumbered in the one order of their features' keys (``reordered``, for sums among
        themselves), or as the weights number them (for a product with the weights)."""
        chunk = _canonical(self.weights[which], self.order if reordered else None)
        owner = which[np.repeat(np.arange(which.size), np.diff(chunk.indptr))]
        data = chunk.data / self.largest[owner] / self.norms[owner]
        return sp.csr_array((data, chunk.indices, chunk.indptr), shape=chunk.shape)


def _canonical(weights: sp.csr_array, order: NDArray[np.int64] | None) -> sp.csr_array:
    """The rows as float64, each row's entries in the one order of the features' keys (so
    that a sum over them is the same bits on every engine, whatever numbered the columns)."""
    csr: sp.csr_array = sp.csr_array(weights).astype(np.float64)
    if order is not None:
        csr = sp.csr_array((csr.data, order[csr.indices], csr.indptr), shape=csr.shape)
    csr.sum_duplicates()  # sorts each row's entries by column
    csr.eliminate_zeros()
    return csr


def column_order(keys: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Each column's rank among ``keys`` (one 64-bit key per column,
    :func:`~simhash_cli.core.sketch.fingerprint.feature_keys`): the order in which every sum over a
    row's entries is taken, so that a cosine is the same bits whether the columns were
    numbered by first occurrence here or by key on a worker of the dask engine."""
    rank = np.empty(keys.size, dtype=np.int64)
    rank[np.argsort(keys, kind="stable")] = np.arange(keys.size, dtype=np.int64)
    return rank


def in_key_order(
    weights: sp.csr_array, keys: NDArray[np.uint64], *, in_place: bool = False
) -> tuple[sp.csr_array, NDArray[np.int64]]:
    """``weights`` with their columns renumbered by the rank of their ``keys``
    (:func:`column_order`) and each row's entries sorted, and the columns' new order (column
    ``c`` of the result is column ``order[c]`` of ``weights``).

    Numbered so once, a corpus's rows are in the one order of every sum already, and no
    later product sorts them again (:func:`_canonical` sorted every row each time it was
    taken: 1.6 s of a run on 100,000 prose records, where this takes 0.2 s). The rows are
    sorted a span at a time on :data:`~.threads.THREADS` threads; ``in_place``: in the
    arrays of ``weights`` (handed over by the caller), so that a corpus of a million
    documents is never held twice.
    """
    order = np.argsort(keys, kind="stable").astype(np.int64)
    if np.array_equal(order, np.arange(order.size)) and weights.has_sorted_indices:
        return weights, order
    rank = np.empty(order.size, dtype=weights.indices.dtype)
    rank[order] = np.arange(order.size, dtype=rank.dtype)
    given = weights.indices
    indices = given if in_place else np.empty_like(given)
    data = weights.data if in_place else weights.data.copy()
    indptr = weights.indptr

    def sort(span: tuple[int, int]) -> None:
        lo, hi = span
        start, stop = int(indptr[lo]), int(indptr[hi])
        indices[start:stop] = rank[given[start:stop]]
        part = sp.csr_array(
            (data[start:stop], indices[start:stop], indptr[lo : hi + 1] - start),
            shape=(hi - lo, weights.shape[1]),
            copy=False,
        )
        part.has_sorted_indices = False
        part.sort_indices()
        indices[start:stop], data[start:stop] = part.indices, part.data  # (views: in place)

    list(threaded(sort, size_spans(np.diff(indptr).astype(np.int64), _CHUNK_ENTRIES)))
    keyed = sp.csr_array((data, indices, indptr), shape=weights.shape, copy=False)
    keyed.has_sorted_indices = True
    return keyed, order


def unit_scales(weights: sp.csr_array, order: NDArray[np.int64] | None = None) -> UnitRows:
    """The scales of :class:`UnitRows`, found about _CHUNK_ENTRIES entries at a time
    (``order``: as :attr:`UnitRows.order`)."""
    n = weights.shape[0]
    largest = np.zeros(n, dtype=np.float64)
    norms = np.zeros(n, dtype=np.float64)

    # Rows in the one order already (a corpus numbered by key): their entries are read where
    # they are, not copied into a sorted matrix first. A stored zero adds nothing to a sum of
    # squares nor to a largest weight, so the sums are the same bits.
    canonical = order is None and weights.has_canonical_format

    def scales(span: tuple[int, int]) -> tuple[int, int, NDArray[np.float64], NDArray[np.float64]]:
        start, stop = span
        if canonical:
            first = int(weights.indptr[start])
            indptr = weights.indptr[start : stop + 1] - first
            raw = weights.data[first : int(weights.indptr[stop])]
        else:
            chunk = _canonical(weights[start:stop], order)
            indptr, raw = chunk.indptr, chunk.data
        counts = np.diff(indptr)
        filled = counts > 0
        part = np.zeros(stop - start, dtype=np.float64)
        if raw.size:
            # The largest of float32 counts found in float32: the same value, half the bytes.
            part[filled] = np.maximum.reduceat(np.abs(raw), indptr[:-1][filled])
        scale = np.repeat(part, counts)
        data = raw.astype(np.float64, copy=False)  # (read, never written)
        if np.all(part[filled] != 0):
            scaled = data / scale
        else:  # a row of stored zeros: its entries stay 0
            scaled = np.divide(data, scale, out=np.zeros_like(data), where=scale != 0)
        scaled *= scaled
        rows = np.repeat(np.arange(stop - start), counts)
        norm = np.sqrt(np.bincount(rows, weights=scaled, minlength=stop - start))
        return start, stop, part, norm

    # Spans side by side: the sorts and sums of a million documents took 10 s on one core.
    spans = size_spans(np.diff(weights.indptr).astype(np.int64), _CHUNK_ENTRIES)
    for start, stop, part, norm in threaded(scales, spans):
        largest[start:stop], norms[start:stop] = part, norm
    return UnitRows(weights, largest, norms, order)


def unit_rows(
    weights: sp.csr_array, order: NDArray[np.int64] | None = None
) -> tuple[sp.csr_array, NDArray[np.bool_]]:
    """Every row scaled to unit L2 norm (see :class:`UnitRows`), and which rows had a norm
    (its columns renumbered by ``order`` when one is given)."""
    scales = unit_scales(weights, order)
    return scales.rows(np.arange(weights.shape[0])), scales.has_norm


def cosine_pairs(
    weights: sp.csr_array, pairs: NDArray[np.int64], order: NDArray[np.int64] | None = None
) -> NDArray[np.float64]:
    """True cosine of rows i and j of ``weights`` for each pair (NaN where a row is all zero).

    Args:
        weights: (n_docs, n_features) CSR.
        pairs: (k, 2) int64 row indices.
        order: as :attr:`UnitRows.order`.

    Returns:
        float64 (k,), clipped to [-1, 1].
    """
    # Only the rows the pairs name are made unit (a row's scales are its own entries'): a
    # sample of pairs costs its documents, not the corpus.
    rows, local = np.unique(pairs, return_inverse=True)
    return unit_cosine_pairs(unit_scales(weights[rows], order), local.reshape(-1, 2))


def unit_cosine_pairs(unit: UnitRows, pairs: NDArray[np.int64]) -> NDArray[np.float64]:
    """:func:`cosine_pairs` with the scales found once (when pairs come in many chunks)."""
    out = np.empty(pairs.shape[0], dtype=np.float64)
    row_sizes = np.diff(unit.weights.indptr).astype(np.int64)
    cost = row_sizes[pairs[:, 0]] + row_sizes[pairs[:, 1]]

    def dots(span: tuple[int, int]) -> tuple[int, int, NDArray[np.float64]]:
        # Each document of the chunk made unit once, however many of its pairs there are (a
        # family of near-copies is mostly pairs of few documents); the same rows, the same sums.
        lo, hi = span
        docs, local = np.unique(pairs[lo:hi], return_inverse=True)
        local = local.reshape(-1, 2)
        made = unit.rows(docs)
        return lo, hi, np.asarray(made[local[:, 0]].multiply(made[local[:, 1]]).sum(axis=1))

    # Chunks side by side: each pair's sum is the same, whichever thread takes it.
    for lo, hi, found in threaded(dots, size_spans(cost, _CHUNK_ENTRIES)):
        out[lo:hi] = found.ravel()
    has_norm = unit.has_norm
    out[~(has_norm[pairs[:, 0]] & has_norm[pairs[:, 1]])] = np.nan
    return np.clip(out, -1.0, 1.0)


def cross_cosine_pairs(
    top: tuple[sp.csr_array, NDArray[np.bool_]],
    bottom: tuple[sp.csr_array, NDArray[np.bool_]],
    pairs: NDArray[np.int64],
) -> NDArray[np.float64]:
    """:func:`cosine_pairs` of row i of one matrix of unit rows and row j of another, both
    in one space of columns (each with which of its rows have a norm)."""
    (a, a_norm), (b, b_norm) = top, bottom
    out = np.empty(pairs.shape[0], dtype=np.float64)
    cost = np.diff(a.indptr).astype(np.int64)[pairs[:, 0]]
    cost += np.diff(b.indptr).astype(np.int64)[pairs[:, 1]]
    for lo, hi in size_spans(cost, _CHUNK_ENTRIES):
        chunk = pairs[lo:hi]
        dots = sp.csr_array(a[chunk[:, 0]]).multiply(sp.csr_array(b[chunk[:, 1]])).sum(axis=1)
        out[lo:hi] = np.asarray(dots).ravel()
    out[~(a_norm[pairs[:, 0]] & b_norm[pairs[:, 1]])] = np.nan
    return np.clip(out, -1.0, 1.0)


@dataclass(frozen=True)
class ScoredPairs:
    """Pairs with their scores, row k describing pair k.

    Attributes:
        pairs: (k, 2) int64, i < j.
        hamming: (k,) int64.
        estimated_cosine: (k,) float64.
        cosine: (k,) float64 true cosine, NaN where not computed.
    """

    pairs: NDArray[np.int64]
    hamming: NDArray[np.int64]
    estimated_cosine: NDArray[np.float64]
    cosine: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.pairs.shape[0])

    def select(self, mask: NDArray[np.bool_]) -> ScoredPairs:
        """The pairs where ``mask`` is True."""
        return ScoredPairs(
            self.pairs[mask], self.hamming[mask], self.estimated_cosine[mask], self.cosine[mask]
        )

    def rows(self, part: slice) -> ScoredPairs:
        """The pairs of the rows ``part``."""
        return ScoredPairs(
            self.pairs[part], self.hamming[part], self.estimated_cosine[part], self.cosine[part]
        )

    def chunks(self, size: int) -> Iterator[ScoredPairs]:
        """The pairs in order, ``size`` at a time (what a writer should read: pairs held
        elsewhere, as the dask engine's :class:`~simhash_cli.engines.dask.search.StreamedPairs`,
        come only this way)."""
        for start in range(0, len(self), size):
            yield self.rows(slice(start, start + size))


def score_pairs(
    pairs: NDArray[np.int64],
    fingerprints: NDArray[np.uint64],
    *,
    bits: int,
    weights: sp.csr_array | None = None,
    distances: NDArray[np.int64] | None = None,
) -> ScoredPairs:
    """Score pairs: Hamming and estimate always, true cosine when ``weights`` are given.

    ``distances``, the pairs' Hamming distances when the caller has them already.
    """
    bits = validate_bits(bits)
    if distances is None:
        distances = hamming_rows(fingerprints[pairs[:, 0]], fingerprints[pairs[:, 1]])
    cosine = np.full(pairs.shape[0], np.nan) if weights is None else cosine_pairs(weights, pairs)
    return ScoredPairs(pairs, distances, estimate_cosine_rows(distances, bits), cosine)


def keep_mask(scored: ScoredPairs, *, threshold: float, verify: Verify) -> NDArray[np.bool_]:
    """Which pairs reach the threshold under the chosen verification (NaN never does)."""
    threshold = validate_threshold(threshold)
    values = scored.cosine if verify is Verify.EXACT else scored.estimated_cosine
    with np.errstate(invalid="ignore"):
        mask: NDArray[np.bool_] = values >= threshold - THRESHOLD_TOLERANCE
    return mask
