"""A corpus: the documents that made it through reading, as arrays, and how weights become one.

Every input kind ends here: files and texts (term counts, weighted), given vectors, or
fingerprint records read back. Documents without a non-zero weight have no direction and are
left out (reported), unless asked to be kept as empty documents.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import InputError, ParameterError
from .events import Event, OnEvent, Skipped, Stamp
from .sketch.fingerprint import (
    DEFAULT_BITS,
    DEFAULT_SEED,
    feature_keys,
    fingerprint_matrix,
    n_words,
    validate_bits,
    validate_seed,
)
from .text.tokenizer import TokenizerConfig
from .text.vectorize import Weighting, apply_weighting, count_matrix
from .verify import cosines

__all__ = [
    "DEFAULT_ADMISSION",
    "EMPTY_TEXT",
    "EMPTY_VECTOR",
    "STAMP_DTYPE",
    "VECTORS_TOKENIZER",
    "VECTORS_WEIGHTING",
    "Admission",
    "Corpus",
    "NumberId",
    "Settings",
    "collecting",
    "concatenate",
    "corpus_from_texts",
    "from_counts",
    "from_weights",
    "given_ids",
    "stamp_array",
    "text_settings",
]


@dataclass(frozen=True)
class Admission:
    """Which of the documents read become documents of the corpus: one without a token (or
    without a non-zero weight) is skipped as empty, unless ``include_empty`` keeps it as an
    empty document (0 features, fingerprint 0, grouped with other empty ones only); a text of
    fewer than ``min_length`` words (characters, for character n-grams) is skipped as short.
    Both are reported, never compared."""

    include_empty: bool = False
    min_length: int = 0


DEFAULT_ADMISSION = Admission()
"""Every document with a token (or a non-zero weight), and none without."""

EMPTY_TEXT = "empty (no tokens)"
EMPTY_VECTOR = "empty (no non-zero weight)"
VECTORS_TOKENIZER = "vectors"
"""The tokenizer name recorded for vectors fingerprinted exactly as given."""
VECTORS_WEIGHTING = "given"
"""The weighting name recorded for vectors fingerprinted exactly as given."""


class NumberId(str):
    """An id that was a JSON integer in its record (``{"id": 17, ...}``): a string like every
    id, written back as the integer it was."""

    __slots__ = ()


def given_ids(ids: Sequence[str]) -> Sequence[str | int]:
    """``ids`` as their records gave them: a :class:`NumberId` as an integer again."""
    if not any(isinstance(doc_id, NumberId) for doc_id in ids):
        return ids
    return [int(doc_id) if isinstance(doc_id, NumberId) else doc_id for doc_id in ids]


@dataclass(frozen=True)
class Settings:
    """What a fingerprint was made with; fingerprints compare only under equal settings.

    Attributes:
        bits: fingerprint width.
        seed: global hash seed.
        tokenizer: how text became features; None for vectors given as they are.
        weighting: how counts became weights; None (with ``tokenizer``) for given vectors.
    """

    bits: int = DEFAULT_BITS
    seed: int = DEFAULT_SEED
    tokenizer: TokenizerConfig | None = TokenizerConfig()  # noqa: RUF009 (frozen, shared)
    weighting: Weighting | None = Weighting.TF

    def __post_init__(self) -> None:
        # The one check of the width and the seed: every fingerprint is made under a Settings.
        validate_bits(self.bits)
        validate_seed(self.seed)
        if (self.tokenizer is None) != (self.weighting is None):
            raise ParameterError(
                "a tokenizer and a weighting go together: both for text, neither for vectors"
            )

    @classmethod
    def of_vectors(cls, bits: int = DEFAULT_BITS, seed: int = DEFAULT_SEED) -> Settings:
        """The settings of vectors fingerprinted exactly as given."""
        return cls(bits, seed, None, None)

    @classmethod
    def from_names(cls, bits: int, seed: int, tokenizer: str, weighting: str) -> Settings:
        """The inverse of :meth:`names`, as records and the index store them.

        Raises:
            ParameterError: a name that no settings give.
        """
        if (tokenizer, weighting) == (VECTORS_TOKENIZER, VECTORS_WEIGHTING):
            return cls.of_vectors(bits, seed)
        try:
            chosen = Weighting(weighting)
        except ValueError:
            raise ParameterError(f"not a weighting name: {weighting!r}") from None
        tokens = TokenizerConfig.from_name(tokenizer)
        return cls(bits, seed, tokens, chosen)

    def names(self) -> dict[str, int | str]:
        """``bits``, ``seed``, ``tokenizer`` and ``weighting`` as records and files hold them."""
        return {
            "bits": self.bits,
            "seed": self.seed,
            "tokenizer": VECTORS_TOKENIZER if self.tokenizer is None else self.tokenizer.name,
            "weighting": VECTORS_WEIGHTING if self.weighting is None else self.weighting.value,
        }

    @property
    def corpus_wide(self) -> bool:
        """Whether a document's weights depend on the documents read with it (text weighted
        by tfidf; given vectors never: see :attr:`Weighting.corpus_wide`)."""
        return self.weighting is not None and self.weighting.corpus_wide

    @property
    def common_words_dominate(self) -> bool:
        """Whether common words can make every document look alike: weights of term counts
        (tf, binary, log) that no corpus statistic damps, as tfidf's do."""
        return self.weighting is not None and not self.corpus_wide

    def describe(self) -> str:
        """Human-readable, for error messages: ``bits=64 seed=12345 tokenizer=word ...``."""
        return " ".join(f"{key}={value}" for key, value in self.names().items())


