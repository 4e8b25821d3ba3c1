"""Every pair at a cosine, exactly: blocked sparse products of unit rows.

The product of a block of unit rows with the transposed corpus holds the cosine of every pair
of its rows with every document (a sparse product touches only the features they share). Its
work is known before it is done: a row's product with the corpus costs one multiply-add per
document for each of its features, so a block of rows costs ``sum(df_block(f) * df(f))`` over
the features f, where df counts the rows holding f. The planner prices the search of every
pair by that count (:func:`product_work`), the pilot computes the pairs of a random subset of
rows with every document within a budget of it, and a small corpus is searched whole.

Sums over a sparse product may add the same terms in another order than the one-pair check
(:func:`~simhash_cli.core.verify.cosines.unit_cosine_pairs`), so a pair is kept when its product
reaches the threshold less :data:`MARGIN`, and the caller scores the pairs kept with the tool's
one arithmetic: a pair that reaches the threshold by one order of sums is never lost to the
other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..threads import THREADS, threaded
from ..verify import cosines
from ..verify.cosines import UnitRows, column_counts
from .blocking import run_positions, size_spans

__all__ = [
    "MARGIN",
    "Suffixes",
    "Wanted",
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


def product_work(
    weights: sp.csr_array,
    anchors: NDArray[np.int64] | None = None,
    *,
    df: NDArray[np.int64] | None = None,
) -> int:
    """Multiply-adds of the products of the ``anchors`` rows (all rows when None) with every
    row of ``weights``: ``sum(df_anchors(f) * df(f))``, exact, from the columns alone (``df``:
    their :func:`column_counts`, when counted already)."""
    n_features = weights.shape[1]
    df = column_counts(weights) if df is None else df
    if anchors is None:
        return int(df @ df)
    chosen = sp.csr_array(weights[np.asarray(anchors, dtype=np.int64)])
    picked = np.bincount(chosen.indices, minlength=n_features).astype(np.int64)
    return int(picked @ df)


Wanted = Callable[[NDArray[np.int64]], NDArray[np.bool_]]
"""Which of some pairs (k, 2) are wanted at all: a mask."""


def near_pair_chunks(
    unit: UnitRows,
    threshold: float,
    *,
    among: NDArray[np.int64] | None = None,
    anchors: NDArray[np.int64] | None = None,
    output_entries: int = _OUTPUT_ENTRIES,
    index: Suffixes | None = None,
    wanted: Wanted | None = None,
) -> Iterator[NDArray[np.int64]]:
    """Pairs (i < j) of the rows ``among`` (ascending, unique; None: every row) whose cosine
    reaches ``threshold - MARGIN``, at least one of them in ``anchors`` (a subset of
    ``among``; None: all of them), each pair once.

    The filtering of exact all-pairs search (:class:`Suffixes`): a block of anchors' unit
    rows is multiplied with each document's indexed suffix only, a pair whose bound cannot
    reach the threshold is pruned, and the survivors are scored whole, with the tool's one
    arithmetic (:func:`~simhash_cli.core.verify.cosines.unit_cosine_pairs`).

    Args:
        unit: the corpus's weights with their scales (rows without a norm are never paired).
        threshold: the cosine a pair must reach.
        among: the rows that may be paired (one document of each distinct fingerprint).
        anchors: the rows whose pairs are wanted.
        output_entries: the suffix product's entries of one block of anchors at most.
        index: the suffixes of these rows ``among`` at this threshold, when made already
            (:meth:`Suffixes.of`, once for many calls).
        wanted: which pairs are wanted at all, whatever their cosine (None: every one):
            the others are left before they are scored.

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
    for doc, anchor in index.candidates(anchors, output_entries):
        # Each pair once: from its anchor, or from the smaller of two anchors.
        keep = (doc != anchor) & ((anchor < doc) | ~is_anchor[doc])
        doc, anchor = doc[keep], anchor[keep]
        pairs = np.stack((np.minimum(anchor, doc), np.maximum(anchor, doc)), axis=1)
        if wanted is not None and pairs.size:
            pairs = pairs[wanted(pairs)]
        if pairs.size:
            pairs = pairs[cosines.unit_cosine_pairs(unit, pairs) >= cutoff]
        if pairs.size:
            yield pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


_SLACK = 1e-6
"""How far the float32 sums of a bound may fall short of the exact one (many times their
rounding): a pair is pruned only when its bound is below the cut by more than this."""

_BINS = 256
"""Bins the ranks of the features are cut into, each holding about as many of the corpus's
entries: a document's prefix is a run of whole bins."""

