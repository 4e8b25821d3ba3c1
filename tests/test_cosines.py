"""Verification: Hamming, estimated cosine and true cosine of candidate pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from simhash_cli import ParameterError, Verify, cosine_pairs, score_pairs
from simhash_cli.core.sketch.fingerprint import as_fingerprint_array, feature_keys
from simhash_cli.core.verify import cosines as cosines_module
from simhash_cli.core.verify.cosines import (
    SKETCH_BITS,
    THRESHOLD_TOLERANCE,
    column_order,
    estimate_cosine_rows,
    estimate_limit,
    hamming_gate,
    keep_mask,
    sketch,
    validate_threshold,
)


def test_true_cosine_of_pairs() -> None:
    weights = sp.csr_array(
        np.array(
            [[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [2.0, 2.0, 0.0], [-1.0, -1.0, 0.0]]
        )
    )
    pairs = np.array([[0, 1], [0, 3], [0, 2], [0, 4]], dtype=np.int64)
    cos = cosine_pairs(weights, pairs)
    assert cos[0] == pytest.approx(1 / math.sqrt(2))
    assert cos[1] == pytest.approx(1.0)
    assert math.isnan(cos[2])  # an all-zero vector has no direction
    assert cos[3] == pytest.approx(-1.0)


def test_scores_and_threshold() -> None:
    fps = as_fingerprint_array([0b0000, 0b0001, 0b1111_1111], 8)
    pairs = np.array([[0, 1], [0, 2]], dtype=np.int64)
    scored = score_pairs(pairs, fps, bits=8)
    assert scored.hamming.tolist() == [1, 8]
    assert scored.estimated_cosine.tolist() == pytest.approx([math.cos(math.pi / 8), -1.0])
    assert np.isnan(scored.cosine).all()
    keep = keep_mask(scored, threshold=0.9, verify=Verify.ESTIMATE)
    assert keep.tolist() == [True, False]
    # NaN (not computed) never passes exact verification.
    assert keep_mask(scored, threshold=-1.0, verify=Verify.EXACT).tolist() == [False, False]


def test_identical_documents_pass_a_threshold_of_one() -> None:
    weights = sp.csr_array(np.array([[0.1, 0.7, 0.3], [0.1, 0.7, 0.3]]))
    fps = as_fingerprint_array([3, 3], 64)
    scored = score_pairs(np.array([[0, 1]], dtype=np.int64), fps, bits=64, weights=weights)
    assert keep_mask(scored, threshold=1.0, verify=Verify.EXACT).tolist() == [True]


def test_threshold_must_be_a_cosine() -> None:
    with pytest.raises(ParameterError, match="threshold must be a cosine from -1 to 1"):
        validate_threshold(1.5)


def test_hamming_gate_is_the_binomial_quantile() -> None:
    from scipy.stats import binom

    p = math.acos(0.9) / math.pi
    assert hamming_gate(0.9, 64) == int(binom.ppf(1 - 1e-4, 64, p))
    assert hamming_gate(0.9, 64) < hamming_gate(0.5, 64) < 64
    assert hamming_gate(1.0, 64) == 0
    # A pair exactly at the threshold is gated out with odds below 1 in 10,000.
    assert binom.sf(hamming_gate(0.9, 64), 64, p) < 1e-4


@pytest.mark.parametrize("threshold", [-1.0, 0.0, 0.5, 0.9, math.cos(math.pi * 3 / 64), 1.0])
def test_estimate_limit_is_the_last_distance_whose_estimate_reaches_the_threshold(
    threshold: float,
) -> None:
    limit = estimate_limit(threshold, 64)
    estimates = estimate_cosine_rows(np.arange(65), 64)
    assert np.all(estimates[: limit + 1] >= threshold - THRESHOLD_TOLERANCE)
    assert limit == 64 or estimates[limit + 1] < threshold - THRESHOLD_TOLERANCE


def test_a_sketch_gate_keeps_near_copies_and_drops_unrelated_rows() -> None:
    rng = np.random.default_rng(9)
    base = rng.random((50, 400)) * (rng.random((50, 400)) < 0.2)
    copies = base * (1 + 0.05 * rng.random(base.shape))  # cosine above 0.99 with its base
    weights = sp.csr_array(np.vstack((base, copies)))
    features = [f"f{i}" for i in range(400)]
    near = np.stack((np.arange(50), np.arange(50, 100)), axis=1)
    far = np.stack((np.arange(50), (np.arange(50) + 1) % 50), axis=1)  # about 0.2 apart
    assert cosine_pairs(weights, near).min() > 0.99 and cosine_pairs(weights, far).max() < 0.5
    sketches = sketch(weights, features, seed=1)
    assert sketches.shape == (100, SKETCH_BITS // 64)
    gate = hamming_gate(0.9, SKETCH_BITS)
    for pairs, expected in ((near, True), (far, False)):
        distance = np.bitwise_count(sketches[pairs[:, 0]] ^ sketches[pairs[:, 1]]).sum(axis=1)
        assert np.all((distance <= gate) == expected)


@pytest.mark.parametrize("chunk", [3, 40, 1 << 22])
def test_pairs_of_a_few_documents_score_as_each_pair_alone(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk makes each of its documents unit once, however many pairs it is in: every
    cosine is the one the pair gets alone, to the last bit."""
    rng = np.random.default_rng(5)
    dense = np.round(rng.random((30, 50)) * 7) - 2  # zeros and negative weights
    dense[rng.random((30, 50)) < 0.7] = 0
    weights = sp.csr_array(dense)
    pairs = rng.integers(0, 8, (400, 2))  # many pairs of eight documents
    pairs = np.vstack([pairs, [[9, 9], [3, 29]]]).astype(np.int64)
    alone = np.array([cosine_pairs(weights, pairs[k : k + 1])[0] for k in range(len(pairs))])
    monkeypatch.setattr(cosines_module, "_CHUNK_ENTRIES", chunk)
    np.testing.assert_array_equal(cosine_pairs(weights, pairs), alone)
    # The pairs' own rows made unit are the verifier's rows of the whole corpus, to the bit.
    every = cosines_module.unit_scales(weights)
    np.testing.assert_array_equal(cosines_module.unit_cosine_pairs(every, pairs), alone)


