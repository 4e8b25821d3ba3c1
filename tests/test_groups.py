"""Clusters a person can act on: a representative per cluster, every member within the threshold
of it (representative clustering), or chains (components)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from simhash_cli.core.clusters import groups
from simhash_cli.core.clusters.groups import Clustering, centrality_rank, group, rank_of
from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import corpus_from_texts
from simhash_cli.core.pipeline import dedupe, group_pairs_of
from simhash_cli.core.verify.cosines import ScoredPairs, Verify, cosine_pairs


def edges_of(
    pairs: NDArray[np.int64], cosine: NDArray[np.float64], chunk: int = 1_000_000
) -> groups.Edges:
    def passes() -> Iterator[tuple[NDArray[np.int64], NDArray[np.float64]]]:
        for start in range(0, pairs.shape[0], chunk):
            yield pairs[start : start + chunk], cosine[start : start + chunk]

    return passes


def greedy(pairs: NDArray[np.int64], n: int, rank: NDArray[np.int64]) -> list[int]:
    """The definition, one document at a time: each document's representative (-1: none)."""
    neighbours: list[set[int]] = [set() for _ in range(n)]
    for a, b in pairs.tolist():
        neighbours[a].add(b)
        neighbours[b].add(a)
    placed: dict[int, int] = {}
    heads = []
    for doc in sorted(range(n), key=lambda d: int(rank[d])):
        if doc in placed or not neighbours[doc]:
            continue
        placed[doc] = doc
        heads.append(doc)
        for other in neighbours[doc]:
            placed.setdefault(other, -2)
    head_set = set(heads)
    owner = [-1] * n
    for doc, how in placed.items():
        if how == doc:
            owner[doc] = doc
        else:  # the most preferred representative it is flagged with
            owner[doc] = min(neighbours[doc] & head_set, key=lambda h: int(rank[h]))
    sizes = np.bincount([o for o in owner if o >= 0], minlength=n)
    return [o if o >= 0 and sizes[o] >= 2 else -1 for o in owner]


def owners(found: groups.Groups, n: int) -> list[int]:
    owner = np.full(n, -1, dtype=np.int64)
    for members, kept in zip(found.clusters, found.representative.tolist(), strict=True):
        owner[members] = kept
    listed: list[int] = owner.tolist()
    return listed


def test_the_default_preference_is_the_most_and_closest_pairs_then_input_order() -> None:
    pairs = np.array([[0, 1], [1, 2], [1, 3], [4, 5]])
    cosine = np.array([0.9, 0.95, 0.92, 0.99])
    rank = centrality_rank(edges_of(pairs, cosine), 6)
    assert np.argsort(rank).tolist() == [1, 4, 5, 2, 3, 0]
    # Chunks add up as one pass.
    assert np.array_equal(centrality_rank(edges_of(pairs, cosine, chunk=1), 6), rank)


def test_a_chain_whose_ends_differ_is_split_around_representatives() -> None:
    # 0 - 1 - 2 - 3 - 4: neighbours are near-duplicates, the ends are not.
    pairs = np.array([[0, 1], [1, 2], [2, 3], [3, 4]])
    cosine = np.array([0.95, 0.97, 0.96, 0.91])
    found = group(edges_of(pairs, cosine), 6, kind=Clustering.REPRESENTATIVE, exact=True)
    # 2 is the most central; 1 and 3 join it; 0 and 4 have no unplaced neighbour left.
    assert [c.tolist() for c in found.clusters] == [[1, 2, 3]]
    assert found.representative.tolist() == [2]
    assert found.cosine[[1, 2, 3]].tolist() == [0.97, 1.0, 0.96]
    assert found.duplicate_of()[[1, 2, 3]].tolist() == [2, -1, 2]
    assert found.ordered(0).tolist() == [2, 1, 3]
    chains = group(edges_of(pairs, cosine), 6, kind=Clustering.COMPONENTS, exact=True)
    assert [c.tolist() for c in chains.clusters] == [[0, 1, 2, 3, 4]]
    assert chains.representative.tolist() == [2]
    assert np.isnan(chains.cosine[[0, 4, 5]]).all()  # not flagged with the one kept
    assert chains.ordered(0).tolist() == [2, 1, 3, 0, 4]


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(2, 40),
    raw=st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=160),
    order=st.randoms(use_true_random=False),
    chunk=st.integers(1, 50),
    stall=st.booleans(),
    streamed=st.booleans(),
)
def test_representatives_are_the_greedy_choice_in_order_of_preference(
    n: int,
    raw: list[tuple[int, int]],
    order: object,
    chunk: int,
    stall: bool,
    streamed: bool,
) -> None:
    pairs = np.array([(min(a, b), max(a, b)) for a, b in raw if a != b and a < n and b < n])
    pairs = np.unique(pairs.reshape(-1, 2), axis=0).astype(np.int64)
    cosine = np.linspace(0.9, 1.0, pairs.shape[0])
    ranking = list(range(n))
    order.shuffle(ranking)  # type: ignore[attr-defined]
    rank = rank_of(np.array(ranking, dtype=np.int64))
    # Rounds, the one-at-a-time pass and rounds over the pairs where they are held all agree.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(groups, "MIN_PROGRESS", 0.9 if stall else 0.0)
        patch.setattr(groups, "IN_MEMORY_EDGES", 2 if streamed else 10**9)
        found = group(
            edges_of(pairs, cosine, chunk),
            n,
            kind=Clustering.REPRESENTATIVE,
            exact=True,
            rank=rank,
        )
    assert owners(found, n) == greedy(pairs, n, rank)
    flagged = {tuple(p) for p in pairs.tolist()}
    for members, kept in zip(found.clusters, found.representative.tolist(), strict=True):
        assert all((min(m, kept), max(m, kept)) in flagged for m in members.tolist() if m != kept)
        assert int(rank[kept]) == int(rank[members].min())  # the most preferred member
        assert not np.isnan(found.cosine[members]).any()


