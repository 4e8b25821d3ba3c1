"""Text -> tokens: words, word shingles or character n-grams.

The default is the one the reference page describes: ``text.lower()``, tokens are maximal runs
of Unicode word characters (Python's ``\\w+``), and every token counts, single characters too.
The analyzers are scikit-learn's, so that :func:`tokenize` and the corpus vectorizer
(:mod:`simhash_cli.vectorize`) can never disagree on what a token is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sklearn.feature_extraction.text import CountVectorizer

from .errors import ParameterError

__all__ = ["TOKEN_PATTERN", "TokenizerConfig", "tokenize"]

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
