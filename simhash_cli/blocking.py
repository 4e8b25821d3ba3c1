"""Fingerprints -> candidate pairs, by exact equality of fingerprint blocks.

Cut every b-bit fingerprint into ``blocks`` equal blocks of r = b / blocks bits; two documents
become candidates when they agree exactly on at least one block.  Pigeonhole (Manku, Jain and
Das Sarma 2007): two fingerprints that differ in fewer than ``blocks`` bits cannot have a
difference in every block, so every pair within ``blocks - 1`` bits is a candidate, whatever the
seed.  Beyond that the scheme is probabilistic: each bit differs with probability
p = theta / pi, a block matches with (1 - p)^r, and a pair becomes a candidate with
1 - (1 - (1 - p)^r)^blocks, the S-curve :func:`candidate_probability` computes.

Grouping sorts each block's keys once (O(n log n) per block); pairs are generated inside the
groups with array arithmetic, never with a Python loop per pair.

:func:`pairs_within` is the other scheme, Manku's permuted tables: m > k blocks and one table
per choice of m - k of them as the key, so that every pair within k bits meets in some table
and is found for certain; only pairs sharing a key are ever compared.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ParameterError, SimhashError
from .fingerprint import as_fingerprint_array, hamming_rows, validate_bits

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "CandidateBudgetError",
    "block_equalities",
    "block_keys",
    "candidate_probability",
    "candidates",
    "choose_tables",
    "count_candidates",
    "pairs_within",
    "table_key_bits",
    "validate_blocks",
    "within_probability",
]

DEFAULT_MAX_CANDIDATES = 20_000_000


class CandidateBudgetError(SimhashError):
    """The blocking scheme would produce more candidate pairs than the budget allows."""


def validate_blocks(bits: int, blocks: int) -> int:
    """Return ``blocks`` if it divides ``bits``, else raise ParameterError."""
    bits = validate_bits(bits)
    if isinstance(blocks, bool) or not isinstance(blocks, (int, np.integer)):
        raise ParameterError(f"blocks must be an integer, not {type(blocks).__name__}")
    if not (1 <= blocks <= bits and bits % blocks == 0):
        raise ParameterError(f"blocks must divide bits ({bits}) evenly, not {blocks}")
    return int(blocks)


def _bit_slice(words: NDArray[np.uint64], start: int, width: int) -> NDArray[np.uint64]:
    """Bits [start, start + width) of every row, as (n, ceil(width / 64)) uint64 words."""
    n = words.shape[0]
    out = np.zeros((n, (width + 63) // 64), dtype=np.uint64)
    for k in range(out.shape[1]):
        lo = start + 64 * k
        take = min(64, width - 64 * k)
        word, offset = divmod(lo, 64)
        value = words[:, word] >> np.uint64(offset)
        if offset and offset + take > 64:
            value |= words[:, word + 1] << np.uint64(64 - offset)
        if take < 64:
            value &= np.uint64((1 << take) - 1)
        out[:, k] = value
    return out


def block_keys(
    fingerprints: NDArray[np.uint64], *, bits: int, blocks: int
) -> list[NDArray[np.uint64] | NDArray[np.int64]]:
    """One key per document and block: two documents share a key iff they share that block.

    Args:
        fingerprints: (n, n_words) uint64.
        bits: fingerprint width.
        blocks: number of equal blocks (a divisor of bits).

    Returns:
        ``blocks`` arrays of shape (n,): the block value itself (uint64) when a block fits in
        64 bits, else a dense group number (int64).
    """
    blocks = validate_blocks(bits, blocks)
    width = bits // blocks
    keys: list[NDArray[np.uint64] | NDArray[np.int64]] = []
    for block in range(blocks):
        sliced = _bit_slice(fingerprints, block * width, width)
        if sliced.shape[1] == 1:
            keys.append(sliced[:, 0])
        else:
            _, groups = np.unique(sliced, axis=0, return_inverse=True)
            keys.append(groups.reshape(-1).astype(np.int64))
    return keys


def _groups(
    key: ArrayLike, key_bits: int = 64
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(order, starts, sizes) of the runs of equal keys of size >= 2, in sorted key order.

    When the key and a row number fit in 64 bits together, they are packed and sorted as
    values, which is about twice as fast as an argsort.
    """
    keys = np.asarray(key)
    index_bits = max(int(keys.size - 1).bit_length(), 1)
    if keys.dtype == np.uint64 and key_bits + index_bits <= 64:
        packed = (keys << np.uint64(index_bits)) | np.arange(keys.size, dtype=np.uint64)
        packed.sort()
        order = (packed & np.uint64((1 << index_bits) - 1)).astype(np.int64)
        ordered = packed >> np.uint64(index_bits)
    else:
        order = np.argsort(keys, kind="stable").astype(np.int64)
        ordered = keys[order]
    change = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    starts = np.concatenate(([0], change)).astype(np.int64)
    sizes = np.diff(np.concatenate((starts, [keys.size]))).astype(np.int64)
    shared = sizes >= 2
    return order, starts[shared], sizes[shared]


