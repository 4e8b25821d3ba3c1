"""Finding near-duplicates in a corpus: compare two documents, or dedupe many.

:func:`dedupe` chains the stages: the scheme (given, or the planner's choice for this corpus),
candidates from blocks or Manku's tables among distinct fingerprints, verification at the
threshold (:mod:`~simhash_cli.core.verifier`), clusters, and optionally an audit against every
pair's true cosine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import ParameterError
from . import blocking, cluster, cosines, minhash, tables
from .ambiguity import Ambiguity, ambiguity
from .closure import DEFAULT_GROUP_PAIRS, Closure, Take, close_groups
from .comparison import Comparison, compare, compare_with
from .corpus import Corpus
from .cosines import ScoredPairs, Verify
from .fingerprint import feature_keys, hamming_rows
from .groups import Clustering, Groups, group
from .recall import Advice, RunRecall, advise, run_recall
from .schemes import TARGET_RECALL, Scheme, Survey, background_pairs, sample_background, survey
from .verifier import COPIES_PAIRED, CandidateCount, Verifier, sorted_pairs, verify_candidates

__all__ = [
    "AUDIT_MAX_DOCS",
    "AUTO",
    "Audit",
    "Comparison",
    "DedupeConfig",
    "DedupeResult",
    "check_config",
    "choose_scheme",
    "compare",
    "compare_with",
    "dedupe",
    "dedupe_result",
    "group_pairs_of",
    "planner_rows",
    "suggest_blocks",
    "suggest_max_distance",
    "survey_for",
]


AUTO: Literal["auto"] = "auto"


AUDIT_MAX_DOCS = 5000


DEFAULT_MAX_PAIRS = 10_000_000


RECALL_HINT_BELOW = 0.9


@dataclass(frozen=True)
class DedupeConfig:
    """Tuning of ``dedupe``: blocking scheme, verification and threshold."""

    blocks: int | Literal["auto"] = AUTO
    """Equal blocks per fingerprint, or ``auto``: the planner's cheapest scheme that reaches
    0.95 expected recall at the threshold on this corpus (blocks or Manku's tables)."""
    threshold: float = 0.9
    verify: Verify = Verify.EXACT
    max_candidates: int | None = blocking.DEFAULT_MAX_CANDIDATES
    max_pairs: int | None = DEFAULT_MAX_PAIRS
    """Stop (PairBudgetError) when more pairs than this reach the threshold: at that point the
    documents are alike as a whole, and the pairs would fill memory before they were shown."""
    audit: bool = False
    max_distance: int | None = None
    """When set, candidates are exactly the pairs within this many bits (Manku's tables) and
    ``blocks`` is not used."""
    minhash: tuple[int, int] | None = None
    """When set, (bands, rows): candidates share a band of a MinHash signature of their
    feature sets, and ``blocks`` is not used."""
    clustering: Clustering = Clustering.REPRESENTATIVE
    """How flagged pairs become clusters (:mod:`~simhash_cli.core.groups`)."""
    group_pairs: int = DEFAULT_GROUP_PAIRS
    """Pairs inside found groups checked at most (:mod:`~simhash_cli.core.closure`); 0: none."""
    hamming_gate: bool = True
    """Skip the exact check of candidates whose Hamming distance a pair at the threshold
    reaches with odds below 1 in 10,000 (:func:`~simhash_cli.core.cosines.hamming_gate`)."""


@dataclass(frozen=True)
class Audit:
    """The blocking scheme measured against all pairs' true cosine (``--audit``).

    Attributes:
        similar_pairs: pairs with true cosine >= threshold.
        found: how many of them became candidates.
        recall: found / similar_pairs (1.0 when there are none).
        false_candidates: candidates whose true cosine is below the threshold.
        missed: the similar pairs the scheme did not find, scored.
    """

    similar_pairs: int
    found: int
    recall: float
    false_candidates: int
    missed: ScoredPairs


@dataclass(frozen=True)
class DedupeResult:
    """Flagged pairs, their clusters and the numbers behind them."""

    corpus: Corpus
    config: DedupeConfig
    scheme: Scheme
    survey: Survey | None
    candidates: int
    gated_out: int
    """Candidates not checked exactly: beyond the Hamming gate of the threshold."""
    pairs: ScoredPairs
    groups: Groups
    expected_recall: float
    suggested_blocks: int | None
    suggested_max_distance: int | None
    audit: Audit | None
    empty_pairs: int = 0
    """Pairs of empty documents (``--include-empty``), among ``pairs``: estimate 1.0, cosine
    NaN (undefined), grouped with each other only."""
    run_recall: RunRecall | None = None
    """The share of the pairs at or above the threshold this run found, estimated from those
    it found (None without true cosines)."""
    advice: Advice | None = None
    """When that share is below the target: the cheapest scheme predicted to reach it."""
    closure: Closure | None = None
    """What checking the pairs inside found groups added (None: not done)."""
    closure_skipped: str | None = None
    """Why the pairs inside found groups were not checked, when they were not."""
    ambiguity: Ambiguity | None = None
    """When the corpus's chance pairs come near the threshold: where they sit, and where they
    would under tf-idf."""

    @property
    def clusters(self) -> list[NDArray[np.int64]]:
        """Each cluster's members, ascending, clusters by smallest member."""
        return self.groups.clusters


def suggest_blocks(bits: int, threshold: float, *, target: float = 0.95) -> int | None:
    """Fewest blocks (so fewest candidates) whose expected recall at ``threshold`` >= target."""
    for blocks in range(1, bits + 1):
        if bits % blocks == 0:
            probability = blocking.candidate_probability(threshold, bits=bits, blocks=blocks)
            if float(probability) >= target:
                return blocks
    return None


def suggest_max_distance(bits: int, threshold: float, *, target: float = 0.95) -> int | None:
    """Smallest Hamming radius whose expected recall at ``threshold`` >= target."""
    for distance in range(bits):
        probability = tables.within_probability(threshold, bits=bits, max_distance=distance)
        if float(probability) >= target:
            return distance
    return None


def _scheme(
    docs: Corpus, config: DedupeConfig, copies: blocking.Copies, *, minhash: bool = True
) -> tuple[Scheme, Survey | None]:
    """The scheme the config names, or the planner's choice for this corpus (among the
    fingerprint schemes only, without ``minhash``)."""
    bits = docs.settings.bits
    n_distinct = copies.fingerprints.shape[0]
    if config.minhash is not None:
        return Scheme.minhash(*config.minhash), None
    if config.max_distance is not None:
        k = config.max_distance
        if not 0 <= k < bits:
            raise ParameterError(f"max_distance must be from 0 to {bits - 1}, not {k}")
        # Blocks named with a distance: the tables a planner chose (they find the same pairs).
        named = int(config.blocks) if config.blocks != AUTO else None
        return Scheme("tables", named or tables.choose_tables(n_distinct, bits, k), k), None
    if config.blocks != AUTO:
        return Scheme("blocks", blocking.validate_blocks(bits, int(config.blocks))), None
    chosen = survey_for(
        docs,
        threshold=config.threshold,
        max_candidates=config.max_candidates,
        copies=copies,
        minhash=minhash,
    )
    return chosen.best_effort().scheme, chosen


def survey_for(
    docs: Corpus,
    *,
    threshold: float,
    max_candidates: int | None,
    copies: blocking.Copies | None = None,
    minhash: bool = True,
) -> Survey:
    """The planner's view of this corpus: how many distinct fingerprints it has (copies of
    one are compared once), and how often those of unrelated documents agree by chance
    (measured on a sample of their pairs); for documents of words, how much those pairs'
    feature sets overlap, which prices the MinHash schemes (unless not ``minhash``)."""
    bits = docs.settings.bits
    copies = copies or blocking.collapse(docs.fingerprints, bits)
    distinct = copies.fingerprints
    return survey(
        bits=bits,
        threshold=threshold,
        n_docs=distinct.shape[0],
        documents=len(docs),
        background=sample_background(
            distinct,
            sets=docs.weights if minhash and docs.has_word_sets else None,
            set_rows=copies.representatives,
        ),
        max_candidates=max_candidates,
    )


def planner_rows(docs: Corpus) -> NDArray[np.int64]:
    """The documents whose word sets the planner reads to price MinHash (those of the pairs it
    samples, as :func:`survey_for` samples them), in order."""
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    n = copies.fingerprints.shape[0]
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    first, second = background_pairs(n)
    rows: NDArray[np.int64] = np.unique(copies.representatives[np.concatenate([first, second])])
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
    scheme, planned = _scheme(docs, config, copies)
    n_candidates, n_checked, kept, audited = _verified_pairs(
        docs, config, scheme, copies, band_keys
    )
    return dedupe_result(
        docs, config, scheme, planned, n_candidates, n_checked, kept, audited=audited
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
) -> DedupeResult:
    """The result of a run that found ``n_candidates`` with ``scheme``, checked ``n_checked``
    of them exactly and kept the pairs ``kept`` (sorted): the pairs inside the groups they
    form checked too (unless ``closure_skipped`` says why not; ``take`` fetches documents'
    vectors held elsewhere), clusters, recall and advice. ``components``: the connected
    components of ``kept``, when already known."""
    bits = docs.settings.bits
    expected = float(scheme.probability(config.threshold, bits))
    low = expected < RECALL_HINT_BELOW and planned is None
    exact = config.verify is Verify.EXACT
    closure, more = None, None
    by_candidates = kept
    closing = closure_skipped is None and config.group_pairs > 0 and len(kept) > 0
    # The groups of the flagged pairs (pairs found inside them do not change them) and the
    # collapsed fingerprints, made once for the closure and the chance pairs.
    labels = cluster.cluster_labels(kept.pairs, len(docs)) if closing and exact else None
    copies = blocking.collapse(docs.fingerprints, bits) if closing and exact else None
    if closing:
        more, closure = close_groups(docs, config, kept, take, labels=labels, copies=copies)
        kept = sorted_pairs([kept, more]) if len(more) else kept
    found = run_recall(docs, scheme, by_candidates, config.threshold, more) if exact else None
    advice = None
    if found is not None and found.recall < TARGET_RECALL:
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
        audit=_audit(docs, audited, config.threshold) if audited is not None else None,
        run_recall=found,
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

    def edges() -> Iterator[tuple[NDArray[np.int64], NDArray[np.float64]]]:
        for chunk in pairs.chunks(_EDGE_CHUNK):
            yield chunk.pairs, chunk.cosine if exact else chunk.estimated_cosine

    return group(
        edges, n_docs, kind=config.clustering, exact=exact, rank=rank, components=components
    )


_EDGE_CHUNK = 1_000_000


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
) -> tuple[int, int, ScoredPairs, NDArray[np.int64] | None]:
    """(number of candidates, how many were checked exactly, the pairs that reach the
    threshold, every candidate when an audit needs them), pairs sorted.

    Candidates are made among distinct fingerprints only. The documents of a fingerprint
    shared by up to :data:`COPIES_PAIRED` of them are then paired with each other and with
    the documents of every candidate fingerprint; a larger group (a boilerplate page) is
    represented by its first document, and its other members are paired with that one
    only, so that a thousand copies are 999 candidates, not half a million. Candidates come
    chunk by chunk and each chunk is verified as it comes (:class:`Verifier`), so memory
    follows the pairs kept, not the candidates.
    """
    bits, fps = docs.settings.bits, copies.fingerprints
    chunks: Iterable[tuple[NDArray[np.int64], NDArray[np.int64]]]
    if scheme.rows is not None:
        chunks = _minhash_chunks(docs, scheme, copies, band_keys)
    elif scheme.max_distance is None:
        chunks = blocking.candidate_chunks(
            fps, bits, scheme.blocks, max_candidates=config.max_candidates
        )
    else:
        within = tables.pairs_within(
            fps,
            scheme.max_distance,
            bits=bits,
            blocks=scheme.blocks if scheme.max_distance else None,
            max_pairs=config.max_candidates,
        )
        chunks = [(within, hamming_rows(fps[within[:, 0]], fps[within[:, 1]]))]
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