STAMP_DTYPE = np.dtype(
    [
        ("device", np.uint64),
        ("inode", np.uint64),
        ("size", np.int64),
        ("mtime_ns", np.int64),
        ("ctime_ns", np.int64),
    ]
)
"""A file as the scan read it (:data:`simhash_cli.Stamp`), one record per document."""


def stamp_array(stamps: Sequence[Stamp]) -> NDArray[np.void]:
    return np.array(list(stamps), dtype=STAMP_DTYPE)


@dataclass
class Corpus:
    """Documents that made it through reading, with their vectors and fingerprints.

    Attributes:
        ids: n document ids.
        fingerprints: (n, n_words) uint64.
        n_features: (n,) int64 distinct features per document.
        settings: how the fingerprints were made.
        weights: (n, n_features) CSR weights, or None when read from fingerprints.
        features: the weight matrix's column names.
        skipped: documents left out, and why.
        stamps: (n,) :data:`STAMP_DTYPE`, each file as it was read (all zero for a stream),
            or None when the documents did not come from files.
    """

    ids: list[str]
    fingerprints: NDArray[np.uint64]
    n_features: NDArray[np.int64]
    settings: Settings
    weights: sp.csr_array | None = None
    features: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    stamps: NDArray[np.void] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def empty(cls, settings: Settings) -> Corpus:
        """No document (an input without records)."""
        return cls(
            [],
            np.empty((0, n_words(settings.bits)), dtype=np.uint64),
            np.empty(0, dtype=np.int64),
            settings,
        )

    @functools.cached_property
    def column_order(self) -> NDArray[np.int64] | None:
        """Each column's rank among its feature's 64-bit key (:func:`.cosines.column_order`):
        the order cosines sum a row's entries in, as the dask engine's vectors, keyed by
        feature, sum them. None when the columns have no names (vectors made elsewhere come in
        that order already)."""
        if self.weights is None or len(self.features) != self.weights.shape[1]:
            return None
        rank = cosines.column_order(feature_keys(self.features))
        return None if np.array_equal(rank, np.arange(rank.size)) else rank

    @functools.cached_property
    def unit(self) -> cosines.UnitRows:
        """Each row's scales to unit length (:func:`.cosines.unit_scales`), found once: the
        planner's pilot, every-pair search and the verifiers all read them.

        Raises:
            ParameterError: the documents hold no vectors (read from fingerprints).
        """
        if self.weights is None:
            raise ParameterError("these documents hold no vectors: no cosine can be taken")
        return cosines.unit_scales(self.weights, self.column_order)

    @property
    def has_word_sets(self) -> bool:
        """Whether each document's set of words is at hand (text read with its vectors), as
        MinHash needs."""
        return self.weights is not None and self.settings.tokenizer is not None

    def select(self, rows: NDArray[np.int64]) -> Corpus:
        """The documents at ``rows``, in that order, with their vectors and stamps."""
        return Corpus(
            [self.ids[row] for row in rows.tolist()],
            self.fingerprints[rows],
            self.n_features[rows],
            self.settings,
            None if self.weights is None else sp.csr_array(self.weights[rows]),
            self.features,
            self.skipped,
            None if self.stamps is None else self.stamps[rows],
        )


