"""Clusters as a person reads them: the central member and every member's cosine to it."""

from __future__ import annotations

import numpy as np

from simhash_cli.core.cosines import ScoredPairs, Verify
from simhash_cli.core.members import centres, cluster_members


def test_the_centre_is_the_member_with_the_most_and_closest_pairs() -> None:
    clusters = [np.array([0, 1, 2, 3]), np.array([4, 5])]
    pairs = np.array([[0, 1], [1, 2], [1, 3], [4, 5]])
    cosines = np.array([0.9, 0.95, 0.92, 0.99])
    assert centres(clusters, [(pairs, cosines)], 6).tolist() == [1, 4]  # a tie: the first
    # Two chunks add up as one.
    parts = [(pairs[:2], cosines[:2]), (pairs[2:], cosines[2:])]
    assert centres(clusters, parts, 6).tolist() == [1, 4]
    assert centres([], [(pairs, cosines)], 6).tolist() == []


def test_members_carry_the_cosine_of_their_pair_with_the_centre() -> None:
    clusters = [np.array([0, 1, 2, 3]), np.array([5, 6])]
    pairs = np.array([[0, 1], [1, 2], [2, 3], [5, 6]])
    exact = np.array([0.95, 0.97, 0.91, 0.99])
    estimated = np.array([0.90, 0.96, 0.95, 0.98])
    scored = ScoredPairs(pairs, np.zeros(4, dtype=np.int64), estimated, exact)
    members = cluster_members(7, clusters, scored, Verify.EXACT)
    assert members.exact and members.centre.tolist() == [1, 5]
    # 0 and 2 are paired with the centre 1; 3 only through 2: no cosine of its own to it.
    assert members.cosine[[0, 1, 2, 5, 6]].tolist() == [0.95, 1.0, 0.97, 1.0, 0.99]
    assert np.isnan(members.cosine[[3, 4]]).all()
    assert members.ordered(0, clusters[0]).tolist() == [1, 2, 0, 3]  # centre, closest, none
    by_estimate = cluster_members(7, clusters, scored, Verify.ESTIMATE)
    assert not by_estimate.exact and by_estimate.centre.tolist() == [2, 5]
    assert by_estimate.cosine[[1, 3]].tolist() == [0.96, 0.95]
