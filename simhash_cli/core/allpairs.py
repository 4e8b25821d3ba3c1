"""Every pair at a cosine, exactly: blocked sparse products of unit rows.

The product of a block of unit rows with the transposed corpus holds the cosine of every pair
of its rows with every document (a sparse product touches only the features they share). Its
work is known before it is done: a row's product with the corpus costs one multiply-add per
document for each of its features, so a block of rows costs ``sum(df_block(f) * df(f))`` over
the features f, where df counts the rows holding f. The planner prices the search of every
pair by that count (:func:`product_work`), the pilot computes the pairs of a random subset of
rows with every document within a budget of it, and a small corpus is searched whole.

Sums over a sparse product may add the same terms in another order than the one-pair check
(:func:`~simhash_cli.core.cosines.unit_cosine_pairs`), so a pair is kept when its product
reaches the threshold less :data:`MARGIN`, and the caller scores the pairs kept with the tool's
one arithmetic: a pair that reaches the threshold by one order of sums is never lost to the
other.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .blocking import size_spans
from .cosines import UnitRows

__all__ = ["MARGIN", "column_counts", "near_pair_chunks", "near_pairs", "product_work"]

MARGIN = 1e-4
"""How far below the threshold a product is kept: many times the rounding of a sum of unit
terms in float32 (the counts' own type, so that the corpus is not copied to float64), and too
little to admit more than a few pairs that the check then turns away."""

_OUTPUT_ENTRIES = 1 << 23
"""Entries of one block's product at most (a block of rows times every document: ~100 MB of
indices and values while it is filtered)."""


_COUNT_ENTRIES = 1 << 24
"""Column indices counted at once: bincount copies its input to 64-bit integers, which for a
million documents' 200 million entries would be 1.6 GB."""


def column_counts(weights: sp.csr_array) -> NDArray[np.int64]:
    """How many rows hold each column (the document frequency of each feature), counted a
    slice of the entries at a time."""
    df = np.zeros(weights.shape[1], dtype=np.int64)
    for start in range(0, weights.indices.size, _COUNT_ENTRIES):
        part = weights.indices[start : start + _COUNT_ENTRIES]
        df += np.bincount(part, minlength=weights.shape[1])
    return df


def product_work(weights: sp.csr_array, anchors: NDArray[np.int64] | None = None) -> int:
    """Multiply-adds of the products of the ``anchors`` rows (all rows when None) with every
    row of ``weights``: ``sum(df_anchors(f) * df(f))``, exact, from the columns alone."""
    n_features = weights.shape[1]
    df = column_counts(weights)
    if anchors is None:
        return int(df @ df)
    chosen = sp.csr_array(weights[np.asarray(anchors, dtype=np.int64)])
    picked = np.bincount(chosen.indices, minlength=n_features).astype(np.int64)
    return int(picked @ df)


def near_pair_chunks(
    unit: UnitRows,
    threshold: float,
    *,
    among: NDArray[np.int64] | None = None,
    anchors: NDArray[np.int64] | None = None,
    output_entries: int = _OUTPUT_ENTRIES,
) -> Iterator[NDArray[np.int64]]:
    """Pairs (i < j) of the rows ``among`` (ascending, unique; None: every row) whose cosine
    by product reaches ``threshold - MARGIN``, at least one of them in ``anchors`` (a subset
    of ``among``; None: all of them), each pair once.

    The product of a block of anchors' unit rows with the weights as given, each document's
    row scaled after: the corpus is never copied, nor transposed.

    Args:
        unit: the corpus's weights with their scales (rows without a norm are never paired).
        threshold: the cosine a pair must reach.
        among: the rows that may be paired (one document of each distinct fingerprint).
        anchors: the rows whose pairs are wanted.
        output_entries: the product entries of one block of anchors at most.

    Yields:
        (k, 2) int64 chunks of row numbers, i < j, sorted within a chunk.
    """
    n = unit.weights.shape[0]
    every = np.arange(n, dtype=np.int64)
    among = every if among is None else np.asarray(among, dtype=np.int64)
    anchors = among if anchors is None else np.asarray(anchors, dtype=np.int64)
    if among.size < 2 or anchors.size == 0:
        return
    allowed = np.zeros(n, dtype=bool)
    allowed[among] = True
    allowed &= unit.has_norm
    is_anchor = np.zeros(n, dtype=bool)
    is_anchor[anchors] = True
    with np.errstate(divide="ignore"):
        scale = np.where(allowed, 1.0 / (unit.largest * unit.norms), 0.0)
    weights = sp.csr_array(unit.weights)  # as given: float32 counts are not copied
    cutoff = threshold - MARGIN
    # A block's output is at most its anchors times n entries: blocks of equal counts.
    per_block = max(1, output_entries // n)
    for lo, hi in size_spans(np.ones(anchors.size, dtype=np.int64), per_block):
        block = anchors[lo:hi]
        rows = unit.rows(block, reordered=False)  # in the weights' own columns
        product = sp.coo_array(weights @ rows.astype(weights.dtype).T)
        doc = product.row.astype(np.int64)
        cosine = product.data * scale[doc]
        anchor = block[product.col]
        # Each pair once: from its anchor, or from the smaller of two anchors.
        keep = (cosine >= cutoff) & allowed[doc] & (doc != anchor)
        keep &= (anchor < doc) | ~is_anchor[doc]
        first, second = anchor[keep], doc[keep]
        pairs = np.stack((np.minimum(first, second), np.maximum(first, second)), axis=1)
        if pairs.size:
            yield pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def near_pairs(
    unit: UnitRows,
    threshold: float,
    *,
    among: NDArray[np.int64] | None = None,
    anchors: NDArray[np.int64] | None = None,
) -> NDArray[np.int64]:
    """:func:`near_pair_chunks` as one (k, 2) array, sorted."""
    parts = list(near_pair_chunks(unit, threshold, among=among, anchors=anchors))
    if not parts:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.concatenate(parts)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