def text_settings(settings: Settings) -> tuple[TokenizerConfig, Weighting]:
    """The tokenizer and weighting of settings made for text.

    Raises:
        ParameterError: the settings are those of given vectors.
    """
    if settings.tokenizer is None or settings.weighting is None:
        raise ParameterError(
            "these settings are those of given vectors (no tokenizer), not of text: give "
            "Settings(bits, seed, tokenizer, weighting)"
        )
    return settings.tokenizer, settings.weighting


def collecting(on_event: OnEvent, skipped: list[Skipped]) -> OnEvent:
    def handle(event: Event) -> None:
        if isinstance(event, Skipped):
            skipped.append(event)
        on_event(event)

    return handle


def from_weights(
    ids: list[str],
    weights: sp.csr_array,
    features: list[str],
    settings: Settings,
    on_event: OnEvent,
    skipped: list[Skipped],
    empty_reason: str,
    stamps: NDArray[np.void] | None = None,
    admission: Admission = DEFAULT_ADMISSION,
) -> Corpus:
    """Drop documents without a non-zero weight (reported), then fingerprint the rest.

    Such a vector has no direction: its fingerprint would be 0 and its cosine undefined, and
    it must never be reported as a duplicate of a real document. With the ``admission``'s
    ``include_empty`` they stay, marked by 0 features (and fingerprint 0, as the reference
    gives them), and :func:`dedupe` groups them with each other only.

    ``weights`` are handed over: once fingerprinted, their columns are numbered by key in
    place (:func:`.cosines.in_key_order`), ``features`` following.
    """
    n_docs = weights.shape[0]
    n_features = np.diff(weights.indptr).astype(np.int64)
    # Stored zeros are rare: find their rows, rather than a row number for every entry.
    zeros = np.flatnonzero(weights.data == 0)
    zero_rows = np.searchsorted(weights.indptr, zeros, side="right") - 1
    n_nonzero = n_features - np.bincount(zero_rows, minlength=n_docs)
    empty = np.flatnonzero(n_nonzero == 0)
    if admission.include_empty:
        n_features[empty] = 0
        empty = empty[:0]
    for row in empty.tolist():
        event = Skipped(ids[row], empty_reason)
        skipped.append(event)
        on_event(event)
    if empty.size:
        keep = np.flatnonzero(n_nonzero > 0)
        weights = sp.csr_array(weights[keep])
        ids = [ids[row] for row in keep.tolist()]
        n_features = n_features[keep]
        stamps = None if stamps is None else stamps[keep]
    fingerprints = fingerprint_matrix(weights, features, bits=settings.bits, seed=settings.seed)
    # Fingerprinted, the entries are summed in the order of their features' keys from now on
    # (the columns numbered so once, rather than each row sorted whenever it is taken).
    weights, order = cosines.in_key_order(weights, feature_keys(features), in_place=True)
    features = [features[column] for column in order.tolist()]
    return Corpus(ids, fingerprints, n_features, settings, weights, features, skipped, stamps)


