"""The pilot and every pair: exact products against brute force, estimates without bias, and
plans priced on a corpus's own pairs."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_cli.cli import main
from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import corpus_from_texts
from simhash_cli.core.pipeline import dedupe
from simhash_cli.core.search import allpairs, blocking, pilot, planner
from simhash_cli.core.search.pilot import Pilot, assembled, row_work, run_pilot
from simhash_cli.core.search.pilot_pieces import KeyCounts, anchor_pairs
from simhash_cli.core.text.keyed import Vectors
from simhash_cli.core.verify import cosines
from simhash_cli.errors import ExitCode


def brute_pairs(weights: sp.csr_array, threshold: float) -> set[tuple[int, int]]:
    """Every pair at the threshold, one dot product at a time, as the tool checks one pair."""
    unit = cosines.unit_scales(weights)
    n = weights.shape[0]
    pairs = np.array(list(itertools.combinations(range(n), 2)), dtype=np.int64).reshape(-1, 2)
    if not pairs.size:
        return set()
    cosine = cosines.unit_cosine_pairs(unit, pairs)
    near = cosine >= threshold - cosines.THRESHOLD_TOLERANCE
    return {(int(a), int(b)) for a, b in pairs[near]}


@st.composite
def sparse_rows(draw: st.DrawFn) -> sp.csr_array:
    """Small non-negative count matrices, some rows copies or near copies of others."""
    n = draw(st.integers(2, 14))
    features = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 4, size=(n, features)) * (rng.random((n, features)) < 0.5)
    for i in range(1, n):
        if rng.random() < 0.4:
            dense[i] = dense[int(rng.integers(0, i))] + (rng.random(features) < 0.1)
    return sp.csr_array(dense.astype(np.float32))


@given(sparse_rows(), st.sampled_from([0.3, 0.7, 0.9, 1.0]), st.data())
def test_near_pairs_are_the_pairs_at_the_threshold(
    weights: sp.csr_array, threshold: float, data: st.DataObject
) -> None:
    n = weights.shape[0]
    truth = brute_pairs(weights, threshold)
    unit = cosines.unit_scales(weights)
    found = allpairs.near_pairs(unit, threshold)
    kept = cosines.unit_cosine_pairs(unit, found) >= threshold - cosines.THRESHOLD_TOLERANCE
    assert {(int(a), int(b)) for a, b in found[kept]} == truth
    assert len({tuple(p) for p in found.tolist()}) == len(found)  # each pair once
    # Anchors: exactly the pairs that involve one of them.
    anchors = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))))
    some = allpairs.near_pairs(unit, threshold, anchors=anchors)
    kept = cosines.unit_cosine_pairs(unit, some) >= threshold - cosines.THRESHOLD_TOLERANCE
    wanted = {p for p in truth if p[0] in anchors or p[1] in anchors}
    assert {(int(a), int(b)) for a, b in some[kept]} == wanted


@given(sparse_rows())
def test_product_work_counts_the_multiply_adds(weights: sp.csr_array) -> None:
    ones = sp.csr_array((np.ones(weights.nnz), weights.indices, weights.indptr), weights.shape)
    shared = (ones @ ones.T).toarray()  # shared features of each pair of rows
    assert allpairs.product_work(weights) == int(shared.sum())
    assert np.array_equal(row_work(weights), shared.sum(axis=1).astype(np.int64))
    assert allpairs.product_work(weights, np.array([0])) == int(shared[0].sum())


def test_anchors_are_all_rows_within_the_work_and_a_uniform_sample_beyond() -> None:
    per_row = np.array([5, 1, 1, 1, 100, 1, 1, 1], dtype=np.int64)
    total = int(per_row.sum())

    def within(work: int, seed: int) -> np.ndarray:
        return pilot.first_anchors(
            per_row.size, pilot.affordable(per_row.size, total, work), seed=seed
        )

    assert within(1000, 0).tolist() == list(range(8))
    drawn = np.concatenate([within(37, s) for s in range(4000)])
    assert {len(within(37, s)) for s in range(50)} == {2}
    # The long row is drawn as often as the short ones.
    counts = np.bincount(drawn, minlength=8) / 4000
    assert np.allclose(counts, 2 / 8, atol=0.03)


def families(n_families: int, size: int, seed: int, *, licence: bool = False) -> list[str]:
    """Texts in families of edited copies; with ``licence``, each family member shares a long
    text repeated (so the term counts agree) and adds many words of its own (so the word sets
    do not): high tf cosine, low Jaccard."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(4000)]
    texts = []
    for family in range(n_families):
        base = list(rng.choice(vocabulary, 60))
        for member in range(size):
            words = [w if rng.random() > 0.03 else str(rng.choice(vocabulary)) for w in base]
            if licence:
                own = [f"name{family}x{member}x{k}" for k in range(80)]
                words = words * 12 + own
            texts.append(" ".join(words))
    order = rng.permutation(len(texts))
    return [texts[i] for i in order]


