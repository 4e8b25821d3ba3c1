"""Kept pairs -> clusters: the connected components of the near-duplicate graph (in one
process by scipy, or in rounds of hooking when the edges stay spread over many)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["cluster_labels", "clusters", "clusters_of_labels", "hook_offers", "hooked"]


def cluster_labels(pairs: NDArray[np.int64], n_docs: int) -> NDArray[np.int64]:
    """Component label of every document; labels number components by their smallest member.

    Args:
        pairs: (k, 2) int64 edges.
        n_docs: number of documents (vertices).

    Returns:
        int64 (n_docs,).
    """
    # Imported here: scipy.sparse.csgraph brings scipy.linalg, a tenth of a second that
    # commands which never cluster (compare, fingerprint) do not pay.
    from scipy.sparse.csgraph import connected_components

    graph = sp.coo_array(
        (np.ones(pairs.shape[0], dtype=np.int8), (pairs[:, 0], pairs[:, 1])),
        shape=(n_docs, n_docs),
    )
    _, labels = connected_components(graph, directed=False)
    # Renumber by first appearance so that labels do not depend on scipy's traversal order.
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[labels]


def clusters(pairs: NDArray[np.int64], n_docs: int) -> list[NDArray[np.int64]]:
    """Clusters of two or more documents, each sorted, ordered by their smallest member."""
    return clusters_of_labels(cluster_labels(pairs, n_docs))


def clusters_of_labels(labels: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    """:func:`clusters` from component labels that grow with the components' smallest members
    (as :func:`cluster_labels` numbers them, or each component labelled by its smallest
    member)."""
    sizes = np.bincount(labels, minlength=1)
    members = np.flatnonzero(sizes[labels] >= 2)
    # Labels are numbered by smallest member, so sorting by label orders clusters the same way.
    ordered = members[np.argsort(labels[members], kind="stable")]
    return np.split(ordered, np.cumsum(sizes[sizes >= 2])[:-1]) if ordered.size else []


def hook_offers(
    edges: NDArray[np.int64], labels: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One round of Shiloach and Vishkin's hooking over some of the edges, when the edges are
    spread over many places (the dask engine's buckets): where an edge joins two trees, the
    larger root is offered the smaller.

    Args:
        edges: (k, 2) int64 pairs of documents.
        labels: (n,) int64 every document's current root.

    Returns:
        (roots, offers): each root offered something once, with the lowest offer it got.
    """
    first, second = labels[edges[:, 0]], labels[edges[:, 1]]
    apart = first != second
    roots = np.maximum(first[apart], second[apart])
    offers = np.minimum(first[apart], second[apart])
    order = np.lexsort((offers, roots))
    roots, offers = roots[order], offers[order]
    lowest = np.concatenate(([True], roots[1:] != roots[:-1])) if roots.size else roots.astype(bool)
    return roots[lowest], offers[lowest]


def hooked(
    labels: NDArray[np.int64], roots: NDArray[np.int64], offers: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Every root takes its lowest offer (of every place's :func:`hook_offers`), then every
    document follows its pointers to its new root (pointer jumping). Repeated until no edge
    joins two roots, each document's root is the smallest member of its component: labels as
    :func:`clusters_of_labels` takes them. A chain of 100,000 documents in random order takes
    11 rounds, not 100,000."""
    labels = labels.copy()
    np.minimum.at(labels, roots, offers)
    while True:
        jumped = labels[labels]
        if np.array_equal(jumped, labels):
            return labels
        labels = jumped
