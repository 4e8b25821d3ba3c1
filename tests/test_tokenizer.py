"""Tokenizer: lower-cased words by the Unicode rules of every script (and the earlier
``\\w+`` runs), shingles, character n-grams."""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import ParameterError, TokenizerConfig, tokenize
from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import Settings, corpus_from_texts
from simhash_cli.core.pipeline import dedupe
from simhash_cli.core.text import scripts
from simhash_cli.core.text.words import (
    WordTokens,
    _is_word,
    _latin1_word_characters,
    word_tokens,
)
from simhash_cli.core.text.wordtable import WordTable
from simhash_cli.core.verify.cosines import cosine_pairs
from simhash_cli.errors import KeyCollision

from conftest import SAMPLE


def test_default_is_lowercase_word_runs_with_single_characters() -> None:
    assert tokenize("The cat — THE cat, a 1 x!") == ["the", "cat", "the", "cat", "a", "1", "x"]


def test_unicode_word_characters_and_underscores_are_words() -> None:
    assert tokenize("Ærø naïve_ctx 東京 ½") == ["ærø", "naïve_ctx", "東京", "½"]


LEGACY = TokenizerConfig(scripts=False)


@given(st.text())
def test_the_earlier_words_are_python_word_regex_runs(text: str) -> None:
    assert tokenize(text, LEGACY) == re.findall(r"\w+", text.lower())
    assert LEGACY.name == "word" and TokenizerConfig.from_name("word") == LEGACY


def test_scripts_without_spaces_are_pairs_of_letters() -> None:
    # Each two neighbouring letters, as Lucene's CJK analyzer makes them; punctuation ends a run.
    assert tokenize("我爱北京天安门，天安门上太阳升。") == [
        "我爱", "爱北", "北京", "京天", "天安", "安门", "天安", "安门", "门上", "上太", "太阳",
        "阳升",
    ]  # fmt: skip
    # Kanji and hiragana in pairs, a katakana run whole, with its sound marks.
    assert tokenize("東京でコーヒーを飲みます") == [
        "東京", "京で", "コーヒー", "を飲", "飲み", "みま", "ます",
    ]  # fmt: skip
    # A Thai letter keeps its vowel and tone marks; a letter touching no other is alone.
    assert tokenize("ไทยง่าย ก") == ["ไท", "ทย", "ยง่", "ง่า", "าย", "ก"]
    assert tokenize("a中b") == ["a", "中", "b"]
    # Words of scripts with spaces keep their combining marks: one Hindi word, not three.
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert tokenize("한국어 텍스트 abc") == ["한국어", "텍스트", "abc"]
    # Latin text is as it was.
    assert tokenize("The cat, the HAT!") == tokenize("The cat, the HAT!", LEGACY)


def test_word_shingles() -> None:
    config = TokenizerConfig(ngram=3)
    assert tokenize("a b c d", config) == ["a b c", "b c d"]
    assert tokenize("a b", config) == []
    assert config.name == "unicode-word-3gram"
    assert TokenizerConfig(ngram=3, scripts=False).name == "word-3gram"
    # Shingles of the pairs of letters of the scripts without spaces.
    assert tokenize("北京天", TokenizerConfig(ngram=2)) == ["北京 京天"]


def test_character_ngrams_fold_whitespace() -> None:
    config = TokenizerConfig(char_ngrams=3)
    assert tokenize("Ab  c", config) == ["ab ", "b c"]
    assert config.name == "char-3gram"


def test_names() -> None:
    assert TokenizerConfig().name == "unicode-word"
    for config in (
        TokenizerConfig(),
        TokenizerConfig(ngram=2),
        TokenizerConfig(scripts=False),
        TokenizerConfig(ngram=4, scripts=False),
        TokenizerConfig(char_ngrams=5),
    ):
        assert TokenizerConfig.from_name(config.name) == config
    with pytest.raises(ParameterError, match="not a tokenizer name"):
        TokenizerConfig.from_name("unicode-char-5gram")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ngram": 0}, "ngram must be from 1 to 64"),
        ({"char_ngrams": 65}, "char_ngrams must be from 1 to 64"),
        ({"ngram": 2, "char_ngrams": 3}, "not both"),
        ({"char_ngrams": 3, "scripts": False}, "do not split words"),
    ],
)
def test_bad_configs_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        TokenizerConfig(**kwargs)


# ---------------------------------------------------------------- the bulk word tokenizer

