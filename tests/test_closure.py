"""The pairs inside found groups, checked: pair recall that does not hang on one seed."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.typing import NDArray

from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import Corpus, Settings, corpus_from_texts
from simhash_cli.core.pipeline import dedupe
from simhash_cli.core.verify import cosines
from simhash_cli.core.verify.cosines import UnitRows


def family_corpus(seed: int = 5) -> list[str]:
    """One family of 150 edited copies of a text (pairs between copies from cosine 0.85 to
    0.97, many near 0.9) among 600 unrelated texts."""
    rng = np.random.default_rng(seed)
    vocabulary = 20_000
    base = rng.integers(0, vocabulary, 250)
    texts = []
    for _ in range(150):
        copy = base.copy()
        changed = rng.choice(base.size, int(rng.integers(5, 20)), replace=False)
        copy[changed] = rng.integers(vocabulary, 2 * vocabulary, changed.size)
        texts.append(" ".join(f"w{w}" for w in copy))
    for _ in range(600):
        texts.append(" ".join(f"w{w}" for w in rng.integers(0, vocabulary, 250)))
    order = rng.permutation(len(texts))
    return [texts[k] for k in order.tolist()]


def truth_of(docs: Corpus) -> set[tuple[int, int]]:
    every = dedupe(docs, DedupeConfig(blocks=64, max_candidates=None, group_pairs=0))
    return set(map(tuple, every.pairs.pairs.tolist()))


def test_recall_is_at_least_099_at_every_one_of_ten_seeds_with_precision_1() -> None:
    texts = family_corpus()
    truth = truth_of(corpus_from_texts(texts))
    assert len(truth) > 5_000
    alone, closed = [], []
    for seed in range(10):
        docs = corpus_from_texts(texts, Settings(seed=seed))
        # The schemes a seed can split (the pilot would compare every pair of so few).
        alone_config = DedupeConfig(group_pairs=0, pilot=False)
        before = set(map(tuple, dedupe(docs, alone_config).pairs.pairs.tolist()))
        result = dedupe(docs, DedupeConfig(pilot=False))
        found = set(map(tuple, result.pairs.pairs.tolist()))
        assert found <= truth  # precision 1.0: every pair found is at exact cosine >= 0.9
        alone.append(len(before & truth) / len(truth))
        closed.append(len(found & truth) / len(truth))
        assert result.closure is not None and result.closure.bounded_groups == 0
    assert min(closed) >= 0.99
    assert min(alone) < min(closed)  # the candidates alone miss more at some seed


def test_groups_too_large_for_the_budget_keep_their_candidates_and_are_counted() -> None:
    docs = corpus_from_texts(family_corpus())
    result = dedupe(docs, DedupeConfig(group_pairs=1_000, pilot=False))
    closure = result.closure
    assert closure is not None
    assert closure.bounded_groups >= 1 and closure.bounded_documents >= 150
    assert closure.limit == 1_000 and closure.checked <= 1_000
    alone = dedupe(docs, DedupeConfig(group_pairs=0, pilot=False))
    assert alone.closure is None
    assert len(result.pairs) == len(alone.pairs) + closure.found


def test_groups_of_two_cost_nothing_of_the_budget() -> None:
    """Many pairs alone and one group of three: the budget of three pairs closes the group."""
    texts = []
    rng = np.random.default_rng(3)
    for _ in range(40):  # forty pairs of copies
        words = " ".join(f"w{w}" for w in rng.integers(0, 50_000, 200))
        texts += [words, words + " extra"]
    base = rng.integers(0, 50_000, 200)
    for changed in (0, 10, 20):  # a group of three near-duplicates
        copy = base.copy()
        copy[:changed] = rng.integers(50_000, 60_000, changed)
        texts.append(" ".join(f"w{w}" for w in copy))
    result = dedupe(corpus_from_texts(texts), DedupeConfig(group_pairs=3, max_distance=20))
    assert result.closure is not None
    assert result.closure.groups == 1 and result.closure.bounded_groups == 0


def test_a_dedupe_makes_its_documents_unit_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pilot, the verifier and the groups' pairs all read the one set of unit scales of
    the corpus (a pass over every row of a million documents costs seconds and its chunk's
    memory); a sample of pairs scales its own rows only."""
    docs = corpus_from_texts(family_corpus())
    whole: list[int] = []
    scales = cosines.unit_scales

    def counted(weights: sp.csr_array, order: NDArray[np.int64] | None = None) -> UnitRows:
        if weights is docs.weights:  # all of them (a sample's rows are a matrix of their own)
            whole.append(weights.shape[0])
        return scales(weights, order)

    monkeypatch.setattr(cosines, "unit_scales", counted)
    piloted = dedupe(docs, DedupeConfig())
    assert piloted.pilot is not None and whole == [len(docs)]
    docs = corpus_from_texts(family_corpus())
    whole.clear()
    grouped = dedupe(docs, DedupeConfig(group_pairs=20_000, pilot=False))
    assert grouped.closure is not None and grouped.closure.checked > 0
    assert whole == [len(docs)]