def test_a_long_chain_in_order_of_preference_completes() -> None:
    n = 200_000
    pairs = np.stack((np.arange(n - 1), np.arange(1, n)), axis=1)
    found = group(
        edges_of(pairs, np.ones(n - 1)),
        n,
        kind=Clustering.REPRESENTATIVE,
        exact=True,
        rank=np.arange(n, dtype=np.int64),
    )
    assert len(found.clusters) == n // 2
    assert found.representative[:3].tolist() == [0, 2, 4]


def paraphrase_chain(length: int, seed: int, words: int = 300, step: int = 12) -> list[str]:
    """Each text the one before with ``step`` words replaced: neighbours alike, ends far apart."""
    rng = np.random.default_rng(seed)
    text = rng.integers(0, 20_000, words)
    chain = []
    for _ in range(length):
        chain.append(" ".join(f"w{w}" for w in text))
        text = text.copy()
        text[rng.choice(words, step, replace=False)] = rng.integers(20_000, 40_000, step)
    return chain


def test_no_member_is_below_the_threshold_with_the_one_kept() -> None:
    texts = [t for seed in range(4) for t in paraphrase_chain(12, seed)]
    docs = corpus_from_texts(texts)
    assert docs.weights is not None
    result = dedupe(docs, DedupeConfig(threshold=0.9))
    assert result.groups.kind is Clustering.REPRESENTATIVE and result.clusters
    for number, members in enumerate(result.clusters):
        kept = int(result.groups.representative[number])
        others = members[members != kept]
        pairs = np.stack((np.full(others.size, kept), others), axis=1)
        assert (cosine_pairs(docs.weights, pairs) >= 0.9 - 1e-9).all()
        assert np.allclose(result.groups.cosine[others], cosine_pairs(docs.weights, pairs))
    # The same pairs as connected components: the chains, with ends below the threshold.
    chains = group_pairs_of(result.pairs, len(docs), DedupeConfig(clustering=Clustering.COMPONENTS))
    assert len(chains.clusters) == 4 and len(result.clusters) > 4
    below = 0
    for number, members in enumerate(chains.clusters):
        kept = int(chains.representative[number])
        others = members[members != kept]
        pairs = np.stack((np.full(others.size, kept), others), axis=1)
        below += int((cosine_pairs(docs.weights, pairs) < 0.9).sum())
    assert below > 0


def test_groups_by_estimate_carry_estimated_cosines() -> None:
    pairs = np.array([[0, 1], [1, 2]])
    scored = ScoredPairs(
        pairs, np.zeros(2, dtype=np.int64), np.array([0.93, 0.95]), np.full(2, np.nan)
    )
    config = DedupeConfig(verify=Verify.ESTIMATE)
    found = group_pairs_of(scored, 3, config)
    assert not found.exact
    assert found.representative.tolist() == [1]
    assert found.cosine.tolist() == [0.93, 1.0, 0.95]
