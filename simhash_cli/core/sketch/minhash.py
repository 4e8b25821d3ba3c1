"""Token sets -> MinHash signatures -> candidate pairs by banding, in numpy.

A candidate path for prose, whose term-count vectors look alike for common words: the
Jaccard similarity of two documents' feature sets separates near-duplicates from unrelated
text with a collision chance of J per slot, where a sign bit of a fingerprint agrees with
1 - theta / pi. The signatures only propose pairs; exact cosine decides.

Signatures are one-permutation hashes (Li, Owen and Zhang 2012): every feature's 64-bit key
is mixed once, its high bits choose one of ``slots`` bins and its low 32 bits are its value,
and a document's signature holds the least value in each bin. That is one pass over the
entries, where k independent permutations would be k passes. A bin that none of a document's
features reaches is filled by optimal densification (Shrivastava 2017): bin j copies the
first non-empty bin of a sequence that depends on j and the seed alone, so two documents
with one set get one signature and each filled bin still collides with probability J.

Banding (Broder 1997; Indyk and Motwani 1998): ``bands`` bands of ``rows`` bins each; two
documents become candidates when they agree exactly on at least one band, with probability
1 - (1 - J^rows)^bands. Each band is held as one 64-bit key of its bins (:func:`band_keys`), so
a million documents' 15 bands of 8 bins are 120 MB where their signatures are 480 MB, and
grouping sorts one key a band instead of eight bins. Two bands that differ share a key with
chance 2**-64 a pair: a candidate too many, which verification turns away.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ...errors import ParameterError
from ..config import MAX_SLOTS
from ..search.blocking import equal_groups, pair_chunks, run_positions, size_spans, splitmix64

__all__ = [
    "EMPTY",
    "MAX_SLOTS",
    "band_candidate_chunks",
    "band_keys",
    "banded",
    "candidate_probability",
    "fewest_bands",
    "jaccard_pairs",
    "least_jaccard",
    "signatures",
]


_CHUNK_ENTRIES = 1 << 22
"""Stored entries of the weight matrix hashed at once (the temporaries of one chunk: ~100 MB)."""

EMPTY = np.uint32(0xFFFFFFFF)
"""The value of a bin no feature reached (values are below it: see :func:`_values`)."""

_SEED_MIX = np.uint64(0x9E3779B97F4A7C15)


def signatures(
    weights: sp.csr_array,
    keys: NDArray[np.uint64],
    *,
    slots: int = 128,
    seed: int = 0,
    rows: NDArray[np.int64] | None = None,
    chunk_entries: int = _CHUNK_ENTRIES,
) -> NDArray[np.uint32]:
    """The MinHash signature of every row's set of features (its stored entries; weights are
    not used), densified: (n, slots) uint32. A row without entries is all :data:`EMPTY`.

    Args:
        weights: CSR (n, n_features).
        keys: a 64-bit key for every column (one feature, one key, in every corpus:
            :func:`~simhash_cli.core.sketch.fingerprint.feature_keys`).
        slots: bins of the signature.
        seed: picks the hash function.
        rows: the rows to sign, in this order (default: all); the result has one per row.
        chunk_entries: stored entries hashed at once (whole rows; the result is the same).

    Raises:
        ParameterError: ``slots`` not from 1 to 2**16.
    """
    chosen = np.arange(weights.shape[0], dtype=np.int64) if rows is None else rows
    return _signed(weights, chosen, _Hashed.of(keys, slots, seed), chunk_entries)


def banded(
    weights: sp.csr_array,
    keys: NDArray[np.uint64],
    *,
    bands: int,
    rows: int,
    seed: int = 0,
    chosen: NDArray[np.int64] | None = None,
    chunk_entries: int = _CHUNK_ENTRIES,
) -> NDArray[np.uint64]:
    """:func:`band_keys` of the rows' :func:`signatures` of ``bands * rows`` bins (the
    ``chosen`` rows in order, by default all), signed a block of rows at a time so that the
    whole signature is never held: (n, bands) uint64.

    Raises:
        ParameterError: no band or row, or more than 2**16 bins.
    """
    _check_bands(bands, rows, bands * rows)  # (the bins are checked by _Hashed.of)
    chosen = np.arange(weights.shape[0], dtype=np.int64) if chosen is None else chosen
    hashed = _Hashed.of(keys, bands * rows, seed)
    result = np.empty((chosen.size, bands), dtype=np.uint64)
    step = max(1, _CHUNK_ENTRIES // (bands * rows))
    for start in range(0, chosen.size, step):
        block = _signed(weights, chosen[start : start + step], hashed, chunk_entries)
        result[start : start + step] = band_keys(block, bands=bands, rows=rows)
    return result


def band_keys(signature: NDArray[np.uint32], *, bands: int, rows: int) -> NDArray[np.uint64]:
    """One 64-bit key for each band of ``rows`` bins of each signature: (n, bands) uint64.

    Equal bands have equal keys, and bands that differ have different ones but with chance
    2**-64. A row all :data:`EMPTY` (no features) has key 0 in every band, and no other row
    has 0 anywhere (:func:`band_candidate_chunks` passes over such rows).

    Raises:
        ParameterError: no band or row, or more bins than the signature has.
    """
    _check_bands(bands, rows, signature.shape[1])
    keys = np.empty((signature.shape[0], bands), dtype=np.uint64)
    for band in range(bands):
        key = np.full(signature.shape[0], np.uint64(band) ^ _SEED_MIX, dtype=np.uint64)
        for column in range(band * rows, (band + 1) * rows):
            key = splitmix64(key ^ signature[:, column].astype(np.uint64))
        key[key == 0] = 1
        keys[:, band] = key
    keys[signature[:, 0] == EMPTY] = 0
    return keys


def _check_bands(bands: int, rows: int, bins: int) -> None:
    if bands < 1 or rows < 1 or bands * rows > bins:
        raise ParameterError(
            f"{bands} bands of {rows} rows need {bands * rows} bins; the signatures have {bins}"
        )


@dataclass(frozen=True)
class _Hashed:
    """Each feature's bin (of ``slots``) and value under one seed."""

    bins: NDArray[np.int32]
    values: NDArray[np.uint32]
    slots: int
    seed: int

    @staticmethod
    def of(keys: NDArray[np.uint64], slots: int, seed: int) -> _Hashed:
        if not 1 <= slots <= 1 << 16:
            raise ParameterError(f"slots must be from 1 to 65536, not {slots}")
        hashed = splitmix64(keys.astype(np.uint64) ^ splitmix64(np.array([seed], np.uint64)))
        bins = ((hashed >> np.uint64(32)) % np.uint64(slots)).astype(np.int32)
        return _Hashed(bins, _values(hashed), slots, seed)