def _pair_chunks(
    order: NDArray[np.int64],
    starts: NDArray[np.int64],
    sizes: NDArray[np.int64],
    chunk_pairs: int | None = None,
) -> Iterator[NDArray[np.int64]]:
    """Every pair of positions within each group, as (k, 2) document indices i < j, yielded in
    chunks of about ``chunk_pairs`` (None: one chunk) so that even one hot group of thousands
    of documents never has all its pairs in memory at once."""
    if sizes.size == 0:
        return
    # Each position p of a group of size s starting at st pairs with the positions after it.
    first = np.repeat(starts, sizes)
    ends = np.repeat(starts + sizes, sizes)
    positions = first + (np.arange(first.size) - np.repeat(np.cumsum(sizes) - sizes, sizes))
    partners = ends - positions - 1
    total = np.cumsum(partners)
    if chunk_pairs is None or total[-1] <= chunk_pairs:
        cuts = np.array([], dtype=np.int64)
    else:
        cuts = np.unique(np.searchsorted(total, np.arange(chunk_pairs, total[-1], chunk_pairs)))
    for lo, hi in zip(
        np.concatenate(([0], cuts)).tolist(),
        np.concatenate((cuts, [positions.size])).tolist(),
        strict=True,
    ):
        if hi <= lo:
            continue
        chunk_partners = partners[lo:hi]
        left = np.repeat(positions[lo:hi], chunk_partners)
        offsets = np.arange(left.size) - np.repeat(
            np.cumsum(chunk_partners) - chunk_partners, chunk_partners
        )
        a, b = order[left], order[left + 1 + offsets]
        yield np.stack((np.minimum(a, b), np.maximum(a, b)), axis=1)