def _minhash_chunks(
    docs: Corpus,
    scheme: Scheme,
    copies: blocking.Copies,
    band_keys: NDArray[np.uint64] | None = None,
) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Candidates among distinct fingerprints from the bands of their first documents'
    MinHash signatures (seeded by the corpus's seed, or ``band_keys`` made elsewhere), with
    their Hamming distances."""
    assert scheme.rows is not None
    if band_keys is not None:
        assert band_keys.shape == (copies.representatives.size, scheme.blocks)
        keys = band_keys
    else:
        if not docs.has_word_sets:
            raise ParameterError(
                "{minhash} needs documents of words with their vectors (files or {texts}, "
                "verified exactly)",
                parameters=("minhash", "texts"),
            )
        assert docs.weights is not None
        keys = minhash.banded(
            docs.weights,
            feature_keys(docs.features),
            bands=scheme.blocks,
            rows=scheme.rows,
            seed=docs.settings.seed,
            chosen=copies.representatives,
        )
    fps = copies.fingerprints
    for pairs in minhash.band_candidate_chunks(keys):
        yield pairs, hamming_rows(fps[pairs[:, 0]], fps[pairs[:, 1]])


def _audit(docs: Corpus, candidate_pairs: NDArray[np.int64], threshold: float) -> Audit:
    """All pairs' true cosine from one sparse product, against the candidates."""
    assert docs.weights is not None
    n = len(docs)
    unit, _ = cosines.unit_rows(docs.weights)
    products = sp.coo_array(sp.triu(unit @ unit.T, k=1))
    similar = products.data >= threshold - cosines.THRESHOLD_TOLERANCE
    similar_codes = np.sort(
        products.row[similar].astype(np.int64) * n + products.col[similar].astype(np.int64)
    )
    candidate_codes = candidate_pairs[:, 0] * np.int64(n) + candidate_pairs[:, 1]
    found = np.isin(similar_codes, candidate_codes)
    missed_codes = similar_codes[~found]
    missed = np.stack((missed_codes // n, missed_codes % n), axis=1)
    n_similar = int(similar_codes.size)
    n_found = int(found.sum())
    return Audit(
        similar_pairs=n_similar,
        found=n_found,
        recall=n_found / n_similar if n_similar else 1.0,
        false_candidates=int(candidate_codes.size) - n_found,
        missed=cosines.score_pairs(
            missed, docs.fingerprints, bits=docs.settings.bits, weights=docs.weights
        ),
    )


@dataclass(frozen=True)
class Matches:
    """Stored documents near each query: row k is query ``query[k]`` and stored row ``doc[k]``
    at ``hamming[k]`` bits, sorted by query, then distance, then stored row."""

    query: NDArray[np.int64]
    doc: NDArray[np.int64]
    hamming: NDArray[np.int64]

    def nearest(self, limit: int | None) -> Matches:
        """At most ``limit`` matches per query, the nearest (None: all)."""
        if limit is None or not len(self.query):
            return self
        first = np.searchsorted(self.query, self.query, side="left")
        keep = np.arange(self.query.size) - first < limit
        return Matches(self.query[keep], self.doc[keep], self.hamming[keep])
