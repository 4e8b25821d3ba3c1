"""Fingerprints -> exactly the pairs within k bits, by Manku's permuted tables.

Cut the fingerprint into m > k near-equal blocks and build one table per choice of m - k of
them as the key. Two fingerprints within k bits differ in at most k blocks, so they agree on the
other m - k and meet in that table: every close pair is found whatever the seed, and only pairs
sharing a key are ever compared (Manku, Jain and Das Sarma 2007). The same tables, searched
apart by bucket of key (:func:`shared_key_chunks`), let other machines share the work.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import CandidateBudgetError, ParameterError
from ..sketch.fingerprint import as_fingerprint_array, hamming_rows, validate_bits
from .blocking import (
    DIGIT_BITS,
    Copies,
    Key,
    bit_slice,
    block_bounds,
    block_equalities,
    budget_error,
    digits_of,
    distinct_rows,
    equal_groups,
    expand_copies,
    pair_chunks,
    pair_count,
    radix_order,
    run_positions,
    sort_pairs,
    splitmix64,
    validate_blocks,
)

__all__ = [
    "choose_tables",
    "key_buckets",
    "key_pair_count",
    "pairs_within",
    "scheme_tables",
    "shared_key_chunks",
    "table_key",
    "table_key_bits",
    "within_probability",
]


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
    digits = -(-math.ceil(bits / blocks) // DIGIT_BITS)
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
    for pairs in pair_chunks(order, starts, sizes, chunk_pairs):
        close = hamming_rows(words[pairs[:, 0]], words[pairs[:, 1]]) <= max_distance
        kept.append(pairs[close])
    return np.concatenate(kept)


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
        distinct = distinct_rows(words)
        found: list[NDArray[np.int64]] = []
    else:
        m = choose_tables(n, width, max_distance) if blocks is None else int(blocks)
        if not max_distance < m <= width:
            raise ParameterError(f"blocks must be from {max_distance + 1} to {width}, not {m}")
        distinct, found = _search_tables(words, width, m, max_distance, chunk_pairs, max_pairs)
    rep_pairs = sort_pairs(np.concatenate(found) if found else np.empty((0, 2), dtype=np.int64))
    if max_pairs is not None:
        copies = distinct.counts
        total = pair_count(copies)
        total += int((copies[rep_pairs[:, 0]] * copies[rep_pairs[:, 1]]).sum())
        if total > max_pairs:
            raise CandidateBudgetError(
                f"{total:,} pairs of documents are within {max_distance} bits of each other "
                f"(budget {max_pairs:,}), mostly copies of the same fingerprint; "
                "{max_candidates} raises the budget",
                parameters=("max_candidates",),
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
    block_digits = [digits_of(words, start, width) for start, width in block_bounds(bits, blocks)]
    prefixes: dict[tuple[int, ...], NDArray[np.intp]] = {}
    first_table = _table_groups(tables[0], block_digits, prefixes)
    _, starts, sizes = first_table
    distinct = distinct_rows(words, np.sort(first_table[0][run_positions(starts, sizes)]))
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
        compared += pair_count(sizes)
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
    """The groups of :func:`equal_groups` for the table whose key is the ``kept`` blocks."""
    key_digits = [digit for block in kept for digit in block_digits[block]]
    return equal_groups(key_digits, _table_order(kept, block_digits, prefixes))


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
        order = radix_order(block_digits[kept[depth - 1]], order)
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


def table_key_bits(bits: int, blocks: int, max_distance: int) -> list[tuple[int, int]]:
    """(key bits, how many tables have it) over Manku's C(m, k) tables of m near-equal blocks."""
    base, extra = divmod(bits, blocks)
    kept = blocks - max_distance
    return [
        (kept * base + wide, math.comb(extra, wide) * math.comb(blocks - extra, kept - wide))
        for wide in range(min(extra, kept) + 1)
        if kept - wide <= blocks - extra
    ]


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
    return [digit for start, width in key for digit in digits_of(words, start, width)]


def key_buckets(words: NDArray[np.uint64], key: Key, n_buckets: int) -> NDArray[np.int64]:
    """Which of ``n_buckets`` each row goes to by its ``key`` (splitmix64 of the key's bits):
    rows with equal keys land in the same bucket, in any process on any machine."""
    h = np.zeros(words.shape[0], dtype=np.uint64)
    for start, width in key:
        for column in bit_slice(words, start, width).T:
            h = splitmix64(h ^ column)
    buckets: NDArray[np.int64] = (h % np.uint64(n_buckets)).astype(np.int64)
    return buckets


def key_pair_count(words: NDArray[np.uint64], key: Key) -> int:
    """Pairs of rows equal on ``key`` (what comparing them would cost), before building any."""
    _, _, sizes = equal_groups(_key_digits(words, key))
    return pair_count(sizes)


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
    for pairs in pair_chunks(*equal_groups(_key_digits(words, key)), chunk_pairs):
        first, second = words[pairs[:, 0]], words[pairs[:, 1]]
        equal = block_equalities(first, second, bits=bits, blocks=blocks)
        keep = equal[:, : table[-1] + 1].sum(axis=1) == len(table)
        distance = np.bitwise_count(first ^ second).sum(axis=1, dtype=np.int64)
        if max_distance is not None:
            keep &= distance <= max_distance
        if keep.any():
            yield pairs[keep], distance[keep]


def suggest_max_distance(bits: int, threshold: float, *, target: float = 0.95) -> int | None:
    """Smallest Hamming radius whose expected recall at ``threshold`` >= target."""
    for distance in range(bits):
        probability = within_probability(threshold, bits=bits, max_distance=distance)
        if float(probability) >= target:
            return distance
    return None
