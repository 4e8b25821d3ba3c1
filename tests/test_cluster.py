"""Clusters: connected components of the kept pairs, deterministic numbering."""

from __future__ import annotations

import numpy as np

from simhash_cli import cluster_labels, clusters


def test_components_are_transitive_and_ordered_by_smallest_member() -> None:
    pairs = np.array([[5, 6], [0, 6], [2, 3]], dtype=np.int64)
    groups = clusters(pairs, 8)
    assert [g.tolist() for g in groups] == [[0, 5, 6], [2, 3]]
    labels = cluster_labels(pairs, 8)
    assert labels.tolist() == [0, 1, 2, 2, 3, 0, 0, 4]


def test_no_pairs_no_clusters() -> None:
    assert clusters(np.empty((0, 2), dtype=np.int64), 3) == []
    assert clusters(np.empty((0, 2), dtype=np.int64), 0) == []
