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
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from . import cosines
from .blocking import size_spans
from .cosines import UnitRows

__all__ = [
    "MARGIN",
    "Suffixes",
    "column_counts",
    "near_pair_chunks",
    "near_pairs",
    "product_work",
]

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
    index: Suffixes | None = None,
) -> Iterator[NDArray[np.int64]]:
    """Pairs (i < j) of the rows ``among`` (ascending, unique; None: every row) whose cosine
    reaches ``threshold - MARGIN``, at least one of them in ``anchors`` (a subset of
    ``among``; None: all of them), each pair once.

    The filtering of exact all-pairs search (:class:`Suffixes`): a block of anchors' unit
    rows is multiplied with each document's indexed suffix only, a pair whose bound cannot
    reach the threshold is pruned, and the survivors are scored whole, with the tool's one
    arithmetic (:func:`~simhash_cli.core.cosines.unit_cosine_pairs`).

    Args:
        unit: the corpus's weights with their scales (rows without a norm are never paired).
        threshold: the cosine a pair must reach.
        among: the rows that may be paired (one document of each distinct fingerprint).
        anchors: the rows whose pairs are wanted.
        output_entries: the suffix product's entries of one block of anchors at most.
        index: the suffixes of these rows ``among`` at this threshold, when made already
            (:meth:`Suffixes.of`, once for many calls).

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
    cutoff = threshold - MARGIN
    index = index or Suffixes.of(unit, allowed, cutoff)
    for lo, hi in size_spans(index.anchor_work(anchors), output_entries):
        block = anchors[lo:hi]
        doc, anchor = index.candidates(block)
        # Each pair once: from its anchor, or from the smaller of two anchors.
        keep = (doc != anchor) & ((anchor < doc) | ~is_anchor[doc])
        doc, anchor = doc[keep], anchor[keep]
        pairs = np.stack((np.minimum(anchor, doc), np.maximum(anchor, doc)), axis=1)
        if pairs.size:
            pairs = pairs[cosines.unit_cosine_pairs(unit, pairs) >= cutoff]
        if pairs.size:
            yield pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


_SLACK = 1e-6
"""How far the float32 sums of a bound may fall short of the exact one (many times their
rounding): a pair is pruned only when its bound is below the cut by more than this."""


_STEPS = 256
"""Steps of ranks an anchor's running norm is kept at, for the bound of its pairs."""