@settings(max_examples=5)
@given(st.integers(0, 2**16))
def test_the_pilots_count_and_share_are_unbiased(seed: int) -> None:
    """Over the anchors' draw, the pilot's count of pairs averages the true count, and its
    share of a marked set of pairs averages the true share."""
    docs = corpus_from_texts(families(12, 4, seed))
    assert docs.weights is not None
    unit = cosines.unit_scales(docs.weights)
    rows = np.arange(len(docs), dtype=np.int64)
    full = run_pilot(unit, docs.fingerprints, rows, 0.8, bits=64, sets=True, work=10**12)
    assert full.complete
    truth = {tuple(p) for p in full.pairs.tolist()}
    marked = {p for p in truth if (p[0] + p[1]) % 3}  # a fixed share of them, "found"
    if not truth:
        return
    budget = int(row_work(docs.weights).sum()) // 5
    counts, shares = [], []
    for draw in range(200):
        sample = run_pilot(unit, docs.fingerprints, rows, 0.8, bits=64, sets=False, work=budget,
                           seed=draw)  # fmt: skip
        assert not sample.complete
        assert {tuple(p) for p in sample.pairs.tolist()} <= truth
        counts.append(sample.total().value)
        if len(sample.pairs):
            found = np.array([tuple(p) in marked for p in sample.pairs.tolist()])
            shares.append((sample.share(found).value, len(sample.pairs)))
    assert np.mean(counts) == pytest.approx(len(truth), rel=0.1)
    # A ratio estimator: weighted by the pairs each sample drew, it is the share exactly.
    weighted = sum(s * k for s, k in shares) / sum(k for _, k in shares)
    assert weighted == pytest.approx(len(marked) / len(truth), abs=0.05)


def test_a_share_interval_holds_its_value_and_is_exact_when_complete() -> None:
    base = Pilot(0.9, 100, np.arange(10), np.array([[0, 50], [1, 60], [2, 70]]),
                 np.array([0, 1, 2]), np.ones(3), np.zeros(3, np.int64), None, 0)  # fmt: skip
    share = base.share(np.array([True, True, False]))
    assert share.value == pytest.approx(2 / 3)
    assert share.low <= share.value <= share.high
    assert not share.exact and share.low < share.value
    whole = dataclasses.replace(base, n_docs=10).share(np.array([True, True, False]))
    assert whole.exact and whole.low == whole.value == whole.high


def test_misses_gathered_in_one_anchors_pairs_widen_the_interval() -> None:
    """100,000 prose records: one anchor's 5 pairs (a family whose words overlap at Jaccard
    0.2) were the 5 of 88 missed; Wilson's interval on their worth ended at 0.987 and the run
    had found 0.995. The spread of the anchors' own shares widens it past the truth."""
    counts = [2] * 6 + [3] * 9 + [4] * 11 + [5]  # anchors' pairs: 88 in all
    anchor = np.repeat(np.arange(len(counts)), counts)
    k = anchor.size
    rows = np.arange(k, dtype=np.int64)
    gathered = Pilot(0.9, 100_000, np.arange(179), np.stack((rows, rows + k), axis=1), anchor,
                     np.ones(k), np.ones(k, np.int64), None, 0)  # fmt: skip
    found = anchor != len(counts) - 1  # the last anchor's 5 pairs missed
    share = gathered.share(found)
    assert share.value == pytest.approx(83 / 88)
    assert pilot._wilson(share.value, gathered.effective)[1] < 0.995 <= share.high


