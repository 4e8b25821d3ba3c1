"""Finding near-duplicates in a corpus: compare two documents, or dedupe many.

:func:`dedupe` chains the stages: the scheme (given, or the planner's choice for this corpus),
candidates from blocks or Manku's tables among distinct fingerprints, verification at the
threshold (:mod:`~simhash_cli.core.verifier`), clusters, and optionally an audit against every
pair's true cosine. What it is asked and what it finds are types of their own, below every
stage: :mod:`~simhash_cli.core.config` and :mod:`~simhash_cli.core.result`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from . import allpairs, blocking, cluster, cosines, tables
from .ambiguity import ambiguity
from .audit import Audit, audit
from .blocking import suggest_blocks
from .candidates import every_chunks, fingerprint_chunks, minhash_chunks
from .closure import Take, close_groups
from .comparison import Comparison, compare, compare_with
from .config import AUDIT_MAX_DOCS, AUTO, EVERY, DedupeConfig
from .corpus import Corpus
from .cosines import ScoredPairs, Verify
from .distinct import distinct
from .fingerprint import hamming_rows
from .groups import Edges, Groups, centrality_rank, group
from .pilot import PILOT_WORK, Pilot, run_pilot
from .recall import Advice, advise, run_recall
from .result import DedupeResult
from .schemes import (
    CHECK_ENTRY,
    TARGET_RECALL,
    Scheme,
    Survey,
    background_pairs,
    sample_background,
    survey,
)
from .tables import suggest_max_distance
from .verifier import COPIES_PAIRED, CandidateCount, Verifier, sorted_pairs, verify_candidates

__all__ = [
    "Audit",
    "Comparison",
    "centrality_of",
    "check_config",
    "choose_scheme",
    "compare",
    "compare_with",
    "dedupe",
    "dedupe_result",
    "group_pairs_of",
    "pilot_for",
    "planner_rows",
    "suggest_blocks",
    "suggest_max_distance",
    "survey_for",
]


RECALL_HINT_BELOW = 0.9


def _scheme(
    docs: Corpus,
    config: DedupeConfig,
    copies: blocking.Copies,
    *,
    minhash: bool = True,
    pilot: Pilot | None = None,
) -> tuple[Scheme, Survey | None]:
    """The scheme the config names, or the planner's choice for this corpus (among the
    fingerprint schemes only, without ``minhash``; priced on the ``pilot``'s pairs when it
    has enough)."""
    bits = docs.settings.bits
    n_distinct = copies.fingerprints.shape[0]
    prints: Scheme | None = None
    if config.max_distance is not None:
        k = config.max_distance
        if not 0 <= k < bits:
            raise ParameterError(f"max_distance must be from 0 to {bits - 1}, not {k}")
        # Blocks named with a distance: the tables a planner chose (they find the same pairs).
        named = int(config.blocks) if config.blocks not in (AUTO, EVERY) else None
        prints = Scheme("tables", named or tables.choose_tables(n_distinct, bits, k), k)
    elif config.blocks == EVERY:
        return Scheme.every(), None
    elif config.blocks != AUTO:
        prints = Scheme("blocks", blocking.validate_blocks(bits, int(config.blocks)))
    if config.minhash is not None:
        bands = Scheme.minhash(*config.minhash)
        return (bands if prints is None else bands.with_fingerprints(prints)), None
    if prints is not None:
        return prints, None
    chosen = survey_for(
        docs,
        threshold=config.threshold,
        max_candidates=config.max_candidates,
        copies=copies,
        minhash=minhash,
        pilot=pilot,
    )
    return chosen.best_effort().scheme, chosen


def survey_for(
    docs: Corpus,
    *,
    threshold: float,
    max_candidates: int | None,
    copies: blocking.Copies | None = None,
    minhash: bool = True,
    pilot: Pilot | None = None,
) -> Survey:
    """The planner's view of this corpus: how many distinct fingerprints it has (copies of
    one are compared once), and how often those of unrelated documents agree by chance
    (measured on a sample of their pairs); for documents of words, how much those pairs'
    feature sets overlap, which prices the MinHash schemes (unless not ``minhash``). With a
    ``pilot``, the schemes are priced on its pairs, and comparing every pair is one of them
    (free when the pilot compared them all)."""
    bits = docs.settings.bits
    copies = copies or blocking.collapse(docs.fingerprints, bits)
    distinct = copies.fingerprints
    every_work = None
    if pilot is not None and docs.weights is not None:
        every_work = 0 if pilot.complete else pilot.every_work
    background = sample_background(
        distinct,
        sets=docs.weights if minhash and docs.has_word_sets else None,
        set_rows=copies.representatives,
    )
    check_cost = 0.0
    # Exact checks are priced where the pilot prices the rest (without one, the planner
    # chooses as it always has: on prose at scale its bound is what the benchmarks hold).
    if pilot is not None and docs.weights is not None and background.sample is not None:
        # Exact checks: candidates within the Hamming gate, each over its two rows' entries.
        gate = cosines.hamming_gate(threshold, bits)
        sample = background.sample
        near = hamming_rows(sample[:, 0, :], sample[:, 1, :]) <= gate
        background = dataclasses.replace(background, near=near)
        # The mean row of the documents sampled (those a corpus read again in part holds).
        rows = _sampled_rows(copies)
        check_cost = CHECK_ENTRY * 2 * float(np.diff(docs.weights.indptr)[rows].mean())
    return survey(
        bits=bits,
        threshold=threshold,
        n_docs=distinct.shape[0],
        documents=len(docs),
        background=background,
        max_candidates=max_candidates,
        pilot=pilot,
        every_work=every_work,
        check_cost=check_cost,
    )


MIN_ANCHORS = 50
"""Anchors a pilot draws at least, or it is not run: with fewer, a corpus whose near-duplicates
are rare would show too few of them to price anything (a million documents of prose)."""


def pilot_for(
    docs: Corpus,
    config: DedupeConfig,
    copies: blocking.Copies,
) -> Pilot | None:
    """The pilot of this corpus at the config's threshold (:mod:`~simhash_cli.core.pilot`),
    when it can be run: exact verification, every document's vector at hand, a threshold
    above 0 (a product holds only the pairs sharing a feature), and at least MIN_ANCHORS
    anchors within the pilot's work (or the whole corpus)."""
    weights = docs.weights
    if config.verify is not Verify.EXACT or weights is None or config.threshold <= 0:
        return None
    if not np.array_equal(np.diff(weights.indptr), docs.n_features):
        return None  # some rows hold no vector (read again in part)
    rows = np.arange(len(docs), dtype=np.int64)
    if copies.counts.size < 2:
        return None
    total = allpairs.product_work(weights)
    if total > PILOT_WORK and PILOT_WORK * weights.shape[0] < MIN_ANCHORS * total:
        return None  # the mean document's product times MIN_ANCHORS is over the budget
    return run_pilot(
        cosines.unit_scales(weights),
        docs.fingerprints,
        rows,
        config.threshold,
        bits=docs.settings.bits,
        sets=docs.has_word_sets,
        work=PILOT_WORK,
        seed=docs.settings.seed,
    )


