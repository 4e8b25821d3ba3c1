"""Blocking: candidate pairs are exactly the pairs that share a block (checked by brute force)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import ParameterError, candidate_probability, candidates, hamming
from simhash_cli.blocking import CandidateBudgetError, count_candidates, validate_blocks
from simhash_cli.fingerprint import as_fingerprint_array


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
