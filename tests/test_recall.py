"""MinHash candidates in dedupe, against brute force; the run's recall estimate and advice."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import Corpus, Settings, corpus_from_texts
from simhash_cli.core.cosines import ScoredPairs, cosine_pairs
from simhash_cli.core.fingerprint import feature_keys
from simhash_cli.core.minhash import jaccard_pairs, signatures
from simhash_cli.core.planner import survey_for
from simhash_cli.core.recall import LEAST_CHANCE, RunRecall, advise, run_recall
from simhash_cli.core.schemes import Assessment, Scheme
from simhash_cli.core.search import dedupe

WORDS = [f"w{k}" for k in range(12)]


def texts_from(picks: list[list[int]]) -> list[str]:
    return [" ".join(WORDS[k] for k in doc) for doc in picks]


def shares_a_band(sig: np.ndarray, i: int, j: int, bands: int, rows: int) -> bool:
    return any(
        (sig[i, b * rows : (b + 1) * rows] == sig[j, b * rows : (b + 1) * rows]).all()
        for b in range(bands)
    )


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.lists(st.integers(0, 11), min_size=1, max_size=8), min_size=2, max_size=14),
    bands=st.integers(1, 6),
    rows=st.integers(1, 4),
    threshold=st.sampled_from([0.5, 0.7, 0.9]),
    seed=st.integers(0, 2**16),
)
def test_minhash_dedupe_finds_every_pair_that_shares_a_band_and_clears_the_threshold(
    picks: list[list[int]], bands: int, rows: int, threshold: float, seed: int
) -> None:
    docs = corpus_from_texts(texts_from(picks), Settings(seed=seed))
    config = DedupeConfig(
        minhash=(bands, rows), threshold=threshold, hamming_gate=False, group_pairs=0
    )
    result = dedupe(docs, config)
    assert docs.weights is not None
    sig = signatures(docs.weights, feature_keys(docs.features), slots=bands * rows, seed=seed)
    fps = [tuple(row) for row in docs.fingerprints.tolist()]
    first = {fp: fps.index(fp) for fp in fps}  # the document that stands for its copies
    expected = set()
    for i, j in itertools.combinations(range(len(docs)), 2):
        cosine = float(cosine_pairs(docs.weights, np.array([[i, j]]))[0])
        if cosine < threshold - 1e-9:
            continue
        if fps[i] == fps[j] or shares_a_band(sig, first[fps[i]], first[fps[j]], bands, rows):
            expected.add((i, j))
    assert {tuple(p) for p in result.pairs.pairs.tolist()} == expected
    assert result.scheme == Scheme.minhash(bands, rows)


def scored(pairs: list[tuple[int, int]], cosine: list[float]) -> ScoredPairs:
    n = len(pairs)
    return ScoredPairs(
        np.array(pairs, dtype=np.int64).reshape(-1, 2),
        np.zeros(n, np.int64),
        np.ones(n),
        np.array(cosine, dtype=np.float64),
    )


def test_a_scheme_predicts_its_own_estimate_and_the_estimate_weights_by_chance() -> None:
    docs = corpus_from_texts(["a b c d", "a b c e", "a b c d e f", "x y z"])
    four = Scheme("blocks", 4)
    kept = scored([(0, 1), (0, 2)], [0.9, 0.95])
    found = run_recall(docs, four, kept, 0.9)
    assert found is not None
    chance = np.maximum(four.probability(np.array([0.9, 0.95]), 64), LEAST_CHANCE)
    assert found.recall == pytest.approx(2 / float(np.sum(1 / chance)))
    assert found.predicted(four, 64) == pytest.approx(found.recall)
    assert found.rarely_below is None
    # A scheme that finds everything at these cosines is predicted to find all of them.
    assert found.predicted(Scheme("blocks", 32), 64) == pytest.approx(1.0, abs=1e-6)


def test_minhash_chances_come_from_the_sets_overlap() -> None:
    docs = corpus_from_texts(["a b c d", "a b c e", "a b c d e f g h", "x y z"])
    scheme = Scheme.minhash(4, 3)
    kept = scored([(0, 1), (0, 2)], [0.75, 0.7])
    found = run_recall(docs, scheme, kept, 0.7)
    assert found is not None and found.jaccard is not None
    assert docs.weights is not None
    assert found.jaccard.tolist() == pytest.approx([3 / 5, 4 / 8])
    assert found.jaccard.tolist() == pytest.approx(jaccard_pairs(docs.weights, kept.pairs).tolist())
    assert found.rarely_below is not None
    assert float(scheme.probability_at_jaccard(found.rarely_below)) == pytest.approx(LEAST_CHANCE)


def test_no_estimate_without_true_cosines() -> None:
    docs = corpus_from_texts(["a b", "a b"])
    assert run_recall(docs, Scheme("blocks", 4), scored([(0, 1)], [float("nan")]), 0.9) is None


def test_the_estimate_is_unbiased_over_many_runs() -> None:
    # Pairs with known chances of being found: over many simulated runs, the mean estimate
    # is the true share found.
    rng = np.random.default_rng(0)
    cosine = rng.uniform(0.9, 1.0, 400)
    scheme = Scheme("blocks", 4)
    chance = scheme.probability(cosine, 64)
    estimates, truths = [], []
    for _ in range(300):
        hit = rng.random(cosine.size) < chance
        weights = 1.0 / np.maximum(chance[hit], LEAST_CHANCE)
        estimates.append(hit.sum() / weights.sum())
        truths.append(hit.mean())
    assert np.mean(estimates) == pytest.approx(np.mean(truths), abs=0.02)


def test_advice_is_the_cheapest_scheme_predicted_to_reach_the_target() -> None:
    cosine = np.array([0.9, 0.9, 0.9])  # 8 blocks find 0.934 of such pairs, 16 all
    found = RunRecall(0.5, 3, 0, False, None, np.ones(3), cosine, None)
    judged = [
        Assessment(Scheme("blocks", 16), 1.0, 100.0, 500.0),
        Assessment(Scheme("blocks", 8), 0.93, 10.0, 50.0),
        Assessment(Scheme("blocks", 2), 0.05, 1.0, 5.0),
        Assessment(Scheme.minhash(16, 8), 0.96, 1.0, 1.0),  # needs sets: not predicted
    ]
    advice = advise(found, judged, bits=64, target=0.95)
    assert advice is not None
    assert advice.assessment.scheme == Scheme("blocks", 16)
    assert advice.recall >= 0.95


def families(n_families: int, seed: int) -> list[str]:
    """Documents of a few hundred words from a large vocabulary, each with a copy that has a
    few words replaced: prose-like pairs at cosine 0.85-0.99, unrelated documents far apart."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(n_families):
        words = rng.zipf(1.3, size=int(rng.integers(80, 200))) % 5000
        copy = words.copy()
        changed = rng.choice(copy.size, int(rng.integers(1, copy.size // 8)), replace=False)
        copy[changed] = rng.integers(5000, 6000, changed.size)
        texts += [" ".join(f"t{w}" for w in words), " ".join(f"t{w}" for w in copy)]
    return texts


def test_a_run_says_what_it_found_and_what_would_find_more() -> None:
    docs: Corpus = corpus_from_texts(families(300, seed=1))
    truth = dedupe(docs, DedupeConfig(blocks=64, max_candidates=None))  # every pair
    # Candidates only: the estimate is of what the scheme's candidates find.
    strict = dedupe(docs, DedupeConfig(blocks=2, group_pairs=0))
    assert strict.run_recall is not None
    true_recall = len(strict.pairs) / len(truth.pairs)
    assert true_recall < 0.8
    assert strict.run_recall.recall == pytest.approx(true_recall, abs=0.1)
    assert strict.advice is not None and strict.advice.recall >= 0.95
    advised = strict.advice.assessment.scheme
    better = dedupe(
        docs,
        DedupeConfig(
            blocks=advised.blocks if advised.kind == "blocks" else "auto",
            max_distance=advised.max_distance,
            minhash=None if advised.rows is None else (advised.blocks, advised.rows),
            group_pairs=0,
        ),
    )
    assert len(better.pairs) / len(truth.pairs) >= 0.9


def test_with_the_pairs_inside_groups_the_estimate_counts_every_pair_found() -> None:
    docs: Corpus = corpus_from_texts(families(300, seed=1))
    truth = dedupe(docs, DedupeConfig(blocks=64, max_candidates=None))
    alone = dedupe(docs, DedupeConfig(blocks=2, group_pairs=0))
    closed = dedupe(docs, DedupeConfig(blocks=2))
    assert closed.closure is not None and closed.closure.found > 0
    assert len(closed.pairs) == len(alone.pairs) + closed.closure.found
    flagged = set(map(tuple, closed.pairs.pairs.tolist()))
    assert flagged <= set(map(tuple, truth.pairs.pairs.tolist()))  # precision 1.0
    assert alone.run_recall is not None and closed.run_recall is not None
    # The same pairs estimate how many there are; more of them are found.
    assert closed.run_recall.pairs == alone.run_recall.pairs
    assert closed.run_recall.recall > alone.run_recall.recall
    # Of the pairs it speaks of (those the scheme finds with some chance), it never claims
    # much more than were found.
    below = closed.run_recall.rarely_below
    assert below is not None
    speaks_of = set(map(tuple, truth.pairs.pairs[truth.pairs.cosine >= below].tolist()))
    assert closed.run_recall.recall <= len(speaks_of & flagged) / len(speaks_of) + 0.05


def test_the_planner_prices_minhash_on_the_corpus_sets() -> None:
    docs = corpus_from_texts(families(200, seed=2))
    judged = survey_for(docs, threshold=0.9, max_candidates=None)
    kinds = {a.scheme.kind for a in judged.assessments}
    assert "minhash" in kinds
    for assessment in judged.assessments:
        if assessment.scheme.kind == "minhash":
            assert assessment.recall >= 0.95
    vectors_only = survey_for(docs, threshold=0.9, max_candidates=None, minhash=False)
    assert "minhash" not in {a.scheme.kind for a in vectors_only.assessments}
