"""Text -> tokens: words, word shingles or character n-grams.

The default is the one the reference page describes: ``text.lower()``, tokens are maximal runs
of Unicode word characters (Python's ``\\w+``), and every token counts, single characters too.
The analyzers are scikit-learn's, so that :func:`tokenize` and the corpus vectorizer
(:mod:`simhash_cli.vectorize`) can never disagree on what a token is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import CountVectorizer

from .errors import ParameterError

__all__ = [
    "TOKEN_PATTERN",
    "KeyCollision",
    "TokenizerConfig",
    "WordTokens",
    "tokenize",
    "word_tokens",
]

TOKEN_PATTERN = r"(?u)\w+"
MAX_NGRAM = 64


@dataclass(frozen=True)
class TokenizerConfig:
    """How a document becomes features.

    Attributes:
        ngram: word shingle size (1 = single words); ignored when ``char_ngrams`` is set.
        char_ngrams: character n-gram size (whitespace runs folded to one space), or None.
    """

    ngram: int = 1
    char_ngrams: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("ngram", self.ngram), ("char_ngrams", self.char_ngrams)):
            if value is not None and not 1 <= value <= MAX_NGRAM:
                raise ParameterError(f"{name} must be from 1 to {MAX_NGRAM}, not {value}")
        if self.char_ngrams is not None and self.ngram != 1:
            raise ParameterError("choose word shingles (ngram) or character n-grams, not both")

    @property
    def name(self) -> str:
        """Stable label stored with fingerprints: ``word``, ``word-3gram``, ``char-5gram``."""
        if self.char_ngrams is not None:
            return f"char-{self.char_ngrams}gram"
        return "word" if self.ngram == 1 else f"word-{self.ngram}gram"

    def count_vectorizer(self) -> CountVectorizer:
        """A scikit-learn CountVectorizer that produces exactly these features."""
        # Imported here: scikit-learn takes most of a second to import, and the default
        # words never need it (see word_tokens).
        from sklearn.feature_extraction.text import CountVectorizer

        if self.char_ngrams is not None:
            return CountVectorizer(
                analyzer="char",
                lowercase=True,
                ngram_range=(self.char_ngrams, self.char_ngrams),
                dtype=float,
            )
        return CountVectorizer(
            analyzer="word",
            lowercase=True,
            token_pattern=TOKEN_PATTERN,
            ngram_range=(self.ngram, self.ngram),
            dtype=float,
        )

    def analyzer(self) -> Callable[[str], list[str]]:
        """text -> list of features, with repeats (one entry per occurrence)."""
        analyze: Callable[[str], list[str]] = self.count_vectorizer().build_analyzer()
        return analyze


def tokenize(text: str, config: TokenizerConfig | None = None) -> list[str]:
    """Features of one text, in order of occurrence, repeats included.

    >>> tokenize("The cat, the HAT!")
    ['the', 'cat', 'the', 'hat']
    """
    return (config or TokenizerConfig()).analyzer()(text)


@dataclass(frozen=True)
class WordTokens:
    """The default tokens of a batch of texts, found with array operations.

    Attributes:
        text: the lower-cased texts joined by NUL (a non-word character); token i is
            ``text[start[i]:stop[i]]``.
        doc: (n_tokens,) int64 index of each token's text in the batch.
        start: (n_tokens,) int64.
        stop: (n_tokens,) int64.
        key: (n_tokens,) uint64 identity of each token: equal tokens have equal keys.
        check: (n_tokens,) uint64 a second, independent hash: two tokens with equal keys but
            different checks are different tokens that collided (:class:`KeyCollision`).
    """

    text: str
    doc: NDArray[np.int64]
    start: NDArray[np.int64]
    stop: NDArray[np.int64]
    key: NDArray[np.uint64]
    check: NDArray[np.uint64]


class KeyCollision(Exception):
    """Two different tokens hashed to one 64-bit key (about 1 in 10**8 for a million words)."""


@functools.cache
def _bmp_word_characters() -> NDArray[np.bool_]:
    # Python's re \w for str patterns: str.isalnum() or "_" (checked against re by the tests).
    table = np.fromiter((chr(c).isalnum() for c in range(0x10000)), dtype=bool, count=0x10000)
    table[ord("_")] = True
    return table


def _is_word(codes: NDArray[np.uint32]) -> NDArray[np.bool_]:
    table = _bmp_word_characters()
    bmp = codes < 0x10000
    result = np.zeros(codes.size, dtype=bool)
    result[bmp] = table[codes[bmp]]
    if not bmp.all():
        astral, inverse = np.unique(codes[~bmp], return_inverse=True)
        flags = np.fromiter((chr(c).isalnum() for c in astral.tolist()), bool, astral.size)
        result[~bmp] = flags[inverse]
    return result


_FNV64_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV64_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


def word_tokens(texts: Sequence[str]) -> WordTokens:
    """The default tokenizer (``text.lower()``, maximal runs of ``\\w``) over a batch, in bulk.

    Equal to :func:`tokenize` with the default config, token for token, but without a Python
    step per token: the texts are lower-cased and joined, their code points classified with a
    lookup table, token boundaries found where the class changes, and each token keyed by a
    64-bit FNV-1a of its code points (and its length) computed position by position across all
    tokens at once, with a second independent hash to check keys against.
    """
    # Lower-cased one by one: lower() can change a text's length ("İ" becomes two characters).
    lowered = [t.lower() for t in texts]
    text = "\x00".join(lowered)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    lengths = np.fromiter(map(len, lowered), np.int64, len(lowered))
    word = _is_word(codes)
    edges = np.diff(word.astype(np.int8), prepend=np.int8(0), append=np.int8(0))
    start = np.flatnonzero(edges == 1).astype(np.int64)
    stop = np.flatnonzero(edges == -1).astype(np.int64)
    # Text k starts at sum(lengths[:k]) + k (one NUL between texts).
    text_starts = np.cumsum(lengths + 1) - (lengths + 1)
    doc = np.searchsorted(text_starts, start, side="right").astype(np.int64) - 1
    key, check = _token_hashes(codes, start, stop - start)
    return WordTokens(text, doc, start, stop, key, check)


def _token_hashes(
    codes: NDArray[np.uint32], start: NDArray[np.int64], length: NDArray[np.int64]
) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """FNV-1a-64 and a multiplicative hash of each token's code points."""
    n = start.size
    longest = int(length.max()) if n else 0
    # Longest first, so that the tokens still being hashed at a position are a prefix; a
    # stable sort of 16-bit values is a radix sort in numpy.
    by_length = (longest - length).astype(np.uint16 if longest < 1 << 16 else np.int64)
    order = np.argsort(by_length, kind="stable")
    sorted_start = start[order]
    sorted_length = length[order]
    fnv = np.full(n, _FNV64_OFFSET, dtype=np.uint64)
    mix = np.zeros(n, dtype=np.uint64)
    max_length = int(sorted_length[0]) if n else 0
    active_counts = np.searchsorted(-sorted_length, -np.arange(max_length), side="left")
    for position in range(max_length):
        active = int(active_counts[position])
        unit = codes[sorted_start[:active] + position].astype(np.uint64)
        fnv[:active] ^= unit
        fnv[:active] *= _FNV64_PRIME
        mix[:active] = (mix[:active] + unit + np.uint64(1)) * _MIX
    key = np.empty(n, dtype=np.uint64)
    check = np.empty(n, dtype=np.uint64)
    key[order] = fnv
    # The length goes into the check, so equal keys with unequal lengths are caught too.
    check[order] = mix ^ sorted_length.astype(np.uint64)
    return key, check
