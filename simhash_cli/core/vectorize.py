"""Documents -> sparse weight matrix ``(n_docs, n_features)``, float64, CSR.

Columns are ordered the way JavaScript would iterate a document's features (integer-like
features first, numerically; then the rest in sorted order), and every row keeps its entries in
that order. So a row, read as a mapping, gives the same fingerprint through the scalar
:func:`~simhash_cli.core.fingerprint.fingerprint` as through the matrix path, float weights
included.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import KeyCollision
from .fingerprint import reference_order
from .tokenizer import TokenizerConfig, WordTokens, word_tokens

__all__ = [
    "Weighting",
    "apply_weighting",
    "count_matrix",
    "from_mappings",
    "merge_counts",
    "row_mapping",
    "vectorize",
]


class Weighting(str, Enum):
    """How term counts become weights."""

    TF = "tf"
    """The term count (the reference page's weighted word-count vectors)."""
    BINARY = "binary"
    """1 for every present term: a set, as plain LSH sees it."""
    LOG = "log"
    """1 + ln(count): damps terms repeated many times."""
    TFIDF = "tfidf"
    """count * (ln((1 + n) / (1 + df)) + 1) over the corpus at hand (scikit-learn's smooth idf)."""


def count_matrix(
    texts: Iterable[str],
    tokenizer: TokenizerConfig | None = None,
    *,
    batch_docs: int = 4096,
    batch_chars: int = 1 << 24,
) -> tuple[sp.csr_array, list[str]]:
    """Term counts of every text, counted in batches of documents.

    The default words are found and keyed in bulk by :func:`~simhash_cli.core.tokenizer.word_tokens`
    (no Python step per token). Shingles and character n-grams come from scikit-learn's
    analyzers, counted with ``collections.Counter`` and ``dict.setdefault`` (C loops) rather
    than CountVectorizer's counting loop, which runs Python bytecode for every token.

    Args:
        texts: the documents, consumed once (a generator is fine: texts are not kept).
        tokenizer: how text becomes features.
        batch_docs: documents counted together.
        batch_chars: characters counted together (bounds memory for long documents).

    Returns:
        (counts, features): float64 CSR of shape (n_docs, n_features) and the column names,
        in :func:`~simhash_cli.core.fingerprint.reference_order` of the sorted features, so a
        document's entries are in an order that depends on that document alone.  A text
        without tokens is an empty row.
    """
    config = tokenizer or TokenizerConfig()
    counter = _Counter(config)
    batch: list[str] = []
    chars = 0
    for text in texts:
        batch.append(text)
        chars += len(text)
        if len(batch) == batch_docs or chars >= batch_chars:
            counter.add(batch)
            batch, chars = [], 0
    if batch:
        counter.add(batch)
    return counter.matrix()


class _Counter:
    """Accumulates (document, feature, count) entries batch by batch; see count_matrix."""

    def __init__(self, config: TokenizerConfig, *, bulk_words: bool = True) -> None:
        self.config = config
        bulk = bulk_words and config == TokenizerConfig()
        self.words: _WordTable | None = _WordTable() if bulk else None
        self.vocabulary: dict[str, int] = {}  # the analyzer path's feature -> id
        self.names: list[str] = []  # feature of each provisional id, in first-seen order
        # int32: four bytes an entry instead of eight, over millions of documents
        self.ids: list[NDArray[np.int32]] = []
        self.counts: list[NDArray[np.int32]] = []
        self.sizes: list[NDArray[np.int64]] = []

    def add(self, texts: list[str]) -> None:
        if self.words is not None:
            tokens = word_tokens(texts)
            try:
                ids = self.words.ids(tokens, self.names)
            except KeyCollision:
                # Two different words share a 64-bit key (about once in 10**8 corpora of a
                # million distinct words): count everything from here on by the words
                # themselves, which is exact, keeping the ids given so far.
                self._count_by_name()
            else:
                self._add_entries(tokens.doc, ids, len(texts))
                return
        self._add_analyzed(texts)

    def _add_entries(self, docs: NDArray[np.int64], ids: NDArray[np.int64], n_docs: int) -> None:
        """One entry per token (in document order); repeats summed per document, in C."""
        index = np.int32 if max(ids.size, len(self.names)) < 2**31 else np.int64
        indptr = np.zeros(n_docs + 1, dtype=index)
        np.cumsum(np.bincount(docs, minlength=n_docs), out=indptr[1:])
        batch = sp.csr_array(
            (np.ones(ids.size, dtype=np.int32), ids.astype(index), indptr),
            shape=(n_docs, len(self.names)),
        )
        batch = _sorted_rows(batch)
        batch.sum_duplicates()
        self.ids.append(batch.indices.astype(np.int32))
        self.counts.append(batch.data.astype(np.int32))
        self.sizes.append(np.diff(batch.indptr).astype(np.int64))

    def _count_by_name(self) -> None:
        """From here on, features are looked up by their text (the ids given so far kept)."""
        if self.words is not None:
            self.words = None
            self.vocabulary = {name: i for i, name in enumerate(self.names)}

    def _ids_of(self, features: Sequence[str]) -> NDArray[np.int64]:
        """Provisional ids of distinct features, new ones added (dict look-ups in C)."""
        before = len(self.vocabulary)
        ids = np.fromiter(
            map(self.vocabulary.setdefault, features, itertools.count(before)),
            np.int64,
            len(features),
        )
        # setdefault consumed one number per call; renumber the new ones densely.
        new = ids >= before
        if new.any():
            fresh = np.arange(len(self.names), len(self.names) + int(new.sum()))
            new_names = list(itertools.compress(features, new.tolist()))
            self.vocabulary.update(zip(new_names, fresh.tolist(), strict=True))
            self.names.extend(new_names)
            ids[new] = fresh
        return ids

    def _add_analyzed(self, texts: list[str]) -> None:
        analyze = self.config.analyzer()
        sizes = np.empty(len(texts), dtype=np.int64)
        for row, text in enumerate(texts):
            counted = Counter(analyze(text))
            sizes[row] = len(counted)
            self.ids.append(self._ids_of(list(counted)).astype(np.int32))
            self.counts.append(np.fromiter(counted.values(), np.int32, len(counted)))
        self.sizes.append(sizes)

    def add_counts(self, counts: sp.csr_array, features: Sequence[str]) -> None:
        """Append the rows of another count matrix (its own columns ``features``)."""
        self._count_by_name()
        local = self._ids_of(features)
        self.ids.append(local[counts.indices].astype(np.int32))
        self.counts.append(counts.data.astype(np.int32))
        self.sizes.append(np.diff(counts.indptr).astype(np.int64))

    def matrix(self) -> tuple[sp.csr_array, list[str]]:
        names = self.names
        by_name = sorted(range(len(names)), key=names.__getitem__)
        final = [by_name[i] for i in reference_order([names[i] for i in by_name])]
        column_of_id = np.empty(len(final), dtype=np.int32)
        column_of_id[final] = np.arange(len(final), dtype=np.int32)
        sizes = np.concatenate(self.sizes) if self.sizes else np.empty(0, np.int64)
        indptr = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        columns = column_of_id[np.concatenate(self.ids)] if self.ids else np.empty(0, np.int32)
        self.ids = []
        counts = np.concatenate(self.counts) if self.counts else np.empty(0, np.int32)
        self.counts = []
        matrix = sp.csr_array(
            (counts.astype(np.float64), columns, indptr), shape=(sizes.size, len(final))
        )
        # Sorted in place: for the whole corpus (float64, tens of thousands of columns) this
        # beats the round trip through CSC that wins on a batch's small integer counts.
        matrix.sort_indices()
        return matrix, [names[i] for i in final]


def _sorted_rows(matrix: sp.csr_array) -> sp.csr_array:
    """The same matrix with every row's entries in column order (repeats kept, adjacent).

    Through CSC and back: two counting sorts, linear in the entries, where sorting each row
    (``sort_indices``) compares; about twice as fast on a batch of 4,096 documents' int32
    counts (a million tokens).
    """
    result: sp.csr_array = matrix.tocsc().tocsr()
    return result


_NAMES_AT_ONCE = 1 << 20


class _WordTable:
    """Word key -> provisional id, as an open-addressed array: no sort, no Python per token.

    Each key has a home slot (its low bits). A token whose slot holds its key (and check) is
    found with two array look-ups; the few that miss (new words, or words whose home slot
    another word took first) are resolved together: new words get ids and, where their home
    slot is free, the slot; the rest live in a small dict. The table doubles (and its words
    are placed again) to stay at most a quarter full, so few words ever miss.
    """

    INITIAL_BITS = 16

    def __init__(self) -> None:
        self._allocate(1 << self.INITIAL_BITS)
        self.overflow: dict[int, tuple[int, int]] = {}  # key -> (id, check)
        self.count = 0

    def _allocate(self, size: int) -> None:
        self.mask = np.uint64(size - 1)
        self.slot_id = np.full(size, -1, dtype=np.int64)
        self.slot_key = np.zeros(size, dtype=np.uint64)
        self.slot_check = np.zeros(size, dtype=np.uint64)

    def _grow(self, words: int) -> None:
        """Room for ``words`` words at a quarter full: every known word placed again."""
        size = self.slot_id.size
        if 4 * words <= size:
            return
        while 4 * words > size:
            size *= 2
        used = np.flatnonzero(self.slot_id >= 0)
        keys = [self.slot_key[used], np.fromiter(self.overflow, np.uint64, len(self.overflow))]
        ids = [self.slot_id[used], np.array([v[0] for v in self.overflow.values()], np.int64)]
        checks = [
            self.slot_check[used],
            np.array([v[1] for v in self.overflow.values()], np.uint64),
        ]
        self._allocate(size)
        self.overflow = {}
        self._place(np.concatenate(keys), np.concatenate(checks), np.concatenate(ids))

    def ids(self, tokens: WordTokens, names: list[str]) -> NDArray[np.int64]:
        """Ids of every token; new words are named (appended to ``names``) and get new ids.

        Raises:
            KeyCollision: two different words share a key; nothing has been changed.
        """
        key, check = tokens.key, tokens.check
        slot = (key & self.mask).astype(np.intp)
        ids: NDArray[np.int64] = self.slot_id[slot]
        hit = (ids >= 0) & (self.slot_key[slot] == key)
        if np.any(hit & (self.slot_check[slot] != check)):
            raise KeyCollision("two different words share a 64-bit key")
        missed = np.flatnonzero(~hit)
        if missed.size == 0:
            return ids
        # Most missed tokens repeat a word missed earlier in the batch: one token per home slot
        # stands for the tokens with its key, so only those few are sorted below.
        stand_in = np.empty(self.slot_id.size, dtype=np.intp)
        stand_in[slot[missed]] = missed
        represented = stand_in[slot[missed]]
        same = key[represented] == key[missed]
        if np.any(same & (check[represented] != check[missed])):
            raise KeyCollision("two different words share a 64-bit key")
        repeats, missed = missed[same], missed[~same | (represented == missed)]
        keys, first, inverse = np.unique(key[missed], return_index=True, return_inverse=True)
        checks = check[missed]
        if np.any(checks != checks[first][inverse]):
            raise KeyCollision("two different words share a 64-bit key")
        resolved = self._overflowing(keys, checks[first])
        new = resolved < 0
        if new.any():
            fresh = np.arange(len(names), len(names) + int(new.sum()))
            resolved[new] = fresh
            starts = tokens.start[missed[first[new]]]
            stops = tokens.stop[missed[first[new]]]
            # A million names at a time: the offsets as Python ints only for those.
            for lo in range(0, starts.size, _NAMES_AT_ONCE):
                part = zip(
                    starts[lo : lo + _NAMES_AT_ONCE].tolist(),
                    stops[lo : lo + _NAMES_AT_ONCE].tolist(),
                    strict=True,
                )
                names.extend(tokens.text[a:b] for a, b in part)
            self.count += int(new.sum())
            self._grow(self.count)
            self._place(keys[new], checks[first[new]], fresh)
        ids[missed] = resolved[inverse.reshape(-1)]
        ids[repeats] = ids[stand_in[slot[repeats]]]
        return ids

    def _overflowing(
        self, keys: NDArray[np.uint64], checks: NDArray[np.uint64]
    ) -> NDArray[np.int64]:
        """The ids of those of ``keys`` (distinct, none in its home slot) that the overflow
        dict holds, -1 for new words. Only a key whose home slot another word holds can be in
        the dict (slots are never emptied), so only those are looked up there.

        Raises:
            KeyCollision: a key in the dict with another check.
        """
        resolved = np.full(keys.size, -1, dtype=np.int64)
        if not self.overflow:
            return resolved
        taken = np.flatnonzero(self.slot_id[(keys & self.mask).astype(np.intp)] >= 0)
        known = [self.overflow.get(k) for k in keys[taken].tolist()]
        if any(
            entry is not None and entry[1] != c
            for entry, c in zip(known, checks[taken].tolist(), strict=True)
        ):
            raise KeyCollision("two different words share a 64-bit key")
        resolved[taken] = [-1 if entry is None else entry[0] for entry in known]
        return resolved

    def _place(
        self, keys: NDArray[np.uint64], checks: NDArray[np.uint64], ids: NDArray[np.int64]
    ) -> None:
        """Home slots for new keys where free (one key per slot), the dict for the rest."""
        slots = (keys & self.mask).astype(np.intp)
        free = self.slot_id[slots] < 0
        _, first_in_slot = np.unique(slots[free], return_index=True)
        takes = np.zeros(keys.size, dtype=bool)
        takes[np.flatnonzero(free)[first_in_slot]] = True
        self.slot_id[slots[takes]] = ids[takes]
        self.slot_key[slots[takes]] = keys[takes]
        self.slot_check[slots[takes]] = checks[takes]
        rest = ~takes
        self.overflow.update(
            zip(
                keys[rest].tolist(),
                zip(ids[rest].tolist(), checks[rest].tolist(), strict=True),
                strict=True,
            )
        )


def merge_counts(
    parts: Iterable[tuple[sp.csr_array, Sequence[str]]],
) -> tuple[sp.csr_array, list[str]]:
    """Stack count matrices made separately (batches counted in other processes), rows in
    order, into the one :func:`count_matrix` would have made from all their texts."""
    counter = _Counter(TokenizerConfig(), bulk_words=False)  # columns come by name
    for counts, features in parts:
        counter.add_counts(counts, features)
    return counter.matrix()


def apply_weighting(counts: sp.csr_array, weighting: Weighting) -> sp.csr_array:
    """Term counts -> weights, entry order kept.

    Args:
        counts: float64 CSR (n_docs, n_features) of term counts.
        weighting: the scheme; ``tfidf`` takes its document frequencies from ``counts``.

    Returns:
        A new float64 CSR of the same shape and sparsity.
    """
    if weighting is Weighting.TF:
        return counts
    weights: sp.csr_array = sp.csr_array(counts, copy=True)
    data = weights.data
    if weighting is Weighting.BINARY:
        data[:] = 1.0
    elif weighting is Weighting.LOG:
        np.log(data, out=data)
        data += 1.0
    elif weighting is Weighting.TFIDF and counts.shape[0] and counts.shape[1]:
        from sklearn.feature_extraction.text import TfidfTransformer  # slow import, rarely needed

        idf = TfidfTransformer(norm=None, smooth_idf=True).fit(counts).idf_
        data *= idf[weights.indices]
    return weights


def vectorize(
    texts: Iterable[str],
    *,
    tokenizer: TokenizerConfig | None = None,
    weighting: Weighting = Weighting.TF,
) -> tuple[sp.csr_array, list[str]]:
    """Texts -> (weights, features): :func:`count_matrix` then :func:`apply_weighting`."""
    counts, features = count_matrix(texts, tokenizer)
    return apply_weighting(counts, weighting), features


def from_mappings(
    mappings: Iterable[Mapping[str, float]],
) -> tuple[sp.csr_array, list[str]]:
    """Given weighted vectors (``--vectors``) -> (weights, features), exactly as given.

    Each row keeps its entries in the order the reference would iterate that mapping, so the
    matrix path reproduces the reference's float sums.  Weights must already be finite floats.
    """
    vocabulary: dict[str, int] = {}
    columns: list[int] = []
    values: list[float] = []
    indptr = [0]
    for mapping in mappings:
        keys = list(mapping)
        for position in reference_order(keys):
            key = keys[position]
            columns.append(vocabulary.setdefault(key, len(vocabulary)))
            values.append(mapping[key])
        indptr.append(len(columns))
    weights = sp.csr_array(
        (
            np.asarray(values, dtype=np.float64),
            np.asarray(columns, dtype=np.int64),
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(len(indptr) - 1, len(vocabulary)),
    )
    return weights, list(vocabulary)


def row_mapping(weights: sp.csr_array, features: Sequence[str], row: int) -> dict[str, float]:
    """Row ``row`` of a weight matrix as {feature: weight}, in stored (reference) order."""
    start, stop = int(weights.indptr[row]), int(weights.indptr[row + 1])
    columns: list[int] = weights.indices[start:stop].tolist()
    return {features[c]: float(w) for c, w in zip(columns, weights.data[start:stop], strict=True)}
