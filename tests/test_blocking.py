"""Blocking: candidate pairs are exactly the pairs that share a block (checked by brute force)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import ParameterError, candidate_probability, candidates, hamming
from simhash_cli.core.search.blocking import (
    candidate_chunks,
    count_candidates,
    validate_blocks,
)
from simhash_cli.core.search.tables import (
    choose_tables,
    key_buckets,
    key_pair_count,
    pairs_within,
    scheme_tables,
    shared_key_chunks,
    table_key,
    within_probability,
)
from simhash_cli.core.sketch.fingerprint import as_fingerprint_array, hamming_rows
from simhash_cli.errors import CandidateBudgetError


def brute_force(fps: list[int], bits: int, blocks: int) -> list[tuple[int, int]]:
    width = bits // blocks
    mask = (1 << width) - 1

    def share(a: int, b: int) -> bool:
        return any((a >> (k * width)) & mask == (b >> (k * width)) & mask for k in range(blocks))

    return [(i, j) for i, j in itertools.combinations(range(len(fps)), 2) if share(fps[i], fps[j])]


SCHEMES = [
    (8, 1),
    (8, 8),
    (32, 1),
    (32, 4),
    (32, 8),
    (64, 4),
    (64, 2),
    (72, 3),
    (128, 1),
    (128, 4),
    (96, 4),
    (200, 5),
    (256, 2),
]


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[int], int, int]:
    bits, blocks = draw(st.sampled_from(SCHEMES))
    base = draw(st.lists(st.integers(0, 2**bits - 1), min_size=1, max_size=8))
    # Near copies of a few bases, so that blocks really are shared.
    fps = []
    for _ in range(draw(st.integers(0, 25))):
        value = draw(st.sampled_from(base))
        for bit in draw(st.lists(st.integers(0, bits - 1), max_size=bits // 2)):
            value ^= 1 << bit
        fps.append(value)
    return fps, bits, blocks


@given(corpora())
def test_candidates_equal_brute_force(corpus: tuple[list[int], int, int]) -> None:
    fps, bits, blocks = corpus
    pairs = candidates(fps, bits, blocks)
    assert pairs.dtype == np.int64 and pairs.shape[1] == 2
    assert [tuple(p) for p in pairs.tolist()] == brute_force(fps, bits, blocks)


@given(corpora(), st.integers(1, 8))
def test_candidate_chunks_give_every_candidate_once(
    corpus: tuple[list[int], int, int], chunk_pairs: int
) -> None:
    fps, bits, blocks = corpus
    chunks = list(candidate_chunks(fps, bits, blocks, chunk_pairs=chunk_pairs))
    found = [tuple(p) for pairs, _ in chunks for p in pairs.tolist()]
    assert len(found) == len(set(found))
    assert sorted(found) == brute_force(fps, bits, blocks)
    distances = [d for _, chunk_distances in chunks for d in chunk_distances.tolist()]
    assert distances == [hamming(fps[i], fps[j]) for i, j in found]


def test_candidate_chunks_refuse_the_budget_before_building_pairs() -> None:
    with pytest.raises(CandidateBudgetError, match="would give up to 19,800 candidate pairs"):
        candidate_chunks(np.zeros(100, dtype=np.uint64), 64, 4, max_candidates=1000)


@given(corpora())
def test_pigeonhole_every_pair_within_blocks_minus_one_bits_is_a_candidate(
    corpus: tuple[list[int], int, int],
) -> None:
    fps, bits, blocks = corpus
    found = {tuple(p) for p in candidates(fps, bits, blocks).tolist()}
    for i, j in itertools.combinations(range(len(fps)), 2):
        if hamming(fps[i], fps[j]) < blocks:
            assert (i, j) in found


def test_page_schemes_on_a_small_example() -> None:
    fps = [0x0000_0000, 0x0000_0001, 0xFFFF_0000, 0x1234_5678]
    assert candidates(fps, 32, 1).tolist() == []
    # 4 blocks of 8 bits: 0x00000001 and 0xFFFF0000 share the byte at bits 8-15.
    assert candidates(fps, 32, 4).tolist() == [[0, 1], [0, 2], [1, 2]]
    assert candidates([*fps, 0x0000_0000], 32, 1).tolist() == [[0, 4]]
    loose = candidates(fps, 32, 8).tolist()
    assert [0, 1] in loose and [1, 2] in loose


def test_uint64_array_and_ints_give_the_same_pairs() -> None:
    rng = np.random.default_rng(1)
    fps = rng.integers(0, 2**16, size=500, dtype=np.uint64)
    as_ints = [int(v) for v in fps]
    assert np.array_equal(candidates(fps, 64, 4), candidates(as_ints, 64, 4))


def test_budget_refuses_before_building_pairs() -> None:
    fps = np.zeros(2000, dtype=np.uint64)
    assert count_candidates(as_fingerprint_array(fps, 64), bits=64, blocks=4) == 4 * 1999000
    with pytest.raises(CandidateBudgetError, match="would give up to 7,996,000 candidate pairs"):
        candidates(fps, 64, 4, max_candidates=1_000_000)
    assert candidates(fps, 64, 1, max_candidates=None).shape == (1999000, 2)


@pytest.mark.parametrize(("bits", "blocks"), [(64, 3), (64, 0), (32, 64)])
def test_blocks_must_divide_bits(bits: int, blocks: int) -> None:
    with pytest.raises(ParameterError, match=f"blocks must divide bits \\({bits}\\) evenly"):
        validate_blocks(bits, blocks)


def test_candidate_probability_is_the_s_curve() -> None:
    # One block of all bits: every bit must agree; (1 - p)^b.
    assert candidate_probability(1.0, bits=64, blocks=4) == pytest.approx(1.0)
    p = np.arccos(0.9) / np.pi
    assert candidate_probability(0.9, bits=64, blocks=1) == pytest.approx((1 - p) ** 64)
    assert candidate_probability(0.9, bits=64, blocks=4) == pytest.approx(
        1 - (1 - (1 - p) ** 16) ** 4
    )
    curve = candidate_probability(np.linspace(0, 1, 11), bits=32, blocks=8)
    assert np.all(np.diff(curve) > 0)


def test_no_documents_or_one_document_has_no_pairs() -> None:
    assert candidates([], 64, 4).shape == (0, 2)
    assert candidates([5], 64, 4).shape == (0, 2)


# ---------------------------------------------------------------- Manku's tables


def brute_force_within(words: np.ndarray, k: int) -> list[tuple[int, int]]:
    ints = [int.from_bytes(row.astype("<u8").tobytes(), "little") for row in words]
    return [
        (i, j)
        for i, j in itertools.combinations(range(len(ints)), 2)
        if hamming(ints[i], ints[j]) <= k
    ]


@st.composite
def clustered_fingerprints(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    """Fingerprints around a few centres, with exact copies: the hard case for the tables."""
    n_words = draw(st.sampled_from([1, 1, 2]))
    bits = 64 * n_words
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    centres = rng.integers(0, 2**64, size=(draw(st.integers(1, 5)), n_words), dtype=np.uint64)
    n = draw(st.integers(0, 40))
    words = centres[rng.integers(0, centres.shape[0], size=n)].copy()
    for row in range(n):
        for bit in rng.choice(bits, size=int(rng.integers(0, 6)), replace=False):
            words[row, bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    return words, bits, draw(st.integers(0, 7))


@given(clustered_fingerprints(), st.one_of(st.none(), st.integers(1, 12)))
def test_pairs_within_is_exactly_brute_force(
    case: tuple[np.ndarray, int, int], extra_blocks: int | None
) -> None:
    words, bits, k = case
    blocks = None if extra_blocks is None or k == 0 else k + extra_blocks
    found = pairs_within(words if words.shape[1] > 1 else words[:, 0], k, bits=bits, blocks=blocks)
    assert found.dtype == np.int64 and found.shape[1] == 2
    assert [tuple(p) for p in found.tolist()] == brute_force_within(words, k)


def test_pairs_within_expands_identical_fingerprints() -> None:
    fps = np.array([7, 7, 7, 8, 7 ^ 1], dtype=np.uint64)
    assert pairs_within(fps, 0).tolist() == [[0, 1], [0, 2], [1, 2]]
    assert pairs_within(fps, 1).tolist() == [[0, 1], [0, 2], [0, 4], [1, 2], [1, 4], [2, 4]]


def test_pairs_within_refuses_bad_arguments() -> None:
    with pytest.raises(ParameterError, match="max_distance must be from 0 to 63"):
        pairs_within(np.zeros(3, dtype=np.uint64), 64)
    with pytest.raises(ParameterError, match="blocks must be from 4 to 64"):
        pairs_within(np.array([1, 2], dtype=np.uint64), 3, blocks=3)


def test_choose_tables_grows_with_the_corpus() -> None:
    assert choose_tables(1_000, 64, 3) <= choose_tables(10_000_000, 64, 3)
    assert choose_tables(10, 64, 0) == 1
    assert all(choose_tables(n, 64, 3) > 3 for n in (2, 10**3, 10**6))


def test_within_probability_is_the_binomial_tail() -> None:
    p = np.arccos(0.95) / np.pi
    expected = sum(math.comb(64, d) * p**d * (1 - p) ** (64 - d) for d in range(4))
    assert within_probability(0.95, bits=64, max_distance=3) == pytest.approx(expected)
    assert within_probability(1.0, bits=64, max_distance=0) == pytest.approx(1.0)


def test_pairs_within_collapses_a_hot_bucket_among_distinct_fingerprints() -> None:
    # 600 copies of one page, 30 of another, their near neighbours and 2,000 unrelated ones:
    # the collapse must keep every pair the brute force finds, copies and neighbours alike.
    rng = np.random.default_rng(7)
    hot, warm = rng.integers(0, 2**64, size=2, dtype=np.uint64)
    near = [hot ^ np.uint64(0b101), warm ^ np.uint64(1 << 40), hot ^ np.uint64(1 << 63)]
    fps = np.concatenate(
        (
            np.full(600, hot, dtype=np.uint64),
            rng.integers(0, 2**64, size=2_000, dtype=np.uint64),
            np.full(30, warm, dtype=np.uint64),
            np.array(near, dtype=np.uint64),
        )
    )
    fps = fps[rng.permutation(fps.size)]
    xor = fps[:, None] ^ fps[None, :]
    distance = np.unpackbits(xor.view(np.uint8).reshape(fps.size, fps.size, 8), axis=2).sum(2)
    i, j = np.nonzero(np.triu(distance <= 3, k=1))
    assert pairs_within(fps, 3).tolist() == np.stack((i, j), axis=1).tolist()


# ---------------------------------------------------------------- tables apart


def _apart(
    words: np.ndarray, bits: int, blocks: int, max_distance: int | None, n_buckets: int
) -> tuple[list[tuple[int, int]], int]:
    """Every table's rows cut into buckets by key_buckets, each bucket searched on its own
    (as workers do): the pairs found (global rows) and the key pairs counted."""
    found, counted = [], 0
    for table in scheme_tables(bits, blocks, max_distance):
        key = table_key(bits, blocks, table)
        buckets = key_buckets(words, key, n_buckets)
        for bucket in range(n_buckets):
            rows = np.flatnonzero(buckets == bucket)
            ours = words[rows]
            counted += key_pair_count(ours, key)
            chunks = shared_key_chunks(
                ours, bits, blocks, table, max_distance=max_distance, chunk_pairs=7
            )
            for pairs, distance in chunks:
                assert (distance == hamming_rows(ours[pairs[:, 0]], ours[pairs[:, 1]])).all()
                found += [tuple(pair) for pair in rows[pairs].tolist()]
    return found, counted


@given(corpora(), st.integers(1, 5))
def test_tables_searched_apart_give_the_candidates_once(
    corpus: tuple[list[int], int, int], n_buckets: int
) -> None:
    fps, bits, blocks = corpus
    words = as_fingerprint_array(fps, bits)
    found, counted = _apart(words, bits, blocks, None, n_buckets)
    assert len(found) == len(set(found))
    assert sorted(found) == brute_force(fps, bits, blocks)
    assert counted == count_candidates(words, bits=bits, blocks=blocks)


@given(clustered_fingerprints(), st.integers(1, 4), st.integers(1, 4))
def test_manku_tables_searched_apart_give_the_close_pairs_once(
    case: tuple[np.ndarray, int, int], extra_blocks: int, n_buckets: int
) -> None:
    words, bits, k = case
    k = min(k, 4)  # C(m, k) tables: at most C(8, 4) = 70 here
    found, _ = _apart(words, bits, k + extra_blocks, k, n_buckets)
    assert len(found) == len(set(found))
    assert sorted(found) == brute_force_within(words, k)


def test_scheme_tables_and_their_keys() -> None:
    assert scheme_tables(64, 4) == [(0,), (1,), (2,), (3,)]
    assert [table_key(64, 4, t) for t in scheme_tables(64, 4)] == [
        ((0, 16),),
        ((16, 16),),
        ((32, 16),),
        ((48, 16),),
    ]
    # 42 bits in 4 near-equal blocks: 11 + 11 + 10 + 10.
    assert scheme_tables(42, 4, 2)[:2] == [(0, 1), (0, 2)]
    assert table_key(42, 4, (0, 2)) == ((0, 11), (22, 10))
    assert len(scheme_tables(64, 6, 3)) == math.comb(6, 3)
    with pytest.raises(ParameterError):
        scheme_tables(64, 5)


@given(st.lists(st.integers(0, 20), max_size=40), st.integers(1, 30))
def test_size_spans_cover_every_item_in_order_within_the_size(
    sizes: list[int], per_span: int
) -> None:
    from simhash_cli.core.search.blocking import size_spans

    spans = list(size_spans(np.array(sizes, dtype=np.int64), per_span))
    assert [lo for lo, _ in spans] == [0, *[hi for _, hi in spans[:-1]]][: len(spans)]
    assert (spans[-1][1] if spans else 0) == len(sizes)
    for lo, hi in spans:
        assert hi > lo
        assert hi - lo == 1 or sum(sizes[lo:hi]) <= per_span
        assert hi == len(sizes) or sum(sizes[lo : hi + 1]) > per_span
