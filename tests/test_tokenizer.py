"""Tokenizer: lower-cased maximal runs of word characters, shingles, character n-grams."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import ParameterError, TokenizerConfig, tokenize
from simhash_cli.core.tokenizer import (
    WordTokens,
    _ascii_word_characters,
    _is_word,
    word_tokens,
)
from simhash_cli.core.vectorize import _WordTable
from simhash_cli.errors import KeyCollision


def test_default_is_lowercase_word_runs_with_single_characters() -> None:
    assert tokenize("The cat — THE cat, a 1 x!") == ["the", "cat", "the", "cat", "a", "1", "x"]


def test_unicode_word_characters_and_underscores_are_words() -> None:
    assert tokenize("Ærø naïve_ctx 東京 ½") == ["ærø", "naïve_ctx", "東京", "½"]


@given(st.text())
def test_default_equals_python_word_regex(text: str) -> None:
    assert tokenize(text) == re.findall(r"\w+", text.lower())


def test_word_shingles() -> None:
    config = TokenizerConfig(ngram=3)
    assert tokenize("a b c d", config) == ["a b c", "b c d"]
    assert tokenize("a b", config) == []
    assert config.name == "word-3gram"


def test_character_ngrams_fold_whitespace() -> None:
    config = TokenizerConfig(char_ngrams=3)
    assert tokenize("Ab  c", config) == ["ab ", "b c"]
    assert config.name == "char-3gram"


def test_names() -> None:
    assert TokenizerConfig().name == "word"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ngram": 0}, "ngram must be from 1 to 64"),
        ({"char_ngrams": 65}, "char_ngrams must be from 1 to 64"),
        ({"ngram": 2, "char_ngrams": 3}, "not both"),
    ],
)
def test_bad_configs_are_refused(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        TokenizerConfig(**kwargs)


# ---------------------------------------------------------------- the bulk word tokenizer

texts_strategy = st.lists(
    st.one_of(
        st.text(),
        st.text(alphabet=st.sampled_from(list("aAbB _-1İΣσς😀𝔘\u0301\x00 \n"))),
    ),
    max_size=6,
)


@given(texts_strategy)
def test_word_tokens_equal_the_default_tokenizer(texts: list[str]) -> None:
    tokens = word_tokens(texts)
    found: list[list[str]] = [[] for _ in texts]
    for doc, start, stop in zip(
        tokens.doc.tolist(), tokens.start.tolist(), tokens.stop.tolist(), strict=True
    ):
        found[doc].append(tokens.text[start:stop])
    assert found == [tokenize(text) for text in texts]


@given(texts_strategy)
def test_word_token_keys_identify_tokens(texts: list[str]) -> None:
    tokens = word_tokens(texts)
    words = [tokens.text[a:b] for a, b in zip(tokens.start, tokens.stop, strict=True)]
    by_key: dict[tuple[int, int], set[str]] = {}
    for key, check, word in zip(tokens.key.tolist(), tokens.check.tolist(), words, strict=True):
        by_key.setdefault((key, check), set()).add(word)
    assert all(len(group) == 1 for group in by_key.values())
    assert len(by_key) == len(set(words))


def _keyed(texts: list[str]) -> dict[str, tuple[int, int]]:
    tokens = word_tokens(texts)
    return {
        tokens.text[a:b]: (k, c)
        for a, b, k, c in zip(
            tokens.start.tolist(),
            tokens.stop.tolist(),
            tokens.key.tolist(),
            tokens.check.tolist(),
            strict=True,
        )
    }


@given(texts_strategy, texts_strategy)
def test_a_word_has_one_key_in_every_batch(first: list[str], second: list[str]) -> None:
    # An ASCII batch is read byte by byte and any other as UTF-32: keys must not depend on it.
    a, b = _keyed(first), _keyed(second)
    assert all(a[word] == b[word] for word in a.keys() & b.keys())


def test_keys_agree_between_ascii_and_wider_batches() -> None:
    words = "a ab abcdefgh abcdefghi extraordinarily_long_identifier_42 café ü"
    ascii_only, mixed = _keyed([words.replace("café ü", "")]), _keyed([words, "Σίσυφος"])
    assert ascii_only.items() <= mixed.items()
    assert mixed["abcdefgh"][1] == 0 and mixed["café"][1] == 0  # Latin-1, 8 bytes at most
    assert mixed["abcdefghi"][1] != 0 and mixed["σίσυφος"][1] != 0  # hashed, so checked


def test_short_latin1_words_never_share_a_key() -> None:
    rng = np.random.default_rng(5)
    alphabet = list("abcdefghijklmnopqrstuvwxyz0123456789_éàüß")
    words = {"".join(rng.choice(alphabet, size=int(rng.integers(1, 9)))) for _ in range(50_000)}
    keyed = _keyed([" ".join(sorted(words))])
    assert len({key for key, _ in keyed.values()}) == len(words)


def test_different_words_sharing_a_key_are_caught() -> None:
    # Longer than eight bytes: shorter Latin-1 words are their own keys and cannot collide.
    tokens = word_tokens(["alphabetical betamaxes", "alphabetical"])
    forged = WordTokens(
        tokens.text,
        tokens.doc,
        tokens.start,
        tokens.stop,
        np.full(3, 42, dtype=np.uint64),  # the two words forced onto one key
        tokens.check,
    )
    with pytest.raises(KeyCollision):
        _WordTable().ids(forged, [])
    table, names = _WordTable(), list[str]()
    table.ids(tokens, names)
    with pytest.raises(KeyCollision):
        table.ids(forged, names)


def test_a_very_long_token() -> None:
    tokens = word_tokens(["a " + "x" * 50_000 + " b"])
    assert (tokens.stop - tokens.start).tolist() == [1, 50_000, 1]


def test_word_character_table_equals_python_re_for_every_code_point() -> None:
    codes = np.arange(0x110000, dtype=np.uint32)
    expected = np.fromiter(
        (re.fullmatch(r"\w", chr(c)) is not None for c in range(0x110000)), bool, 0x110000
    )
    assert np.array_equal(_is_word(codes), expected)
    assert np.array_equal(_ascii_word_characters(), expected[:128])