def planner_rows(docs: Corpus) -> NDArray[np.int64]:
    """The documents whose word sets the planner reads to price MinHash (those of the pairs it
    samples, as :func:`survey_for` samples them), in order."""
    return _sampled_rows(blocking.collapse(docs.fingerprints, docs.settings.bits))


def _sampled_rows(copies: blocking.Copies) -> NDArray[np.int64]:
    """The documents of the random pairs the planner samples among distinct fingerprints."""
    n = copies.fingerprints.shape[0]
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    first, second = background_pairs(n)
    rows: NDArray[np.int64] = distinct(copies.representatives[np.concatenate([first, second])])
    return rows


def dedupe(
    docs: Corpus,
    config: DedupeConfig | None = None,
    *,
    band_keys: NDArray[np.uint64] | None = None,
) -> DedupeResult:
    """Candidates by the chosen scheme, verification at the threshold, clusters.

    ``band_keys``: for a MinHash scheme, the keys of the signatures' bands made elsewhere (of
    each one's words, as :func:`~simhash_cli.core.minhash.banded` would make them here) of
    one document of each distinct fingerprint (``blocking.collapse(...).representatives``, in
    order), when ``docs`` hold the vectors of only some documents: those of the candidates.

    Raises:
        ParameterError: blocks that do not divide bits, a threshold outside [-1, 1], exact
            verification or an audit without the documents' vectors.
        CandidateBudgetError: the scheme would produce too many candidate pairs.
    """
    config = config or DedupeConfig()
    empty = np.flatnonzero(docs.n_features == 0)
    if empty.size:
        return _with_empty(docs, config, empty)
    check_config(docs, config, has_vectors=docs.weights is not None)
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    # The pilot serves the planner: a scheme named is run as named, its share estimated from
    # its own pairs (as on every engine, so that the same scheme prints the same bytes).
    pilot = pilot_for(docs, config, copies) if _plans(config) else None
    scheme, planned = _scheme(docs, config, copies, pilot=pilot)
    n_candidates, n_checked, kept, audited = _verified_pairs(
        docs, config, scheme, copies, band_keys, pilot
    )
    return dedupe_result(
        docs, config, scheme, planned, n_candidates, n_checked, kept, audited=audited, pilot=pilot
    )


