"""Text -> tokens: words, word shingles or character n-grams.

The default is the one the reference page describes: ``text.lower()``, tokens are maximal runs
of Unicode word characters (Python's ``\\w+``), and every token counts, single characters too.
The analyzers are scikit-learn's, so that :func:`tokenize` and the corpus vectorizer
(:mod:`simhash_cli.core.vectorize`) can never disagree on what a token is.
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

from ..errors import ParameterError

__all__ = [
    "TOKEN_PATTERN",
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

    @classmethod
    def from_name(cls, name: str) -> TokenizerConfig:
        """The inverse of :attr:`name`.

        Raises:
            ParameterError: not a name :attr:`name` gives.
        """
        if name == "word":
            return cls()
        kind, _, size = name.partition("-")
        if kind in ("word", "char") and size.endswith("gram") and size[:-4].isdigit():
            number = int(size[:-4])
            return cls(ngram=number) if kind == "word" else cls(char_ngrams=number)
        raise ParameterError(f"not a tokenizer name: {name!r}")

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
        key: (n_tokens,) uint64 identity of each token: equal tokens have equal keys, in
            every batch.
        check: (n_tokens,) uint64: 0 for a Latin-1 token of at most eight characters (its
            key is exact); for any other, a second, independent hash, never 0. Two tokens with
            equal keys but different checks are different tokens that collided
            (:class:`KeyCollision`).
    """

    text: str
    doc: NDArray[np.int64]
    start: NDArray[np.int64]
    stop: NDArray[np.int64]
    key: NDArray[np.uint64]
    check: NDArray[np.uint64]


@functools.cache
def _bmp_word_characters() -> NDArray[np.bool_]:
    # Python's re \w for str patterns: str.isalnum() or "_" (checked against re by the tests).
    table = np.fromiter((chr(c).isalnum() for c in range(0x10000)), dtype=bool, count=0x10000)
    table[ord("_")] = True
    return table


@functools.cache
def _ascii_word_characters() -> NDArray[np.bool_]:
    # The first 128 entries of the table above, without building all of it.
    table = np.fromiter((chr(c).isalnum() for c in range(128)), dtype=bool, count=128)
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


_SEED = np.uint64(0x243F6A8885A308D3)
_WIDE_SEED = np.uint64(0x13198A2E03707344)
_MULTIPLY = np.uint64(0x9E3779B97F4A7C15)
_CHECK_MULTIPLY = np.uint64(0xBF58476D1CE4E5B9)
# _BYTE_MASKS[r]: the low r bytes of a word.
_BYTE_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)


def word_tokens(texts: Sequence[str]) -> WordTokens:
    """The default tokenizer (``text.lower()``, maximal runs of ``\\w``) over a batch, in bulk.

    Equal to :func:`tokenize` with the default config, token for token, but without a Python
    step per token: the texts are lower-cased and joined, their code points classified with a
    lookup table, token boundaries found where the class changes, and every token keyed eight
    bytes at a time (:func:`_token_keys`).
    """
    # Lower-cased one by one: lower() can change a text's length ("İ" becomes two characters).
    lowered = [t.lower() for t in texts]
    text = "\x00".join(lowered)
    wide: NDArray[np.uint32] | None
    if text.isascii():  # constant time: CPython knows whether a str is ASCII
        narrow = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        wide = None
        word = _ascii_word_characters()[narrow]
    else:
        wide = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        narrow = wide.astype(np.uint8)  # meaningful for the tokens below U+0100 only
        word = _is_word(wide.astype(np.uint32))
    # A token starts where a word character follows a non-word one, and stops where one ends.
    edges = np.flatnonzero(np.diff(word, prepend=False, append=False))
    start, stop = edges[0::2], edges[1::2]
    # Text k starts at sum(lengths[:k]) + k (one NUL between texts): count its tokens.
    lengths = np.fromiter(map(len, lowered), np.int64, len(lowered))
    text_starts = np.cumsum(lengths + 1) - (lengths + 1)
    first_token = np.searchsorted(start, np.append(text_starts, len(text)))
    doc = np.repeat(np.arange(len(lowered), dtype=np.int64), np.diff(first_token))
    key, check = _token_keys(narrow, wide, start, stop - start)
    return WordTokens(text, doc, start, stop, key, check)


