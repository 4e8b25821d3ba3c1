"""Documents -> sparse weight matrix ``(n_docs, n_features)``, float64, CSR.

Columns are ordered the way JavaScript would iterate a document's features (integer-like
features first, numerically; then the rest in sorted order), and every row keeps its entries in
that order. So a row, read as a mapping, gives the same fingerprint through the scalar
:func:`~simhash_cli.fingerprint.fingerprint` as through the matrix path, float weights included.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import Enum

import numpy as np
import scipy.sparse as sp
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
    texts: Iterable[str], tokenizer: TokenizerConfig | None = None
) -> tuple[sp.csr_array, list[str]]:
    """Term counts of every text.

    Args:
        texts: the documents, consumed once (a generator is fine: texts are not kept).
        tokenizer: how text becomes features.

    Returns:
        (counts, features): float64 CSR of shape (n_docs, n_features) and the column names.
        A text without tokens is an empty row.
    """
    vectorizer = (tokenizer or TokenizerConfig()).count_vectorizer()
    seen = _Counted(texts)
    try:
        counts = vectorizer.fit_transform(seen)
    except ValueError as exc:
        # scikit-learn refuses a corpus without a single token; to us that is n empty rows.
        if "empty vocabulary" not in str(exc):
            raise
        return sp.csr_array((seen.count, 0), dtype=np.float64), []
    names_sorted: list[str] = vectorizer.get_feature_names_out().tolist()
    order = np.asarray(reference_order(names_sorted), dtype=np.int64)
    counts = sp.csr_array(counts)[:, order]
    counts.sort_indices()
    return counts.astype(np.float64), [names_sorted[i] for i in order]


class _Counted:
    """Iterates texts once, counting them (so an all-empty corpus still has its n rows)."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._texts = texts
        self.count = 0

    def __iter__(self) -> Iterator[str]:
        for text in self._texts:
            self.count += 1
            yield text


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
