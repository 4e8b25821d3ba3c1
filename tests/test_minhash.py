"""MinHash: signatures of feature sets, densified; candidates by banding, against brute force."""

from __future__ import annotations

import itertools
import math
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli.core.search.blocking import splitmix64
from simhash_cli.core.sketch import minhash
from simhash_cli.core.sketch.minhash import (
    EMPTY,
    band_candidate_chunks,
    band_keys,
    banded,
    candidate_probability,
    fewest_bands,
    jaccard_pairs,
    least_jaccard,
    signatures,
)
from simhash_cli.errors import ParameterError


def rows_of(sets: list[set[int]], n_features: int) -> sp.csr_array:
    indptr = np.cumsum([0] + [len(s) for s in sets])
    indices = np.array([f for s in sets for f in sorted(s)], dtype=np.int64)
    return sp.csr_array((np.ones(indices.size), indices, indptr), shape=(len(sets), n_features))


def slow_signature(features: set[int], keys: np.ndarray, slots: int, seed: int) -> list[int]:
    """One row, one feature and one bin at a time: the definition, written plainly."""
    mixed_seed = splitmix64(np.array([seed], np.uint64))
    row = [int(EMPTY)] * slots
    for f in features:
        h = int(splitmix64(np.array([keys[f]], np.uint64) ^ mixed_seed)[0])
        value = h & 0xFFFFFFFF
        value = value - 1 if value == int(EMPTY) else value
        b = (h >> 32) % slots
        row[b] = min(row[b], value)
    filled = [v != int(EMPTY) for v in row]
    if not any(filled):
        return row
    out = list(row)
    for j in range(slots):
        attempt = 0
        while not filled[j]:
            attempt += 1
            key = np.uint64((j << 32) ^ attempt) ^ np.uint64(0x9E3779B97F4A7C15)
            source = int(splitmix64(np.array([key], np.uint64) ^ mixed_seed)[0]) % slots
            if filled[source]:
                out[j] = row[source]
                break
        # (a filled bin keeps its own value)
    return out


@given(
    sets=st.lists(st.sets(st.integers(0, 40), max_size=12), min_size=1, max_size=8),
    slots=st.sampled_from([1, 4, 16, 64]),
    seed=st.integers(0, 2**32 - 1),
)
def test_signatures_follow_the_definition(sets: list[set[int]], slots: int, seed: int) -> None:
    keys = splitmix64(np.arange(41, dtype=np.uint64) + np.uint64(7))
    found = signatures(rows_of(sets, 41), keys, slots=slots, seed=seed)
    assert found.tolist() == [slow_signature(s, keys, slots, seed) for s in sets]


@given(
    sets=st.lists(st.sets(st.integers(0, 40), max_size=12), min_size=1, max_size=8),
    chunk=st.integers(1, 30),
)
def test_signatures_do_not_depend_on_the_chunk(sets: list[set[int]], chunk: int) -> None:
    keys = splitmix64(np.arange(41, dtype=np.uint64))
    weights = rows_of(sets, 41)
    whole = signatures(weights, keys, slots=16)
    assert (signatures(weights, keys, slots=16, chunk_entries=chunk) == whole).all()
    some = np.arange(len(sets), dtype=np.int64)[::-2]
    chosen = signatures(weights, keys, slots=16, rows=some, chunk_entries=chunk)
    assert (chosen == whole[some]).all()


@given(
    sets=st.lists(st.sets(st.integers(0, 40), max_size=12), min_size=1, max_size=30),
    bands=st.integers(1, 6),
    rows=st.integers(1, 5),
    chunk=st.integers(1, 30),
)
def test_band_keys_are_the_bands_of_the_signatures(
    sets: list[set[int]], bands: int, rows: int, chunk: int
) -> None:
    """Two rows' keys of a band are equal exactly when their bins of that band are (no
    collision among so few), an empty row's keys are 0 and no other key is, and the keys
    made a block of rows at a time are those of the whole signature."""
    keys = splitmix64(np.arange(41, dtype=np.uint64))
    weights = rows_of(sets, 41)
    signature = signatures(weights, keys, slots=bands * rows, seed=3)
    found = band_keys(signature, bands=bands, rows=rows)
    assert found.shape == (len(sets), bands) and found.dtype == np.uint64
    empty = np.array([not s for s in sets])
    assert (found[empty] == 0).all() and (found[~empty] != 0).all()
    for i, j in itertools.combinations(np.flatnonzero(~empty).tolist(), 2):
        for b in range(bands):
            same = (
                signature[i, b * rows : (b + 1) * rows] == signature[j, b * rows : (b + 1) * rows]
            ).all()
            assert (found[i, b] == found[j, b]) == same
    some = np.arange(len(sets), dtype=np.int64)[::-2]
    blocks = banded(weights, keys, bands=bands, rows=rows, seed=3, chosen=some, chunk_entries=chunk)
    assert (blocks == found[some]).all()
    with mock.patch.object(minhash, "_CHUNK_ENTRIES", bands * rows * 2):  # two rows a block
        assert (banded(weights, keys, bands=bands, rows=rows, seed=3) == found).all()


@given(sets=st.lists(st.sets(st.integers(0, 30), max_size=10), min_size=2, max_size=6))
def test_jaccard_of_pairs_is_the_sets_overlap(sets: list[set[int]]) -> None:
    pairs = np.array(list(itertools.combinations(range(len(sets)), 2)), dtype=np.int64)
    found = jaccard_pairs(rows_of(sets, 31), pairs)
    expected = [
        len(sets[i] & sets[j]) / len(sets[i] | sets[j]) if sets[i] | sets[j] else 1.0
        for i, j in pairs.tolist()
    ]
    assert found.tolist() == pytest.approx(expected)


