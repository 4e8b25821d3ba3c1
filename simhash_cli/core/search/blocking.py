"""Fingerprints -> candidate pairs, by exact equality of fingerprint blocks.

Cut every b-bit fingerprint into ``blocks`` equal blocks of r = b / blocks bits; two documents
become candidates when they agree exactly on at least one block.  Pigeonhole (Manku, Jain and
Das Sarma 2007): two fingerprints that differ in fewer than ``blocks`` bits cannot have a
difference in every block, so every pair within ``blocks - 1`` bits is a candidate, whatever the
seed.  Beyond that the scheme is probabilistic: each bit differs with probability
p = theta / pi, a block matches with (1 - p)^r, and a pair becomes a candidate with
1 - (1 - (1 - p)^r)^blocks, the S-curve :func:`candidate_probability` computes.

Grouping sorts keys as 16-bit digits with numpy's stable sort, a linear-time radix sort for
16-bit integers (one pass per digit); pairs are generated inside the groups with array
arithmetic, never with a Python loop per pair.

The other scheme, Manku's permuted tables, is :mod:`simhash_cli.core.search.tables`; the copies of a
fingerprint (documents sharing it) are collapsed here for both.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import CandidateBudgetError, ParameterError
from ..config import DEFAULT_MAX_CANDIDATES
from ..distinct import distinct
from ..sketch.fingerprint import as_fingerprint_array, validate_bits

__all__ = [
    "COPIES_PAIRED",
    "DEFAULT_MAX_CANDIDATES",
    "Copies",
    "LargeCopies",
    "bit_slice",
    "block_bounds",
    "block_equalities",
    "budget_error",
    "candidate_chunks",
    "candidate_probability",
    "candidates",
    "collapse",
    "count_candidates",
    "expand_copies",
    "pairs_among_copies",
    "pairs_of_copies",
    "pairs_with_first",
    "sort_pairs",
    "splitmix64",
    "validate_blocks",
]

Key = tuple[tuple[int, int], ...]
"""The (start, width) bit ranges that make one table's key."""
DIGIT_BITS = 16


def budget_error(
    bits: int, blocks: int, max_distance: int | None, expected: int, n: int, limit: int
) -> CandidateBudgetError:
    """The error for a scheme that would compare ``expected`` pairs among ``n`` distinct
    fingerprints, more than ``limit``, with what to do about it."""
    if max_distance is None:
        return CandidateBudgetError(
            f"{blocks} block{'' if blocks == 1 else 's'} of {bits // blocks} bits would give up to "
            f"{expected:,} candidate pairs "
            f"among {n:,} fingerprints (budget {limit:,}). Fewer, longer "
            "blocks (a smaller {blocks}) give fewer candidates; when most documents look alike "
            "to the fingerprint (common words dominate term counts), {weighting} tfidf helps; "
            "{max_candidates} raises the budget",
            parameters=("blocks", "weighting", "max_candidates"),
        )
    tables = math.comb(blocks, max_distance)
    return CandidateBudgetError(
        f"{tables} tables for pairs within {max_distance} bits "
        f"would compare more than {limit:,} pairs of fingerprints among "
        f"{n:,} distinct ones: they are too alike for this scheme. Fewer "
        "bits of distance, more {bits} or {weighting} tfidf (when common words make "
        "every document alike) help; {max_candidates} raises the budget",
        parameters=("bits", "weighting", "max_candidates"),
    )


def validate_blocks(bits: int, blocks: int) -> int:
    """Return ``blocks`` if it divides ``bits``, else raise ParameterError."""
    bits = validate_bits(bits)
    if isinstance(blocks, bool) or not isinstance(blocks, (int, np.integer)):
        raise ParameterError(f"blocks must be an integer, not {type(blocks).__name__}")
    if not (1 <= blocks <= bits and bits % blocks == 0):
        raise ParameterError(f"blocks must divide bits ({bits}) evenly, not {blocks}")
    return int(blocks)


def bit_slice(words: NDArray[np.uint64], start: int, width: int) -> NDArray[np.uint64]:
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


