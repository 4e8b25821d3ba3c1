"""Documents -> sparse weight matrix ``(n_docs, n_features)``, CSR (term counts in float32,
which holds every count below 2**24 exactly; weights made from them in float64).

Columns are ordered the way JavaScript would iterate a document's features (integer-like
features first, numerically; then the rest in sorted order), and every row keeps its entries in
that order. So a row, read as a mapping, gives the same fingerprint through the scalar
:func:`~simhash_cli.core.sketch.fingerprint.fingerprint` as through the matrix path, float weights
included.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...errors import KeyCollision
from ..config import Weighting
from ..sketch.fingerprint import feature_keys, reference_order, reference_positions
from ..verify.cosines import in_key_order
from .tokenizer import TokenizerConfig
from .words import word_tokens
from .wordtable import WordTable

__all__ = [
    "Weighting",
    "apply_weighting",
    "count_matrix",
    "from_mappings",
    "merge_counts",
    "row_mapping",
    "smooth_idf",
    "vectorize",
]


def count_matrix(
    texts: Iterable[str],
    tokenizer: TokenizerConfig | None = None,
    *,
    batch_docs: int = 4096,
    batch_chars: int = 1 << 24,
    ordered: bool = True,
) -> tuple[sp.csr_array, list[str]]:
    """Term counts of every text, counted in batches of documents.

    The default words are found and keyed in bulk by
    :func:`~simhash_cli.core.text.words.word_tokens`
    (no Python step per token). Shingles and character n-grams come from scikit-learn's
    analyzers, counted with ``collections.Counter`` and ``dict.setdefault`` (C loops) rather
    than CountVectorizer's counting loop, which runs Python bytecode for every token.

    Args:
        texts: the documents, consumed once (a generator is fine: texts are not kept).
        tokenizer: how text becomes features.
        batch_docs: documents counted together.
        batch_chars: characters counted together (bounds memory for long documents).
        ordered: the columns in their canonical order (below); False: in the order their
            features first occur, which saves sorting the vocabulary, for counts whose order
            does not matter (fingerprints of whole-number weights, :attr:`Weighting.whole`).

    Returns:
        (counts, features): CSR of shape (n_docs, n_features), float32 (float64 if a count
        reaches 2**24, where float32 would round it), and the column names,
        in :func:`~simhash_cli.core.sketch.fingerprint.reference_order` of the sorted features, so a
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
    return counter.matrix(ordered=ordered)


class _Counter:
    """Accumulates (document, feature, count) entries batch by batch; see count_matrix."""

    def __init__(self, config: TokenizerConfig, *, bulk_words: bool = True) -> None:
        self.config = config
        bulk = bulk_words and config.bulk
        self.words: WordTable | None = WordTable() if bulk else None
        self.vocabulary: dict[str, int] = {}  # the analyzer path's feature -> id
        self.names: list[str] = []  # feature of each provisional id, in first-seen order
        # int32: four bytes an entry instead of eight, over millions of documents
        self.ids = _Entries()
        self.counts = _Entries()
        self.sizes: list[NDArray[np.int64]] = []

    def add(self, texts: list[str]) -> None:
        if self.words is not None:
            tokens = word_tokens(texts, by_script=self.config.scripts)
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

    def matrix(
        self, *, ordered: bool = True, keyed: bool = False
    ) -> tuple[sp.csr_array, list[str]]:
        """The counts and their columns' features: in canonical order, or (not ``ordered``)
        in the order the features first occurred (see :func:`count_matrix`), or (``keyed``)
        in the order of the features' 64-bit keys, each row's entries sorted: the order a
        corpus's sums are taken in (:func:`~simhash_cli.core.verify.cosines.in_key_order`), for
        counts whose fingerprints do not depend on their entries' order (whole numbers)."""
        if not ordered or keyed:
            seen, self.names = self.names, []
            matrix = self._drained(None, len(seen))
            if not keyed:
                return matrix, seen
            # Renumbered and sorted in place, on the threads.
            matrix, order = in_key_order(matrix, feature_keys(seen), in_place=True)
            return matrix, [seen[column] for column in order.tolist()]
        names = np.fromiter(self.names, dtype=object, count=len(self.names))
        self.names = []
        # Python's sort compares the strings in C; the permutation is held as an array.
        by_name = np.fromiter(
            sorted(range(names.size), key=names.__getitem__), dtype=np.intp, count=names.size
        )
        final = by_name[reference_positions(names[by_name])]
        del by_name
        column_of_id = np.empty(final.size, dtype=np.int32)
        column_of_id[final] = np.arange(final.size, dtype=np.int32)
        matrix = self._drained(column_of_id, final.size)
        # Sorted in place: for the whole corpus (floats, tens of thousands of columns) this
        # beats the round trip through CSC that wins on a batch's small integer counts.
        matrix.sort_indices()
        features: list[str] = names[final].tolist()
        return matrix, features

    def _drained(self, column_of_id: NDArray[np.int32] | None, n_columns: int) -> sp.csr_array:
        """The entries counted, as a CSR matrix whose columns are ``column_of_id`` of their ids
        (None: the ids themselves)."""
        sizes = np.concatenate(self.sizes) if self.sizes else np.empty(0, np.int64)
        # int32 offsets while the entries fit: scipy then keeps the columns int32 as well
        # (four bytes an entry, not eight, over a million documents).
        offset = np.int32 if int(sizes.sum()) < 2**31 else np.int64
        indptr = np.zeros(sizes.size + 1, dtype=offset)
        np.cumsum(sizes, out=indptr[1:])
        # Each store is emptied a segment at a time into the matrix's arrays: the entries are
        # held about twice at most, and the segments' memory goes back to the system.
        columns = self.ids.drain(np.int32, column_of_id)
        kind = np.float32 if self.counts.largest < _FLOAT32_EXACT else np.float64
        data = self.counts.drain(kind)
        return sp.csr_array((data, columns, indptr), shape=(sizes.size, n_columns))