@given(st.integers(0, 2**16), st.sampled_from([0.8, 0.9]))
def test_every_pair_finds_exactly_the_pairs_at_the_threshold(seed: int, threshold: float) -> None:
    docs = corpus_from_texts(families(6, 3, seed) + families(2, 2, seed + 1, licence=True))
    config = DedupeConfig(blocks="every", threshold=threshold, group_pairs=0)
    result = dedupe(docs, config)
    assert result.scheme.kind == "every"
    assert docs.weights is not None
    truth = brute_pairs(docs.weights, threshold)
    assert {tuple(p) for p in result.pairs.pairs.tolist()} == truth
    assert result.pilot is None  # a scheme named is run as named
    # Left to the planner, a corpus this small is the pilot's whole: every pair, measured.
    planned = dedupe(docs, DedupeConfig(threshold=threshold, group_pairs=0))
    assert planned.scheme.kind == "every"
    assert {tuple(p) for p in planned.pairs.pairs.tolist()} == truth
    assert planned.measured_recall is not None and planned.measured_recall.exact
    assert planned.measured_recall.value == 1.0


def test_a_union_finds_what_either_part_finds_each_pair_once() -> None:
    docs = corpus_from_texts(families(8, 3, 5) + families(3, 3, 6, licence=True))
    minhash_only = dedupe(docs, DedupeConfig(minhash=(4, 8), group_pairs=0))
    prints_only = dedupe(docs, DedupeConfig(max_distance=8, group_pairs=0))
    union = dedupe(docs, DedupeConfig(minhash=(4, 8), max_distance=8, group_pairs=0))
    assert union.scheme.also is not None and union.scheme.option == "--minhash 4x8 --max-distance 8"
    pairs = [tuple(p) for p in union.pairs.pairs.tolist()]
    assert len(pairs) == len(set(pairs))
    both = {tuple(p) for r in (minhash_only, prints_only) for p in r.pairs.pairs.tolist()}
    assert set(pairs) == both