@given(cosine=st.floats(0.05, 1.0), small=st.integers(1, 40), extra=st.integers(0, 200))
def test_least_jaccard_bounds_every_pair_of_sets_at_that_cosine(
    cosine: float, small: int, extra: int
) -> None:
    # A set A of `small` features and B = A plus `extra` more: the case that overlaps least.
    a, b = small, small + extra
    set_cosine = a / math.sqrt(a * b)
    assert a / b == pytest.approx(float(least_jaccard(set_cosine)))
    # Any sets whose cosine reaches c overlap at least c^2.
    if set_cosine >= cosine:
        assert a / b >= float(least_jaccard(cosine)) - 1e-12


@given(jaccard=st.floats(0.05, 0.99), rows=st.integers(1, 16), target=st.floats(0.5, 0.999))
def test_fewest_bands_is_the_least_that_reaches_the_target(
    jaccard: float, rows: int, target: float
) -> None:
    bands = fewest_bands(jaccard, rows, target)
    if bands is None:  # even as many bands as fit in 256 bins fall short
        most = 256 // rows
        assert float(candidate_probability(jaccard, bands=most, rows=rows)) < target
        return
    assert float(candidate_probability(jaccard, bands=bands, rows=rows)) >= target
    assert bands == 1 or float(candidate_probability(jaccard, bands=bands - 1, rows=rows)) < target


def test_densifying_a_block_of_rows_at_a_time_changes_nothing() -> None:
    rng = np.random.default_rng(5)
    sets = [
        set(rng.choice(300, int(rng.integers(0, 12)), replace=False).tolist()) for _ in range(50)
    ]
    keys = splitmix64(np.arange(300, dtype=np.uint64))
    whole = signatures(rows_of(sets, 300), keys, slots=32)
    with mock.patch.object(minhash, "_CHUNK_ENTRIES", 40):  # one row (32 bins) a block
        assert (signatures(rows_of(sets, 300), keys, slots=32) == whole).all()


def test_one_set_one_signature_and_no_empty_bin_left() -> None:
    keys = splitmix64(np.arange(1000, dtype=np.uint64))
    sets = [{1, 2, 3}, {3, 2, 1}, set(range(200)), set(), {999}]
    found = signatures(rows_of(sets, 1000), keys, slots=128)
    assert (found[0] == found[1]).all()
    assert not (found[[0, 2, 4]] == EMPTY).any()  # densified, even from one feature
    assert (found[3] == EMPTY).all()


def test_bins_collide_as_often_as_the_sets_overlap() -> None:
    # Pairs at Jaccard 0.2, 0.5 and 0.8: the share of equal bins, over 128 bins and 40 pairs
    # each, is within a few hundredths of J (its standard error is about 0.01).
    rng = np.random.default_rng(3)
    keys = splitmix64(rng.integers(0, 2**63, 100_000, dtype=np.uint64).astype(np.uint64))
    for jaccard in (0.2, 0.5, 0.8):
        shares = []
        for _ in range(40):
            union = rng.choice(100_000, 150, replace=False)
            common = round(jaccard * 150)
            rest = union[common:]
            a = set(union[:common].tolist()) | set(rest[: len(rest) // 2].tolist())
            b = set(union[:common].tolist()) | set(rest[len(rest) // 2 :].tolist())
            found = signatures(rows_of([a, b], 100_000), keys, seed=int(rng.integers(2**32)))
            shares.append(float((found[0] == found[1]).mean()))
        assert abs(np.mean(shares) - jaccard) < 0.03, (jaccard, np.mean(shares))


@given(
    values=st.lists(st.lists(st.integers(0, 2), min_size=12, max_size=12), min_size=0, max_size=30),
    bands=st.integers(1, 4),
    rows=st.integers(1, 3),
    chunk=st.integers(1, 50),
)
def test_band_candidates_are_every_pair_sharing_a_band_once(
    values: list[list[int]], bands: int, rows: int, chunk: int
) -> None:
    signature = np.array(values, dtype=np.uint32).reshape(-1, 12)
    signature[signature == 2] = EMPTY  # some rows all EMPTY: no features, never candidates
    signature[(signature == EMPTY).any(axis=1)] = EMPTY
    expected = {
        (i, j)
        for i, j in itertools.combinations(range(len(signature)), 2)
        if signature[i, 0] != EMPTY
        and any(
            (
                signature[i, b * rows : (b + 1) * rows] == signature[j, b * rows : (b + 1) * rows]
            ).all()
            for b in range(bands)
        )
    }
    keys = band_keys(signature, bands=bands, rows=rows)
    chunks = list(band_candidate_chunks(keys, chunk_pairs=chunk))
    found = [tuple(p) for c in chunks for p in c.tolist()]
    assert len(found) == len(set(found))
    assert set(found) == expected
    assert all(i < j for i, j in found)


def test_the_s_curve_and_what_is_refused() -> None:
    assert candidate_probability(1.0, bands=16, rows=8) == 1.0
    assert candidate_probability(0.0, bands=16, rows=8) == 0.0
    assert float(candidate_probability(0.7, bands=16, rows=8)) == pytest.approx(
        1 - (1 - 0.7**8) ** 16
    )
    with pytest.raises(ParameterError):
        band_keys(np.zeros((3, 8), np.uint32), bands=3, rows=3)
    with pytest.raises(ParameterError):
        band_keys(np.zeros((3, 8), np.uint32), bands=0, rows=3)
    with pytest.raises(ParameterError):
        signatures(rows_of([{1}], 2), np.zeros(2, np.uint64), slots=0)
