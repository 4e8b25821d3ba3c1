"""Finding near-duplicates in a corpus: dedupe many documents.

:func:`dedupe` chains the stages: the scheme (given, or the planner's choice for this corpus,
:mod:`~simhash_cli.core.search.planner`), candidates from blocks or Manku's tables among distinct
fingerprints, verification at the threshold (:mod:`~simhash_cli.core.verify.verifier`), clusters,
and optionally an audit against every pair's true cosine. What it is asked and what it finds
are types of their own, below every stage: :mod:`~simhash_cli.core.config` and
:mod:`~simhash_cli.core.result`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError
from .clusters import cluster
from .clusters.closure import Closure, Take, close_groups
from .clusters.groups import Edges, Groups, centrality_rank, group
from .config import AUDIT_MAX_DOCS, DedupeConfig
from .corpus import Corpus
from .result import DedupeResult
from .search import blocking
from .search.blocking import LargeCopies, suggest_blocks
from .search.candidates import every_chunks, fingerprint_chunks, minhash_chunks
from .search.pilot import Pilot, Share
from .search.planner import measures, pilot_for, scheme_for, survey_for, unmeasured
from .search.pricing import TARGET_RECALL, Scheme, Survey
from .search.recall import Advice
from .search.tables import suggest_max_distance
from .verify import cosines
from .verify.ambiguity import ambiguity
from .verify.audit import Audit, audit
from .verify.cosines import ScoredPairs, Verify
from .verify.verifier import (
    COPIES_PAIRED,
    CandidateCount,
    Verifier,
    sorted_pairs,
    verify_candidates,
)

__all__ = [
    "Audit",
    "centrality_of",
    "check_config",
    "dedupe",
    "dedupe_result",
    "group_pairs_of",
    "suggest_blocks",
    "suggest_max_distance",
    "with_empty",
]


RECALL_HINT_BELOW = 0.9


def dedupe(
    docs: Corpus,
    config: DedupeConfig | None = None,
    *,
    band_keys: NDArray[np.uint64] | None = None,
    pilot: Pilot | None = None,
    planned: Survey | None = None,
    unpiloted: str | None = None,
) -> DedupeResult:
    """Candidates by the chosen scheme, verification at the threshold, clusters.

    ``band_keys``: for a MinHash scheme, the keys of the signatures' bands made elsewhere (of
    each one's words, as :func:`~simhash_cli.core.sketch.minhash.banded` would make them here) of
    one document of each distinct fingerprint (``blocking.collapse(...).representatives``, in
    order), when ``docs`` hold the vectors of only some documents: those of the candidates.
    ``pilot``: the corpus's pilot made elsewhere (:func:`~.planner.pilot_in_pieces`), with
    which the scheme named in ``config`` was chosen: its pairs measure the run's recall;
    ``planned``: the planner's view that chose it, what the run's advice prices on;
    ``unpiloted``: why no pilot was made elsewhere, when none was.

    Raises:
        ParameterError: blocks that do not divide bits, a threshold outside [-1, 1], exact
            verification or an audit without the documents' vectors.
        CandidateBudgetError: the scheme would produce too many candidate pairs.
    """
    config = config or DedupeConfig()
    if np.any(docs.n_features == 0):
        real = np.flatnonzero(docs.n_features != 0)
        return with_empty(docs, config, dedupe(docs.select(real), config))
    check_config(docs, config, has_vectors=docs.weights is not None)
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    # The pilot prices the planner's schemes, and measures the recall of any scheme, named
    # or chosen, on the corpus's own pairs.
    if pilot is None and measures(config):
        pilot = pilot_for(docs, config, copies)
    scheme, surveyed = scheme_for(docs, config, copies, pilot=pilot)
    planned = planned or surveyed
    n_candidates, n_checked, kept, audited = _verified_pairs(
        docs, config, scheme, copies, band_keys, pilot
    )
    return dedupe_result(
        docs,
        config,
        scheme,
        planned,
        n_candidates,
        n_checked,
        kept,
        audited=audited,
        pilot=pilot,
        unpiloted=unpiloted,
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
    unpiloted: str | None = None,
) -> DedupeResult:
    """The result of a run that found ``n_candidates`` with ``scheme``, checked ``n_checked``
    of them exactly and kept the pairs ``kept`` (sorted): the pairs inside the groups they
    form checked too (unless ``closure_skipped`` says why not; ``take`` fetches documents'
    vectors held elsewhere), clusters, recall and advice. ``components``: the connected
    components of ``kept``, when already known; ``pilot``: the corpus's own pairs, whose share
    the run found is its measured recall (``unpiloted``: why there is none, when that was
    decided elsewhere)."""
    bits = docs.settings.bits
    expected = float(scheme.probability(config.threshold, bits))
    exact = config.verify is Verify.EXACT
    closed = _closed(docs, config, scheme, kept, take, closure_skipped)
    kept = closed.kept
    measured, why = measured_recall(docs, config, scheme, kept, pilot, unpiloted)
    # A named scheme's chance at the threshold suggests more tables only where its recall was
    # not measured to reach the target.
    low = expected < RECALL_HINT_BELOW and planned is None
    low &= measured is None or measured.value < TARGET_RECALL
    advice = None
    if pilot is not None and measured is not None and measured.value < TARGET_RECALL:
        advice = _pilot_advice(docs, config, scheme, planned, pilot)
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
        pilot=pilot,
        measured_recall=measured,
        unmeasured=why,
        advice=advice,
        closure=closed.closure,
        closure_skipped=closure_skipped if config.group_pairs > 0 else None,
        ambiguity=(
            ambiguity(docs, kept, config.threshold, labels=closed.labels, copies=closed.copies)
            if exact
            else None
        ),
    )


@dataclasses.dataclass(frozen=True)
class _Closed:
    """The pairs kept once the pairs inside the groups they form were checked (the closure,
    when it ran), with the groups' labels and the collapsed fingerprints it made, which the
    chance pairs use again (None where it made none)."""

    kept: ScoredPairs
    closure: Closure | None
    labels: NDArray[np.int64] | None
    copies: blocking.Copies | None


def _closed(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Scheme,
    kept: ScoredPairs,
    take: Take | None,
    skipped: str | None,
) -> _Closed:
    """The pairs inside the groups of ``kept`` checked, unless ``skipped`` says why not, none
    is asked for, or every pair was compared already (none inside a group is left)."""
    closing = skipped is None and config.group_pairs > 0 and len(kept) > 0
    closing &= scheme.kind != "every"
    if not closing:
        return _Closed(kept, None, None, None)
    # The groups of the flagged pairs (pairs found inside them do not change them) and the
    # collapsed fingerprints, made once for the closure and the chance pairs.
    exact = config.verify is Verify.EXACT
    labels = cluster.cluster_labels(kept.pairs, len(docs)) if exact else None
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits) if exact else None
    more, closure = close_groups(docs, config, kept, take, labels=labels, copies=copies)
    return _Closed(sorted_pairs([kept, more]) if len(more) else kept, closure, labels, copies)


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
    (:func:`~simhash_cli.core.clusters.groups.centrality_rank`)."""
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