def _signed(
    weights: sp.csr_array, chosen: NDArray[np.int64], hashed: _Hashed, chunk_entries: int
) -> NDArray[np.uint32]:
    """The densified signatures of the ``chosen`` rows."""
    slots = hashed.slots
    result = np.full((chosen.size, slots), EMPTY, dtype=np.uint32)
    flat = result.reshape(-1)
    sizes = np.diff(weights.indptr)[chosen].astype(np.int64)
    for start, stop in size_spans(sizes, chunk_entries):
        part = slice(start, stop)
        entries = run_positions(weights.indptr[chosen[part]].astype(np.int64), sizes[part])
        columns = weights.indices[entries]
        local = np.repeat(np.arange(start, stop, dtype=np.int64), sizes[part])
        np.minimum.at(flat, local * slots + hashed.bins[columns], hashed.values[columns])
    _densify(result, hashed.seed)
    return result


def _values(hashed: NDArray[np.uint64]) -> NDArray[np.uint32]:
    """The low 32 bits, with EMPTY itself moved one down (so that it marks empty bins only)."""
    values: NDArray[np.uint32] = (hashed & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    values[values == EMPTY] = EMPTY - np.uint32(1)
    return values


def _densify(signature: NDArray[np.uint32], seed: int) -> None:
    """Fill every empty bin of rows that have a non-empty one, in place: bin j of a row takes
    the value of bin ``pick(j, 1)``, ``pick(j, 2)``, ..., the first of them that the row's
    features reached (the sequence is the same for every row). Rows are filled a block of
    about _CHUNK_ENTRIES bins at a time (the empty bins' positions are held for one block)."""
    rows_at_once = max(1, _CHUNK_ENTRIES // max(1, signature.shape[1]))
    for start in range(0, signature.shape[0], rows_at_once):
        _densify_rows(signature[start : start + rows_at_once], seed)


def _densify_rows(signature: NDArray[np.uint32], seed: int) -> None:
    """:func:`_densify` on a block of rows (a view, filled in place)."""
    filled = signature != EMPTY
    rows, bins = np.nonzero(~filled & filled.any(axis=1)[:, None])
    slots = signature.shape[1]
    attempt = 0
    while rows.size:
        attempt += 1
        source = _pick(bins, attempt, slots, seed)
        found = filled[rows, source]
        signature[rows[found], bins[found]] = signature[rows[found], source[found]]
        rows, bins = rows[~found], bins[~found]


def _pick(bins: NDArray[np.int64], attempt: int, slots: int, seed: int) -> NDArray[np.int64]:
    key = (bins.astype(np.uint64) << np.uint64(32)) ^ np.uint64(attempt) ^ _SEED_MIX
    mixed = splitmix64(key ^ splitmix64(np.array([seed], np.uint64)))
    picked: NDArray[np.int64] = (mixed % np.uint64(slots)).astype(np.int64)
    return picked


def candidate_probability(jaccard: ArrayLike, *, bands: int, rows: int) -> NDArray[np.float64]:
    """The chance that a pair at Jaccard similarity ``jaccard`` agrees on a band: the S-curve
    1 - (1 - J^rows)^bands."""
    j = np.asarray(jaccard, dtype=np.float64)
    result: NDArray[np.float64] = 1.0 - (1.0 - j**rows) ** bands
    return result


def least_jaccard(cosine: ArrayLike) -> NDArray[np.float64]:
    """The least Jaccard similarity two sets can have when the cosine of their 0/1 vectors is
    ``cosine`` (c^2, when one set holds the other and is 1/c^2 times as large; 0 for c <= 0).

    It is what the planner designs MinHash schemes for: a pair of documents at cosine T with
    weights that follow presence overlaps at least T^2. Term counts can reach cosine T with
    less overlap (a common word counted many times), which is why every run also estimates
    its recall from the pairs it found.
    """
    c = np.clip(np.asarray(cosine, dtype=np.float64), 0.0, 1.0)
    least: NDArray[np.float64] = c * c
    return least


def fewest_bands(jaccard: float, rows: int, target: float) -> int | None:
    """The fewest bands of ``rows`` bins that catch a pair at ``jaccard`` with probability
    >= ``target`` and fit in :data:`MAX_SLOTS` bins; None when none do."""
    most = MAX_SLOTS // rows
    for bands in range(1, most + 1):
        if float(candidate_probability(jaccard, bands=bands, rows=rows)) >= target:
            return bands
    return None


def jaccard_pairs(weights: sp.csr_array, pairs: NDArray[np.int64]) -> NDArray[np.float64]:
    """The exact Jaccard similarity of the sets of stored features of each pair of rows
    (1.0 for two empty rows)."""
    # Each distinct pair once (a sample of a small corpus repeats its few pairs), the rows of
    # a chunk of them at a time, as sets: no copy of the rows they name is ever held whole.
    distinct, back = np.unique(pairs, axis=0, return_inverse=True)
    sizes = np.diff(weights.indptr).astype(np.int64)
    first, second = distinct[:, 0], distinct[:, 1]
    shared = np.empty(first.size, dtype=np.float64)
    for lo, hi in size_spans(sizes[first] + sizes[second], _CHUNK_ENTRIES):
        both = _sets(weights[first[lo:hi]]).multiply(_sets(weights[second[lo:hi]]))
        shared[lo:hi] = np.asarray(both.sum(axis=1), dtype=np.float64).ravel()
    union = sizes[first] + sizes[second] - shared
    jaccard: NDArray[np.float64] = np.divide(
        shared, union, out=np.ones_like(shared), where=union > 0
    )
    return jaccard[back.reshape(-1)]


def _sets(rows: sp.csr_array) -> sp.csr_array:
    """The rows as sets: a 1 at each stored feature."""
    rows = sp.csr_array(rows)
    ones = np.ones(rows.indices.size, dtype=np.float32)
    return sp.csr_array((ones, rows.indices, rows.indptr), shape=rows.shape)


def band_candidate_chunks(
    keys: NDArray[np.uint64], *, chunk_pairs: int = 1 << 20
) -> Iterator[NDArray[np.int64]]:
    """Every pair (i < j) of rows that share the key of at least one band (``keys``, from
    :func:`band_keys`), each once (from the first band they share), in chunks of about
    ``chunk_pairs``. Rows whose keys are 0 (no features) are never candidates."""
    alive = np.flatnonzero(keys[:, 0] != 0)
    live = keys if alive.size == keys.shape[0] else keys[alive]  # no copy
    for band in range(keys.shape[1]):
        order, starts, sizes = equal_groups(_digits(live[:, band]))
        for local in pair_chunks(order, starts, sizes, chunk_pairs):
            earlier = np.zeros(local.shape[0], dtype=bool)
            for before in range(band):  # a band at a time: memory of one key per pair
                earlier |= live[local[:, 0], before] == live[local[:, 1], before]
            local = local[~earlier]
            if local.size:
                yield alive[local]


def _digits(column: NDArray[np.uint64]) -> list[NDArray[np.uint16]]:
    """A band's keys as four 16-bit digits, for
    :func:`~simhash_cli.core.search.blocking.equal_groups`."""
    quarters = np.ascontiguousarray(column).view(np.uint16).reshape(-1, 4)
    return [quarters[:, k] for k in range(4)]
