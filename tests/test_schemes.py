"""The planner: recall of each scheme at the threshold, expected work, the cheapest choice."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli import ParameterError, candidate_probability, within_probability
from simhash_cli.core.search.pricing import (
    Background,
    Scheme,
    sample_background,
    schemes_for,
    survey,
)


@given(
    bits=st.sampled_from([32, 64, 128]),
    threshold=st.floats(0.5, 0.99),
    n_docs=st.integers(2, 10**7),
    background=st.floats(-0.2, 0.8),
)
def test_the_choice_reaches_the_target_and_nothing_cheaper_does(
    bits: int, threshold: float, n_docs: int, background: float
) -> None:
    chosen = survey(
        bits=bits,
        threshold=threshold,
        n_docs=n_docs,
        background=Background(cosine=background),
        max_candidates=20_000_000,
    )
    reaching = [a for a in chosen.assessments if a.recall >= 0.95 and chosen.in_budget(a)]
    if chosen.chosen is None:
        assert reaching == []
        assert chosen.best_effort() in chosen.assessments
    else:
        assert chosen.chosen.recall >= 0.95
        assert chosen.chosen.cost == min(a.cost for a in reaching)


def test_recall_is_the_schemes_s_curve_at_the_threshold() -> None:
    judged = {a.scheme: a for a in survey(bits=64, threshold=0.9, n_docs=1000).assessments}
    assert judged[Scheme("blocks", 4)].recall == pytest.approx(
        float(candidate_probability(0.9, bits=64, blocks=4))
    )
    tables = next(a for s, a in judged.items() if s.max_distance == 3)
    assert tables.recall == pytest.approx(float(within_probability(0.9, bits=64, max_distance=3)))


def test_model_work_for_random_fingerprints() -> None:
    # Random fingerprints share a given 16-bit block with probability 2^-16.
    pairs = 1000 * 999 / 2
    assessment = next(
        a
        for a in survey(bits=64, threshold=0.9, n_docs=1000).assessments
        if a.scheme == Scheme("blocks", 4)
    )
    assert assessment.expected_candidates == pytest.approx(pairs * 4 * 2.0**-16)
    # 64 bits in 5 blocks: four of 13 bits and one of 12. C(5, 3) = 10 tables keyed by the 2
    # blocks they keep: 6 keys of 26 bits, 4 of 25.
    tables = Scheme("tables", 5, 3)
    work = Background(cosine=0.0).work(tables, 64)
    assert work == pytest.approx(6 * 2.0**-26 + 4 * 2.0**-25)
    assert tables.tables == math.comb(5, 3)


def test_sampled_work_matches_the_model_on_random_fingerprints() -> None:
    rng = np.random.default_rng(1)
    # 8-bit fingerprints: a 2-bit block is shared by chance a quarter of the time.
    fps = rng.integers(0, 256, size=(5000, 1), dtype=np.uint64)
    sampled = sample_background(fps, pairs=20_000)
    for scheme in (Scheme("blocks", 4), Scheme("tables", 4, 1)):
        assert sampled.work(scheme, 8) == pytest.approx(Background().work(scheme, 8), rel=0.1)


def test_the_chance_of_becoming_a_candidate_counts_each_pair_once() -> None:
    """``chance`` is the share of pairs compared at all: at most 1, at most ``work`` (which
    counts a pair once per block or table), equal to 1 - P(no block equal) on random
    fingerprints, and the same measured on a sample."""
    rng = np.random.default_rng(2)
    fps = rng.integers(0, 256, size=(5000, 1), dtype=np.uint64)
    sampled = sample_background(fps, pairs=20_000)
    for scheme in (Scheme("blocks", 4), Scheme("blocks", 8), Scheme("tables", 4, 1)):
        model = Background().chance(scheme, 8)
        assert 0 <= model <= min(1.0, Background().work(scheme, 8) + 1e-12)
        assert sampled.chance(scheme, 8) == pytest.approx(model, abs=0.02)
    assert Background().chance(Scheme("blocks", 4), 8) == pytest.approx(1 - (1 - 0.25) ** 4)
    assert Background().chance(Scheme("blocks", 8), 8) == pytest.approx(1 - 0.5**8)  # 1-bit
    plan = survey(bits=8, threshold=0.5, n_docs=8, documents=11)
    assert plan.all_documents == 11
    assert all(a.expected_pairs <= 28 for a in plan.assessments)


def test_labels_say_bit_and_bin_for_one() -> None:
    assert Scheme("blocks", 64).label(64) == "64 blocks of 1 bit"
    assert Scheme.minhash(3, 1).label(64) == "MinHash of feature sets, 3 bands of 1 bin"


def test_alike_documents_make_schemes_expensive() -> None:
    calm = survey(bits=64, threshold=0.9, n_docs=100_000, background=Background(cosine=0.0))
    alike = survey(bits=64, threshold=0.9, n_docs=100_000, background=Background(cosine=0.8))
    four = Scheme("blocks", 4)
    calm_cost, alike_cost = (
        next(a for a in p.assessments if a.scheme == four).expected_candidates
        for p in (calm, alike)
    )
    assert alike_cost > 1000 * calm_cost


def test_schemes_include_the_page_and_bounded_tables() -> None:
    schemes = schemes_for(64, 10_000)
    assert {Scheme("blocks", m) for m in (1, 4, 8)} <= set(schemes)
    assert all(s.tables <= 256 for s in schemes)
    assert all(64 % s.blocks == 0 for s in schemes if s.kind == "blocks")


def test_bad_arguments() -> None:
    with pytest.raises(ParameterError, match="threshold must be a cosine"):
        survey(bits=64, threshold=1.5, n_docs=10)
    with pytest.raises(ParameterError, match="cannot be negative"):
        survey(bits=64, threshold=0.9, n_docs=-1)


def test_every_pair_weighs_its_products_against_the_budget() -> None:
    # Every pair makes no candidate, but its products are work: at 100,000 prose records
    # they were ten minutes where the fingerprint schemes took seconds, and it was chosen.
    def plan(every_work: int) -> Scheme:
        judged = survey(
            bits=64, threshold=0.9, n_docs=100_000, max_candidates=100_000_000,
            every_work=every_work,
        )  # fmt: skip
        return judged.best_effort().scheme

    assert plan(every_work=10**6) == Scheme.every()
    assert plan(every_work=10**12) != Scheme.every()
