"""Clusters as a person reads them: the central member and every member's cosine to it."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from simhash_cli.core.corpus import Settings, from_weights
from simhash_cli.core.cosines import Verify, cosine_pairs
from simhash_cli.core.members import centres, cluster_members
from simhash_cli.core.search import DedupeConfig, dedupe


def test_the_centre_is_the_member_with_the_most_and_closest_pairs() -> None:
    clusters = [np.array([0, 1, 2, 3]), np.array([4, 5])]
    pairs = np.array([[0, 1], [1, 2], [1, 3], [4, 5]])
    cosines = np.array([0.9, 0.95, 0.92, 0.99])
    assert centres(clusters, [(pairs, cosines)], 6).tolist() == [1, 4]  # a tie: the first
    # Two chunks add up as one.
    parts = [(pairs[:2], cosines[:2]), (pairs[2:], cosines[2:])]
    assert centres(clusters, parts, 6).tolist() == [1, 4]
    assert centres([], [(pairs, cosines)], 6).tolist() == []


def test_members_carry_their_true_cosine_to_the_centre() -> None:
    rng = np.random.default_rng(3)
    base = rng.integers(1, 5, size=40).astype(np.float64)
    rows = [base, base, base + np.eye(40)[0] * 3, base + np.eye(40)[1] * 2]
    rows += [rng.integers(0, 5, size=40).astype(np.float64) * (rng.random(40) < 0.3)]
    weights = sp.csr_array(np.array(rows))
    features = [f"w{i}" for i in range(40)]
    names = [str(i) for i in range(len(rows))]
    docs = from_weights(names, weights, features, Settings.of_vectors(), lambda _: None, [], "")
    result = dedupe(docs, DedupeConfig(max_distance=63, threshold=0.9))
    members = cluster_members(docs, result.clusters, result.pairs, Verify.EXACT)
    assert members.exact
    (cluster,) = [c for c in result.clusters if 0 in c]
    centre = int(members.centre[0])
    assert centre in cluster
    links = np.stack([cluster, np.full(cluster.size, centre)], axis=1)
    assert docs.weights is not None
    assert np.allclose(members.cosine[cluster], cosine_pairs(docs.weights, links))
    ordered = members.ordered(0, cluster)
    assert ordered[0] == centre and sorted(ordered.tolist()) == sorted(cluster.tolist())
    assert np.all(np.diff(members.cosine[ordered[1:]]) <= 0)  # closest first
    estimated = cluster_members(docs, result.clusters, result.pairs, Verify.ESTIMATE)
    assert not estimated.exact
    fingerprints = docs.fingerprints[:, 0]
    other = int(estimated.centre[0])
    distance = [int(fingerprints[m] ^ fingerprints[other]).bit_count() for m in cluster]
    assert np.allclose(estimated.cosine[cluster], np.cos(np.pi * np.array(distance) / 64))