def from_counts(
    ids: list[str],
    counts: sp.csr_array,
    features: list[str],
    settings: Settings,
    on_event: OnEvent,
    skipped: list[Skipped],
    *,
    stamps: NDArray[np.void] | None = None,
    admission: Admission = DEFAULT_ADMISSION,
) -> Corpus:
    """Texts' term counts -> the corpus: the one way every reader of text takes (files,
    batches, records, pieces). The documents the ``admission`` leaves out are reported and
    dropped, the rest weighted as ``settings`` say and fingerprinted (:func:`from_weights`).
    ``counts`` are handed over, as ``weights`` are there."""
    assert settings.weighting is not None and settings.tokenizer is not None, "texts"
    short, reasons = _short(counts, settings.tokenizer, admission.min_length)
    if short.size:
        for row, reason in zip(short.tolist(), reasons, strict=True):
            event = Skipped(ids[row], reason)
            skipped.append(event)
            on_event(event)
        keep = np.setdiff1d(np.arange(len(ids)), short)
        counts = sp.csr_array(counts[keep])
        ids = [ids[row] for row in keep.tolist()]
        stamps = None if stamps is None else stamps[keep]
    weights = apply_weighting(counts, settings.weighting)
    return from_weights(
        ids, weights, features, settings, on_event, skipped, EMPTY_TEXT, stamps, admission
    )


def _short(
    counts: sp.csr_array, tokenizer: TokenizerConfig, minimum: int
) -> tuple[NDArray[np.int64], list[str]]:
    """The rows of texts shorter than ``minimum`` words (characters, for character n-grams)
    and why each is skipped (``short (3 words, fewer than 5)``). ``n`` shingles of ``k``
    words span ``n + k - 1``; a text without a feature is not short but empty, for
    :func:`from_weights` to skip."""
    none = np.zeros(0, dtype=np.int64)
    if minimum <= 1 or counts.shape[0] == 0:
        return none, []
    shingles = np.rint(np.asarray(counts.sum(axis=1)).ravel()).astype(np.int64)
    lengths = np.where(shingles > 0, shingles + (tokenizer.char_ngrams or tokenizer.ngram) - 1, 0)
    rows = np.flatnonzero((lengths > 0) & (lengths < minimum))
    unit = "characters" if tokenizer.char_ngrams else "words"
    reasons = [f"short ({n:,} {unit}, fewer than {minimum:,})" for n in lengths[rows].tolist()]
    return rows, reasons


def concatenate(batches: Iterable[Corpus]) -> Corpus:
    """One corpus from batches with the same settings (fingerprints only, no vectors)."""
    parts = list(batches)
    if not parts:
        raise InputError("no batches to join")
    settings = parts[0].settings
    stamps = [part.stamps for part in parts if part.stamps is not None]
    return Corpus(
        [doc_id for part in parts for doc_id in part.ids],
        np.concatenate([part.fingerprints for part in parts]),
        np.concatenate([part.n_features for part in parts]),
        settings,
        skipped=[skip for part in parts for skip in part.skipped],
        stamps=np.concatenate(stamps) if len(stamps) == len(parts) else None,
    )


def corpus_from_texts(
    texts: Sequence[str],
    settings: Settings = Settings(),
    *,
    ids: Sequence[str] | None = None,
    on_event: OnEvent = lambda event: None,
) -> Corpus:
    """Documents already in memory (ids default to "0", "1", ...), as :func:`corpus_from_paths`
    would make them from files holding these texts, fingerprinted under ``settings``."""
    tokenizer, _ = text_settings(settings)  # (refuses the settings of given vectors)
    names = [str(i) for i in range(len(texts))] if ids is None else list(ids)
    if len(names) != len(texts):
        raise InputError(f"{len(names)} ids for {len(texts)} texts")
    counts, features = count_matrix(texts, tokenizer)
    return from_counts(names, counts, features, settings, on_event, [])