class _Entries:
    """int32 entries appended batch by batch, kept in segments of SEGMENT entries.

    A batch's few megabytes, freed, would stay in the C heap (glibc keeps blocks of that size
    for reuse), so a million documents' entries would be held twice, once in their batches and
    once in the matrix. Segments of 32 MB are mapped and unmapped whole instead.
    """

    SEGMENT = 1 << 23

    def __init__(self) -> None:
        self.full: list[NDArray[np.int32]] = []
        self.current = np.empty(0, dtype=np.int32)
        self.used = 0
        self.largest = 0

    def append(self, values: NDArray[np.int32]) -> None:
        if values.size:
            self.largest = max(self.largest, int(values.max()))
        while values.size:
            if self.used == self.current.size:
                if self.current.size:
                    self.full.append(self.current)
                self.current = np.empty(max(self.SEGMENT, values.size), dtype=np.int32)
                self.used = 0
            taken = min(values.size, self.current.size - self.used)
            self.current[self.used : self.used + taken] = values[:taken]
            self.used += taken
            values = values[taken:]

    def __len__(self) -> int:
        return sum(part.size for part in self.full) + self.used

    def drain(
        self, dtype: type[np.generic], through: NDArray[np.int32] | None = None
    ) -> NDArray[Any]:
        """Every entry in order (mapped ``through`` a lookup table when given), as ``dtype``;
        each segment is let go as soon as it is copied."""
        out = np.empty(len(self), dtype=dtype)
        parts = [*self.full, self.current[: self.used]]
        self.full, self.current, self.used = [], np.empty(0, dtype=np.int32), 0
        at = 0
        while parts:
            part = parts.pop(0)
            out[at : at + part.size] = part if through is None else through[part]
            at += part.size
            del part
        return out


def _sorted_rows(matrix: sp.csr_array) -> sp.csr_array:
    """The same matrix with every row's entries in column order (repeats kept, adjacent).

    Through CSC and back: two counting sorts, linear in the entries, where sorting each row
    (``sort_indices``) compares; about twice as fast on a batch of 4,096 documents' int32
    counts (a million tokens).
    """
    result: sp.csr_array = matrix.tocsc().tocsr()
    return result


_FLOAT32_EXACT = 1 << 24
"""Integers below this are exact in float32."""


def merge_counts(
    parts: Iterable[tuple[sp.csr_array, Sequence[str]]],
    *,
    keyed: bool = False,
) -> tuple[sp.csr_array, list[str]]:
    """Stack count matrices made separately (batches counted in other processes, their
    columns in any order), rows in order, into the one :func:`count_matrix` would have made
    from all their texts; ``keyed``: its columns in the order of their features' keys (see
    :meth:`_Counter.matrix`)."""
    counter = _Counter(TokenizerConfig(), bulk_words=False)  # columns come by name
    for counts, features in parts:
        counter.add_counts(counts, features)
    return counter.matrix(keyed=keyed)


def apply_weighting(counts: sp.csr_array, weighting: Weighting) -> sp.csr_array:
    """Term counts -> weights, entry order kept.

    Args:
        counts: CSR (n_docs, n_features) of term counts.
        weighting: the scheme; ``tfidf`` takes its document frequencies from ``counts``, and
            counts as documents the rows that hold a term (a file skipped as empty is no
            document of the corpus).

    Returns:
        ``counts`` itself for tf; otherwise a new float64 CSR of the same shape and sparsity.
    """
    if weighting is Weighting.TF:
        return counts
    weights: sp.csr_array = sp.csr_array(counts.astype(np.float64))  # a copy
    data = weights.data
    if weighting is Weighting.BINARY:
        data[:] = 1.0
    elif weighting is Weighting.LOG:
        np.log(data, out=data)
        data += 1.0
    elif weighting is Weighting.TFIDF and counts.shape[0] and counts.shape[1]:
        # n: the documents that hold a term.
        documents = int(np.count_nonzero(np.diff(weights.indptr)))
        df = np.bincount(weights.indices, minlength=weights.shape[1])
        data *= smooth_idf(df, documents)[weights.indices]
    return weights


def smooth_idf(df: NDArray[np.integer], documents: int) -> NDArray[np.float64]:
    """scikit-learn's smooth idf of terms held by ``df`` of ``documents`` documents,
    ``ln((1 + n) / (1 + df)) + 1``, in its order of operations: the same weights to the last
    bit wherever the document frequencies were counted (here, or summed over a cluster)."""
    idf: NDArray[np.float64] = np.log((documents + 1) / (df + 1)) + 1
    return idf


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
