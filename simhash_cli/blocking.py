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

:func:`pairs_within` is the other scheme, Manku's permuted tables: m > k blocks and one table
per choice of m - k of them as the key, so that every pair within k bits meets in some table
and is found for certain; only pairs sharing a key are ever compared.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import ParameterError, SimhashError
from .fingerprint import as_fingerprint_array, hamming_rows, validate_bits

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "CandidateBudgetError",
    "Copies",
    "bit_slice",
    "block_bounds",
    "block_equalities",
    "budget_error",
    "candidate_chunks",
    "candidate_probability",
    "candidates",
    "choose_tables",
    "collapse",
    "count_candidates",
    "expand_copies",
    "key_buckets",
    "key_pair_count",
    "pairs_among_copies",
    "pairs_of_copies",
    "pairs_with_first",
    "pairs_within",
    "scheme_tables",
    "shared_key_chunks",
    "sort_pairs",
    "table_key",
    "table_key_bits",
    "validate_blocks",
    "within_probability",
]

DEFAULT_MAX_CANDIDATES = 100_000_000
Key = tuple[tuple[int, int], ...]
"""The (start, width) bit ranges that make one table's key."""
_DIGIT_BITS = 16


class CandidateBudgetError(SimhashError):
    """The blocking scheme would produce more candidate pairs than the budget allows."""


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
            "blocks (a smaller --blocks) give fewer candidates; when most documents look alike "
            "to the fingerprint (common words dominate term counts), --weighting tfidf helps; "
            "--max-candidates raises the budget"
        )
    tables = math.comb(blocks, max_distance)
    return CandidateBudgetError(
        f"{tables} tables for pairs within {max_distance} bits "
        f"would compare more than {limit:,} pairs of fingerprints among "
        f"{n:,} distinct ones: they are too alike for this scheme. Fewer "
        "bits of distance, more --bits or --weighting tfidf (when common words make "
        "every document alike) help; --max-candidates raises the budget"
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


def _digits(words: NDArray[np.uint64], start: int, width: int) -> list[NDArray[np.uint16]]:
    """Bits [start, start + width) of every row as 16-bit digits, least significant first.

    Sixteen bits is what numpy sorts in linear time: its stable sort of 16-bit integers is a
    radix sort, several times faster than sorting 64-bit keys.
    """
    return [
        bit_slice(words, start + low, min(_DIGIT_BITS, width - low))[:, 0].astype(np.uint16)
        for low in range(0, width, _DIGIT_BITS)
    ]


def _radix_order(
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


def _groups(
    digits: Sequence[NDArray[np.uint16]], order: NDArray[np.intp] | None = None
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(order, starts, sizes) of the groups of two or more rows equal on every digit.

    ``order``, when given, must already sort the rows by all of ``digits``.
    """
    if order is None:
        order = _radix_order(digits)
    starts, sizes = _runs(order, digits)
    return order.astype(np.int64, copy=False), starts, sizes


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
    positions = _ranges(starts, sizes)
    partners = np.repeat(starts + sizes, sizes) - positions - 1
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
        chunk_positions, chunk_partners = positions[lo:hi], partners[lo:hi]
        a = order[np.repeat(chunk_positions, chunk_partners)]
        b = order[_ranges(chunk_positions + 1, chunk_partners)]
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
    return sum(_pair_count(sizes) for _, _, sizes in _block_groups(fingerprints, bits, blocks))


def _block_groups(
    words: NDArray[np.uint64], bits: int, blocks: int
) -> list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]]:
    """The groups of :func:`_groups` for each of ``blocks`` equal blocks."""
    width = bits // validate_blocks(bits, blocks)
    return [_groups(_digits(words, block * width, width)) for block in range(blocks)]


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
    expected = sum(_pair_count(sizes) for _, _, sizes in grouped)
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
        for pairs in _pair_chunks(*group, chunk_pairs):
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


# ---------------------------------------------------------------------------- Manku's tables


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


def _table_cost(n: int, bits: int, blocks: int, max_distance: int) -> float:
    """Expected work of one scheme, in row-steps: the radix passes over every row (a pass
    per 16-bit digit of each distinct key prefix, shared prefixes sorted once), a scan of
    every row per table, and the pairs that share a key by chance, each of which costs about
    ten row-steps to build and check (fitted at 10^5 and 10^6 fingerprints for k = 1..6: the
    choice was within 30% of the fastest m each time).

    Tables are the (m - k)-subsets of m blocks in lexicographic order; the distinct prefixes
    of length d among them are the d-subsets of the first k + d blocks. Two unrelated
    fingerprints share a table's key with probability 2^-(key bits).
    """
    digits = -(-math.ceil(bits / blocks) // _DIGIT_BITS)
    kept = blocks - max_distance
    passes = digits * sum(math.comb(max_distance + d, d) for d in range(1, kept + 1))
    pairs = n * (n - 1) / 2
    chance_pairs = sum(
        count * pairs * 2.0**-key_bits
        for key_bits, count in table_key_bits(bits, blocks, max_distance)
    )
    return n * (passes + math.comb(blocks, max_distance)) + 10.0 * chance_pairs


def choose_tables(n: int, bits: int, max_distance: int) -> int:
    """Number of blocks m for Manku's tables: the m > max_distance with the least expected work.

    More blocks mean shorter keys (more chance pairs) but more tables (C(m, k) sorts).
    """
    if max_distance <= 0:
        return 1
    candidates_m = range(max_distance + 1, min(bits, max_distance + 12) + 1)
    return min(candidates_m, key=lambda m: _table_cost(n, bits, m, max_distance))


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
    return _distinct(as_fingerprint_array(fingerprints, bits))


def expand_copies(pairs: NDArray[np.int64], copies: Copies) -> NDArray[np.int64]:
    """Pairs of distinct fingerprints -> every pair of documents they stand for, plus every
    pair of documents sharing one fingerprint; sorted."""
    return sort_pairs(
        np.concatenate((pairs_among_copies(copies), pairs_of_copies(pairs, copies)[0]))
    )


def _ranges(starts: NDArray[np.int64], sizes: NDArray[np.int64]) -> NDArray[np.int64]:
    """The positions of runs [start, start + size), concatenated."""
    offsets = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(sizes) - sizes, sizes
    )
    return np.repeat(starts, sizes) + offsets


def _distinct(words: NDArray[np.uint64], suspects: NDArray[np.int64] | None = None) -> Copies:
    """Collapse identical rows: a radix sort of the ``suspects`` (the only rows that may share
    their fingerprint, ascending; None: every row) on every bit, then runs of equal rows."""
    n = words.shape[0]
    rows = np.arange(n, dtype=np.int64) if suspects is None else suspects
    digits = _digits(words[rows], 0, 64 * words.shape[1])
    order = _radix_order(digits)
    starts, sizes = _runs(order, digits)
    if starts.size == 0:
        every = np.arange(n, dtype=np.int64)
        return Copies(words, every, every, np.ones(n, dtype=np.int64))
    # Rows of each run of copies, ascending (the sort is stable); the first one represents them.
    copies = rows[order][_ranges(starts, sizes)]
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
    members[first[follower_rank] + (_ranges(np.ones_like(sizes), sizes - 1))] = followers
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
            copies.members[_ranges(copies.first[groups] + 1, others)],
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
    rank = _ranges(np.zeros_like(per_pair), per_pair)
    left = members[first[a][pair_of] + rank // size_b[pair_of]]
    right = members[first[b][pair_of] + rank % size_b[pair_of]]
    return np.stack((np.minimum(left, right), np.maximum(left, right)), axis=1), pair_of


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
    if max_distance == 0:
        distinct = _distinct(words)
        found: list[NDArray[np.int64]] = []
    else:
        m = choose_tables(n, width, max_distance) if blocks is None else int(blocks)
        if not max_distance < m <= width:
            raise ParameterError(f"blocks must be from {max_distance + 1} to {width}, not {m}")
        distinct, found = _search_tables(words, width, m, max_distance, chunk_pairs, max_pairs)
    rep_pairs = sort_pairs(np.concatenate(found) if found else np.empty((0, 2), dtype=np.int64))
    if max_pairs is not None:
        copies = distinct.counts
        total = _pair_count(copies)
        total += int((copies[rep_pairs[:, 0]] * copies[rep_pairs[:, 1]]).sum())
        if total > max_pairs:
            raise CandidateBudgetError(
                f"{total:,} pairs of documents are within {max_distance} bits of each other "
                f"(budget {max_pairs:,}), mostly copies of the same fingerprint; "
                "--max-candidates raises the budget"
            )
    return expand_copies(rep_pairs, distinct)


def _search_tables(
    words: NDArray[np.uint64],
    bits: int,
    blocks: int,
    max_distance: int,
    chunk_pairs: int,
    max_pairs: int | None,
) -> tuple[Copies, list[NDArray[np.int64]]]:
    """Identical fingerprints collapsed, then the close pairs of distinct ones, table by table.

    Copies of a fingerprint share every key, so only the rows sharing the first table's key
    with another row can have a copy: the collapse sorts those few, not all of them.
    """
    tables = list(itertools.combinations(range(blocks), blocks - max_distance))
    block_digits = [_digits(words, start, width) for start, width in block_bounds(bits, blocks)]
    prefixes: dict[tuple[int, ...], NDArray[np.intp]] = {}
    first_table = _table_groups(tables[0], block_digits, prefixes)
    _, starts, sizes = first_table
    distinct = _distinct(words, np.sort(first_table[0][_ranges(starts, sizes)]))
    reps = distinct.fingerprints
    if reps.shape[0] < words.shape[0]:
        # Carry the work done on every row over to the distinct ones: keep their digits, and
        # the sorted orders restricted to them (a sorted order stays sorted when filtered).
        kept = distinct.members[distinct.first]
        rank = np.full(words.shape[0], -1, dtype=np.int64)
        rank[kept] = np.arange(kept.size)
        block_digits = [[digit[kept] for digit in digits] for digits in block_digits]
        prefixes = {key: _restrict(order, rank) for key, order in prefixes.items()}
        first_table = _table_groups(tables[0], block_digits, prefixes)
    found: list[NDArray[np.int64]] = []
    compared = 0
    for kept_blocks in tables:
        if kept_blocks == tables[0]:
            order, starts, sizes = first_table
        else:
            order, starts, sizes = _table_groups(kept_blocks, block_digits, prefixes)
        compared += _pair_count(sizes)
        if max_pairs is not None and compared > max_pairs:
            raise budget_error(bits, blocks, max_distance, compared, reps.shape[0], max_pairs)
        found.append(_close_pairs_in_groups(reps, order, starts, sizes, max_distance, chunk_pairs))
    return distinct, found


def _restrict(order: NDArray[np.intp], rank: NDArray[np.int64]) -> NDArray[np.intp]:
    """A sorted order of all rows -> the sorted order of the kept ones (rank -1: dropped)."""
    ranked = rank[order]
    return ranked[ranked >= 0]


def _table_groups(
    kept: tuple[int, ...],
    block_digits: Sequence[Sequence[NDArray[np.uint16]]],
    prefixes: dict[tuple[int, ...], NDArray[np.intp]],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The groups of :func:`_groups` for the table whose key is the ``kept`` blocks."""
    key_digits = [digit for block in kept for digit in block_digits[block]]
    return _groups(key_digits, _table_order(kept, block_digits, prefixes))


def _table_order(
    kept: tuple[int, ...],
    block_digits: Sequence[Sequence[NDArray[np.uint16]]],
    prefixes: dict[tuple[int, ...], NDArray[np.intp]],
) -> NDArray[np.intp]:
    """The radix order of one table, whose key is the ``kept`` blocks.

    Tables come in lexicographic order, so consecutive ones share their leading blocks: the
    order of a shared prefix is computed once and kept in ``prefixes`` while tables still
    need it (only the current path, so at most len(kept) - 1 orders are held).
    """
    for prefix in [p for p in prefixes if kept[: len(p)] != p]:
        del prefixes[prefix]
    order: NDArray[np.intp] | None = None
    for depth in range(1, len(kept) + 1):
        cached = prefixes.get(kept[:depth])
        if cached is not None:
            order = cached
            continue
        order = _radix_order(block_digits[kept[depth - 1]], order)
        if depth < len(kept):
            prefixes[kept[:depth]] = order
    if order is None:
        raise ValueError("a table needs at least one block")
    return order


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
    for column, (start, width) in enumerate(block_bounds(bits, blocks)):
        result[:, column] = np.all(
            bit_slice(first, start, width) == bit_slice(second, start, width), axis=1
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


# ---------------------------------------------------------------- tables apart (many machines)


def scheme_tables(bits: int, blocks: int, max_distance: int | None = None) -> list[tuple[int, ...]]:
    """A scheme's tables, each as the blocks its key is made of, in the order the search in
    one process takes them: equal blocks (``max_distance`` None), one table per block; Manku's
    tables, every choice of ``blocks - max_distance`` of the ``blocks`` near-equal blocks
    (:func:`block_bounds`), in lexicographic order."""
    if max_distance is None:
        return [(block,) for block in range(validate_blocks(bits, blocks))]
    return list(itertools.combinations(range(blocks), blocks - max_distance))


def table_key(bits: int, blocks: int, table: tuple[int, ...]) -> Key:
    """The bit ranges of a table's key: its blocks of the ``blocks`` near-equal ones."""
    bounds = block_bounds(bits, blocks)
    return tuple(bounds[block] for block in table)


def _key_digits(words: NDArray[np.uint64], key: Key) -> list[NDArray[np.uint16]]:
    return [digit for start, width in key for digit in _digits(words, start, width)]


_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


def key_buckets(words: NDArray[np.uint64], key: Key, n_buckets: int) -> NDArray[np.int64]:
    """Which of ``n_buckets`` each row goes to by its ``key`` (splitmix64 of the key's bits):
    rows with equal keys land in the same bucket, in any process on any machine."""
    h = np.zeros(words.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for start, width in key:
            for column in bit_slice(words, start, width).T:
                h = h ^ column
                h ^= h >> np.uint64(30)
                h *= _MIX_1
                h ^= h >> np.uint64(27)
                h *= _MIX_2
                h ^= h >> np.uint64(31)
    buckets: NDArray[np.int64] = (h % np.uint64(n_buckets)).astype(np.int64)
    return buckets


def key_pair_count(words: NDArray[np.uint64], key: Key) -> int:
    """Pairs of rows equal on ``key`` (what comparing them would cost), before building any."""
    _, _, sizes = _groups(_key_digits(words, key))
    return _pair_count(sizes)


def shared_key_chunks(
    words: NDArray[np.uint64],
    bits: int,
    blocks: int,
    table: tuple[int, ...],
    *,
    max_distance: int | None = None,
    chunk_pairs: int = 1 << 22,
) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """The pairs of rows equal on ``table``'s blocks (of :func:`scheme_tables`) that share no
    earlier table's key, in chunks, with their Hamming distances (only those within
    ``max_distance`` when given).

    Tables come in lexicographic order, so the first table a pair shares is made of its first
    equal blocks: a pair is this table's when its blocks equal up to the table's last one are
    exactly the table's. Each pair thus comes out of one table only, and the tables can be
    searched apart (each on the rows sharing its key values, on another machine) and their
    pairs simply added up: the union is :func:`candidate_chunks` (equal blocks) or the close
    pairs of :func:`pairs_within` (Manku's tables), among the same rows.

    Yields:
        (pairs, distances): int64 (k, 2) with i < j, and int64 (k,).
    """
    key = table_key(bits, blocks, table)
    for pairs in _pair_chunks(*_groups(_key_digits(words, key)), chunk_pairs):
        first, second = words[pairs[:, 0]], words[pairs[:, 1]]
        equal = block_equalities(first, second, bits=bits, blocks=blocks)
        keep = equal[:, : table[-1] + 1].sum(axis=1) == len(table)
        distance = np.bitwise_count(first ^ second).sum(axis=1, dtype=np.int64)
        if max_distance is not None:
            keep &= distance <= max_distance
        if keep.any():
            yield pairs[keep], distance[keep]