def test_a_cosine_is_the_same_bits_whatever_numbered_the_columns() -> None:
    """The local engine numbers a corpus's columns by first occurrence, a dask worker by
    feature key: with each column's rank among the keys, every sum takes one order and the
    cosines are the same bits (float weights, where the order of a sum shows)."""
    rng = np.random.default_rng(7)
    features = [f"w{k}" for k in range(400)]
    dense = rng.random((6, 400)) * (rng.random((6, 400)) < 0.5)
    dense[1] = dense[0] * (1 + 1e-3 * rng.random(400))  # near-copies, cosine near 1
    pairs = np.array([[0, 1], [0, 2], [3, 4], [1, 5]], dtype=np.int64)
    shuffled = rng.permutation(400)
    here = sp.csr_array(dense)
    there = sp.csr_array(dense[:, shuffled])
    renamed = [features[k] for k in shuffled]
    mine = cosine_pairs(here, pairs, column_order(feature_keys(features)))
    theirs = cosine_pairs(there, pairs, column_order(feature_keys(renamed)))
    assert mine.tobytes() == theirs.tobytes()
    keyed = np.argsort(feature_keys(features), kind="stable")  # columns in key order
    assert cosine_pairs(sp.csr_array(dense[:, keyed]), pairs).tobytes() == mine.tobytes()


def test_a_corpus_numbered_by_key_once_gives_the_cosines_of_a_sort_at_every_product() -> None:
    """A corpus's columns are numbered by their features' keys once, when it is made, each
    row's entries sorted (:func:`in_key_order`), so that no product sorts them again: its
    cosines are the bits of the rows numbered as read and sorted by key at each product (float
    weights), the permutation maps each column to its feature, and numbering again is free."""
    rng = np.random.default_rng(3)
    features = [f"w{k}" for k in range(300)]
    dense = rng.random((40, 300)) * (rng.random((40, 300)) < 0.3)
    dense[1] = dense[0] * (1 + 1e-3 * rng.random(300))
    # Each row's entries in an order of its own (the reference's order, which the
    # fingerprints follow), not sorted by column.
    read = sp.csr_array(dense)
    for row in range(read.shape[0]):
        lo, hi = read.indptr[row], read.indptr[row + 1]
        turn = rng.permutation(hi - lo) + lo
        read.indices[lo:hi], read.data[lo:hi] = read.indices[turn], read.data[turn]
    read.has_sorted_indices = False
    pairs = np.array([[0, 1], [2, 3], [0, 39], [5, 6]], dtype=np.int64)
    keys = feature_keys(features)
    before = cosine_pairs(read, pairs, column_order(keys))
    keyed, order = cosines_module.in_key_order(read, keys)
    assert keyed.has_sorted_indices
    rows = np.repeat(np.arange(40), np.diff(keyed.indptr))
    assert np.all((np.diff(keyed.indices) > 0) | (np.diff(rows) > 0))
    np.testing.assert_array_equal(keyed.toarray(), dense[:, order])
    assert cosine_pairs(keyed, pairs).tobytes() == before.tobytes()
    renamed = [features[k] for k in order.tolist()]
    assert np.array_equal(column_order(feature_keys(renamed)), np.arange(300))
    again, same = cosines_module.in_key_order(keyed, feature_keys(renamed))
    assert again is keyed and np.array_equal(same, np.arange(300))
    # Handed over, the arrays are renumbered where they are (a corpus is never held twice).
    given = read.copy()
    owned, _ = cosines_module.in_key_order(given, keys, in_place=True)
    assert np.shares_memory(owned.indices, given.indices)
    assert np.shares_memory(owned.data, given.data)
    assert owned.has_sorted_indices
    np.testing.assert_array_equal(owned.toarray(), keyed.toarray())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_scales_of_rows_in_key_order_are_read_where_they_are(dtype: type) -> None:
    """Rows already in the one order are scaled where they are stored, stored zeros and rows
    of zeros among them: the same bits as the rows copied, cleaned and sorted first (float32
    counts: their largest found in float32, the same value)."""
    rng = np.random.default_rng(5)
    dense = rng.random((50, 80)) * (rng.random((50, 80)) < 0.3) * 1e3
    if dtype is np.float32:
        dense = np.ceil(dense)  # whole counts, as a corpus of term counts holds them
    dense[7] = 0.0
    stored = sp.csr_array(dense.astype(dtype))
    stored.data[::9] = 0.0  # zeros kept as entries, and a row of them alone
    lo, hi = stored.indptr[3], stored.indptr[4]
    stored.data[lo:hi] = 0.0
    assert stored.has_canonical_format
    fast = cosines_module.unit_scales(stored)
    copied = stored.copy()
    copied.has_sorted_indices = False  # through the copy, the zeros dropped and the rows sorted
    slow = cosines_module.unit_scales(copied, np.arange(80))
    assert fast.largest.tobytes() == slow.largest.tobytes()
    assert fast.norms.tobytes() == slow.norms.tobytes()
    assert fast.norms[3] == 0.0 and fast.norms[7] == 0.0 and np.all(fast.norms[8:] > 0)
