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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ParameterError, SimhashError
from .fingerprint import as_fingerprint_array, validate_bits

__all__ = [
    "DEFAULT_BLOCKS",
    "DEFAULT_MAX_CANDIDATES",
    "CandidateBudgetError",
    "block_keys",
    "candidate_probability",
    "candidates",
    "count_candidates",
    "validate_blocks",
]

DEFAULT_BLOCKS = 4
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


def _groups(key: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(order, starts, sizes) of the runs of equal keys of size >= 2, in sorted key order."""
    keys = np.asarray(key)
    order = np.argsort(keys, kind="stable").astype(np.int64)
    ordered = keys[order]
    change = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    starts = np.concatenate(([0], change)).astype(np.int64)
    sizes = np.diff(np.concatenate((starts, [keys.size]))).astype(np.int64)
    shared = sizes >= 2
    return order, starts[shared], sizes[shared]


def _pairs_in_groups(
    order: NDArray[np.int64], starts: NDArray[np.int64], sizes: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Every pair of positions within each group -> (k, 2) document indices, i < j."""
    if sizes.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    # Each position p of a group of size s starting at st pairs with the positions after it.
    first = np.repeat(starts, sizes)
    ends = np.repeat(starts + sizes, sizes)
    positions = first + (np.arange(first.size) - np.repeat(np.cumsum(sizes) - sizes, sizes))
    partners = ends - positions - 1
    left = np.repeat(positions, partners)
    offsets = np.arange(left.size) - np.repeat(np.cumsum(partners) - partners, partners)
    right = left + 1 + offsets
    a, b = order[left], order[right]
    return np.stack((np.minimum(a, b), np.maximum(a, b)), axis=1)


def count_candidates(fingerprints: NDArray[np.uint64], *, bits: int, blocks: int) -> int:
    """Upper bound on the candidate pairs :func:`candidates` would return (pairs per block, summed).

    Cheap (one sort per block), so a caller can refuse a scheme before materializing pairs.
    """
    total = 0
    for key in block_keys(fingerprints, bits=bits, blocks=blocks):
        _, _, sizes = _groups(key)
        total += int((sizes * (sizes - 1) // 2).sum())
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
    expected = sum(int((sizes * (sizes - 1) // 2).sum()) for _, _, sizes in grouped)
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
