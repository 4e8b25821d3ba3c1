"""Clusters as a person reads them: each cluster's central member, and every member's cosine to
it.

The central member of a cluster is the one whose flagged pairs add up to the largest cosine
(the most, and the closest, near-duplicates; the first in input order on a tie). Every other
member is shown with the cosine of its flagged pair with that one (true or estimated, as the
run verified); a member joined to the cluster only through others has none (NaN): it is not
itself a verified near-duplicate of the central member.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .cosines import ScoredPairs, Verify

__all__ = ["Members", "centres", "cluster_members"]

_CHUNK = 200_000


def centres(
    clusters: Sequence[NDArray[np.int64]],
    pairs: Iterable[tuple[NDArray[np.int64], NDArray[np.float64]]],
    n_docs: int,
) -> NDArray[np.int64]:
    """The central member of each cluster.

    Args:
        clusters: each cluster's members, in input order.
        pairs: chunks of flagged pairs, (k, 2) int64, with their cosines (k,) float64 (NaN
            counts as 0).
        n_docs: the number of documents.

    Returns:
        int64 (len(clusters),): the member whose pairs' cosines sum highest, the first member
        on a tie.
    """
    strength = np.zeros(n_docs, dtype=np.float64)
    for chunk, cosine in pairs:
        weight = np.nan_to_num(cosine, nan=0.0)
        strength += np.bincount(chunk[:, 0], weight, minlength=n_docs)
        strength += np.bincount(chunk[:, 1], weight, minlength=n_docs)
    if not clusters:
        return np.zeros(0, dtype=np.int64)
    members = np.concatenate(clusters)
    label = np.repeat(np.arange(len(clusters)), [c.size for c in clusters])
    # By cluster, then strongest first, then input order: the first of each cluster wins.
    order = np.lexsort((members, -strength[members], label))
    _, first = np.unique(label[order], return_index=True)
    centre: NDArray[np.int64] = members[order[first]]
    return centre


@dataclass(frozen=True)
class Members:
    """Every clustered document's place in its cluster.

    Attributes:
        centre: (n_clusters,) int64, each cluster's central member.
        cosine: (n_docs,) float64, each document's cosine to its cluster's centre (1 for the
            centre itself; NaN outside clusters, or where the two are not a flagged pair).
        exact: whether ``cosine`` holds true cosines (else estimates from fingerprints).
    """

    centre: NDArray[np.int64]
    cosine: NDArray[np.float64]
    exact: bool

    def ordered(self, number: int, members: NDArray[np.int64]) -> NDArray[np.int64]:
        """Cluster ``number``'s members: its centre first, then by cosine to it, highest
        first (input order on a tie)."""
        centre = self.centre[number]
        others = members[members != centre]
        by_cosine = others[np.argsort(-np.nan_to_num(self.cosine[others], nan=-2.0), kind="stable")]
        return np.concatenate(([centre], by_cosine)).astype(np.int64)


def cluster_members(
    n_docs: int,
    clusters: Sequence[NDArray[np.int64]],
    pairs: ScoredPairs,
    verify: Verify,
) -> Members:
    """Each cluster's centre and every member's cosine to it (see the module's docstring), from
    the flagged pairs alone: two passes over them, a chunk at a time, wherever they are held."""
    exact = verify is Verify.EXACT

    def chunks() -> Iterator[tuple[NDArray[np.int64], NDArray[np.float64]]]:
        for chunk in pairs.chunks(_CHUNK):
            yield chunk.pairs, chunk.cosine if exact else chunk.estimated_cosine

    centre = centres(clusters, chunks(), n_docs)
    cosine = np.full(n_docs, np.nan)
    if clusters:
        centre_of = np.full(n_docs, -1, dtype=np.int64)
        centre_of[np.concatenate(clusters)] = np.repeat(centre, [c.size for c in clusters])
        for chunk, values in chunks():
            a, b = chunk[:, 0], chunk[:, 1]
            to_a, to_b = centre_of[b] == a, centre_of[a] == b
            cosine[b[to_a]] = values[to_a]
            cosine[a[to_b]] = values[to_b]
        cosine[centre] = 1.0
    return Members(centre, cosine, exact)
