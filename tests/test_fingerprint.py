"""Fingerprints: bit-identical to the reference implementation, scalar and matrix paths alike."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import (
    InputError,
    ParameterError,
    estimate_cosine,
    feature_signs,
    fingerprint,
    fingerprint_matrix,
    fnv1a,
    from_hex,
    from_mappings,
    hamming,
    hamming_rows,
    to_hex,
    to_int,
)
from simhash_cli.core.sketch.fingerprint import (
    _exact_in_float32,
    as_fingerprint_array,
    feature_hashes,
    feature_keys,
    from_int,
    reference_order,
)

import reference_impl as ref

VECTORS = json.loads(
    (Path(__file__).parent / "reference" / "vectors.json").read_text(encoding="ascii")
)

# ---------------------------------------------------------------- derived by hand from the code


def test_fnv1a_matches_published_fnv1a_32_vectors() -> None:
    # ASCII code units equal bytes, so the published FNV-1a 32-bit test vectors apply.
    assert fnv1a("") == 0x811C9DC5
    assert fnv1a("a") == 0xE40C292C
    assert fnv1a("foobar") == 0xBF9CF968


def test_fnv1a_runs_over_utf16_code_units_not_utf8_bytes() -> None:
    # 'é' is one code unit 0x00E9 (two UTF-8 bytes); one step of FNV-1a by hand:
    assert fnv1a("é") == ((0x811C9DC5 ^ 0xE9) * 0x01000193) & 0xFFFFFFFF
    # An astral character is two units (a surrogate pair), hashed one after the other.
    h = 0x811C9DC5
    for unit in (0xD83D, 0xDE00):
        h = ((h ^ unit) * 0x01000193) & 0xFFFFFFFF
    assert fnv1a("😀") == h


def test_single_feature_fingerprint_is_its_first_xorshift_word() -> None:
    # With one positive-weight feature every slot's sum is +w or -w, so the fingerprint is
    # exactly the feature's sign bits: the first xorshift32 output seeded by fnv1a("cat:12345").
    s = fnv1a("cat:12345")
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    assert fingerprint({"cat": 1}, bits=32, seed=12345) == s
    assert fingerprint({"cat": 3.5}, bits=8, seed=12345) == s & 0xFF
    # A negative weight flips every slot.
    assert fingerprint({"cat": -1}, bits=32, seed=12345) == s ^ 0xFFFFFFFF


def test_xorshift_seed_zero_becomes_one() -> None:
    # The reference's `seed >>> 0 || 1`: state 1 gives 270369 as its first output.
    signs = ref.xorshift32(0)
    assert signs() == 270369
    hashes = feature_hashes(["x"], seed=1)
    assert hashes.dtype == np.uint32


def test_empty_mapping_and_exact_ties_give_zero_bits() -> None:
    assert fingerprint({}, bits=64) == 0
    assert fingerprint({"a": 0.0, "b": 0}, bits=64) == 0
    # The same feature's bits cancel exactly against an equal and opposite weight.
    assert fingerprint({"x": 2.0, "1": 0.0}, bits=16) == fingerprint({"x": 2.0}, bits=16)


# ---------------------------------------------------------------- against the reference


@pytest.mark.parametrize("case", VECTORS, ids=[case["name"] for case in VECTORS])
def test_reference_vectors(case: dict[str, Any]) -> None:
    features = {key: weight for key, weight in case["features"]}
    expected = int(case["expected"], 16)
    assert fingerprint(features, bits=case["bits"], seed=case["seed"]) == expected
    assert ref.fingerprint(features, case["bits"], case["seed"]) == expected


def test_reference_vectors_through_the_matrix_path() -> None:
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for case in VECTORS:
        groups.setdefault((case["bits"], case["seed"]), []).append(case)
    for (bits, seed), cases in groups.items():
        weights, names = from_mappings({k: float(w) for k, w in c["features"]} for c in cases)
        matrix = fingerprint_matrix(weights, names, bits=bits, seed=seed, batch_rows=3)
        assert [to_int(row) for row in matrix] == [int(c["expected"], 16) for c in cases]


def test_integer_like_keys_are_summed_first_as_javascript_iterates_them() -> None:
    features = {"a": 1e16, "b": 1.0, "7": -1e16}
    expected = ref.fingerprint(dict(features), 64, 12345)
    assert reference_order(list(features)) == [2, 0, 1]
    assert fingerprint(features, bits=64) == expected
    # And the order matters: summed in insertion order the 1.0 is lost to rounding.
    plain = np.cumsum(
        feature_signs(list(features), bits=64) * np.array([1e16, 1.0, -1e16])[:, None], axis=0
    )[-1]
    assert int(sum(1 << i for i in range(64) if plain[i] > 0)) != expected


def test_reference_order_only_lifts_canonical_array_indices() -> None:
    keys = ["x", "10", "02", "2", "-1", "4294967295", "4294967294", "0", "١"]
    assert [keys[i] for i in reference_order(keys)] == [
        "0",
        "2",
        "10",
        "4294967294",
        "x",
        "02",
        "-1",
        "4294967295",
        "١",
    ]


weights_strategy = st.one_of(
    st.integers(-5, 20),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.1, 0.2, -0.3, 1e-300, -1e-300]),
)
mapping_strategy = st.dictionaries(st.text(max_size=6), weights_strategy, max_size=25)
bits_strategy = st.sampled_from([8, 16, 24, 32, 40, 64, 72, 128, 200, 512])
seed_strategy = st.one_of(st.sampled_from([0, 1, 12345, 2**32 - 1]), st.integers(0, 2**32 - 1))


@given(features=mapping_strategy, bits=bits_strategy, seed=seed_strategy)
def test_scalar_path_equals_transliterated_reference(
    features: dict[str, float], bits: int, seed: int
) -> None:
    assert fingerprint(features, bits=bits, seed=seed) == ref.fingerprint(features, bits, seed)


@given(
    docs=st.lists(mapping_strategy, min_size=1, max_size=12),
    bits=bits_strategy,
    seed=seed_strategy,
    batch=st.integers(1, 5),
)
def test_matrix_path_equals_scalar_path(
    docs: list[dict[str, float]], bits: int, seed: int, batch: int
) -> None:
    weights, names = from_mappings({k: float(v) for k, v in d.items()} for d in docs)
    matrix = fingerprint_matrix(weights, names, bits=bits, seed=seed, batch_rows=batch)
    assert matrix.shape == (len(docs), (bits + 63) // 64)
    assert matrix.dtype == np.uint64
    assert [to_int(row) for row in matrix] == [fingerprint(d, bits=bits, seed=seed) for d in docs]


@given(
    docs=st.lists(
        st.dictionaries(
            st.sampled_from("abcdefgh"),
            st.one_of(st.integers(-3, 3), st.integers(2**23 - 2, 2**23 + 2)).map(float),
            max_size=6,
        ),
        min_size=1,
        max_size=8,
    ),
    batch=st.integers(1, 4),
)
def test_integer_weights_near_float32_limits_give_the_same_fingerprints(
    docs: list[dict[str, float]], batch: int
) -> None:
    # Term counts are summed in float32 when that is exact (row sums of |w| below 2**24);
    # weights around 2**23 put rows on both sides of that line.
    weights, names = from_mappings(docs)
    matrix = fingerprint_matrix(weights, names, bits=64, seed=7, batch_rows=batch)
    assert [to_int(row) for row in matrix] == [fingerprint(d, bits=64, seed=7) for d in docs]


def test_sums_float32_would_round_are_made_in_float64() -> None:
    # In float32, 2**24 + 1 rounds to 2**24, so slots where "a" and "c" cancel would lose
    # the 1 of "b" and come out 0: the row's absolute sum (2**25 + 1) sends it to float64.
    features = {"a": float(2**24), "b": 1.0, "c": -float(2**24)}
    weights, names = from_mappings([features, {"a": 3.0, "b": 1.0}])
    assert not _exact_in_float32(weights[[0]]) and _exact_in_float32(weights[[1]])
    assert to_int(fingerprint_matrix(weights, names)[0]) == ref.fingerprint(features, 64, 12345)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_random_vectors_against_the_javascript_reference_itself() -> None:
    from reference.make_vectors import run_reference

    rng = np.random.default_rng(7)
    pool = ["the", "a", "é", "😀", "\udc00", ":", "", "12", "012", "x y", "ß", "日本"]
    batch: list[dict[str, Any]] = []
    for _ in range(300):
        size = int(rng.integers(0, 40))
        keys = {"".join(rng.choice(pool, size=int(rng.integers(1, 4)))) for _ in range(size)}
        features = [
            [key, float(rng.normal()) if rng.random() < 0.5 else int(rng.integers(-3, 9))]
            for key in sorted(keys)
        ]
        batch.append(
            {
                "features": features,
                "bits": int(rng.choice([8, 32, 64, 96, 256])),
                "seed": int(rng.integers(0, 2**32)),
            }
        )
    expected = run_reference(batch)
    for case, hex_value in zip(batch, expected, strict=True):
        mine = fingerprint(dict(case["features"]), bits=case["bits"], seed=case["seed"])
        assert mine == int(hex_value, 16), case


def test_a_very_long_feature_hashes_like_a_short_one() -> None:
    long = "x" * 100_000
    assert feature_hashes([long, "ab"], seed=3).tolist() == [
        ref.fnv1a(long + ":3"),
        ref.fnv1a("ab:3"),
    ]


@given(
    texts=st.lists(
        st.text(st.sampled_from(["a", "é", "中", "\U0001f600", "\ud800", "\udc00", "\uffff"])),
        min_size=1,
        max_size=12,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_features_of_characters_outside_the_bmp_hash_as_the_reference_does(
    texts: list[str], seed: int
) -> None:
    # A character outside the BMP is two UTF-16 units, and a lone surrogate is one: each
    # feature's units are counted from the joined batch, wherever such characters fall.
    assert feature_hashes(texts, seed=seed).tolist() == [
        ref.fnv1a(f"{text}:{seed}") for text in texts
    ]


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("bits", [0, 7, 12, 4104, -8])
def test_bad_bits_are_refused(bits: int) -> None:
    with pytest.raises(ParameterError, match="bits must be a multiple of 8 from 8 to 4096"):
        fingerprint({"a": 1}, bits=bits)


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_bad_seed_is_refused(seed: int) -> None:
    with pytest.raises(ParameterError, match="seed must be an integer from 0 to 4294967295"):
        fingerprint({"a": 1}, seed=seed)


@pytest.mark.parametrize("weight", [math.nan, math.inf, -math.inf, 10**400])
def test_non_finite_weights_are_refused(weight: float) -> None:
    with pytest.raises(InputError, match="finite"):
        fingerprint({"a": 1, "b": weight})
    with pytest.raises(InputError, match="finite"):
        fingerprint_matrix(sp.csr_array(np.array([[1.0, math.nan]])), ["a", "b"])


def test_bool_bits_and_non_numeric_weights_are_refused() -> None:
    with pytest.raises(ParameterError):
        fingerprint({"a": 1}, bits=True)
    with pytest.raises(InputError):
        fingerprint({"a": "heavy"})  # type: ignore[dict-item]


# ---------------------------------------------------------------- the other core operations


@given(a=st.integers(0, 2**64 - 1), b=st.integers(0, 2**64 - 1))
def test_hamming_and_estimate_match_the_reference(a: int, b: int) -> None:
    assert hamming(a, b) == ref.hamming_distance(a, b) == hamming(b, a)
    assert estimate_cosine(a, b, 64) == ref.estimate_cosine(a, b, 64)
    rows_a, rows_b = as_fingerprint_array([a], 64), as_fingerprint_array([b], 64)
    assert hamming_rows(rows_a, rows_b).tolist() == [hamming(a, b)]


def test_estimate_cosine_extremes() -> None:
    assert estimate_cosine(0, 0, 32) == 1.0
    assert estimate_cosine(0, 2**32 - 1, 32) == -1.0
    assert estimate_cosine(0, 0xFFFF, 32) == pytest.approx(0.0, abs=1e-15)


@given(value=st.integers(0, 2**200 - 1))
def test_int_hex_and_word_round_trips(value: int) -> None:
    assert to_int(from_int(value, 200)) == value
    text = to_hex(value, 200)
    assert len(text) == 50 and from_hex(text, 200) == value


def test_hex_is_zero_padded_and_checked() -> None:
    assert to_hex(1, 64) == "0000000000000001"
    with pytest.raises(InputError, match="not 16 hex digits"):
        from_hex("123", 64)
    with pytest.raises(InputError):
        from_int(1 << 64, 64)


def test_fingerprint_array_accepts_ints_and_arrays() -> None:
    ints = [1, 2**63, 5]
    words = as_fingerprint_array(ints, 64)
    assert words.shape == (3, 1)
    assert np.array_equal(as_fingerprint_array(np.array(ints, dtype=np.uint64), 64), words)
    with pytest.raises(ParameterError):
        as_fingerprint_array(np.zeros((3, 2), dtype=np.uint64), 64)
    with pytest.raises(InputError):
        as_fingerprint_array(np.array([256], dtype=np.uint64), 8)


def test_feature_keys_are_64_bit_fnv1a_over_utf16_units() -> None:
    """feature_keys against a plain loop (and the published FNV-1a 64 of "a")."""

    def plain(text: str) -> int:
        data = text.encode("utf-16-le", "surrogatepass")
        h = 0xCBF29CE484222325
        for k in range(0, len(data), 2):
            h = ((h ^ int.from_bytes(data[k : k + 2], "little")) * 0x100000001B3) % 2**64
        return h

    texts = ["", "a", "foobar", "\U0001f600x", "a" * 40, "ß", "\ud800"] + [
        f"w{i}" for i in range(9)
    ]
    keys = feature_keys(texts)
    assert keys.dtype == np.uint64
    assert keys.tolist() == [plain(text) for text in texts]
    assert int(keys[1]) == 0xAF63DC4C8601EC8C


@given(
    docs=st.lists(mapping_strategy, min_size=1, max_size=8),
    bits=bits_strategy,
    block=st.integers(1, 4),
    batch=st.integers(1, 5),
)
def test_long_rows_summed_a_block_of_entries_at_a_time_give_the_same_bits(
    docs: list[dict[str, float]], bits: int, block: int, batch: int
) -> None:
    # A document of millions of distinct features is summed SIGN_ENTRIES entries at a time,
    # each block going on from the row's running total: the same order, the same rounding,
    # hence the reference's bits even where float sums land next to zero.
    import simhash_cli.core.sketch.fingerprint as fp

    weights, names = from_mappings({k: float(v) for k, v in d.items()} for d in docs)
    whole = fingerprint_matrix(weights, names, bits=bits, seed=3, batch_rows=batch)
    saved = fp.SIGN_ENTRIES
    fp.SIGN_ENTRIES = block
    try:
        blocked = fingerprint_matrix(weights, names, bits=bits, seed=3, batch_rows=batch)
    finally:
        fp.SIGN_ENTRIES = saved
    assert np.array_equal(blocked, whole)
    assert [to_int(row) for row in blocked] == [ref.fingerprint(d, bits, 3) for d in docs]