_SPAN_CELLS = 1 << 22
"""A span of rows whose suffixes are found at once holds entries and bins of its rows'
squares (:data:`_BINS` a row) about this many in all (32 MB of float64 squares)."""

_INDEX_ENTRIES = 1 << 25
"""Entries of a corpus up to which its suffixes are kept as one inverted index (at most about
130 MB at this size: a row of documents for each feature); beyond, they are made again a span
of documents at a time for each search (a million prose records' suffixes are 80 million
entries)."""


@dataclass(frozen=True)
class Suffixes:
    """Each document's suffix, for the filtering of AllPairs (Bayardo, Ma and Srikant, 2007)
    and L2AP (Anastasiu and Karypis, 2014).

    Order the features from the most common to the rarest and cut the ranks into bins
    (:data:`_BINS`, each holding about as many of the corpus's entries). A document's prefix
    is its longest run of whole bins, from the first, whose unit weights have a norm below
    the cut; the rest is its suffix. Two unit vectors reach the cut only if they share a
    feature of the suffix of each: by Cauchy-Schwarz, what the prefix of ``d`` adds to ``d .
    a`` is at most the prefix's norm times the norm of ``a`` on those same bins, below the
    cut. So an anchor's product is taken with the suffixes alone (rare features: a few
    documents each, where the common words of a prose corpus are in every document), and
    the pair's bound, its suffix product plus that Cauchy-Schwarz term, prunes most of what
    it meets. A feature no other document holds pairs nothing and is left out of the
    suffixes. No row is sorted: a row's squares are summed by bin.

    A small corpus keeps its suffixes as one inverted index (for each feature, the
    documents whose suffix holds it: an anchor's product costs the postings of its
    features); a large one makes them again a span of documents at a time for each search,
    so that nothing the size of the corpus is held beside it (:data:`_INDEX_ENTRIES`).

    Attributes:
        unit: the corpus, whose anchors' rows are taken whole.
        cut: the cosine a pair must reach.
        column_bin: (n_features,) the bin of each column's rank.
        scale: (n_docs,) each row's unit scale (0 for rows that are never paired).
        first_bin: (n_docs,) the bin each document's suffix starts at (the number of bins
            when it has none).
        prefix_norm: (n_docs,) the norm of each document's prefix.
        df_suffix: (n_features,) by column, the documents whose suffix holds it.
        spans: (s, 2) the spans of rows [lo, hi) the suffixes were found in.
        masks: for each span, which of its rows' entries are in their suffix (packed bits).
        inverted: (n_features, n_docs) the suffixes' unit weights, a row a feature (float32),
            when kept whole.
    """

    unit: UnitRows
    cut: float
    column_bin: NDArray[np.int64]
    scale: NDArray[np.float64]
    first_bin: NDArray[np.int64]
    prefix_norm: NDArray[np.float64]
    df_suffix: NDArray[np.int64]
    spans: NDArray[np.int64]
    masks: tuple[NDArray[np.uint8], ...]
    inverted: sp.csr_array | None

    @property
    def bins(self) -> int:
        """How many bins the ranks are cut into."""
        return int(self.column_bin.max(initial=-1)) + 1

    @classmethod
    def of(cls, unit: UnitRows, allowed: NDArray[np.bool_], cutoff: float) -> Suffixes:
        """The suffixes of the ``allowed`` rows at the cosine ``cutoff`` (other rows empty).
        :func:`near_pair_chunks` makes them from the rows it may pair that have a norm, at
        its threshold less :data:`MARGIN` (:meth:`among`)."""
        weights = sp.csr_array(unit.weights)
        n, f = weights.shape
        df = unit.column_counts
        by_rank = np.lexsort((np.arange(f), -df))  # columns from the most common
        # Bins of about as many entries each: a bin ends where the entries' running count
        # passes a multiple of the total over _BINS.
        held = np.cumsum(df[by_rank])
        marks = np.linspace(0, held[-1] if f else 0, _BINS + 1)[1:-1]
        edges = np.unique(np.searchsorted(held, marks, side="right"))
        rank_bin = np.searchsorted(edges, np.arange(f), side="right")
        column_bin = np.empty(f, dtype=np.int64)
        column_bin[by_rank] = rank_bin
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(allowed, 1.0 / (unit.largest * unit.norms), 0.0)
        bins = int(rank_bin.max(initial=-1)) + 1
        first_bin = np.full(n, bins, dtype=np.int64)
        prefix_norm = np.zeros(n, dtype=np.float64)
        bar = max(cutoff - _SLACK, 0.0)
        indexed = df > 1
        df_suffix = np.zeros(f, dtype=np.int64)
        spans = np.array(
            list(size_spans(np.diff(weights.indptr).astype(np.int64) + bins, _SPAN_CELLS)),
            dtype=np.int64,
        ).reshape(-1, 2)
        masks = []

        def found(span: list[int]) -> tuple[int, int, _SpanSuffix]:
            lo, hi = span
            return lo, hi, _span_suffix(
                weights, lo, hi, column_bin=column_bin, scale=scale, bins=bins, bar=bar,
                indexed=indexed,
            )  # fmt: skip

        for lo, hi, part in threaded(found, spans.tolist()):
            first_bin[lo:hi], prefix_norm[lo:hi] = part.first, part.norm
            df_suffix[: part.df.size] += part.df
            masks.append(part.mask)
        index = cls(
            unit=unit,
            cut=cutoff,
            column_bin=column_bin,
            scale=scale,
            first_bin=first_bin,
            prefix_norm=prefix_norm,
            df_suffix=df_suffix,
            spans=spans,
            masks=tuple(masks),
            inverted=None,
        )
        if weights.nnz > _INDEX_ENTRIES:
            return index
        parts = list(threaded(index.span, range(len(spans))))
        whole = sp.vstack(parts, format="csr") if parts else sp.csr_array((n, f), dtype=np.float32)
        return dataclasses.replace(index, inverted=sp.csr_array(whole.T))

    @classmethod
    def among(cls, unit: UnitRows, among: NDArray[np.int64], threshold: float) -> Suffixes:
        """The suffixes :func:`near_pair_chunks` makes for these rows ``among`` at this
        ``threshold``."""
        allowed = np.zeros(unit.weights.shape[0], dtype=bool)
        allowed[among] = True
        return cls.of(unit, allowed & unit.has_norm, threshold - MARGIN)

    def span(self, k: int) -> sp.csr_array:
        """The suffixes of the rows of span ``k``: (hi - lo, n_features) float32 unit
        weights."""
        lo, hi = (int(v) for v in self.spans[k])
        weights = self.unit.weights
        start, stop = int(weights.indptr[lo]), int(weights.indptr[hi])
        mask = np.unpackbits(self.masks[k], count=stop - start).view(bool)
        sizes = np.diff(weights.indptr[lo : hi + 1]).astype(np.int64)
        row = np.repeat(np.arange(hi - lo, dtype=np.int64), sizes)[mask]
        values = weights.data[start:stop][mask] * self.scale[lo:hi][row]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(row, minlength=hi - lo))))
        return sp.csr_array(
            (values.astype(np.float32), weights.indices[start:stop][mask], indptr),
            shape=(hi - lo, weights.shape[1]),
        )

    def anchor_work(self, anchors: NDArray[np.int64]) -> NDArray[np.int64]:
        """Each anchor's entries of the suffix product: for each of its features, the
        suffixes holding it."""
        weights = self.unit.weights
        starts, stops = weights.indptr[anchors], weights.indptr[anchors + 1]
        sizes = (stops - starts).astype(np.int64)
        per_entry = self.df_suffix[weights.indices[run_positions(starts.astype(np.int64), sizes)]]
        sums = np.concatenate(([0], np.cumsum(per_entry)))
        bounds = np.concatenate(([0], np.cumsum(sizes)))
        return (sums[bounds[1:]] - sums[bounds[:-1]]).astype(np.int64) + 1

    def candidates(
        self, anchors: NDArray[np.int64], output_entries: int = _OUTPUT_ENTRIES
    ) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
        """(document, anchor) of each pair of the ``anchors`` with an allowed document whose
        bound reaches the cut (unordered, each pair once), a chunk of about
        ``output_entries`` products at a time: blocks of anchors against the inverted index,
        or spans of documents against every anchor."""
        work = self.anchor_work(anchors)
        if self.inverted is not None:
            inverted = self.inverted

            def block_pairs(span: tuple[int, int]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
                block = anchors[span[0] : span[1]]
                rows, running = self._anchor_rows(block)
                product = sp.coo_array(rows @ inverted)
                return self._kept(product.col, product.row, product.data, block, running)

            yield from threaded(block_pairs, size_spans(work, output_entries // THREADS))
            return
        # Each span of documents against every anchor, in blocks whose product with a span
        # is about output_entries (a span holds about its share of the corpus's entries).
        rows, running = self._anchor_rows(anchors)
        share = _SPAN_CELLS / max(1, self.unit.weights.nnz)
        blocks = [
            (lo, sp.csr_array(rows[lo:hi].T))
            for lo, hi in size_spans(
                np.ceil(work * share).astype(np.int64), output_entries // THREADS
            )
        ]

        def span_pairs(k: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
            suffix, first = self.span(k), int(self.spans[k, 0])
            found = []
            for lo, transposed in blocks:
                product = sp.coo_array(suffix @ transposed)
                doc = product.row.astype(np.int64) + first
                local = product.col.astype(np.int64) + lo
                found.append(self._kept(doc, local, product.data, anchors, running))
            return np.concatenate([d for d, _ in found]), np.concatenate([a for _, a in found])

        yield from threaded(span_pairs, range(len(self.spans)))

    def _anchor_rows(self, block: NDArray[np.int64]) -> tuple[sp.csr_array, NDArray[np.float64]]:
        """The ``block``'s unit rows (float32, columns as the weights number them) and each
        one's running norm before each bin: ``running[a, b]`` is its norm on bins < b."""
        rows = self.unit.rows(block, reordered=False)
        rows = sp.csr_array(
            (rows.data.astype(np.float32), rows.indices, rows.indptr), shape=rows.shape
        )
        owner = np.repeat(np.arange(block.size, dtype=np.int64), np.diff(rows.indptr))
        squares = np.zeros((block.size, self.bins + 1), dtype=np.float64)
        np.add.at(
            squares,
            (owner, self.column_bin[rows.indices] + 1),
            np.square(rows.data, dtype=np.float64),
        )
        return rows, np.sqrt(np.cumsum(squares, axis=1))

    def _kept(
        self,
        doc: NDArray[np.integer],
        local: NDArray[np.integer],
        product: NDArray[np.floating],
        block: NDArray[np.int64],
        running: NDArray[np.float64],
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The (document, anchor) products whose bound reaches the cut: the suffix product
        plus the document's prefix norm times the anchor's norm on the prefix's bins."""
        doc, local = doc.astype(np.int64), local.astype(np.int64)
        before = running[local, self.first_bin[doc]]
        bound = product + self.prefix_norm[doc] * before
        keep = bound + _SLACK >= self.cut
        return doc[keep], block[local[keep]]


@dataclass(frozen=True)
class _SpanSuffix:
    """A span of rows' first bins of suffix, prefix norms, which of their entries are in
    their suffix (packed bits) and how many suffixes hold each column."""

    first: NDArray[np.int64]
    norm: NDArray[np.float64]
    mask: NDArray[np.uint8]
    df: NDArray[np.int64]


def _span_suffix(
    weights: sp.csr_array,
    lo: int,
    hi: int,
    *,
    column_bin: NDArray[np.int64],
    scale: NDArray[np.float64],
    bins: int,
    bar: float,
    indexed: NDArray[np.bool_],
) -> _SpanSuffix:
    """The suffixes of rows [lo, hi) (:meth:`Suffixes.of`): a row's squares summed by bin,
    its prefix the bins whose running sum stays below ``bar`` squared, its suffix the entries
    of the other bins that are not zero and that another document holds (``indexed``)."""
    m = hi - lo
    start, stop = int(weights.indptr[lo]), int(weights.indptr[hi])
    if bins == 0:  # no feature: no suffix, no prefix
        none = np.zeros(stop - start, dtype=bool)
        return _SpanSuffix(
            np.zeros(m, np.int64), np.zeros(m), np.packbits(none), np.zeros(0, np.int64)
        )
    sizes = np.diff(weights.indptr[lo : hi + 1]).astype(np.int64)
    row = np.repeat(np.arange(m, dtype=np.int64), sizes)
    columns = weights.indices[start:stop]
    values = weights.data[start:stop] * scale[lo:hi][row]
    entry_bin = column_bin[columns]
    squares = np.bincount(
        row * bins + entry_bin, weights=np.square(values, dtype=np.float64), minlength=m * bins
    )
    running = np.cumsum(squares.reshape(m, bins), axis=1)
    first = (running < bar * bar).sum(axis=1).astype(np.int64)
    held = np.where(first > 0, running[np.arange(m), np.maximum(first - 1, 0)], 0.0)
    mask = (entry_bin >= first[row]) & indexed[columns] & (values.astype(np.float32) != 0)
    df = np.bincount(columns[mask]).astype(np.int64)  # as long as its largest column
    return _SpanSuffix(first, np.sqrt(held), np.packbits(mask), df)


def near_pairs(
    unit: UnitRows,
    threshold: float,
    *,
    among: NDArray[np.int64] | None = None,
    anchors: NDArray[np.int64] | None = None,
    index: Suffixes | None = None,
    wanted: Wanted | None = None,
) -> NDArray[np.int64]:
    """:func:`near_pair_chunks` as one (k, 2) array, sorted."""
    chunks = near_pair_chunks(
        unit, threshold, among=among, anchors=anchors, index=index, wanted=wanted
    )
    parts = list(chunks)
    if not parts:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.concatenate(parts)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