def check_config(docs: Corpus, config: DedupeConfig, *, has_vectors: bool) -> None:
    """Refuse what this corpus cannot be deduplicated with, before any work.

    Raises:
        ParameterError: a threshold outside [-1, 1]; exact verification or an audit without
            the documents' vectors; an audit at a threshold <= 0 or of too many documents.
    """
    cosines.validate_threshold(config.threshold)
    needs_vectors = config.verify is Verify.EXACT or config.audit
    if needs_vectors and not has_vectors:
        raise ParameterError(
            "exact verification and {audit} need the documents' vectors; "
            "fingerprints alone support {verify} estimate",
            parameters=("audit", "verify"),
        )
    if config.audit and config.threshold <= 0:
        raise ParameterError("{audit} needs a threshold above 0", parameters=("audit",))
    if config.audit and len(docs) > AUDIT_MAX_DOCS:
        raise ParameterError(
            f"{{audit}} compares all pairs and is limited to {AUDIT_MAX_DOCS:,} documents "
            f"(this corpus has {len(docs):,})",
            parameters=("audit",),
        )


def choose_scheme(
    docs: Corpus, config: DedupeConfig, *, minhash: bool = True
) -> tuple[Scheme, Survey | None]:
    """The scheme :func:`dedupe` would run on these documents, and the planner's view when
    it chose (``blocks="auto"``; MinHash schemes only with ``minhash``)."""
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    return _scheme(docs, config, copies, minhash=minhash)


