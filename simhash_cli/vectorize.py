"""Documents -> sparse weight matrix ``(n_docs, n_features)``, float64, CSR.

Columns are ordered the way JavaScript would iterate a document's features (integer-like
features first, numerically; then the rest in sorted order), and every row keeps its entries in
that order. So a row, read as a mapping, gives the same fingerprint through the scalar
:func:`~simhash_cli.fingerprint.fingerprint` as through the matrix path, float weights included.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.feature_extraction.text import TfidfTransformer

from .fingerprint import reference_order
from .tokenizer import TokenizerConfig

__all__ = [
    "Weighting",
    "apply_weighting",
    "count_matrix",
    "from_mappings",
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
) -> tuple[sp.csr_array, list[str]]:
    """Term counts of every text.

    Tokens come from scikit-learn's analyzer; counting is done here rather than by
    CountVectorizer, whose counting loop runs Python bytecode for every token.  Here a
    document's tokens are counted by ``collections.Counter`` and its distinct tokens looked up
    with ``dict.setdefault`` driven by ``map``: both loops run in C.

    Args:
        texts: the documents, consumed once (a generator is fine: texts are not kept).
        tokenizer: how text becomes features.
        batch_docs: documents whose arrays are joined together (bounds per-document overhead).

    Returns:
        (counts, features): float64 CSR of shape (n_docs, n_features) and the column names,
        in :func:`~simhash_cli.fingerprint.reference_order` of the sorted features, so a
        document's entries are in an order that depends on that document alone.  A text
        without tokens is an empty row.
    """
    analyze = (tokenizer or TokenizerConfig()).analyzer()
    # token -> provisional id: ids come from one running counter, so they increase with
    # first appearance but have gaps; they are made dense at the end.
    vocabulary: dict[str, int] = {}
    next_id = itertools.count()
    ids: list[NDArray[np.int64]] = []
    counts: list[NDArray[np.int64]] = []
    sizes: list[int] = []
    pending_ids: list[NDArray[np.int64]] = []
    pending_counts: list[NDArray[np.int64]] = []
    for text in texts:
        counted = Counter(analyze(text))
        size = len(counted)
        pending_ids.append(
            np.fromiter(map(vocabulary.setdefault, counted, next_id), np.int64, size)
        )
        pending_counts.append(np.fromiter(counted.values(), np.int64, size))
        sizes.append(size)
        if len(pending_ids) == batch_docs:
            ids.append(np.concatenate(pending_ids))
            counts.append(np.concatenate(pending_counts))
            pending_ids, pending_counts = [], []
    ids.extend(pending_ids)
    counts.extend(pending_counts)

    names_seen = list(vocabulary)
    provisional = np.fromiter(vocabulary.values(), np.int64, len(vocabulary))
    by_name = sorted(range(len(names_seen)), key=names_seen.__getitem__)
    final = [by_name[i] for i in reference_order([names_seen[i] for i in by_name])]
    column_of_seen = np.empty(len(final), dtype=np.int64)
    column_of_seen[final] = np.arange(len(final))

    all_ids = np.concatenate(ids) if ids else np.empty(0, np.int64)
    indptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    matrix = sp.csr_array(
        (
            np.concatenate(counts).astype(np.float64) if counts else np.empty(0),
            column_of_seen[np.searchsorted(provisional, all_ids)],
            indptr,
        ),
        shape=(len(sizes), len(final)),
    )
    matrix.sort_indices()
    return matrix, [names_seen[i] for i in final]


def apply_weighting(counts: sp.csr_array, weighting: Weighting) -> sp.csr_array:
    """Term counts -> weights, entry order kept.

    Args:
        counts: float64 CSR (n_docs, n_features) of term counts.
        weighting: the scheme; ``tfidf`` takes its document frequencies from ``counts``.

    Returns:
        A new float64 CSR of the same shape and sparsity.
    """
    weights: sp.csr_array = sp.csr_array(counts, copy=True)
    data = weights.data
    if weighting is Weighting.BINARY:
        data[:] = 1.0
    elif weighting is Weighting.LOG:
        np.log(data, out=data)
        data += 1.0
    elif weighting is Weighting.TFIDF and counts.shape[0] and counts.shape[1]:
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