def _pairs_in_groups(
    order: NDArray[np.int64], starts: NDArray[np.int64], sizes: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Every pair of positions within each group -> (k, 2) document indices, i < j."""
    chunks = list(_pair_chunks(order, starts, sizes))
    return np.concatenate(chunks) if chunks else np.empty((0, 2), dtype=np.int64)


def _pair_count(sizes: NDArray[np.int64]) -> int:
    """Pairs within groups of these sizes: the sum of s(s-1)/2."""
    return int((sizes * (sizes - 1) // 2).sum())


def count_candidates(fingerprints: NDArray[np.uint64], *, bits: int, blocks: int) -> int:
    """Upper bound on the candidate pairs :func:`candidates` would return (pairs per block, summed).

    Cheap (one sort per block), so a caller can refuse a scheme before materializing pairs.
    """
    total = 0
    for key in block_keys(fingerprints, bits=bits, blocks=blocks):
        _, _, sizes = _groups(key)
        total += _pair_count(sizes)
    return total


def candidates(
    fingerprints: Sequence[int] | NDArray[np.uint64],
    bits: int,
    blocks: int,
    *,
    max_candidates: int | None = DEFAULT_MAX_CANDIDATES,
) -> NDArray[np.int64]:
    """Pairs of documents that share at least one exact block: the reference's ``candidates``.

    Args:
        fingerprints: ints, or uint64 array (n,) for bits <= 64, or (n, n_words).
        bits: fingerprint width.
        blocks: number of equal blocks; 1 = strict, 4 = balanced, 8 = loose on the page.
        max_candidates: refuse (CandidateBudgetError) when the blocks would yield more pairs
            than this, before building them; None for no limit.

    Returns:
        int64 array (n_pairs, 2) of index pairs i < j, unique, sorted.
    """
    words = as_fingerprint_array(fingerprints, bits)
    n = words.shape[0]
    keys = block_keys(words, bits=bits, blocks=blocks)
    grouped = [_groups(key) for key in keys]
    expected = sum(_pair_count(sizes) for _, _, sizes in grouped)
    if max_candidates is not None and expected > max_candidates:
        raise CandidateBudgetError(
            f"{blocks} block{'' if blocks == 1 else 's'} of {bits // blocks} bits would give up to "
            f"{expected:,} candidate pairs "
            f"among {n:,} documents (budget {max_candidates:,}). Fewer, longer blocks "
            "(a smaller --blocks) give fewer candidates; when most documents look alike to the "
            "fingerprint (common words dominate term counts), --weighting tfidf helps; "
            "--max-candidates raises the budget"
        )
    if expected == 0:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.concatenate([_pairs_in_groups(*group) for group in grouped])
    codes = pairs[:, 0] * np.int64(n) + pairs[:, 1]
    # Sort, then drop repeats: several times faster than np.unique's hash table here.
    codes.sort()
    codes = codes[np.concatenate(([True], codes[1:] != codes[:-1]))]
    return np.stack((codes // n, codes % n), axis=1)


def candidate_probability(cosine: ArrayLike, *, bits: int, blocks: int) -> NDArray[np.float64]:
    """Probability that a pair with this true cosine becomes a candidate (the S-curve).

    Each fingerprint bit differs with p = arccos(cosine) / pi (Charikar), independently across
    bits, so a block of r = bits / blocks bits matches with (1 - p)^r and at least one of the
    blocks does with 1 - (1 - (1 - p)^r)^blocks.
    """
    blocks = validate_blocks(bits, blocks)
    c = np.clip(np.asarray(cosine, dtype=np.float64), -1.0, 1.0)
    p = np.arccos(c) / np.pi
    block_match = (1.0 - p) ** (bits // blocks)
    result: NDArray[np.float64] = 1.0 - (1.0 - block_match) ** blocks
    return result


# ---------------------------------------------------------------------------- Manku's tables


def _block_bounds(bits: int, blocks: int) -> list[tuple[int, int]]:
    """(start, width) of ``blocks`` contiguous blocks covering ``bits``, widths differing by
    at most one (the first ``bits % blocks`` blocks one bit wider)."""
    base, extra = divmod(bits, blocks)
    bounds, start = [], 0
    for block in range(blocks):
        width = base + (1 if block < extra else 0)
        bounds.append((start, width))
        start += width
    return bounds


def _table_cost(n: int, bits: int, blocks: int, max_distance: int) -> float:
    """Expected work of one scheme: a sort per table plus the chance pairs it must check.

    Two unrelated fingerprints share a table's key with probability 2^-(key bits); the key of
    a table is the bits outside the ``max_distance`` blocks it leaves out.
    """
    widths = sorted((w for _, w in _block_bounds(bits, blocks)), reverse=True)
    key_bits = bits - sum(widths[:max_distance])
    tables = math.comb(blocks, max_distance)
    chance_pairs = n * (n - 1) / 2 * 2.0**-key_bits
    return tables * (n * max(math.log2(max(n, 2)), 1.0) + 4.0 * chance_pairs)


def choose_tables(n: int, bits: int, max_distance: int) -> int:
    """Number of blocks m for Manku's tables: the m > max_distance with the least expected work.

    More blocks mean shorter keys (more chance pairs) but more tables (C(m, k) sorts).
    """
    if max_distance <= 0:
        return 1
    candidates_m = range(max_distance + 1, min(bits, max_distance + 12) + 1)
    return min(candidates_m, key=lambda m: _table_cost(n, bits, m, max_distance))


def _table_key(
    words: NDArray[np.uint64], bounds: Sequence[tuple[int, int]]
) -> NDArray[np.uint64] | NDArray[np.int64]:
    """The bits of the given blocks, concatenated: uint64 when they fit, else group numbers."""
    total = sum(width for _, width in bounds)
    if total <= 64:
        key = np.zeros(words.shape[0], dtype=np.uint64)
        shift = 0
        for start, width in bounds:
            key |= _bit_slice(words, start, width)[:, 0] << np.uint64(shift)
            shift += width
        return key
    parts = np.concatenate([_bit_slice(words, start, width) for start, width in bounds], axis=1)
    _, groups = np.unique(parts, axis=0, return_inverse=True)
    return groups.reshape(-1).astype(np.int64)


def _close_pairs_in_groups(
    words: NDArray[np.uint64],
    order: NDArray[np.int64],
    starts: NDArray[np.int64],
    sizes: NDArray[np.int64],
    max_distance: int,
    chunk_pairs: int,
) -> NDArray[np.int64]:
    """The pairs within each group that are within ``max_distance`` bits, built in chunks so
    that memory follows ``chunk_pairs``, not the number of pairs sharing a key."""
    kept = [np.empty((0, 2), dtype=np.int64)]
    for pairs in _pair_chunks(order, starts, sizes, chunk_pairs):
        close = hamming_rows(words[pairs[:, 0]], words[pairs[:, 1]]) <= max_distance
        kept.append(pairs[close])
    return np.concatenate(kept)


def _unique_rows(pairs: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    """Distinct (i, j) rows, sorted."""
    if pairs.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    codes = pairs[:, 0] * np.int64(n) + pairs[:, 1]
    codes.sort()
    codes = codes[np.concatenate(([True], codes[1:] != codes[:-1]))]
    return np.stack((codes // n, codes % n), axis=1)


def _expand_duplicates(
    rep_pairs: NDArray[np.int64], inverse: NDArray[np.int64], n_reps: int
) -> NDArray[np.int64]:
    """Pairs of distinct fingerprints -> pairs of documents: every member of one with every
    member of the other, plus every pair of members sharing one fingerprint."""
    members = np.argsort(inverse, kind="stable").astype(np.int64)
    counts = np.bincount(inverse, minlength=n_reps).astype(np.int64)
    first = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    same = _pairs_in_groups(members, first[counts >= 2], counts[counts >= 2])
    if rep_pairs.size == 0:
        return same
    a, b = rep_pairs[:, 0], rep_pairs[:, 1]
    size_a, size_b = counts[a], counts[b]
    per_pair = size_a * size_b
    pair_of = np.repeat(np.arange(rep_pairs.shape[0]), per_pair)
    rank = np.arange(pair_of.size) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    left = members[first[a][pair_of] + rank // size_b[pair_of]]
    right = members[first[b][pair_of] + rank % size_b[pair_of]]
    cross = np.stack((np.minimum(left, right), np.maximum(left, right)), axis=1)
    return np.concatenate((same, cross))


def _distinct_rows(
    words: NDArray[np.uint64],
) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
    """(distinct fingerprints, index of each input's fingerprint among them)."""
    if words.shape[1] != 1:
        distinct, inverse = np.unique(words, axis=0, return_inverse=True)
        return distinct, inverse.reshape(-1).astype(np.int64)
    values = words[:, 0]
    order = np.argsort(values)
    ordered = values[order]
    first = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    inverse = np.empty(values.size, dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first][:, None], inverse


def pairs_within(
    fingerprints: NDArray[np.uint64],
    max_distance: int,
    *,
    bits: int | None = None,
    blocks: int | None = None,
    chunk_pairs: int = 1 << 22,
    max_pairs: int | None = None,
) -> NDArray[np.int64]:
    """Exactly the pairs of fingerprints within ``max_distance`` bits (Manku's tables).

    Identical fingerprints are collapsed first, so a thousand copies of one page cost one
    entry in every table. The distinct ones are cut into m > k blocks (m chosen from the number
    of fingerprints by :func:`choose_tables`) and one table is sorted per choice of m - k
    blocks as its key. Two fingerprints within k bits differ in at most k blocks, so they agree
    on the m - k others and meet in that table: every close pair is found, and only pairs
    sharing a key are ever compared, each checked right away so memory stays bounded.

    Args:
        fingerprints: uint64 (n,) for up to 64 bits, or (n, n_words).
        max_distance: k, the largest Hamming distance reported (0 = identical fingerprints).
        bits: fingerprint width (default: 64 per word).
        blocks: m, to override the choice (must exceed ``max_distance``).
        chunk_pairs: pairs built at once inside the tables.
        max_pairs: refuse (CandidateBudgetError) to compare, or to return, more pairs than
            this (copies of one fingerprint are all within 0 bits of each other).

    Returns:
        int64 (n_pairs, 2), i < j, sorted, unique.
    """
    words = np.asarray(fingerprints, dtype=np.uint64)
    if words.ndim == 1:
        words = words[:, None]
    width = 64 * words.shape[1] if bits is None else int(bits)
    words = as_fingerprint_array(words, validate_bits(width))
    if isinstance(max_distance, bool) or not 0 <= max_distance < width:
        raise ParameterError(f"max_distance must be from 0 to {width - 1}, not {max_distance}")
    n = words.shape[0]
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    distinct, inverse = _distinct_rows(words)
    n_reps = distinct.shape[0]
    found: list[NDArray[np.int64]] = [np.empty((0, 2), dtype=np.int64)]
    if max_distance > 0 and n_reps > 1:
        m = choose_tables(n_reps, width, max_distance) if blocks is None else int(blocks)
        if not max_distance < m <= width:
            raise ParameterError(f"blocks must be from {max_distance + 1} to {width}, not {m}")
        bounds = _block_bounds(width, m)
        compared = 0
        for kept in itertools.combinations(range(m), m - max_distance):
            chosen = [bounds[i] for i in kept]
            key = _table_key(distinct, chosen)
            order, starts, sizes = _groups(key, sum(width for _, width in chosen))
            compared += _pair_count(sizes)
            if max_pairs is not None and compared > max_pairs:
                raise CandidateBudgetError(
                    f"{math.comb(m, max_distance)} tables for pairs within {max_distance} bits "
                    f"would compare more than {max_pairs:,} pairs of fingerprints among "
                    f"{n_reps:,} distinct ones: they are too alike for this scheme. Fewer bits "
                    "of distance, more --bits or --weighting tfidf (when common words make "
                    "every document alike) help; --max-candidates raises the budget"
                )
            found.append(
                _close_pairs_in_groups(distinct, order, starts, sizes, max_distance, chunk_pairs)
            )
    rep_pairs = _unique_rows(np.concatenate(found), n_reps)
    if max_pairs is not None:
        copies = np.bincount(inverse, minlength=n_reps).astype(np.int64)
        total = _pair_count(copies)
        total += int((copies[rep_pairs[:, 0]] * copies[rep_pairs[:, 1]]).sum())
        if total > max_pairs:
            raise CandidateBudgetError(
                f"{total:,} pairs of documents are within {max_distance} bits of each other "
                f"(budget {max_pairs:,}), mostly copies of the same fingerprint; "
                "--max-candidates raises the budget"
            )
    return _unique_rows(_expand_duplicates(rep_pairs, inverse, n_reps), n)


def within_probability(cosine: ArrayLike, *, bits: int, max_distance: int) -> NDArray[np.float64]:
    """Probability that a pair with this true cosine is within ``max_distance`` bits: the
    binomial distribution of differing bits, each differing with p = arccos(cosine) / pi."""
    bits = validate_bits(bits)
    c = np.clip(np.asarray(cosine, dtype=np.float64), -1.0, 1.0)
    p = np.arccos(c) / np.pi
    result = np.zeros_like(p)
    for d in range(max_distance + 1):
        result = result + math.comb(bits, d) * p**d * (1.0 - p) ** (bits - d)
    clipped: NDArray[np.float64] = np.clip(result, 0.0, 1.0)
    return clipped


def block_equalities(
    first: NDArray[np.uint64], second: NDArray[np.uint64], *, bits: int, blocks: int
) -> NDArray[np.bool_]:
    """(k, blocks) whether each pair of rows agrees on each of ``blocks`` near-equal blocks
    (the blocks of Manku's tables; equal blocks when ``blocks`` divides ``bits``)."""
    result = np.empty((first.shape[0], blocks), dtype=bool)
    for column, (start, width) in enumerate(_block_bounds(bits, blocks)):
        result[:, column] = np.all(
            _bit_slice(first, start, width) == _bit_slice(second, start, width), axis=1
        )
    return result


def table_key_bits(bits: int, blocks: int, max_distance: int) -> list[tuple[int, int]]:
    """(key bits, how many tables have it) over Manku's C(m, k) tables of m near-equal blocks."""
    base, extra = divmod(bits, blocks)
    kept = blocks - max_distance
    return [
        (kept * base + wide, math.comb(extra, wide) * math.comb(blocks - extra, kept - wide))
        for wide in range(min(extra, kept) + 1)
        if kept - wide <= blocks - extra
    ]