@dataclass(frozen=True)
class Suffixes:
    """Each document's indexed suffix, for the filtering of AllPairs (Bayardo, Ma and
    Srikant, 2007) and L2AP (Anastasiu and Karypis, 2014).

    Order the features from the most common to the rarest. A document's prefix is its
    longest run of most common features whose unit weights have a norm below the cut; the
    rest is its suffix. Two unit vectors reach the cut only if they share a feature of the
    suffix of each: by Cauchy-Schwarz, what the prefix of ``d`` adds to ``d . a`` is at
    most the prefix's norm times the norm of ``a`` on those same features, below the cut.
    So an anchor's product is taken with the suffixes alone (rare features: a few documents
    each, where the common words of a prose corpus are in every document), and the pair's
    bound, its suffix product plus that Cauchy-Schwarz term, prunes most of what it meets.
    A feature no other document holds pairs nothing and is left out of the suffixes.

    Attributes:
        suffix: (n_docs, n_features) float32, each document's unit weights on its suffix;
            columns in the order of the features from the most common.
        prefix_norm: (n_docs,) the norm of each document's prefix.
        boundary: (n_docs,) the rank of the first feature of each document's suffix (the
            number of features when it has none).
        rank: (n_features,) each column's rank from the most common.
        df_suffix: (n_features,) by rank, the documents whose suffix holds it.
        unit: the corpus, whose anchors' rows are taken whole.
        cut: the cosine a pair must reach.
        steps: (s,) ascending ranks that cut the ranks into steps (:data:`_STEPS` at most,
            at the quantiles of the documents' boundaries).
        doc_step: (n_docs,) the step whose end is at or past each document's boundary.
    """

    suffix: sp.csr_array
    prefix_norm: NDArray[np.float64]
    boundary: NDArray[np.int64]
    rank: NDArray[np.int64]
    df_suffix: NDArray[np.int64]
    unit: UnitRows
    cut: float
    steps: NDArray[np.int64]
    doc_step: NDArray[np.int64]

    @classmethod
    def of(cls, unit: UnitRows, allowed: NDArray[np.bool_], cutoff: float) -> Suffixes:
        """The suffixes of the ``allowed`` rows at the cosine ``cutoff`` (other rows empty).
        :func:`near_pair_chunks` makes them from the rows it may pair that have a norm, at
        its threshold less :data:`MARGIN` (:meth:`among`)."""
        weights = sp.csr_array(unit.weights)
        n, f = weights.shape
        sizes = np.diff(weights.indptr).astype(np.int64)
        row = np.repeat(np.arange(n, dtype=np.int64), sizes)
        df = column_counts(weights)
        rank = np.empty(f, dtype=np.int64)
        rank[np.lexsort((np.arange(f), -df))] = np.arange(f, dtype=np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(allowed, 1.0 / (unit.largest * unit.norms), 0.0)
        values = (weights.data * scale[row]).astype(np.float32)
        # Each row's entries from its most common feature to its rarest.
        ranked = sp.csr_array((values, rank[weights.indices], weights.indptr), shape=(n, f))
        ranked.has_sorted_indices = False
        ranked.sort_indices()
        # The running sum of squares only grows, along a row and across rows: a row's prefix
        # (its entries whose norm so far is below the bar) ends where the sum first reaches
        # the row's start plus the bar squared, found by one binary search a row.
        ends = np.concatenate(([0.0], np.cumsum(np.square(ranked.data, dtype=np.float64))))
        starts = ranked.indptr[:-1].astype(np.int64)
        before = ends[starts]
        bar = max(cutoff - _SLACK, 0.0)
        reach = np.searchsorted(ends[1:], before + bar * bar, side="left")
        in_prefix = np.clip(reach - starts, 0, sizes)
        first = starts + in_prefix
        held = np.maximum(ends[first] - before, 0.0)
        prefix = np.arange(ranked.nnz, dtype=np.int64) < np.repeat(first, sizes)
        boundary = np.full(n, f, dtype=np.int64)
        has_suffix = in_prefix < sizes
        boundary[has_suffix] = ranked.indices[first[has_suffix]]
        df_by_rank = df[np.argsort(rank)]
        indexed = ~prefix & (df_by_rank[ranked.indices] > 1) & (ranked.data != 0)
        counts = np.bincount(row[indexed], minlength=n)
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        suffix = sp.csr_array((ranked.data[indexed], ranked.indices[indexed], indptr), shape=(n, f))
        df_suffix = np.bincount(ranked.indices[indexed], minlength=f).astype(np.int64)
        # The steps end at the quantiles of the boundaries, and a step's end is the rank of a
        # boundary (a feature of a rank below it is before that boundary).
        steps = np.unique(np.quantile(boundary, np.linspace(0, 1, _STEPS + 1)).astype(np.int64))
        doc_step = np.searchsorted(steps, boundary, side="left")
        return cls(suffix, np.sqrt(held), boundary, rank, df_suffix, unit, cutoff, steps, doc_step)

    @classmethod
    def among(cls, unit: UnitRows, among: NDArray[np.int64], threshold: float) -> Suffixes:
        """The suffixes :func:`near_pair_chunks` makes for these rows ``among`` at this
        ``threshold``."""
        allowed = np.zeros(unit.weights.shape[0], dtype=bool)
        allowed[among] = True
        return cls.of(unit, allowed & unit.has_norm, threshold - MARGIN)

    def anchor_work(self, anchors: NDArray[np.int64]) -> NDArray[np.int64]:
        """Each anchor's entries of the suffix product: for each of its features, the
        suffixes holding it."""
        weights = self.unit.weights
        starts, stops = weights.indptr[anchors], weights.indptr[anchors + 1]
        sizes = (stops - starts).astype(np.int64)
        where = np.repeat(starts - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes)
        entries = where + np.arange(int(sizes.sum()), dtype=np.int64)
        per_entry = self.df_suffix[self.rank[weights.indices[entries]]]
        sums = np.concatenate(([0], np.cumsum(per_entry)))
        bounds = np.concatenate(([0], np.cumsum(sizes)))
        return (sums[bounds[1:]] - sums[bounds[:-1]]).astype(np.int64) + 1

    def candidates(self, block: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(document, anchor) of each pair of the ``block``'s anchors with an allowed
        document whose bound reaches the cut (unordered, each pair once a block)."""
        rows = self.unit.rows(block, reordered=False)
        ranked = sp.csr_array(
            (rows.data.astype(np.float32), self.rank[rows.indices], rows.indptr),
            shape=rows.shape,
        )
        ranked.has_sorted_indices = False
        ranked.sort_indices()
        product = sp.coo_array(self.suffix @ ranked.T)
        doc, local = product.row.astype(np.int64), product.col.astype(np.int64)
        # The anchor's norm on the features before the document's suffix: its running norm at
        # the end of the step of ranks that holds the document's boundary (at least as much).
        steps = np.searchsorted(self.steps, ranked.indices, side="right")
        owner = np.repeat(np.arange(block.size, dtype=np.int64), np.diff(ranked.indptr))
        squares = np.zeros((block.size, self.steps.size + 1), dtype=np.float64)
        np.add.at(squares, (owner, steps), np.square(ranked.data, dtype=np.float64))
        running = np.sqrt(np.cumsum(squares, axis=1))
        before = running[local, self.doc_step[doc]]
        bound = product.data + self.prefix_norm[doc] * before
        keep = bound + _SLACK >= self.cut
        return doc[keep], block[local[keep]]


def near_pairs(
    unit: UnitRows,
    threshold: float,
    *,
    among: NDArray[np.int64] | None = None,
    anchors: NDArray[np.int64] | None = None,
    index: Suffixes | None = None,
) -> NDArray[np.int64]:
    """:func:`near_pair_chunks` as one (k, 2) array, sorted."""
    parts = list(near_pair_chunks(unit, threshold, among=among, anchors=anchors, index=index))
    if not parts:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.concatenate(parts)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