def test_a_corpus_whose_word_sets_differ_is_planned_to_find_its_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Licences: high tf cosine, low Jaccard. The bound J >= T^2 prices MinHash for sets that
    overlap at 0.81; these overlap at about 0.4, and a scheme priced on the pilot's pairs
    finds them, with the pilot a sample (its work a fifth of every pair's)."""
    texts = families(40, 6, 11, licence=True) + families(60, 1, 12)
    docs = corpus_from_texts(texts)
    assert docs.weights is not None
    truth = brute_pairs(docs.weights, 0.9)
    monkeypatch.setattr(planner, "PILOT_WORK", allpairs.product_work(docs.weights) // 5)
    monkeypatch.setattr(planner, "PILOT_PER_ENTRY", 0)  # one round: no growth
    monkeypatch.setattr(planner, "GROWN_WORK", 0)  # no floor of its own
    result = dedupe(docs, DedupeConfig())
    assert result.pilot is not None and not result.pilot.complete
    assert result.survey is not None and result.survey.priced
    assert result.pilot.jaccard is not None and float(np.median(result.pilot.jaccard)) < 0.6
    found = {tuple(p) for p in result.pairs.pairs.tolist()}
    assert len(found & truth) / len(truth) >= 0.95
    assert found <= truth
    # What the run says it found is what its independent sample shows, within its interval.
    measured = result.measured_recall
    assert measured is not None and measured.low <= measured.value <= measured.high
    assert abs(measured.value - len(found & truth) / len(truth)) <= 0.05


def test_without_a_pilot_the_planner_prices_at_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = corpus_from_texts(families(10, 3, 2))
    monkeypatch.setattr(planner, "PILOT_WORK", 1)
    monkeypatch.setattr(planner, "PILOT_PER_ENTRY", 0)
    monkeypatch.setattr(planner, "GROWN_WORK", 0)  # no floor of its own
    result = dedupe(docs, DedupeConfig())
    assert result.pilot is None and result.measured_recall is None
    assert result.unmeasured == "not one document's products with the corpus fit the pilot's budget"
    assert result.survey is not None and not result.survey.priced
    assert all(
        a.scheme.kind != "every" and a.scheme.also is None for a in result.survey.assessments
    )


def test_the_pilot_is_not_run_without_every_vector() -> None:
    docs = corpus_from_texts(families(5, 2, 3))
    copies = blocking.collapse(docs.fingerprints, 64)
    assert planner.pilot_for(docs, DedupeConfig(verify=cosines.Verify.ESTIMATE), copies) is None
    assert planner.pilot_for(docs, DedupeConfig(threshold=0.0), copies) is None
    assert planner.pilot_for(docs, DedupeConfig(), copies) is not None
    assert pilot.MIN_EFFECTIVE > 0


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_the_summary_states_the_share_its_pilot_measured(tmp_path: Path) -> None:
    for i, text in enumerate(families(10, 3, 7) + families(3, 3, 8, licence=True)):
        (tmp_path / f"{i:03d}.txt").write_text(text)
    done = run("dedupe", str(tmp_path), "-f", "json")
    assert done.exit_code in (ExitCode.OK, ExitCode.DUPLICATES_FOUND), done.output
    summary = json.loads(done.stdout)["summary"]
    measured = summary["measured_recall"]
    assert summary["priced_on"] == "pilot" and measured["exact"]
    assert summary["estimated_recall"] == measured["recall"] == 1.0
    assert measured["pairs_at_threshold"] == measured["pairs"] > 0
    assert "recall 1.00: every pair was compared, none was missed" in done.stderr
    told = run("dedupe", "-v", str(tmp_path), "-f", "json")
    assert "every pair was compared by exact products" in told.stderr
    named = run("dedupe", "-v", str(tmp_path), "-f", "json", "--blocks", "8")
    assert "(the pilot compared every pair exactly): recall 1.00" in named.stderr
    unpiloted = json.loads(run("dedupe", str(tmp_path), "-f", "json", "--no-pilot").stdout)
    assert unpiloted["summary"]["measured_recall"] is None
    assert unpiloted["summary"]["estimated_recall"] is None
    assert unpiloted["summary"]["recall_not_measured"] == "--no-pilot"
    assert unpiloted["summary"]["priced_on"] == "threshold"


def test_every_pair_and_unions_on_the_command_line(tmp_path: Path) -> None:
    for i, text in enumerate(families(6, 3, 9)):
        (tmp_path / f"{i:03d}.txt").write_text(text)
    every = run("dedupe", str(tmp_path), "-f", "json", "--blocks", "every")
    assert every.exit_code in (ExitCode.OK, ExitCode.DUPLICATES_FOUND), every.output
    assert json.loads(every.stdout)["summary"]["kind"] == "every"
    union = run("dedupe", str(tmp_path), "-f", "json", "--minhash", "4x8", "--max-distance", "3")
    summary = json.loads(union.stdout)["summary"]
    assert summary["minhash"] == {"bands": 4, "rows": 8}
    assert summary["with_fingerprints"]["max_distance"] == 3
    assert json.loads(union.stdout)["pairs"] == json.loads(every.stdout)["pairs"]
    estimate = run("dedupe", str(tmp_path), "--blocks", "every", "--verify", "estimate")
    assert estimate.exit_code == ExitCode.USAGE
    assert "--blocks every computes true cosines" in estimate.stderr
    db = tmp_path.parent / "shelf.db"
    assert run("index", "add", str(db), str(tmp_path)).exit_code == ExitCode.OK
    indexed = run("index", "dedupe", str(db), "--blocks", "every")
    assert indexed.exit_code == ExitCode.USAGE and "an index does not hold" in indexed.stderr


@pytest.mark.parametrize("work", [10**9, 4_000])  # every document an anchor, or a sample
def test_a_pilot_made_in_pieces_is_the_pilot_of_the_whole(work: int) -> None:
    """The corpus's vectors in three pieces, keyed by feature (as a dask worker or a piece
    read again holds them): the same anchors, pairs, cosines (to the bit) and Jaccards."""
    docs = corpus_from_texts(families(12, 4, 3) + families(4, 3, 5, licence=True))
    assert docs.weights is not None
    n, threshold, seed = len(docs), 0.8, docs.settings.seed
    whole = run_pilot(
        cosines.unit_scales(docs.weights, docs.column_order), docs.fingerprints,
        np.arange(n, dtype=np.int64), threshold, bits=docs.settings.bits, sets=True, work=work,
        seed=seed,
    )  # fmt: skip
    cuts = [0, n // 3, 2 * n // 3, n]
    pieces = [np.arange(a, b, dtype=np.int64) for a, b in itertools.pairwise(cuts)]
    vectors = [Vectors.of(docs.weights[rows], docs.features) for rows in pieces]
    counts = KeyCounts.merged([KeyCounts.of(v) for v in vectors])
    anchors = pilot.first_anchors(n, pilot.affordable(n, counts.work, work), seed=seed)
    chosen = Vectors.of(docs.weights[anchors], docs.features)
    parts = [
        anchor_pairs(chosen, anchors, v, rows, threshold, sets=True)
        for v, rows in zip(vectors, pieces, strict=True)
    ]
    made = assembled(
        parts, threshold=threshold, n_docs=n, anchors=anchors, fingerprints=docs.fingerprints,
        anchor_work=int(counts.rows_work(chosen).sum()), every_work=counts.work, sets=True,
    )  # fmt: skip
    assert whole.anchors.size < n or work > 10**8
    for name in ("anchors", "pairs", "anchor", "hamming"):
        assert np.array_equal(getattr(made, name), getattr(whole, name)), name
    assert made.cosine.tobytes() == whole.cosine.tobytes()
    assert whole.jaccard is not None and made.jaccard is not None
    assert made.jaccard.tobytes() == whole.jaccard.tobytes()
    assert (made.work, made.every_work, made.n_docs) == (whole.work, whole.every_work, n)
    assert len(whole.cosine) > 10


def test_a_pilot_grows_in_rounds_of_the_same_random_order_until_it_has_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows that each pair with one other: a round of few anchors draws too few pairs, the
    next rounds draw more rows of the same order (each round's anchors hold the last's), and
    growth stops at MIN_EFFECTIVE independent pairs or at the budget. The first round draws
    FIRST_ANCHORS when the budget pays for them."""
    n = 400
    partner = np.arange(n) ^ 1  # rows 2k and 2k+1 are a pair
    calls: list[tuple[int, int]] = []

    def round_of(new: np.ndarray, earlier: np.ndarray) -> pilot.Round:
        calls.append((new.size, earlier.size))
        assert not np.isin(new, earlier).any()
        pairs = np.sort(np.stack((new, partner[new]), axis=1), axis=1)
        pairs = pairs[~np.isin(pairs, earlier).any(axis=1)]
        pairs = np.unique(pairs, axis=0)
        part = pilot.PilotPart(pairs, np.ones(len(pairs)), None)
        return pilot.Round(part, int(new.size) * 10)

    total = n * 10  # every row's product costs 10
    pilot.grow(n, total, first=30, budget=10_000, seed=3, round_of=round_of)
    assert calls[0] == (pilot.FIRST_ANCHORS, 0)  # the first work paid for 3
    calls.clear()
    monkeypatch.setattr(pilot, "FIRST_ANCHORS", 1)
    anchors, parts, spent = pilot.grow(n, total, first=30, budget=10_000, seed=3, round_of=round_of)
    assert [c[1] for c in calls] == [0, 3, 12, 48][: len(calls)]  # x GROWTH a round
    assert np.array_equal(anchors, pilot.first_anchors(n, anchors.size, seed=3))
    assert np.isin(pilot.first_anchors(n, 3, seed=3), anchors).all()  # nested rounds
    found = np.concatenate([p.pairs for p in parts])
    assert len(found) == len({tuple(p) for p in found.tolist()}) >= pilot.MIN_EFFECTIVE
    assert spent == anchors.size * 10
    # A budget spent stops it, whatever it found.
    calls.clear()
    small, _, cost = pilot.grow(n, total, first=30, budget=60, seed=3, round_of=round_of)
    assert small.size == 6 and cost == 60 and len(calls) == 2


def test_a_pair_among_boilerplate_copies_counts_as_found_through_the_first_copy() -> None:
    """A fingerprint shared by more than COPIES_PAIRED documents is paired through its first
    document: the pilot's pair of another copy with a document counts as found when the first
    copy's pair is, and two copies are always found."""
    from simhash_cli.core.pipeline import found_among
    from simhash_cli.core.verify.verifier import COPIES_PAIRED

    n = COPIES_PAIRED + 3
    fps = np.zeros((n, 1), dtype=np.uint64)
    fps[-2:, 0] = [7, 9]  # rows 0..n-3 are copies, n-2 and n-1 are others
    copies = blocking.collapse(fps, 64)
    kept = cosines.ScoredPairs(
        np.array([[0, n - 2]], dtype=np.int64), np.zeros(1, np.int64), np.ones(1), np.ones(1)
    )
    asked = np.array([[5, n - 2], [5, 9], [5, n - 1], [n - 2, n - 1]], dtype=np.int64)
    assert found_among(asked, kept, n, copies).tolist() == [True, True, False, False]
    assert found_among(asked, kept, n).tolist() == [False, False, False, False]


@given(st.integers(0, 2**16), st.sampled_from([0.5, 0.8, 0.95]))
@settings(max_examples=40, deadline=None)
def test_the_pruned_search_finds_every_pair_of_signed_weights(seed: int, threshold: float) -> None:
    """Weights of both signs (vectors given as they are): Cauchy-Schwarz bounds the prefix's
    part whatever its sign, so no pair at the threshold is pruned."""
    rng = np.random.default_rng(seed)
    n, f = int(rng.integers(2, 30)), int(rng.integers(1, 20))
    dense = rng.normal(size=(n, f)) * (rng.random((n, f)) < 0.4)
    for i in range(1, n):
        if rng.random() < 0.4:
            dense[i] = dense[int(rng.integers(0, i))] + rng.normal(scale=0.05, size=f)
    weights = sp.csr_array(dense.astype(np.float32))
    truth = brute_pairs(weights, threshold)
    unit = cosines.unit_scales(weights)
    found = allpairs.near_pairs(unit, threshold)
    kept = cosines.unit_cosine_pairs(unit, found) >= threshold - cosines.THRESHOLD_TOLERANCE
    assert {(int(a), int(b)) for a, b in found[kept]} == truth


@given(sparse_rows(), st.sampled_from([0.5, 0.9]), st.integers(1, 40), st.data())
@settings(max_examples=40, deadline=None)
def test_suffixes_made_again_a_few_rows_at_a_time_find_what_the_inverted_index_finds(
    weights: sp.csr_array, threshold: float, span: int, data: st.DataObject
) -> None:
    """A large corpus's suffixes are made again a span of documents at a time for each search
    (a million prose records' index beside the corpus took gigabytes): any spans, any output
    size, the same pairs as the index kept whole, and as brute force."""
    n = weights.shape[0]
    unit = cosines.unit_scales(weights)
    anchors = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))))
    kept = allpairs.near_pairs(unit, threshold, anchors=anchors)
    original = (allpairs._INDEX_ENTRIES, allpairs._SPAN_CELLS)
    try:
        allpairs._INDEX_ENTRIES, allpairs._SPAN_CELLS = -1, span + 1
        streamed = allpairs.Suffixes.among(unit, np.arange(n, dtype=np.int64), threshold)
        assert streamed.inverted is None
        chunks = list(
            allpairs.near_pair_chunks(
                unit, threshold, anchors=anchors, index=streamed, output_entries=span
            )
        )
    finally:
        allpairs._INDEX_ENTRIES, allpairs._SPAN_CELLS = original
    found = np.concatenate(chunks) if chunks else np.zeros((0, 2), dtype=np.int64)
    assert sorted(map(tuple, found.tolist())) == sorted(map(tuple, kept.tolist()))
    near = cosines.unit_cosine_pairs(unit, found) >= threshold - cosines.THRESHOLD_TOLERANCE
    truth = {p for p in brute_pairs(weights, threshold) if p[0] in anchors or p[1] in anchors}
    assert {(int(a), int(b)) for a, b in found[near]} == truth