def dedupe_result(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Scheme,
    planned: Survey | None,
    n_candidates: int,
    n_checked: int,
    kept: ScoredPairs,
    *,
    audited: NDArray[np.int64] | None = None,
    components: list[NDArray[np.int64]] | None = None,
    take: Take | None = None,
    closure_skipped: str | None = None,
    pilot: Pilot | None = None,
) -> DedupeResult:
    """The result of a run that found ``n_candidates`` with ``scheme``, checked ``n_checked``
    of them exactly and kept the pairs ``kept`` (sorted): the pairs inside the groups they
    form checked too (unless ``closure_skipped`` says why not; ``take`` fetches documents'
    vectors held elsewhere), clusters, recall and advice. ``components``: the connected
    components of ``kept``, when already known; ``pilot``: the corpus's own pairs, whose share
    the run found is its measured recall."""
    bits = docs.settings.bits
    expected = float(scheme.probability(config.threshold, bits))
    low = expected < RECALL_HINT_BELOW and planned is None
    exact = config.verify is Verify.EXACT
    closure, more = None, None
    by_candidates = kept
    # Every pair compared: none inside a group is left to check.
    closing = closure_skipped is None and config.group_pairs > 0 and len(kept) > 0
    closing &= scheme.kind != "every"
    # The groups of the flagged pairs (pairs found inside them do not change them) and the
    # collapsed fingerprints, made once for the closure and the chance pairs.
    labels = cluster.cluster_labels(kept.pairs, len(docs)) if closing and exact else None
    copies = blocking.collapse(docs.fingerprints, bits) if closing and exact else None
    if closing:
        more, closure = close_groups(docs, config, kept, take, labels=labels, copies=copies)
        kept = sorted_pairs([kept, more]) if len(more) else kept
    found = run_recall(docs, scheme, by_candidates, config.threshold, more) if exact else None
    measured = None
    if pilot is not None and pilot.usable:
        measured = pilot.share(found_among(pilot.pairs, kept, len(docs)))
    advice = None
    if pilot is not None and measured is not None and measured.value < TARGET_RECALL:
        advice = _pilot_advice(docs, config, scheme, planned, pilot)
    elif measured is None and found is not None and found.recall < TARGET_RECALL:
        judged = planned or survey_for(
            docs, threshold=config.threshold, max_candidates=config.max_candidates
        )
        affordable = [a for a in judged.assessments if judged.in_budget(a)]
        advice = advise(found, affordable, bits=bits, target=TARGET_RECALL)
    return DedupeResult(
        corpus=docs,
        config=config,
        scheme=scheme,
        survey=planned,
        candidates=n_candidates,
        gated_out=n_candidates - n_checked if exact else 0,
        pairs=kept,
        groups=group_pairs_of(kept, len(docs), config, components=components),
        expected_recall=expected,
        suggested_blocks=(
            suggest_blocks(bits, config.threshold) if low and scheme.kind == "blocks" else None
        ),
        suggested_max_distance=(
            suggest_max_distance(bits, config.threshold)
            if low and scheme.kind == "tables"
            else None
        ),
        audit=audit(docs, audited, config.threshold) if audited is not None else None,
        run_recall=found,
        pilot=pilot,
        measured_recall=measured,
        advice=advice,
        closure=closure,
        closure_skipped=closure_skipped if config.group_pairs > 0 else None,
        ambiguity=(
            ambiguity(docs, kept, config.threshold, labels=labels, copies=copies) if exact else None
        ),
    )


def group_pairs_of(
    pairs: ScoredPairs,
    n_docs: int,
    config: DedupeConfig,
    *,
    rank: NDArray[np.int64] | None = None,
    components: list[NDArray[np.int64]] | None = None,
) -> Groups:
    """The clusters of flagged pairs, as ``config`` names them, in the order of preference
    ``rank`` (None: the most central first)."""
    exact = config.verify is Verify.EXACT
    return group(
        _edges(pairs, exact),
        n_docs,
        kind=config.clustering,
        exact=exact,
        rank=rank,
        components=components,
    )


def centrality_of(result: DedupeResult) -> NDArray[np.int64]:
    """Each document's place in the order of centrality the search's clusters were made in
    (:func:`~simhash_cli.core.groups.centrality_rank`)."""
    exact = result.config.verify is Verify.EXACT
    return centrality_rank(_edges(result.pairs, exact), len(result.corpus))


def _edges(pairs: ScoredPairs, exact: bool) -> Edges:
    """The flagged pairs as the clustering reads them, a chunk at a time, with the cosine
    that flagged them."""

    def edges() -> Iterator[tuple[NDArray[np.int64], NDArray[np.float64]]]:
        for chunk in pairs.chunks(_EDGE_CHUNK):
            yield chunk.pairs, chunk.cosine if exact else chunk.estimated_cosine

    return edges


_EDGE_CHUNK = 1_000_000


def _plans(config: DedupeConfig) -> bool:
    """Whether the planner chooses the scheme (none is named)."""
    named = config.minhash is not None or config.max_distance is not None
    return config.pilot and config.blocks == AUTO and not named


def found_among(pairs: NDArray[np.int64], kept: ScoredPairs, n_docs: int) -> NDArray[np.bool_]:
    """Which of ``pairs`` (i < j, documents) are among the pairs ``kept``."""
    kept_codes = kept.pairs[:, 0] * np.int64(n_docs) + kept.pairs[:, 1]
    found: NDArray[np.bool_] = np.isin(pairs[:, 0] * np.int64(n_docs) + pairs[:, 1], kept_codes)
    return found