texts_strategy = st.lists(
    st.one_of(
        st.text(),
        st.text(alphabet=st.sampled_from(list("aAbB _-1İΣσς😀𝔘\u0301\x00 \n"))),
        st.text(alphabet=st.sampled_from(list("aB _1éÉ©µ²ßÿ\xa0\x00\n"))),
    ),
    max_size=6,
)


mixed_strategy = st.lists(
    st.text(
        alphabet=st.sampled_from(
            list(
                "aB _1İ\u0301\u200d\x00 \n東京でコーヒーをーﾞｶﾞ々〇"
                "ภาษาไทยง่าຂ່າວខ្មែរမြန်हिन्दी한국😀𠀀\U0003d000"
            )
        )
    ),
    max_size=6,
)


@given(st.one_of(texts_strategy, mixed_strategy), st.booleans())
def test_word_tokens_equal_the_default_tokenizer(texts: list[str], by_script: bool) -> None:
    tokens = word_tokens(texts, by_script=by_script)
    found: list[list[str]] = [[] for _ in texts]
    for doc, start, stop in zip(
        tokens.doc.tolist(), tokens.start.tolist(), tokens.stop.tolist(), strict=True
    ):
        found[doc].append(tokens.text[start:stop])
    config = TokenizerConfig(scripts=by_script)
    assert found == [tokenize(text, config) for text in texts]


# ------------------------------------------------- against the Unicode word boundary rules

MIXED = [
    "我爱北京天安门，天安门上太阳升。Beijing 2008年8月8日开幕。",
    "東京でコーヒーを飲みます。ソフトウェアのテストは大切です",
    "ภาษาไทยเป็นภาษาที่ไม่มีการเว้นวรรคระหว่างคำ และใช้วรรณยุกต์",
    "ພາສາລາວບໍ່ມີການຍະຫວ່າງຄຳ ຂ່າວ",
    "ភាសាខ្មែរ គឺជាភាសាផ្លូវការ",
    "မြန်မာဘာသာစကား",
    "हिन्दी एक भाषा है। தமிழ் மொழி বাংলা ভাষা",
    "한국어는 띄어쓰기를 합니다 English words, e-mail and 3.14",
    "العربية لغة עברית שפה Ελληνικά русский язык",
    "naïve café 😀 emoji_and_snake_case",
]


def uax29_tokens(text: str) -> list[str]:
    """The words of ``text`` by the Unicode default word boundaries (the ``regex`` module's
    WORD flag): each two neighbouring segments of letters of scripts without spaces, a
    segment touching no other such alone; within a segment of a script written with spaces,
    its runs of ``\\w`` with their marks. (UAX #29 keeps ``e-mail``'s parts apart too, but
    joins ``3.14`` and ``don't`` and parts ``x²``, which the tokenizer keeps as the ``\\w``
    runs of earlier versions.)"""
    tokens: list[str] = []
    letters: list[str] = []  # the run of letters of scripts without spaces, so far

    def end_run() -> None:
        pairs = [a + b for a, b in itertools.pairwise(letters)]
        tokens.extend(pairs or letters)
        letters.clear()

    for segment in regex.split(r"(?wV1)\b", text.lower()):
        if not segment:
            continue
        first = scripts.classes(np.array([ord(segment[0])], dtype=np.uint32))[0]
        if first == scripts.SOLO:
            letters.append(segment)
            continue
        end_run()
        if not any(c.isalnum() or c == "_" for c in segment):
            continue
        if first == scripts.KATA:
            tokens.append(segment)
        else:
            # Python's \w: letters, numbers and the underscore (the regex module's \w has marks
            # and no superscripts).
            tokens += regex.findall(r"(?:[\p{L}\p{N}_]\p{M}*)+", segment)
    end_run()
    return tokens


@pytest.mark.parametrize("text", MIXED)
def test_words_are_those_of_the_unicode_word_boundaries(text: str) -> None:
    assert tokenize(text) == uax29_tokens(text)


def test_the_script_tables_are_the_unicode_word_break_classes() -> None:
    """Every word character Python knows: a word by itself exactly when its Word_Break is
    Other (and it is a letter), katakana exactly when its Word_Break is Katakana."""
    other = regex.compile(
        r"[^\p{WB=ALetter}\p{WB=Hebrew_Letter}\p{WB=Numeric}\p{WB=Katakana}"
        r"\p{WB=ExtendNumLet}\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}]"
    )
    katakana = regex.compile(r"\p{WB=Katakana}")
    letter = regex.compile(r"[\p{L}\p{Nl}]")
    codes = np.arange(0x110000, dtype=np.uint32)
    kinds = scripts.classes(codes)
    for code in np.flatnonzero(np.isin(kinds, (scripts.WORD, scripts.KATA, scripts.SOLO))):
        char = chr(int(code))
        if unicodedata.category(char) == "Cn":
            continue
        solo = bool(other.match(char)) and bool(letter.match(char))
        assert (kinds[code] == scripts.SOLO) == solo, hex(code)
        if kinds[code] != scripts.SOLO and int(code) not in (0xFF9E, 0xFF9F):
            assert (kinds[code] == scripts.KATA) == bool(katakana.match(char)), hex(code)


