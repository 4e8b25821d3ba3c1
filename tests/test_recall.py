"""MinHash candidates in dedupe, against brute force; the run's measured recall and advice."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import Corpus, Settings, corpus_from_texts
from simhash_cli.core.pipeline import dedupe
from simhash_cli.core.search import allpairs, blocking, pilot, planner
from simhash_cli.core.search.background import Background
from simhash_cli.core.search.pilot import Pilot
from simhash_cli.core.search.planner import survey_for
from simhash_cli.core.search.pricing import Scheme, survey
from simhash_cli.core.search.recall import missed
from simhash_cli.core.sketch.fingerprint import feature_keys
from simhash_cli.core.sketch.minhash import signatures
from simhash_cli.core.verify.cosines import Verify, cosine_pairs
from simhash_cli.io.sinks.records import recall_of
from simhash_cli.io.sinks.summary import recall_line

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


def test_a_named_scheme_states_the_recall_it_measured_on_every_pair() -> None:
    """600 documents fit the pilot's budget whole: the recall of a scheme the user names is
    the share of every pair at the threshold the run found, exactly."""
    docs: Corpus = corpus_from_texts(families(150, seed=1))
    truth = dedupe(docs, DedupeConfig(blocks=64, max_candidates=None))  # every pair
    strict = dedupe(docs, DedupeConfig(blocks=2, group_pairs=0))
    true_recall = len(strict.pairs) / len(truth.pairs)
    assert true_recall < 0.8
    measured = strict.measured_recall
    assert measured is not None and measured.exact and strict.unmeasured is None
    assert measured.value == pytest.approx(true_recall, abs=1e-12)
    assert measured.pairs == len(truth.pairs)
    gone = missed(measured, strict.pilot)
    assert gone.exact and gone.value == len(truth.pairs) - len(strict.pairs)
    # The advice is priced on the same pairs, and finds what it says.
    assert strict.advice is not None and strict.advice.recall.value >= 0.95
    advised = strict.advice.assessment.scheme
    better = dedupe(
        docs,
        DedupeConfig(
            blocks=advised.blocks if advised.kind == "blocks" else "every",
            max_distance=advised.max_distance,
            minhash=None if advised.rows is None else (advised.blocks, advised.rows),
            group_pairs=0,
        ),
    )
    assert len(better.pairs) / len(truth.pairs) >= strict.advice.recall.low - 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_sampled_pilot_measures_a_named_scheme_within_its_interval(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """A pilot of a fraction of the documents: the share it measures is near the truth and
    its interval holds it, for a scheme that finds about half of the pairs."""
    docs: Corpus = corpus_from_texts(families(150, seed=1), Settings(seed=seed))
    assert docs.weights is not None
    truth = dedupe(docs, DedupeConfig(blocks="every"))
    every = allpairs.product_work(docs.weights)
    monkeypatch.setattr(planner, "PILOT_WORK", every // 3)
    monkeypatch.setattr(planner, "PILOT_PER_ENTRY", 0)
    monkeypatch.setattr(planner, "GROWN_WORK", 0)  # no floor of its own
    strict = dedupe(docs, DedupeConfig(blocks=2, group_pairs=0))
    assert strict.pilot is not None and not strict.pilot.complete
    measured = strict.measured_recall
    assert measured is not None and not measured.exact
    true_recall = len(strict.pairs) / len(truth.pairs)
    assert measured.low <= true_recall <= measured.high
    assert measured.value == pytest.approx(true_recall, abs=0.1)
    gone = missed(measured, strict.pilot)
    true_missed = len(truth.pairs) - len(strict.pairs)
    assert gone.low <= true_missed <= gone.high


def test_with_the_pairs_inside_groups_the_measure_counts_every_pair_found() -> None:
    docs: Corpus = corpus_from_texts(families(150, seed=1))
    truth = dedupe(docs, DedupeConfig(blocks=64, max_candidates=None))
    alone = dedupe(docs, DedupeConfig(blocks=2, group_pairs=0))
    closed = dedupe(docs, DedupeConfig(blocks=2))
    assert closed.closure is not None and closed.closure.found > 0
    assert len(closed.pairs) == len(alone.pairs) + closed.closure.found
    flagged = set(map(tuple, closed.pairs.pairs.tolist()))
    assert flagged <= set(map(tuple, truth.pairs.pairs.tolist()))  # precision 1.0
    assert alone.measured_recall is not None and closed.measured_recall is not None
    assert closed.measured_recall.value > alone.measured_recall.value
    assert closed.measured_recall.value == pytest.approx(len(flagged) / len(truth.pairs))


def test_where_nothing_is_measured_no_number_stands_in() -> None:
    docs: Corpus = corpus_from_texts(families(40, seed=3))
    for config, why in [
        (DedupeConfig(verify=Verify.ESTIMATE), "--verify estimate"),
        (DedupeConfig(blocks=4, pilot=False), "--no-pilot"),
    ]:
        result = dedupe(docs, config)
        assert result.measured_recall is None
        assert result.unmeasured is not None and why in result.unmeasured
        assert recall_of(result) is None
        assert recall_line(result) == f"recall not measured: {result.unmeasured}"
    every = dedupe(docs, DedupeConfig(blocks="every"))
    assert every.measured_recall is not None and every.measured_recall.value == 1.0
    assert recall_line(every) == "recall 1.00: every pair was compared, none was missed"


def test_the_planner_prices_minhash_on_the_pilot_and_never_on_the_bound() -> None:
    docs = corpus_from_texts(families(200, seed=2))
    copies = blocking.collapse(docs.fingerprints, 64)
    found = planner.pilot_for(docs, DedupeConfig(), copies)
    assert found is not None and found.usable
    judged = survey_for(docs, threshold=0.9, max_candidates=None, pilot=found)
    kinds = {a.scheme.kind for a in judged.assessments}
    assert "minhash" in kinds
    for assessment in judged.assessments:
        if assessment.scheme.kind == "minhash":
            share = found.share(found.chances(assessment.scheme, 64)).value
            assert assessment.recall == pytest.approx(share)
    vectors_only = survey_for(docs, threshold=0.9, max_candidates=None, minhash=False)
    assert "minhash" not in {a.scheme.kind for a in vectors_only.assessments}
    # Without a pilot that prices it, the word sets' overlap is unknown: no MinHash.
    unpriced = survey_for(docs, threshold=0.9, max_candidates=None)
    assert "minhash" not in {a.scheme.kind for a in unpriced.assessments}


def weak_pilot(worth: int) -> Pilot:
    """A sampled pilot of 1,000 documents whose pairs are worth ``worth`` independent ones
    (each drawn by its own anchor), at cosine 0.92 and word-set Jaccard 0.5."""
    anchors = np.arange(0, 1000, 10, dtype=np.int64)
    pairs = np.stack((anchors[:worth], anchors[:worth] + 1), axis=1)
    return Pilot(
        threshold=0.9,
        n_docs=1000,
        anchors=anchors,
        pairs=pairs,
        anchor=np.arange(worth, dtype=np.int64),
        cosine=np.full(worth, 0.92),
        hamming=np.full(worth, 5, dtype=np.int64),
        jaccard=np.full(worth, 0.5),
        work=1,
    )


def test_a_pilot_short_of_its_goal_still_prices_the_schemes_and_a_tiny_one_does_not() -> None:
    """A pilot that grew to fewer than MIN_EFFECTIVE pairs within its budget (a million prose
    records: 78 pairs worth 24.9) prices the schemes, MinHash among them, with its pairs; one
    worth fewer than MIN_PRICED prices nothing (the fingerprint schemes at the threshold)."""
    background = Background(jaccard=np.full(50, 0.05))
    weak = weak_pilot(pilot.MIN_PRICED)
    assert weak.effective == pilot.MIN_PRICED < pilot.MIN_EFFECTIVE
    priced = survey(bits=64, threshold=0.9, n_docs=1000, background=background, pilot=weak)
    assert priced.priced and "minhash" in {a.scheme.kind for a in priced.assessments}
    tiny = weak_pilot(pilot.MIN_PRICED - 1)
    bound = survey(bits=64, threshold=0.9, n_docs=1000, background=background, pilot=tiny)
    assert not bound.priced and "minhash" not in {a.scheme.kind for a in bound.assessments}
    assert all(a.recall == a.scheme.probability(0.9, 64) for a in bound.assessments)