def _token_keys(
    narrow: NDArray[np.uint8],
    wide: NDArray[np.uint32] | None,
    start: NDArray[np.int64],
    length: NDArray[np.int64],
) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """A 64-bit key and a check for every token, read eight bytes at a time.

    A token whose code points are all below U+0100 is read as its Latin-1 bytes (``narrow``),
    any other as its UTF-32 code units (``wide``), so that a word gets the same key in an
    ASCII batch as in any other. A Latin-1 token of at most eight characters is its own key
    (its bytes through a bijective mix; no word character is NUL, so the bytes determine the
    token): no two of them ever share a key, and their check is 0. Longer or wider tokens are
    hashed chunk by chunk, with a second, independent hash (never 0) as their check.
    """
    if wide is None:
        return _chunk_hashes(narrow, 1, start, length, _SEED)
    key = np.empty(start.size, dtype=np.uint64)
    check = np.empty(start.size, dtype=np.uint64)
    if start.size:
        # Largest code point of every token: reduce over [start, stop) and [stop, next start).
        bounds = np.stack((start, start + length), axis=1).reshape(-1)
        latin = np.maximum.reduceat(np.append(wide, np.uint32(0)), bounds)[0::2] < 0x100
        for units, unit_bytes, chosen, seed in (
            (narrow, 1, np.flatnonzero(latin), _SEED),
            (wide, 4, np.flatnonzero(~latin), _WIDE_SEED),
        ):
            key[chosen], check[chosen] = _chunk_hashes(
                units, unit_bytes, start[chosen], length[chosen], seed
            )
    return key, check


def _chunk_hashes(
    units: NDArray[np.uint8] | NDArray[np.uint32],
    unit_bytes: int,
    start: NDArray[np.int64],
    length: NDArray[np.int64],
    seed: np.uint64,
) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """(key, check) of tokens ``units[start : start + length]``, eight bytes per step."""
    # Every unit offset, read as the little-endian uint64 of the eight bytes starting there.
    raw = np.zeros(units.nbytes + 8, dtype=np.uint8)
    raw[: units.nbytes] = units.view(np.uint8)
    words = np.ndarray((units.size,), dtype="<u8", buffer=raw, strides=(unit_bytes,))
    size = length if unit_bytes == 1 else length * unit_bytes
    first = words[start] & _BYTE_MASKS[np.minimum(size, 8)]
    # (x ^ c) * odd and x ^ (x >> 29) are bijections, so a single chunk is kept whole.
    key = _mix(seed ^ first)
    check = np.zeros(start.size, dtype=np.uint64)
    # The rest, for the few tokens longer than eight bytes (all tokens, for wide units, so
    # that every wide token gets a non-zero check).
    rest = np.flatnonzero(size > 8) if unit_bytes == 1 else np.arange(start.size)
    hashed, running = key[rest], (first[rest] + np.uint64(1)) * _CHECK_MULTIPLY
    alive, left = np.arange(rest.size), size[rest] - 8
    step = 1
    while True:
        more = left > 0
        alive, left = alive[more], left[more]
        if not alive.size:
            break
        chunk = words[start[rest[alive]] + step * (8 // unit_bytes)]
        chunk &= _BYTE_MASKS[np.minimum(left, 8)]
        hashed[alive] = _mix(hashed[alive] ^ chunk)
        running[alive] = (running[alive] + chunk + np.uint64(1)) * _CHECK_MULTIPLY
        left -= 8
        step += 1
    key[rest] = hashed
    check[rest] = (running ^ size[rest].astype(np.uint64)) | np.uint64(1)
    return key, check


def _mix(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """A bijection of 64-bit values that spreads every input bit over the high bits."""
    mixed: NDArray[np.uint64] = values * _MULTIPLY
    mixed ^= mixed >> np.uint64(29)
    return mixed
