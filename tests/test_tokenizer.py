"""Tokenizer: lower-cased maximal runs of word characters, shingles, character n-grams."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import ParameterError, TokenizerConfig, tokenize


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