def found_among(
    pairs: NDArray[np.int64], kept: ScoredPairs, n_docs: int, copies: blocking.Copies | None = None
) -> NDArray[np.bool_]:
    """Which of ``pairs`` (i < j, documents) are among the pairs ``kept``. With ``copies``,
    a document of a fingerprint shared by more than COPIES_PAIRED documents stands as that
    fingerprint's first document, which alone is paired for all of them (two of them are
    paired with each other)."""
    large = None if copies is None else LargeCopies.among(copies)
    canon = np.arange(n_docs, dtype=np.int64) if large is None else large.stand_ins(n_docs)
    asked, held = np.sort(canon[pairs], axis=1), np.sort(canon[kept.pairs], axis=1)
    kept_codes = held[:, 0] * np.int64(n_docs) + held[:, 1]
    codes = asked[:, 0] * np.int64(n_docs) + asked[:, 1]
    found: NDArray[np.bool_] = np.isin(codes, kept_codes) | (asked[:, 0] == asked[:, 1])
    return found


def measured_recall(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Scheme,
    kept: ScoredPairs,
    pilot: Pilot | None,
    unpiloted: str | None = None,
) -> tuple[Share | None, str | None]:
    """The run's recall, measured: the share of the pilot's pairs among the pairs ``kept``,
    with its interval (exact when the pilot held every pair, 1 when every pair was
    compared, as it is among documents that all share one fingerprint); or None and why it
    could not be measured (``unpiloted``, when the pilot was made elsewhere)."""
    if scheme.kind == "every":
        return Share(1.0, 1.0, 1.0, len(kept), True), None
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    if copies.counts.size == 1 and int(copies.counts[0]) <= COPIES_PAIRED:
        # One fingerprint, every document's: each pair of them was paired and checked.
        return Share(1.0, 1.0, 1.0, len(kept), True), None
    why = unpiloted if pilot is None and unpiloted is not None else unmeasured(docs, config, pilot)
    if why is not None or pilot is None:
        return None, why
    return pilot.share(found_among(pilot.pairs, kept, len(docs), copies)), None


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
    if best is None:
        return None
    return Advice(best, pilot.share(pilot.chances(best.scheme, docs.settings.bits)))


def with_empty(docs: Corpus, config: DedupeConfig, result: DedupeResult) -> DedupeResult:
    """The run of ``docs`` whose documents with words gave ``result`` (a dedupe of them alone,
    in their order): the empty documents (kept by ``--include-empty``) are duplicates of each
    other and of nothing else, one cluster, paired one by one up to COPIES_PAIRED of them,
    else each with the first. ``result``'s pairs are held (not streamed)."""
    real = np.flatnonzero(docs.n_features != 0)
    empty = np.flatnonzero(docs.n_features == 0)
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
