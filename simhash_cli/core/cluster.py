"""Kept pairs -> clusters: the connected components of the near-duplicate graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse.csgraph import connected_components

__all__ = ["cluster_labels", "clusters", "clusters_of_labels"]


def cluster_labels(pairs: NDArray[np.int64], n_docs: int) -> NDArray[np.int64]:
    """Component label of every document; labels number components by their smallest member.

    Args:
        pairs: (k, 2) int64 edges.
        n_docs: number of documents (vertices).

    Returns:
        int64 (n_docs,).
    """
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