def digits_of(words: NDArray[np.uint64], start: int, width: int) -> list[NDArray[np.uint16]]:
    """Bits [start, start + width) of every row as 16-bit digits, least significant first.

    Sixteen bits is what numpy sorts in linear time: its stable sort of 16-bit integers is a
    radix sort, several times faster than sorting 64-bit keys.
    """
    return [
        bit_slice(words, start + low, min(DIGIT_BITS, width - low))[:, 0].astype(np.uint16)
        for low in range(0, width, DIGIT_BITS)
    ]


def radix_order(
    digits: Sequence[NDArray[np.uint16]], order: NDArray[np.intp] | None = None
) -> NDArray[np.intp]:
    """A permutation that sorts the rows by ``digits`` (least significant first), refining
    ``order`` (a permutation already sorted by less significant digits) when given: an LSD
    radix sort, one linear-time stable pass per digit."""
    for digit in digits:
        if order is None:
            order = np.argsort(digit, kind="stable")
        else:
            order = order[np.argsort(digit[order], kind="stable")]
    if order is None:
        raise ValueError("no digits to sort by")
    return order


def _runs(
    order: NDArray[np.intp], digits: Sequence[NDArray[np.uint16]]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(starts, sizes) of the runs of two or more rows equal on every digit, in ``order``.

    Works on flags of "equal to the previous row", never on an array per run: most rows
    are alone in their run, and a large corpus has millions of such runs.
    """
    same = np.ones(max(order.size - 1, 0), dtype=bool)
    for digit in digits:
        ordered = digit[order]
        same &= ordered[1:] == ordered[:-1]
    # Row i + 1 joins row i where same[i]; a run starts where a stretch of True begins.
    padded = np.concatenate(([False], same, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    starts, ends = edges[0::2], edges[1::2]
    return starts.astype(np.int64), (ends - starts + 1).astype(np.int64)


def equal_groups(
    digits: Sequence[NDArray[np.uint16]], order: NDArray[np.intp] | None = None
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(order, starts, sizes) of the groups of two or more rows equal on every digit.

    ``order``, when given, must already sort the rows by all of ``digits``.
    """
    if order is None:
        order = radix_order(digits)
    starts, sizes = _runs(order, digits)
    return order.astype(np.int64, copy=False), starts, sizes


def pair_chunks(
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
    positions = run_positions(starts, sizes)
    partners = np.repeat(starts + sizes, sizes) - positions - 1
    total = np.cumsum(partners)
    if chunk_pairs is None or total[-1] <= chunk_pairs:
        cuts = np.array([], dtype=np.int64)
    else:
        cuts = distinct(np.searchsorted(total, np.arange(chunk_pairs, total[-1], chunk_pairs)))
    for lo, hi in zip(
        np.concatenate(([0], cuts)).tolist(),
        np.concatenate((cuts, [positions.size])).tolist(),
        strict=True,
    ):
        if hi <= lo:
            continue
        chunk_positions, chunk_partners = positions[lo:hi], partners[lo:hi]
        a = order[np.repeat(chunk_positions, chunk_partners)]
        b = order[run_positions(chunk_positions + 1, chunk_partners)]
        yield np.stack((np.minimum(a, b), np.maximum(a, b)), axis=1)


def _pairs_in_groups(
    order: NDArray[np.int64], starts: NDArray[np.int64], sizes: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Every pair of positions within each group -> (k, 2) document indices, i < j."""
    chunks = list(pair_chunks(order, starts, sizes))
    return np.concatenate(chunks) if chunks else np.empty((0, 2), dtype=np.int64)


def pair_count(sizes: NDArray[np.int64]) -> int:
    """Pairs within groups of these sizes: the sum of s(s-1)/2."""
    return int((sizes * (sizes - 1) // 2).sum())


def count_candidates(fingerprints: NDArray[np.uint64], *, bits: int, blocks: int) -> int:
    """Upper bound on the candidate pairs :func:`candidates` would return (pairs per block, summed).

    Cheap (one sort per block), so a caller can refuse a scheme before materializing pairs.
    """
    return sum(pair_count(sizes) for _, _, sizes in _block_groups(fingerprints, bits, blocks))


def _block_groups(
    words: NDArray[np.uint64], bits: int, blocks: int
) -> list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]]:
    """The groups of :func:`equal_groups` for each of ``blocks`` equal blocks."""
    width = bits // validate_blocks(bits, blocks)
    return [equal_groups(digits_of(words, block * width, width)) for block in range(blocks)]


def candidate_chunks(
    fingerprints: Sequence[int] | NDArray[np.uint64],
    bits: int,
    blocks: int,
    *,
    max_candidates: int | None = DEFAULT_MAX_CANDIDATES,
    chunk_pairs: int = 1 << 22,
) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """The pairs of :func:`candidates`, unsorted, in chunks of about ``chunk_pairs``, each with
    its Hamming distances: memory follows the chunk, not the number of candidates, so a
    caller can thin them as they come.

    Each pair appears once, from the first block it shares (a pair sharing an earlier block
    is dropped where a later block finds it again), so no chunk needs the others.

    Yields:
        (pairs, distances): int64 (k, 2) with i < j, and int64 (k,).

    Raises:
        CandidateBudgetError: as :func:`candidates`, before any pair is built (the check is
            made by this call, not when the iterator is first read).
    """
    words = as_fingerprint_array(fingerprints, bits)
    grouped = _block_groups(words, bits, blocks)
    expected = sum(pair_count(sizes) for _, _, sizes in grouped)
    if max_candidates is not None and expected > max_candidates:
        raise budget_error(bits, blocks, None, expected, words.shape[0], max_candidates)
    return _first_shared(words, bits // blocks, grouped, chunk_pairs)


def _first_shared(
    words: NDArray[np.uint64],
    width: int,
    grouped: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]],
    chunk_pairs: int,
) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    for block, group in enumerate(grouped):
        for pairs in pair_chunks(*group, chunk_pairs):
            differ = words[pairs[:, 0]] ^ words[pairs[:, 1]]
            if block:
                earlier = np.zeros(pairs.shape[0], dtype=bool)
                for before in range(block):
                    earlier |= ~bit_slice(differ, before * width, width).any(axis=1)
                pairs, differ = pairs[~earlier], differ[~earlier]
            if pairs.size:
                yield pairs, np.bitwise_count(differ).sum(axis=1, dtype=np.int64)


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
    chunks = candidate_chunks(fingerprints, bits, blocks, max_candidates=max_candidates)
    pairs = [np.empty((0, 2), dtype=np.int64)] + [pairs for pairs, _ in chunks]
    return sort_pairs(np.concatenate(pairs))


def sort_pairs(pairs: NDArray[np.int64]) -> NDArray[np.int64]:
    """Distinct (i, j) rows of non-negative indices, sorted."""
    if pairs.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    n = int(pairs.max()) + 1
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


def block_bounds(bits: int, blocks: int) -> list[tuple[int, int]]:
    """(start, width) of ``blocks`` contiguous blocks covering ``bits``, widths differing by
    at most one (the first ``bits % blocks`` blocks one bit wider)."""
    base, extra = divmod(bits, blocks)
    bounds, start = [], 0
    for block in range(blocks):
        width = base + (1 if block < extra else 0)
        bounds.append((start, width))
        start += width
    return bounds


COPIES_PAIRED = 100
"""Documents sharing one fingerprint that are still paired one by one: of a larger group (a
boilerplate page), each is paired with the group's first only (see :class:`LargeCopies`)."""


class Copies(NamedTuple):
    """Identical fingerprints collapsed: ``fingerprints`` holds each distinct one once, in the
    order of their first documents; the documents having the r-th are
    ``members[first[r] : first[r] + counts[r]]``, ascending, the first of them its
    representative."""

    fingerprints: NDArray[np.uint64]
    members: NDArray[np.int64]
    first: NDArray[np.int64]
    counts: NDArray[np.int64]

    @property
    def representatives(self) -> NDArray[np.int64]:
        """The first document of each distinct fingerprint, ascending."""
        return self.members[self.first]


def collapse(fingerprints: NDArray[np.uint64], bits: int) -> Copies:
    """Each distinct fingerprint once, with the documents that have it (a radix sort)."""
    return distinct_rows(as_fingerprint_array(fingerprints, bits))


def expand_copies(pairs: NDArray[np.int64], copies: Copies) -> NDArray[np.int64]:
    """Pairs of distinct fingerprints -> every pair of documents they stand for, plus every
    pair of documents sharing one fingerprint; sorted."""
    return sort_pairs(
        np.concatenate((pairs_among_copies(copies), pairs_of_copies(pairs, copies)[0]))
    )


_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


def splitmix64(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """splitmix64's finalizer, element-wise: a bijection of 64-bit words whose every output
    bit depends on every input bit (a new array)."""
    with np.errstate(over="ignore"):
        h: NDArray[np.uint64] = values ^ (values >> np.uint64(30))
        h *= _MIX_1
        h ^= h >> np.uint64(27)
        h *= _MIX_2
        h ^= h >> np.uint64(31)
    return h


def size_spans(sizes: NDArray[np.int64], per_span: int) -> Iterator[tuple[int, int]]:
    """Consecutive ranges [lo, hi) of items whose ``sizes`` add up to at most ``per_span``
    (an item larger than that is a range alone): whole rows, about so many entries at a time."""
    ends = np.cumsum(sizes)
    n, start = int(sizes.size), 0
    while start < n:
        done = int(ends[start - 1]) if start else 0
        stop = int(np.searchsorted(ends, done + per_span, side="right"))
        stop = min(n, max(start + 1, stop))
        yield start, stop
        start = stop


def run_positions(starts: NDArray[np.int64], sizes: NDArray[np.int64]) -> NDArray[np.int64]:
    """The positions of runs [start, start + size), concatenated."""
    offsets = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(sizes) - sizes, sizes
    )
    return np.repeat(starts, sizes) + offsets


def distinct_rows(words: NDArray[np.uint64], suspects: NDArray[np.int64] | None = None) -> Copies:
    """Collapse identical rows: a radix sort of the ``suspects`` (the only rows that may share
    their fingerprint, ascending; None: every row) on every bit, then runs of equal rows."""
    n = words.shape[0]
    rows = np.arange(n, dtype=np.int64) if suspects is None else suspects
    digits = digits_of(words[rows], 0, 64 * words.shape[1])
    order = radix_order(digits)
    starts, sizes = _runs(order, digits)
    if starts.size == 0:
        every = np.arange(n, dtype=np.int64)
        return Copies(words, every, every, np.ones(n, dtype=np.int64))
    # Rows of each run of copies, ascending (the sort is stable); the first one represents them.
    copies = rows[order][run_positions(starts, sizes)]
    is_leader = np.zeros(copies.size, dtype=bool)
    is_leader[np.cumsum(sizes) - sizes] = True
    followers = copies[~is_leader]
    represents = np.ones(n, dtype=bool)
    represents[followers] = False
    reps = np.flatnonzero(represents)
    rank = np.cumsum(represents) - 1
    counts = np.ones(reps.size, dtype=np.int64)
    counts[rank[copies[is_leader]]] = sizes
    first = np.cumsum(counts) - counts
    members = np.empty(n, dtype=np.int64)
    members[first] = reps
    follower_rank = np.repeat(rank[copies[is_leader]], sizes - 1)
    members[first[follower_rank] + (run_positions(np.ones_like(sizes), sizes - 1))] = followers
    return Copies(words[reps], members, first, counts)


def pairs_among_copies(copies: Copies) -> NDArray[np.int64]:
    """Every pair of documents that share a fingerprint, i < j."""
    shared = copies.counts >= 2
    return _pairs_in_groups(copies.members, copies.first[shared], copies.counts[shared])


def pairs_with_first(copies: Copies, groups: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Each document of the chosen groups of copies (a mask over distinct fingerprints)
    paired with the group's first document, i < j."""
    others = copies.counts[groups] - 1
    return np.stack(
        (
            np.repeat(copies.representatives[groups], others),
            copies.members[run_positions(copies.first[groups] + 1, others)],
        ),
        axis=1,
    )


def pairs_of_copies(
    pairs: NDArray[np.int64], copies: Copies
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Pairs of distinct fingerprints -> (every pair of their documents, i < j; the index of
    the fingerprint pair each came from)."""
    members, first, counts = copies.members, copies.first, copies.counts
    alone = (counts[pairs[:, 0]] == 1) & (counts[pairs[:, 1]] == 1)
    if alone.all():
        # The usual case, and cheap: one document each (representatives keep their order).
        return members[first[pairs]], np.arange(pairs.shape[0])
    if alone.any():
        # Map the pairs with one document each directly; expand only the rest.
        direct = np.flatnonzero(alone)
        rest = np.flatnonzero(~alone)
        expanded, source = pairs_of_copies(pairs[rest], copies)
        return (
            np.concatenate((members[first[pairs[direct]]], expanded)),
            np.concatenate((direct, rest[source])),
        )
    a, b = pairs[:, 0], pairs[:, 1]
    size_a, size_b = counts[a], counts[b]
    per_pair = size_a * size_b
    pair_of = np.repeat(np.arange(pairs.shape[0]), per_pair)
    rank = run_positions(np.zeros_like(per_pair), per_pair)
    left = members[first[a][pair_of] + rank // size_b[pair_of]]
    right = members[first[b][pair_of] + rank % size_b[pair_of]]
    return np.stack((np.minimum(left, right), np.maximum(left, right)), axis=1), pair_of


def block_equalities(
    first: NDArray[np.uint64], second: NDArray[np.uint64], *, bits: int, blocks: int
) -> NDArray[np.bool_]:
    """(k, blocks) whether each pair of rows agrees on each of ``blocks`` near-equal blocks
    (the blocks of Manku's tables; equal blocks when ``blocks`` divides ``bits``)."""
    result = np.empty((first.shape[0], blocks), dtype=bool)
    for column, (start, width) in enumerate(block_bounds(bits, blocks)):
        result[:, column] = np.all(
            bit_slice(first, start, width) == bit_slice(second, start, width), axis=1
        )
    return result


def suggest_blocks(bits: int, threshold: float, *, target: float = 0.95) -> int | None:
    """Fewest blocks (so fewest candidates) whose expected recall at ``threshold`` >= target."""
    for blocks in range(1, bits + 1):
        if bits % blocks == 0:
            probability = candidate_probability(threshold, bits=bits, blocks=blocks)
            if float(probability) >= target:
                return blocks
    return None


@dataclass(frozen=True)
class LargeCopies:
    """The documents of each fingerprint shared by more than
    :data:`COPIES_PAIRED` of them (a boilerplate page), rows
    ascending, with the first of their group: a run pairs them with that one only, and so a
    pilot counts them (``found_among`` counts the same). A pilot that held every pair of
    20,000 copies of a cookie page took 47 million pairs and 10.8 GB. Small enough to send
    to each piece of a pilot in pieces."""

    rows: NDArray[np.int64]
    first: NDArray[np.int64]

    @classmethod
    def of(cls, fingerprints: NDArray[np.uint64], bits: int) -> LargeCopies | None:
        """Those of these fingerprints (every document's), or None when there are none."""
        return cls.among(collapse(fingerprints, bits))

    @classmethod
    def among(cls, copies: Copies) -> LargeCopies | None:
        """Those of the collapsed fingerprints ``copies``, or None when there are none."""
        big = np.flatnonzero(copies.counts > COPIES_PAIRED)
        if not big.size:
            return None
        groups = [
            copies.members[copies.first[r] : copies.first[r] + copies.counts[r]]
            for r in big.tolist()  # a loop over boilerplate groups, a handful at most
        ]
        rows = np.concatenate(groups).astype(np.int64)
        first = np.concatenate([np.full(g.size, g[0], dtype=np.int64) for g in groups])
        order = np.argsort(rows, kind="stable")
        return cls(rows[order], first[order])

    @functools.cached_property
    def _first_of(self) -> NDArray[np.int64]:
        """Each row's first, -1 for a row of no such group, up to the last of them: made
        where it is used (a piece's process, a worker), never sent."""
        first = np.full(int(self.rows[-1]) + 1, -1, dtype=np.int64)
        first[self.rows] = self.first
        return first

    def stand_ins(self, n_docs: int) -> NDArray[np.int64]:
        """Each of ``n_docs`` documents' stand-in in the pairs a run makes: the first of its
        group, or itself."""
        dense = self._first_of
        stand_in = np.arange(n_docs, dtype=np.int64)
        grouped = np.flatnonzero(dense >= 0)
        stand_in[grouped] = dense[grouped]
        return stand_in

    def wanted(self, pairs: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Which pairs (k, 2) of documents a run pairs: all but those of two members of one
        group of which neither is its first."""
        dense = self._first_of
        first = np.where(pairs < dense.size, dense[np.minimum(pairs, dense.size - 1)], -1)
        inside = (first[:, 0] >= 0) & (first[:, 0] == first[:, 1])
        inside &= (pairs[:, 0] != first[:, 0]) & (pairs[:, 1] != first[:, 0])
        wanted: NDArray[np.bool_] = ~inside
        return wanted