def test_the_script_table_fills_as_characters_are_read() -> None:
    """A process classifies the characters of the BMP as its texts first hold them: filled a
    piece at a time, the table gives what one look at each character gives."""
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 0x10000, 5000).astype(np.uint32)
    pieces = [scripts.classes(part) for part in np.array_split(codes, 7)]
    np.testing.assert_array_equal(np.concatenate(pieces), scripts._classify(codes))


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
        WordTable().ids(forged, [])
    table, names = WordTable(), list[str]()
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
    assert np.array_equal(_latin1_word_characters(), expected[:256])


# ----------------------------------------------------- near-duplicates in every script

# Unrelated texts in Chinese, Japanese and Thai, and a lightly edited copy of one of each.
TEXTS: dict[str, str] = json.loads(
    (Path(__file__).parent / "data" / "scripts.json").read_text("utf-8")
)


def test_near_duplicates_are_found_in_chinese_japanese_and_thai() -> None:
    names = list(TEXTS)
    copies = {(names.index(n[: -len("-copy")]), names.index(n)) for n in names if "-copy" in n}
    docs = corpus_from_texts(list(TEXTS.values()))
    assert docs.weights is not None
    first, second = np.triu_indices(len(names), 1)
    pairs = np.stack((first, second), axis=1)
    cosine = cosine_pairs(docs.weights, pairs)
    for (a, b), value in zip(pairs.tolist(), cosine.tolist(), strict=True):
        if (a, b) in copies:
            assert value >= 0.9, (names[a], value)
        else:  # unrelated, in the same script or not
            assert value < 0.5, (names[a], names[b], value)
    # Every pair within 32 bits is a candidate: the search finds the copies and nothing else.
    found = dedupe(docs, DedupeConfig(threshold=0.9, max_distance=32))
    assert set(map(tuple, found.pairs.pairs.tolist())) == copies
    # The earlier tokenizer made each sentence a token: the Chinese and Japanese copies were
    # far apart.
    before = corpus_from_texts(list(TEXTS.values()), Settings(tokenizer=LEGACY))
    assert before.weights is not None
    copied = np.array(sorted(copies))
    assert (cosine_pairs(before.weights, copied) < 0.9).sum() >= 2


def test_text_in_scripts_with_spaces_is_tokenized_as_before() -> None:
    texts = [path.read_text(encoding="utf-8") for path in sorted(SAMPLE.iterdir())]
    texts += ["Ærø naïve café — “quoted”, 3.14 don't e-mail", "Ελληνικά русский язык עברית"]
    now = corpus_from_texts(texts)
    before = corpus_from_texts(texts, Settings(tokenizer=LEGACY))
    assert np.array_equal(now.fingerprints, before.fingerprints)
    assert now.features == before.features


@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("aB _1é©\u2019—ł“”ΣσςжЖ\u2010\x00\n日本語カタナ々"))),
        max_size=6,
    ),
    st.booleans(),
)
def test_a_word_has_one_key_whether_its_text_is_read_narrow_or_wide(
    texts: list[str], by_script: bool
) -> None:
    """A text whose characters above U+00FF are letters (of scripts with spaces or without),
    or no word characters, is read a byte per character, the words of the scripts without
    spaces made apart; the same text with a combining mark is read wide. Every word keeps its
    key and check, and its place."""
    narrow = word_tokens(texts, by_script=by_script)
    wide = word_tokens([text + " 日\u0301" for text in texts], by_script=by_script)
    for doc in range(len(texts)):
        mine, theirs = narrow.doc == doc, wide.doc == doc
        assert narrow.key[mine].tolist() == wide.key[theirs][:-1].tolist()
        assert narrow.check[mine].tolist() == wide.check[theirs][:-1].tolist()
        spans = zip(narrow.start[mine].tolist(), narrow.stop[mine].tolist(), strict=True)
        wide_spans = zip(wide.start[theirs].tolist(), wide.stop[theirs].tolist(), strict=True)
        words = [narrow.text[a:b] for a, b in spans]
        assert words == [wide.text[a:b] for a, b in wide_spans][:-1]
