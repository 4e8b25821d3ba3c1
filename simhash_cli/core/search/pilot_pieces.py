"""The pilot of a corpus whose vectors are not all in one place.

A corpus read in pieces, or on the workers of a cluster, makes the same pilot as one in
memory (:mod:`~simhash_cli.core.search.pilot`): the document frequency of every feature summed over
the pieces (:class:`KeyCounts`), the anchors drawn from its total
(:func:`~simhash_cli.core.search.pilot.grow`), the anchors' vectors sent to every piece, each
piece's
pairs with them (:func:`anchor_pairs`), and the pairs put together
(:func:`~simhash_cli.core.search.pilot.assembled`). Vectors are keyed by feature
(:class:`~simhash_cli.core.text.keyed.Vectors`), so every sum takes the order it takes in one
corpus (:func:`~simhash_cli.core.verify.cosines.column_order`): the same pairs, the same bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..sketch.minhash import jaccard_pairs
from ..text.keyed import Vectors
from ..verify import cosines
from ..verify.cosines import THRESHOLD_TOLERANCE, unit_cosine_pairs
from . import allpairs
from .blocking import LargeCopies
from .pilot import PilotPart

__all__ = ["KeyCounts", "anchor_pairs"]


@dataclass(frozen=True)
class KeyCounts:
    """How many documents hold each feature, by its 64-bit key.

    Attributes:
        keys: (f,) uint64, ascending, distinct.
        counts: (f,) int64, the documents holding each.
    """

    keys: NDArray[np.uint64]
    counts: NDArray[np.int64]

    @classmethod
    def of(cls, vectors: Vectors) -> KeyCounts:
        """The counts of some documents' vectors (each feature stored once per document)."""
        keys, counts = np.unique(vectors.keys, return_counts=True)
        return cls(keys, counts.astype(np.int64))

    @classmethod
    def merged(cls, parts: Sequence[KeyCounts]) -> KeyCounts:
        """The counts of all the pieces' documents."""
        if not parts:
            return cls(np.zeros(0, np.uint64), np.zeros(0, np.int64))
        keys, where = np.unique(np.concatenate([p.keys for p in parts]), return_inverse=True)
        counts = np.bincount(where.ravel(), weights=np.concatenate([p.counts for p in parts]))
        return cls(keys, counts.astype(np.int64))

    @property
    def work(self) -> int:
        """Multiply-adds of every document's product with the corpus
        (:func:`~simhash_cli.core.search.pilot.row_work` summed): each feature's count squared,
        summed."""
        return int(self.counts @ self.counts)

    def rows_work(self, vectors: Vectors) -> NDArray[np.int64]:
        """Each of ``vectors``' rows' product with the corpus in multiply-adds (as
        :func:`~simhash_cli.core.search.pilot.row_work`)."""
        per_entry = self.counts[np.searchsorted(self.keys, vectors.keys)]
        sums = np.concatenate(([0], np.cumsum(per_entry)))
        return (sums[vectors.indptr[1:]] - sums[vectors.indptr[:-1]]).astype(np.int64)


def anchor_pairs(
    anchors: Vectors,
    anchor_rows: NDArray[np.int64],
    piece: Vectors,
    piece_rows: NDArray[np.int64],
    threshold: float,
    *,
    sets: bool,
    copies: LargeCopies | None = None,
) -> PilotPart:
    """The pairs at ``threshold`` of the anchors (their vectors and rows, ascending) with a
    piece's documents (their vectors and rows), each pair once, as
    :func:`~simhash_cli.core.search.pilot.run_pilot` finds them in one corpus: a pair of two anchors
    from the smaller one, a pair of an anchor with itself never; of the ``copies`` of a
    boilerplate page, the pairs a run makes (:class:`~.pilot.LargeCopies`)."""
    stacked = Vectors.join([anchors, piece])
    weights = stacked.matrix()  # columns in key order: the one order of sums
    unit = cosines.unit_scales(weights)
    n_anchors = anchor_rows.size
    rows = np.concatenate([anchor_rows, piece_rows])
    among = np.arange(n_anchors, rows.size, dtype=np.int64)
    is_anchor = np.isin(piece_rows, anchor_rows)

    def wanted(local: NDArray[np.int64]) -> NDArray[np.bool_]:
        assert copies is not None
        return copies.wanted(rows[local])

    found = [
        chunk
        for chunk in allpairs.near_pair_chunks(
            unit, threshold, among=np.arange(rows.size, dtype=np.int64),
            anchors=np.arange(n_anchors, dtype=np.int64),
            wanted=None if copies is None else wanted,
        )
    ]  # fmt: skip
    local = np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)
    # Only pairs of an anchor with this piece's documents (anchor pairs among themselves are
    # found where the second anchor is a document of a piece), each with its own rows.
    anchor_side = np.where(local[:, 0] < n_anchors, local[:, 0], local[:, 1])
    doc_side = np.where(local[:, 0] < n_anchors, local[:, 1], local[:, 0])
    keep = np.isin(doc_side, among)
    anchor_side, doc_side = anchor_side[keep], doc_side[keep]
    first, second = rows[anchor_side], rows[doc_side]
    kept = (first != second) & ((first < second) | ~is_anchor[doc_side - n_anchors])
    local = np.stack((anchor_side[kept], doc_side[kept]), axis=1)
    cosine = unit_cosine_pairs(unit, local) if local.size else np.zeros(0, np.float64)
    near = cosine >= threshold - THRESHOLD_TOLERANCE
    local, cosine = local[near], cosine[near]
    pairs = np.sort(rows[local], axis=1) if local.size else np.zeros((0, 2), dtype=np.int64)
    jaccard = None
    if sets:
        jaccard = jaccard_pairs(weights, local) if local.size else np.zeros(0, np.float64)
    return PilotPart(pairs, cosine, jaccard)
