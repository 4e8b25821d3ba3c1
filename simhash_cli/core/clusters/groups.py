"""Flagged pairs -> clusters a person can act on: each with a representative (the document kept)
and every member's cosine to it.

Two clusterings, named by :class:`Clustering`:

``representative`` (the default): every member of a cluster is itself a flagged near-duplicate
of the cluster's representative, so that "keep one, remove the rest" never removes a document
that is not within the threshold of the one kept. The representatives are chosen greedily in
order of preference (the most central document first, or the order of a keep rule): the most
preferred document that is not yet placed becomes a representative, and every unplaced document
flagged with it joins it; then the next. That is the lexicographically first maximal
independent set of the near-duplicate graph; it is found in rounds over all the pairs at once
(a document becomes a representative when no unplaced neighbour is preferred to it), and the
few documents left after the rounds stop making progress (long chains in order of preference)
one at a time. A member flagged with several representatives joins the most preferred of them,
so a representative is always the most preferred member of its cluster.

``components``: the connected components of the graph, as single-linkage clustering gives them.
A chain of paraphrases whose ends differ becomes one cluster; the representative is its most
preferred member, and a member that is not a flagged pair with it has no cosine to it (NaN).

Preference without a keep rule is centrality: the document whose flagged pairs add up to the
largest cosine (the most, and the closest, near-duplicates), the first in input order on a tie.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..config import Clustering
from . import cluster

__all__ = ["Clustering", "Edges", "Groups", "centrality_rank", "group"]

Edges = Callable[[], Iterable[tuple[NDArray[np.int64], NDArray[np.float64]]]]
"""A fresh pass over the flagged pairs, chunk by chunk: (k, 2) int64 pairs with their cosines
(k,) float64 (true or estimated, as the run verified; NaN counts as 0 for centrality)."""

IN_MEMORY_EDGES = 20_000_000
"""Undecided pairs are gathered into memory (and compacted every round) once there are at most
this many; until then each round is one more pass over the pairs wherever they are held."""

MIN_PROGRESS = 0.02
"""A round that places less than this share of the undecided documents hands the rest to the
one-at-a-time pass (a chain in order of preference places two a round)."""


@dataclass(frozen=True)
class Groups:
    """Every clustered document's place in its cluster.

    Attributes:
        kind: the clustering.
        clusters: each cluster's members, ascending; clusters ordered by their smallest member.
        representative: (n_clusters,) int64, the member each cluster keeps.
        cosine: (n_docs,) float64, each document's cosine to its cluster's representative (1
            for the representative itself; NaN outside clusters, or, for components, where the
            two are not a flagged pair).
        exact: whether ``cosine`` holds true cosines (else estimates from fingerprints).
    """

    kind: Clustering
    clusters: list[NDArray[np.int64]]
    representative: NDArray[np.int64]
    cosine: NDArray[np.float64]
    exact: bool

    def ordered(self, number: int) -> NDArray[np.int64]:
        """Cluster ``number``'s members: its representative first, then by cosine to it,
        highest first (input order on a tie)."""
        members, kept = self.clusters[number], self.representative[number]
        others = members[members != kept]
        by_cosine = others[np.argsort(-np.nan_to_num(self.cosine[others], nan=-2.0), kind="stable")]
        return np.concatenate(([kept], by_cosine)).astype(np.int64)

    def duplicate_of(self) -> NDArray[np.int64]:
        """(n_docs,) int64: each member's representative; -1 for a representative and outside
        clusters."""
        of = np.full(self.cosine.size, -1, dtype=np.int64)
        if self.clusters:
            of[np.concatenate(self.clusters)] = np.repeat(
                self.representative, [c.size for c in self.clusters]
            )
            of[self.representative] = -1
        return of


def centrality_rank(edges: Edges, n_docs: int) -> NDArray[np.int64]:
    """Each document's place in the default order of preference: the largest sum of cosines
    over its flagged pairs first, input order on a tie (0 = most preferred)."""
    strength = np.zeros(n_docs, dtype=np.float64)
    for pairs, cosine in edges():
        weight = np.nan_to_num(cosine, nan=0.0)
        strength += np.bincount(pairs[:, 0], weight, minlength=n_docs)
        strength += np.bincount(pairs[:, 1], weight, minlength=n_docs)
    return rank_of(np.lexsort((np.arange(n_docs), -strength)))


def rank_of(order: NDArray[np.int64]) -> NDArray[np.int64]:
    """The inverse permutation: ``rank[order[k]] = k``."""
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size, dtype=np.int64)
    return rank


def group(
    edges: Edges,
    n_docs: int,
    *,
    kind: Clustering,
    exact: bool,
    rank: NDArray[np.int64] | None = None,
    components: Sequence[NDArray[np.int64]] | None = None,
) -> Groups:
    """Clusters of the flagged pairs, by ``kind`` (see the module's docstring).

    Args:
        edges: passes over the flagged pairs (each pair once).
        n_docs: the number of documents.
        kind: the clustering.
        exact: whether the cosines are true ones.
        rank: each document's place in the order of preference, a permutation of
            ``range(n_docs)`` (0 = most preferred); None: :func:`centrality_rank`.
        components: the connected components, when already known (``components`` only).
    """
    rank = centrality_rank(edges, n_docs) if rank is None else rank
    if kind is Clustering.COMPONENTS:
        if components is None:
            pairs = [chunk for chunk, _ in edges()]
            joined = np.concatenate(pairs) if pairs else np.empty((0, 2), dtype=np.int64)
            components = cluster.clusters(joined, n_docs)
        clusters = list(components)
        representative = _most_preferred(clusters, rank)
    else:
        chosen = _representatives(edges, n_docs, rank)
        clusters, representative = _joined(edges, n_docs, rank, chosen)
    cosine = _cosines(edges, n_docs, clusters, representative)
    return Groups(kind, clusters, representative, cosine, exact)


def _most_preferred(
    clusters: Sequence[NDArray[np.int64]], rank: NDArray[np.int64]
) -> NDArray[np.int64]:
    """The member of each cluster that comes first in the order of preference."""
    if not clusters:
        return np.zeros(0, dtype=np.int64)
    members = np.concatenate(clusters)
    label = np.repeat(np.arange(len(clusters)), [c.size for c in clusters])
    order = np.lexsort((rank[members], label))
    _, first = np.unique(label[order], return_index=True)
    best: NDArray[np.int64] = members[order[first]]
    return best


_UNPLACED, _CHOSEN, _JOINED, _APART = 0, 1, 2, 3


def _representatives(edges: Edges, n_docs: int, rank: NDArray[np.int64]) -> NDArray[np.bool_]:
    """The greedy representatives: a document is one when no neighbour preferred to it is."""
    state = np.full(n_docs, _APART, dtype=np.int8)
    live_pairs = 0
    for pairs, _ in edges():
        state[pairs.ravel()] = _UNPLACED
        live_pairs += pairs.shape[0]
    # Rounds over the pairs where they are held, until few enough are left to gather here.
    while live_pairs > IN_MEMORY_EDGES and np.any(state == _UNPLACED):
        live_pairs = _round(lambda: (chunk for chunk, _ in edges()), state, rank)
    live = [chunk[_undecided(chunk, state)] for chunk, _ in edges()]
    pairs = np.concatenate(live) if live else np.empty((0, 2), dtype=np.int64)
    while True:
        before = int(np.count_nonzero(state == _UNPLACED))
        if before == 0:
            break
        _round(functools.partial(tuple, (pairs,)), state, rank)
        after = int(np.count_nonzero(state == _UNPLACED))
        pairs = pairs[_undecided(pairs, state)]
        if after and before - after < MIN_PROGRESS * before:
            _one_at_a_time(pairs, state, rank)
            break
    chosen: NDArray[np.bool_] = state == _CHOSEN
    return chosen


def _undecided(pairs: NDArray[np.int64], state: NDArray[np.int8]) -> NDArray[np.bool_]:
    both: NDArray[np.bool_] = (state[pairs[:, 0]] == _UNPLACED) & (state[pairs[:, 1]] == _UNPLACED)
    return both


def _round(
    passes: Callable[[], Iterable[NDArray[np.int64]]],
    state: NDArray[np.int8],
    rank: NDArray[np.int64],
) -> int:
    """One round: every unplaced document that no unplaced neighbour is preferred to becomes a
    representative, and its unplaced neighbours join it. Returns how many pairs were between
    unplaced documents at its start."""
    n = state.size
    best = np.full(n, n, dtype=np.int64)  # the best rank among each one's unplaced neighbours
    live = 0
    for chunk in passes():
        pairs = chunk[_undecided(chunk, state)]
        live += pairs.shape[0]
        np.minimum.at(best, pairs[:, 0], rank[pairs[:, 1]])
        np.minimum.at(best, pairs[:, 1], rank[pairs[:, 0]])
    chosen = (state == _UNPLACED) & (rank < best)
    for chunk in passes():
        a, b = chunk[:, 0], chunk[:, 1]
        joins_a, joins_b = chosen[b] & (state[a] == _UNPLACED), chosen[a] & (state[b] == _UNPLACED)
        state[a[joins_a & ~chosen[a]]] = _JOINED
        state[b[joins_b & ~chosen[b]]] = _JOINED
    state[chosen] = _CHOSEN
    return live


def _one_at_a_time(
    pairs: NDArray[np.int64], state: NDArray[np.int8], rank: NDArray[np.int64]
) -> None:
    """The greedy choice itself, for what the rounds left: in order of preference, an unplaced
    document becomes a representative and its unplaced neighbours join it."""
    n = state.size
    both = np.concatenate((pairs, pairs[:, ::-1]))
    graph = sp.csr_array(
        (np.ones(both.shape[0], dtype=np.int8), (both[:, 0], both[:, 1])), shape=(n, n)
    )
    indptr, indices = graph.indptr, graph.indices
    unplaced = np.flatnonzero(state == _UNPLACED)
    for doc in unplaced[np.argsort(rank[unplaced])].tolist():
        if state[doc] != _UNPLACED:
            continue
        state[doc] = _CHOSEN
        neighbours = indices[indptr[doc] : indptr[doc + 1]]
        state[neighbours[state[neighbours] == _UNPLACED]] = _JOINED


def _joined(
    edges: Edges, n_docs: int, rank: NDArray[np.int64], chosen: NDArray[np.bool_]
) -> tuple[list[NDArray[np.int64]], NDArray[np.int64]]:
    """Every other document of the graph joins the most preferred representative it is flagged
    with: the clusters (ascending, by smallest member) and their representatives."""
    best = np.full(n_docs, n_docs, dtype=np.int64)
    for pairs, _ in edges():
        a, b = pairs[:, 0], pairs[:, 1]
        to_a, to_b = chosen[a] & ~chosen[b], chosen[b] & ~chosen[a]
        np.minimum.at(best, b[to_a], rank[a[to_a]])
        np.minimum.at(best, a[to_b], rank[b[to_b]])
    by_rank = np.argsort(rank)
    owner = np.full(n_docs, -1, dtype=np.int64)
    placed = best < n_docs
    owner[placed] = by_rank[best[placed]]
    heads = np.flatnonzero(chosen)
    owner[heads] = heads
    # Label every cluster by its smallest member, as clusters_of_labels wants them.
    member = np.flatnonzero(owner >= 0)
    smallest = np.full(n_docs, n_docs, dtype=np.int64)
    np.minimum.at(smallest, owner[member], member)
    labels = np.arange(n_docs, dtype=np.int64)
    labels[member] = smallest[owner[member]]
    clusters = cluster.clusters_of_labels(labels)
    # Clusters come in the order of their labels (their smallest members).
    firsts = np.flatnonzero(np.bincount(labels, minlength=n_docs) >= 2)
    return clusters, owner[firsts]


def _cosines(
    edges: Edges,
    n_docs: int,
    clusters: Sequence[NDArray[np.int64]],
    representative: NDArray[np.int64],
) -> NDArray[np.float64]:
    """Each member's cosine to its representative, from their flagged pair."""
    cosine = np.full(n_docs, np.nan)
    if not clusters:
        return cosine
    kept_by = np.full(n_docs, -1, dtype=np.int64)
    kept_by[np.concatenate(clusters)] = np.repeat(representative, [c.size for c in clusters])
    for pairs, values in edges():
        a, b = pairs[:, 0], pairs[:, 1]
        to_a, to_b = kept_by[b] == a, kept_by[a] == b
        cosine[b[to_a]] = values[to_a]
        cosine[a[to_b]] = values[to_b]
    cosine[representative] = 1.0
    return cosine
