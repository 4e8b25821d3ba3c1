"""Text -> tokens: words, word shingles or character n-grams.

Words (the default, named ``unicode-word``): ``text.lower()``, then the words of the Unicode
word boundary rules for every script (:mod:`~simhash_cli.core.text.scripts`): in scripts written
with spaces, maximal runs of word characters (Python's ``\\w``) with their combining marks;
a katakana run whole. Chinese, Japanese kanji and kana, Thai, Lao, Khmer, Myanmar and the Tai
scripts have no word boundaries to find: the rules break between every two letters, and each
two neighbouring letters (with their marks) make a token, as Lucene's CJK analyzer makes them
(a letter alone between others is a token by itself). Bigrams rather than letters: unrelated
Thai texts share their letters as English texts share theirs (term-count cosine near 0.9
letter by letter), and pairs of letters tell them apart (near 0.3), while the copies of a text
stay near 1. Every token counts, single characters too. ``word`` names the tokenizer
of earlier versions (maximal ``\\w+`` runs alone, which made a Chinese sentence one token and a
Hindi word three): it is still read, so that fingerprints made with it are compared only with
their own kind.

The analyzers are scikit-learn's, so that :func:`tokenize` and the corpus vectorizer
(:mod:`simhash_cli.core.text.vectorize`) can never disagree on what a token is; the default words
are found and keyed in bulk, a batch of texts at a time, by :mod:`~simhash_cli.core.text.words`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import CountVectorizer

from ...errors import ParameterError
from ..config import MAX_NGRAM
from .words import word_tokens

__all__ = [
    "TOKEN_PATTERN",
    "TokenizerConfig",
    "tokenize",
]

TOKEN_PATTERN = r"(?u)\w+"


@dataclass(frozen=True)
class TokenizerConfig:
    """How a document becomes features.

    Attributes:
        ngram: word shingle size (1 = single words); ignored when ``char_ngrams`` is set.
        char_ngrams: character n-gram size (whitespace runs folded to one space), or None.
        scripts: words by the Unicode rules of every script (see the module's docstring);
            False: the ``\\w+`` runs of earlier versions (fingerprints named ``word``).
    """

    ngram: int = 1
    char_ngrams: int | None = None
    scripts: bool = True

    def __post_init__(self) -> None:
        for name, value in (("ngram", self.ngram), ("char_ngrams", self.char_ngrams)):
            if value is not None and not 1 <= value <= MAX_NGRAM:
                raise ParameterError(f"{name} must be from 1 to {MAX_NGRAM}, not {value}")
        if self.char_ngrams is not None and self.ngram != 1:
            raise ParameterError("choose word shingles (ngram) or character n-grams, not both")
        if self.char_ngrams is not None and not self.scripts:
            raise ParameterError("character n-grams do not split words")

    @property
    def name(self) -> str:
        """Stable label stored with fingerprints: ``unicode-word``, ``unicode-word-3gram``,
        ``char-5gram`` (``word``, ``word-3gram``: the words of earlier versions)."""
        if self.char_ngrams is not None:
            return f"char-{self.char_ngrams}gram"
        words = "unicode-word" if self.scripts else "word"
        return words if self.ngram == 1 else f"{words}-{self.ngram}gram"

    @classmethod
    def from_name(cls, name: str) -> TokenizerConfig:
        """The inverse of :attr:`name`.

        Raises:
            ParameterError: not a name :attr:`name` gives.
        """
        kind, unicode = name, name.startswith("unicode-")
        if unicode:
            kind = name[len("unicode-") :]
        if kind == "word":
            return cls(scripts=unicode)
        kind, _, size = kind.partition("-")
        if kind in ("word", "char") and size.endswith("gram") and size[:-4].isdigit():
            number = int(size[:-4])
            if kind == "word":
                return cls(ngram=number, scripts=unicode)
            if not unicode:
                return cls(char_ngrams=number)
        raise ParameterError(f"not a tokenizer name: {name!r}")

    @property
    def bulk(self) -> bool:
        """Whether the words are found in bulk (:func:`~simhash_cli.core.text.words.word_tokens`):
        single words."""
        return self.ngram == 1 and self.char_ngrams is None

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
        if self.scripts:
            return CountVectorizer(analyzer=self.analyzer(), dtype=float)
        return CountVectorizer(
            analyzer="word",
            lowercase=True,
            token_pattern=TOKEN_PATTERN,
            ngram_range=(self.ngram, self.ngram),
            dtype=float,
        )

    def analyzer(self) -> Callable[[str], list[str]]:
        """text -> list of features, with repeats (one entry per occurrence)."""
        if self.char_ngrams is None and self.scripts:
            return functools.partial(_shingles, size=self.ngram)
        analyze: Callable[[str], list[str]] = self.count_vectorizer().build_analyzer()
        return analyze


def _shingles(text: str, size: int) -> list[str]:
    """The words of one text (:func:`~simhash_cli.core.text.words.word_tokens`), or its shingles
    of ``size`` words joined by a space (as scikit-learn joins them)."""
    tokens = word_tokens([text])
    spans = zip(tokens.start.tolist(), tokens.stop.tolist(), strict=True)
    words = [tokens.text[a:b] for a, b in spans]
    if size == 1:
        return words
    return [" ".join(words[k : k + size]) for k in range(len(words) - size + 1)]


def tokenize(text: str, config: TokenizerConfig | None = None) -> list[str]:
    """Features of one text, in order of occurrence, repeats included.

    >>> tokenize("The cat, the HAT!")
    ['the', 'cat', 'the', 'hat']
    """
    return (config or TokenizerConfig()).analyzer()(text)
