"""Vectorize: documents -> CSR weights whose rows fingerprint like the mappings they stand for."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import (
    Settings,
    TokenizerConfig,
    Weighting,
    corpus_from_texts,
    fingerprint,
    fingerprint_matrix,
    tokenize,
    vectorize,
)
from simhash_cli.core.sketch.fingerprint import feature_keys, to_int
from simhash_cli.core.text import wordtable as wordtable_module
from simhash_cli.core.text.vectorize import (
    apply_weighting,
    count_matrix,
    from_mappings,
    merge_counts,
    row_mapping,
)
from simhash_cli.core.text.words import WordTokens, word_tokens
from simhash_cli.core.text.wordtable import WordTable
from simhash_cli.core.verify.cosines import in_key_order
from simhash_cli.errors import KeyCollision


def test_counts_are_term_frequencies() -> None:
    weights, names = vectorize(["the cat the hat", "dog"])
    assert row_mapping(weights, names, 0) == {"cat": 1.0, "hat": 1.0, "the": 2.0}
    assert row_mapping(weights, names, 1) == {"dog": 1.0}
    assert weights.dtype == np.float32  # counts below 2**24 are exact in it


def test_counts_that_float32_would_round_are_kept_in_float64() -> None:
    from simhash_cli.core.text.tokenizer import TokenizerConfig
    from simhash_cli.core.text.vectorize import _Counter

    counter = _Counter(TokenizerConfig())
    big = sp.csr_array(np.array([[2**24 + 1, 3]], dtype=np.float64))
    counter.add_counts(big, ["a", "b"])
    matrix, names = counter.matrix()
    assert matrix.dtype == np.float64
    assert row_mapping(matrix, names, 0) == {"a": float(2**24 + 1), "b": 3.0}


def test_columns_put_integer_like_features_first_like_javascript() -> None:
    _, names = vectorize(["b 10 a 2 007"])
    assert names == ["2", "10", "007", "a", "b"]


@pytest.mark.parametrize("weighting", list(Weighting))
def test_rows_fingerprint_like_their_mappings(weighting: Weighting) -> None:
    texts = ["one 2 three 2 2 four", "four five 10 10 one", "x y z 3 3 1"]
    weights, names = vectorize(texts, weighting=weighting)
    matrix = fingerprint_matrix(weights, names, bits=128)
    for row in range(len(texts)):
        assert to_int(matrix[row]) == fingerprint(row_mapping(weights, names, row), bits=128)


def test_weightings() -> None:
    texts = ["a a a b", "a c"]
    tf, names = vectorize(texts)
    assert row_mapping(tf, names, 0) == {"a": 3.0, "b": 1.0}
    binary, _ = vectorize(texts, weighting=Weighting.BINARY)
    assert row_mapping(binary, names, 0) == {"a": 1.0, "b": 1.0}
    log, _ = vectorize(texts, weighting=Weighting.LOG)
    assert row_mapping(log, names, 0) == {"a": 1 + math.log(3), "b": 1.0}
    tfidf, _ = vectorize(texts, weighting=Weighting.TFIDF)
    # smooth idf: ln((1 + n) / (1 + df)) + 1 with n = 2
    assert row_mapping(tfidf, names, 0) == pytest.approx(
        {"a": 3 * (math.log(3 / 3) + 1), "b": 1 * (math.log(3 / 2) + 1)}
    )


def test_documents_without_tokens_are_empty_rows() -> None:
    weights, names = vectorize(["", "  !!! ", "word"])
    assert weights.shape == (3, 1) and names == ["word"]
    assert np.diff(weights.indptr).tolist() == [0, 0, 1]


def test_a_corpus_without_any_token_keeps_its_rows() -> None:
    weights, names = count_matrix(iter(["", "..."]))
    assert weights.shape == (2, 0) and names == []


def test_shingles_through_the_vectorizer() -> None:
    weights, names = vectorize(["a b c a b"], tokenizer=TokenizerConfig(ngram=2))
    assert row_mapping(weights, names, 0) == {"a b": 2.0, "b c": 1.0, "c a": 1.0}


def test_texts_are_consumed_once_as_a_stream() -> None:
    consumed: list[str] = []

    def texts() -> object:
        for text in ["a", "b a"]:
            consumed.append(text)
            yield text

    weights, _ = vectorize(texts())  # type: ignore[arg-type]
    assert consumed == ["a", "b a"] and weights.shape[0] == 2


def test_given_vectors_keep_their_reference_order() -> None:
    weights, names = from_mappings([{"b": 0.5, "9": 1.0, "a": -2.0}, {}])
    assert row_mapping(weights, names, 0) == {"9": 1.0, "b": 0.5, "a": -2.0}
    assert list(row_mapping(weights, names, 0)) == ["9", "b", "a"]
    assert weights.shape == (2, 3)


@given(
    texts=st.lists(st.text(alphabet=st.sampled_from(list("ab cÉé1_😀-\n"))), max_size=8),
    batch=st.integers(1, 4),
    config=st.sampled_from(
        [TokenizerConfig(), TokenizerConfig(ngram=2), TokenizerConfig(char_ngrams=2)]
    ),
)
def test_counts_equal_counting_the_tokenizer_output(
    texts: list[str], batch: int, config: TokenizerConfig
) -> None:
    weights, names = count_matrix(texts, config, batch_docs=batch)
    assert weights.shape[0] == len(texts)
    for row, text in enumerate(texts):
        counted = Counter(tokenize(text, config))
        assert sorted(row_mapping(weights, names, row).items()) == sorted(counted.items())


@given(
    texts=st.lists(st.text(alphabet=st.sampled_from(list("ab cÉé1 2_😀日本-\n"))), max_size=8),
    batch=st.integers(1, 4),
    config=st.sampled_from([TokenizerConfig(), TokenizerConfig(ngram=2)]),
    weighting=st.sampled_from([Weighting.TF, Weighting.BINARY]),
)
def test_counts_in_first_seen_order_fingerprint_alike_when_their_weights_are_whole(
    texts: list[str], batch: int, config: TokenizerConfig, weighting: Weighting
) -> None:
    """Without the sort of the vocabulary the columns are the features in the order they first
    occur, each row's counts the same; whole-number weights sum to the same bits in any order
    (the integer-like features, which the canonical order puts first, included)."""
    ordered, names = count_matrix(texts, config, batch_docs=batch)
    seen, seen_names = count_matrix(texts, config, batch_docs=batch, ordered=False)
    first = list(dict.fromkeys(token for text in texts for token in tokenize(text, config)))
    assert seen_names == first and sorted(seen_names) == sorted(names)
    for row in range(len(texts)):
        assert row_mapping(seen, seen_names, row) == row_mapping(ordered, names, row)
    canonical = fingerprint_matrix(apply_weighting(ordered, weighting), names, bits=128)
    as_seen = fingerprint_matrix(apply_weighting(seen, weighting), seen_names, bits=128)
    assert np.array_equal(canonical, as_seen)


def test_a_key_collision_switches_to_the_exact_path(monkeypatch: pytest.MonkeyPatch) -> None:
    real: Any = wordtable_module.WordTable.ids  # called with the patch's loose types
    calls: list[None] = []

    def collide_on_third_batch(self: object, tokens: object, names: list[str]) -> object:
        calls.append(None)
        if len(calls) == 3:
            raise KeyCollision("forced")
        return real(self, tokens, names)

    texts = ["the cat the hat", "a b", "", "the dog", "a cat sat", "hat 2 10"]
    expected = count_matrix(texts)
    monkeypatch.setattr(wordtable_module.WordTable, "ids", collide_on_third_batch)
    weights, names = count_matrix(texts, batch_docs=1)
    assert len(calls) == 3
    assert names == expected[1]
    assert np.array_equal(weights.toarray(), expected[0].toarray())


def test_batches_by_size_give_the_same_matrix() -> None:
    texts = ["one two two", "three", "", "two four four four"] * 5
    whole = count_matrix(texts)
    split = count_matrix(texts, batch_chars=10)
    assert whole[1] == split[1]
    assert np.array_equal(whole[0].toarray(), split[0].toarray())


def test_the_word_table_grows_without_losing_a_word() -> None:
    # 60,000 distinct words: the table starts with room for 32,768 and doubles.
    texts = [" ".join(f"w{i}" for i in range(j, 60_000, 3)) + " w1 w1" for j in range(3)]
    weights, names = count_matrix(texts, batch_docs=1)
    assert len(names) == 60_000
    for row, text in enumerate(texts):
        assert sorted(row_mapping(weights, names, row).items()) == sorted(
            (k, float(v)) for k, v in Counter(tokenize(text)).items()
        )


@given(
    words=st.lists(st.integers(0, 300), min_size=1, max_size=400),
    homes=st.integers(1, 8),
    batch=st.integers(1, 64),
    at_once=st.integers(1, 40),
)
def test_the_word_table_numbers_words_as_a_dict_would(
    words: list[int], homes: int, batch: int, at_once: int
) -> None:
    # Keys forced onto a few home slots (at every size of the table): long probe chains, and
    # many words claiming one free slot in a round; a call's tokens taken a few at a time, the
    # table grown between them. Ids must still be those of a dict, numbered in order of first
    # occurrence.
    table, names = WordTable(), list[str]()
    table._allocate(4)
    expected: dict[int, int] = {}
    with mock.patch.object(wordtable_module, "TOKENS_AT_ONCE", at_once):
        _number_words(table, names, words, homes, batch, expected)
    assert names == [f"w{w}" for w in expected]


def _number_words(
    table: WordTable,
    names: list[str],
    words: list[int],
    homes: int,
    batch: int,
    expected: dict[int, int],
) -> None:
    for lo in range(0, len(words), batch):
        part = words[lo : lo + batch]
        text = " ".join(f"w{w}" for w in part)
        tokens = word_tokens([text])
        keyed = WordTokens(
            tokens.text,
            tokens.doc,
            tokens.start,
            tokens.stop,
            np.array([_key_at_home(w % homes, w) for w in part], dtype=np.uint64),
            np.zeros(len(part), dtype=np.uint64),
        )
        ids = table.ids(keyed, names)
        assert ids.tolist() == [expected.setdefault(w, len(expected)) for w in part]


def _key_at_home(home: int, word: int) -> int:
    """A key whose home is slot ``home << (bits - 3)`` of a table of 2**bits slots, for every
    size from 8 slots on (the home is the top bits of the key times the multiplier, which is
    odd: its inverse undoes it); ``word`` (below 2**32) makes the keys of words distinct."""
    inverse = pow(int(wordtable_module._FIBONACCI), -1, 2**64)
    return (((home << 61) | word) * inverse) % 2**64


def test_words_apart_only_in_their_last_letters_have_their_homes_apart() -> None:
    # A key is a product, and the low bits of a product depend only on the low bits of what
    # was multiplied, a chunk's first letters: slots taken from a key's low bits gave every
    # word of "abcdef" and two letters more one home, and each word's probes walked the run of
    # the others (about 20 rounds a call on Python sources).
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [f"abcdef{a}{b}" for a in letters for b in letters]
    homes = WordTable()._home(word_tokens([" ".join(words)]).key)
    assert np.unique(homes).size > 0.95 * len(words)


def test_two_words_of_one_key_are_a_collision_and_keep_the_names_so_far() -> None:
    table, names = WordTable(), list[str]()
    first = word_tokens(["alpha beta"])
    table.ids(first, names)
    other = word_tokens(["gamma"])
    clash = WordTokens(
        other.text, other.doc, other.start, other.stop, first.key[:1], first.check[:1] + 1
    )
    with pytest.raises(KeyCollision):
        table.ids(clash, names)
    assert names == ["alpha", "beta"]


@given(
    parts=st.lists(st.lists(st.integers(0, 2**31 - 1), max_size=40), max_size=12),
    segment=st.integers(1, 16),
)
def test_entries_come_back_in_order_whatever_the_segments(
    parts: list[list[int]], segment: int
) -> None:
    from simhash_cli.core.text.vectorize import _Entries

    store = _Entries()
    store.SEGMENT = segment
    for part in parts:
        store.append(np.array(part, dtype=np.int32))
    flat = [value for part in parts for value in part]
    assert len(store) == len(flat)
    assert store.largest == max(flat, default=0)
    assert store.drain(np.int64).tolist() == flat
    assert len(store) == 0
    table = np.arange(2**8, dtype=np.int32)[::-1]
    store.append(np.array([0, 5, 255], dtype=np.int32))
    assert store.drain(np.int32, table).tolist() == [255, 250, 0]


def test_tfidf_counts_as_documents_only_the_rows_that_hold_a_term() -> None:
    """A file skipped as empty is no document of the corpus: its row does not lower any idf
    (the weights are scikit-learn's smooth idf over the other rows, to the last bit)."""
    from sklearn.feature_extraction.text import TfidfTransformer

    full = sp.csr_array(np.array([[2, 1, 0], [0, 0, 0], [0, 3, 1], [0, 0, 0], [1, 0, 4]]))
    held = sp.csr_array(full.toarray()[[0, 2, 4]])
    weighted = apply_weighting(full, Weighting.TFIDF).toarray()
    expected = TfidfTransformer(norm=None, smooth_idf=True).fit_transform(held.astype(np.float64))
    assert np.array_equal(weighted[[0, 2, 4]], expected.toarray())
    assert not weighted[[1, 3]].any()


def test_pieces_merged_by_key_are_the_corpus_numbered_by_key() -> None:
    """Pieces counted in any column order and merged ``keyed`` give the matrix that the
    canonical merge, numbered by key afterwards, gives: no second sort of the corpus."""
    texts = [f"alpha beta {k} gamma {k % 7} delta {'x' * (k % 5)}" for k in range(60)]
    parts = [count_matrix(texts[lo : lo + 16], ordered=False) for lo in range(0, 60, 16)]
    canonical, names = merge_counts(parts)
    keyed, keyed_names = merge_counts(parts, keyed=True)
    expected, order = in_key_order(canonical, feature_keys(names))
    assert keyed_names == [names[k] for k in order.tolist()]
    assert keyed.has_sorted_indices
    for got, want in ((keyed.indptr, expected.indptr), (keyed.indices, expected.indices)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(keyed.data, expected.data)
    ranks = np.argsort(feature_keys(keyed_names), kind="stable")
    assert np.array_equal(ranks, np.arange(len(names)))


@pytest.mark.parametrize("weighting", [Weighting.TF, Weighting.TFIDF])
def test_a_corpus_is_fingerprinted_in_the_reference_order_then_numbered_by_key(
    weighting: Weighting,
) -> None:
    """A corpus's fingerprints are the reference's (float weights summed in its order), and
    its columns are then numbered by key, once: no later product reorders them."""
    texts = ["7 b a 10 c a", "c 7 0.5 b", "a a b 10 x 7", "zz 0.5 b c"]
    docs = corpus_from_texts(texts, Settings(weighting=weighting))
    weights, names = vectorize(texts, weighting=weighting)
    assert np.array_equal(docs.fingerprints, fingerprint_matrix(weights, names))
    assert docs.column_order is None and docs.weights is not None
    for row in range(len(texts)):
        assert to_int(docs.fingerprints[row]) == fingerprint(row_mapping(weights, names, row))
        assert row_mapping(docs.weights, docs.features, row) == row_mapping(weights, names, row)
    assert docs.weights.has_sorted_indices
    keys = feature_keys(docs.features)
    assert np.all(keys[:-1] <= keys[1:])