def _pilot_advice(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Scheme,
    planned: Survey | None,
    pilot: Pilot,
) -> Advice | None:
    """The cheapest scheme in budget whose share of the pilot's pairs reaches the target,
    other than the one run."""
    judged = planned
    if judged is None or not judged.priced:
        judged = survey_for(
            docs, threshold=config.threshold, max_candidates=config.max_candidates, pilot=pilot
        )
    reaching = [
        a
        for a in judged.assessments
        if judged.in_budget(a) and a.recall >= TARGET_RECALL and a.scheme != scheme
    ]
    best = min(reaching, key=lambda a: a.cost, default=None)
    return None if best is None else Advice(best, best.recall)


def _with_empty(docs: Corpus, config: DedupeConfig, empty: NDArray[np.int64]) -> DedupeResult:
    """Empty documents (kept by ``--include-empty``) are duplicates of each other and of
    nothing else: the others are deduplicated on their own, the empty ones make one cluster
    (paired one by one up to COPIES_PAIRED of them, else each with the first)."""
    real = np.flatnonzero(docs.n_features != 0)
    result = dedupe(docs.select(real), config)
    if empty.size <= COPIES_PAIRED:
        first, second = np.triu_indices(empty.size, 1)
        among = np.stack((empty[first], empty[second]), axis=1)
    else:
        among = np.stack((np.repeat(empty[0], empty.size - 1), empty[1:]), axis=1)
    n = among.shape[0]
    paired = ScoredPairs(among, np.zeros(n, np.int64), np.ones(n), np.full(n, np.nan))

    def mapped(scored: ScoredPairs) -> ScoredPairs:
        return ScoredPairs(
            real[scored.pairs], scored.hamming, scored.estimated_cosine, scored.cosine
        )

    pairs = sorted_pairs([mapped(result.pairs), paired])
    audit = result.audit
    return dataclasses.replace(
        result,
        corpus=docs,
        pairs=pairs,
        groups=group_pairs_of(pairs, len(docs), config),
        audit=None if audit is None else dataclasses.replace(audit, missed=mapped(audit.missed)),
        empty_pairs=n,
    )


def _verified_pairs(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Scheme,
    copies: blocking.Copies,
    band_keys: NDArray[np.uint64] | None = None,
    pilot: Pilot | None = None,
) -> tuple[int, int, ScoredPairs, NDArray[np.int64] | None]:
    """(number of candidates, how many were checked exactly, the pairs that reach the
    threshold, every candidate when an audit needs them), pairs sorted.

    Candidates are made among distinct fingerprints only. The documents of a fingerprint
    shared by up to :data:`COPIES_PAIRED` of them are then paired with each other and with
    the documents of every candidate fingerprint; a larger group (a boilerplate page) is
    represented by its first document, and its other members are paired with that one
    only, so that a thousand copies are 999 candidates, not half a million. Candidates come
    chunk by chunk and each chunk is verified as it comes (:class:`Verifier`), so memory
    follows the pairs kept, not the candidates. Every pair (``every``) is the pairs its
    products find near the threshold (the ``pilot``'s, when it compared them all), checked
    whatever their Hamming distance.
    """
    chunks: Iterable[tuple[NDArray[np.int64], NDArray[np.int64]]]
    if scheme.kind == "every":
        chunks = every_chunks(docs, config.threshold, copies, pilot)
        config = dataclasses.replace(config, hamming_gate=False)
    elif scheme.rows is not None:
        chunks = minhash_chunks(docs, scheme, copies, config.max_candidates, band_keys)
    else:
        chunks = fingerprint_chunks(docs, scheme, copies, config.max_candidates)
    verifier = Verifier(docs, config)
    budget = CandidateCount(config.max_candidates, len(docs))
    everything = [np.empty((0, 2), dtype=np.int64)]
    verify_candidates(
        verifier,
        copies,
        chunks,
        budget,
        with_copies=True,
        seen=everything.append if config.audit else None,
    )
    kept = verifier.finish()
    audited = None
    if config.audit:
        audited = blocking.expand_copies(np.concatenate(everything), copies)
    return budget.total, verifier.checked, kept, audited