def test_a_pilot_in_pieces_pairs_every_round_in_one_pass_and_is_the_pilot_of_the_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each round of a pilot made in pieces was a pass over the records read again (100,000
    records with --memory fingerprints: 18 s -> 44 s): the anchors every round may draw are
    paired in one pass, and each round takes its own; the same pilot as in memory."""
    docs = corpus_from_texts(families(60, 3, 11))
    assert docs.weights is not None
    # A first round of a few anchors and a budget for more: the pilot grows in rounds.
    total = allpairs.product_work(docs.weights)
    monkeypatch.setattr(planner, "PILOT_WORK", total // 60)
    monkeypatch.setattr(planner, "PILOT_PER_ENTRY", total // (3 * docs.weights.nnz))
    monkeypatch.setattr(planner, "GROWN_WORK", 0)  # no floor of its own
    monkeypatch.setattr(pilot, "FIRST_ANCHORS", 2)
    monkeypatch.setattr(planner, "FIRST_ANCHORS", 2)
    config = DedupeConfig(threshold=0.8)
    copies = blocking.collapse(docs.fingerprints, 64)
    whole = planner.pilot_for(docs, config, copies)
    n = len(docs)
    first = pilot.affordable(n, total, total // 60)
    assert whole is not None and max(first, 2) < whole.anchors.size < n  # it grew
    cuts = [0, n // 3, 2 * n // 3, n]
    pieces = [np.arange(a, b, dtype=np.int64) for a, b in itertools.pairwise(cuts)]
    vectors = [Vectors.of(docs.weights[rows], docs.features) for rows in pieces]
    counts = KeyCounts.merged([KeyCounts.of(v) for v in vectors])
    passes: list[int] = []

    def pairs_with(anchors: Vectors, rows: np.ndarray) -> list[pilot.PilotPart]:
        passes.append(rows.size)
        return [
            anchor_pairs(anchors, rows, v, piece, config.threshold, sets=True)
            for v, piece in zip(vectors, pieces, strict=True)
        ]

    weights = docs.weights
    made = planner.pilot_in_pieces(
        docs, config, counts, lambda rows: Vectors.of(weights[rows], docs.features), pairs_with
    )
    assert isinstance(made, Pilot)
    assert len(passes) == 1 and passes[0] >= whole.anchors.size  # one pass, rounds ahead
    for name in ("anchors", "pairs", "anchor", "hamming"):
        assert np.array_equal(getattr(made, name), getattr(whole, name)), name
    assert made.cosine.tobytes() == whole.cosine.tobytes()
    assert (made.work, made.every_work) == (whole.work, whole.every_work)


def test_a_pilot_grows_until_the_share_it_states_is_measured_closely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pilot stopped at MIN_EFFECTIVE pairs stated 0.97 (0.90 to 1.00) of a run on 5,924
    Python sources that found 0.909, and a named scheme's 0.246 (0.15 to 0.37) where 0.178 was
    found: it grows, within its budget, until the share it will state has a 95% interval no
    wider than PRECISION either side: the named scheme's own share (here about 0.16), or one
    at the share the planner aims at."""
    docs = corpus_from_texts(families(600, 3, 0))
    assert docs.weights is not None
    total = allpairs.product_work(docs.weights)
    monkeypatch.setattr(planner, "PILOT_WORK", total // 400)
    monkeypatch.setattr(planner, "PILOT_PER_ENTRY", 0)
    monkeypatch.setattr(planner, "GROWN_WORK", total * 3 // 4)  # room to grow, not to all
    copies = blocking.collapse(docs.fingerprints, 64)
    named = DedupeConfig(max_distance=3)
    goal = planner.pilot_goal(docs, named, copies)
    assert goal.scheme is not None and goal.scheme.kind == "tables"
    grown = planner.pilot_for(docs, named, copies)
    assert grown is not None and not grown.complete
    share = grown.share(grown.chances(goal.scheme, 64))
    assert 0.05 < share.value < 0.5
    assert (share.high - share.low) / 2 <= pilot.PRECISION
    assert grown.work < total * 3 // 4  # it stopped there, not at its budget
    # The planner's pilot stops where a share at the aimed value would be that close.
    planned = planner.pilot_for(docs, DedupeConfig(), copies)
    assert planned is not None and planned.anchors.size < grown.anchors.size
    assert planner.pilot_goal(docs, DedupeConfig(), copies).met(planned)
    low, high = pilot._wilson(goal.aimed, planned.effective)
    assert (high - low) / 2 <= pilot.PRECISION


def test_a_run_counts_its_columns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner's price of every pair, the pilot's work per row and its suffixes read one
    count of the columns (each counted them: 0.4 s of 100,000 prose records)."""
    docs = corpus_from_texts(families(40, 5, 3))
    calls: list[int] = []
    counted = cosines.column_counts

    def counting(weights: sp.csr_array) -> np.ndarray:
        calls.append(weights.nnz)
        return counted(weights)

    monkeypatch.setattr(cosines, "column_counts", counting)
    monkeypatch.setattr(allpairs, "column_counts", counting)
    result = dedupe(docs, DedupeConfig(threshold=0.8))
    assert result.pilot is not None and len(result.pilot.pairs) > 0
    assert len(calls) == 1


def test_copies_are_never_priced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pilot's pairs of documents sharing a fingerprint have chance 1 under every scheme,
    and only the others are priced: a boilerplate page's copies gave a pilot hundreds of
    thousands of pairs at distance 0, each priced by the planner's two dozen schemes (a corpus
    of 2,004 documents took 12 s)."""
    from simhash_cli.core.search.scheme import Scheme

    texts = ["cookie banner accept all"] * 60 + [
        f"document {n} about topic {n} with words {n} {n + 1}" for n in range(20)
    ]
    texts += [texts[-1] + " again"]
    docs = corpus_from_texts(texts)
    priced: list[int] = []
    chance = Scheme.chance

    def counted(self: Scheme, cosine: np.ndarray, jaccard: object, bits: int) -> np.ndarray:
        priced.append(np.asarray(cosine).size)
        return chance(self, cosine, jaccard, bits)  # type: ignore[arg-type]

    monkeypatch.setattr(Scheme, "chance", counted)
    result = dedupe(docs, DedupeConfig())
    assert result.pilot is not None
    copies = int((result.pilot.hamming == 0).sum())
    assert copies >= 60 * 59 // 2 and priced  # the copies' pairs are in the pilot, and it priced
    assert max(priced) == result.pilot.cosine.size - copies
    chances = result.pilot.chances(result.scheme, docs.settings.bits)
    assert np.all(chances[result.pilot.hamming == 0] == 1.0)


@pytest.mark.parametrize("copies", [40, 150])
def test_a_pilot_pairs_a_boilerplate_pages_copies_as_the_run_does(copies: int) -> None:
    """Of more than COPIES_PAIRED copies of one page, a run pairs each with the first only;
    the pilot counts the same pairs (it held every pair of 20,000 copies: 47 million pairs,
    10.8 GB, 108 s), and a smaller group keeps every pair of its members."""
    from simhash_cli.core.verify.verifier import COPIES_PAIRED

    page = "cookie banner accept all cookies to continue reading this site"
    texts = [page] * copies + [
        f"article {n} on a subject {n} of its own {n * 7}" for n in range(30)
    ]
    docs = corpus_from_texts(texts)
    result = dedupe(docs, DedupeConfig())
    assert result.pilot is not None and result.measured_recall is not None
    inside = [tuple(p) for p in result.pilot.pairs.tolist() if max(p) < copies]
    if copies > COPIES_PAIRED:
        assert inside and all(0 in pair for pair in inside)  # with the first copy, row 0
    else:
        assert any(0 not in pair for pair in inside)
    assert result.measured_recall.value == 1.0
    assert len(result.pairs) == (
        copies - 1 if copies > COPIES_PAIRED else copies * (copies - 1) // 2
    )
