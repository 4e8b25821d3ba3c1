"""Verification: candidate pairs in, the pairs that reach the threshold out, chunk by chunk.

Shared by every engine: the local search and the dask engine's buckets hand their candidates
to a :class:`Verifier` through :func:`verify_candidates`, which spreads them over the copies of
each fingerprint and counts them against the candidate budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from ...errors import CandidateBudgetError, PairBudgetError
from ..config import DedupeConfig
from ..corpus import Corpus
from ..search import blocking
from ..search.blocking import COPIES_PAIRED
from ..sketch.fingerprint import hamming_rows
from . import cosines
from .cosines import ScoredPairs, Verify

__all__ = [
    "COPIES_PAIRED",
    "CandidateCount",
    "Verifier",
    "pair_budget_error",
    "sorted_pairs",
    "verify_candidates",
]


class CandidateCount:
    """Pairs of documents to verify, counted against ``--max-candidates`` as they come."""

    def __init__(self, limit: int | None, n_docs: int) -> None:
        self.limit, self.n_docs, self.total = limit, n_docs, 0

    def add(self, more: int) -> None:
        """Count ``more`` pairs.

        Raises:
            CandidateBudgetError: the total passed the limit.
        """
        self.total += more
        if self.limit is not None and self.total > self.limit:
            raise CandidateBudgetError(
                f"copies of the same fingerprints make more than {self.limit:,} "
                f"pairs of documents to verify among {self.n_docs:,} documents (budget "
                f"{self.limit:,}); {{max_candidates}} raises the budget",
                parameters=("max_candidates",),
            )


def verify_candidates(
    verifier: Verifier,
    copies: blocking.Copies,
    chunks: Iterable[tuple[NDArray[np.int64], NDArray[np.int64]]],
    budget: CandidateCount,
    *,
    with_copies: bool,
    seen: Callable[[NDArray[np.int64]], None] | None = None,
) -> None:
    """Candidate pairs of distinct fingerprints (with their distances) -> the pairs of
    documents they stand for, counted, gated and handed to ``verifier``; with
    ``with_copies``, also the pairs of documents sharing one fingerprint.

    Copies in small groups stand for themselves; a large group (more than
    :data:`COPIES_PAIRED`, boilerplate) is represented by its first document, and its other
    members are paired with that one only. ``seen`` receives every chunk of candidates.
    """
    large = copies.counts > COPIES_PAIRED
    shown = copies._replace(counts=np.where(large, 1, copies.counts))
    for pairs, distance in chunks:
        if seen is not None:
            seen(pairs)
        budget.add(int((shown.counts[pairs[:, 0]] * shown.counts[pairs[:, 1]]).sum()))
        # Gated before the copies are spread: they share their fingerprint's distance.
        near = distance <= verifier.limit
        doc_pairs, source = blocking.pairs_of_copies(pairs[near], shown)
        verifier.add(doc_pairs, distance[near][source])
    if with_copies:
        for same in (blocking.pairs_among_copies(shown), blocking.pairs_with_first(copies, large)):
            budget.add(same.shape[0])
            verifier.add(same, np.zeros(same.shape[0], dtype=np.int64))


class Verifier:
    """Candidates in, the pairs that reach the threshold out, chunk by chunk.

    With estimated verification a pair is kept when its estimate reaches the threshold. With
    exact verification (microseconds a pair) only candidates within the Hamming gate are
    checked (:func:`~simhash_cli.core.verify.cosines.hamming_gate`: the distance beyond which a
    pair at
    the threshold lands with odds below 1 in 10,000). When more
    than
    :data:`~simhash_cli.core.verify.cosines.SKETCH_PAIRS_PER_DOC` per document pass it (64 bits
    cannot
    tell 0.9 from 0.7), every document gets a 256-bit sketch and the same test is made on it
    first; until that is clear, the pairs that passed wait unchecked. Without ``sketches``
    every pair within the gate is checked exactly (when the documents' feature names are not
    at hand).
    """

    def __init__(self, docs: Corpus, config: DedupeConfig, *, sketches: bool = True) -> None:
        self.docs, self.config = docs, config
        self.bits = docs.settings.bits
        self.exact = config.verify is Verify.EXACT
        if not self.exact:
            self.limit = cosines.estimate_limit(config.threshold, self.bits)
        elif config.hamming_gate:
            self.limit = cosines.hamming_gate(config.threshold, self.bits)
        else:
            self.limit = self.bits
        self.unit: cosines.UnitRows | None = None
        if self.exact:
            self.unit = docs.unit
        self.undecided = (
            sketches and self.exact and config.hamming_gate and self.bits < cosines.SKETCH_BITS
        )
        self.sketches: NDArray[np.uint64] | None = None
        self.sketch_limit = cosines.hamming_gate(config.threshold, cosines.SKETCH_BITS)
        self.waiting: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = []
        self.n_waiting = 0
        self.kept: list[ScoredPairs] = []
        self.n_kept = 0
        self.checked = 0

    def add(self, pairs: NDArray[np.int64], distance: NDArray[np.int64]) -> None:
        """One chunk of candidates with their Hamming distances."""
        near = distance <= self.limit
        if not self.undecided:
            self._verify(pairs[near], distance[near])
            return
        self.waiting.append((pairs[near], distance[near]))
        self.n_waiting += int(near.sum())
        if self.n_waiting > cosines.SKETCH_PAIRS_PER_DOC * len(self.docs):
            assert self.docs.weights is not None
            self.sketches = cosines.sketch(
                self.docs.weights, self.docs.features, seed=self.docs.settings.seed
            )
            self.undecided = False
            self._release()

    def finish(self) -> ScoredPairs:
        """The pairs kept, sorted."""
        self._release()
        return sorted_pairs(self.kept)

    def _release(self) -> None:
        for waiting in self.waiting:
            self._verify(*waiting)
        self.waiting, self.n_waiting = [], 0

    def _verify(self, pairs: NDArray[np.int64], distance: NDArray[np.int64]) -> None:
        if self.sketches is not None:
            sketches = self.sketches
            near = hamming_rows(sketches[pairs[:, 0]], sketches[pairs[:, 1]]) <= self.sketch_limit
            pairs, distance = pairs[near], distance[near]
        cosine = np.full(pairs.shape[0], np.nan)
        if self.unit is not None:
            self.checked += pairs.shape[0]
            cosine = cosines.unit_cosine_pairs(self.unit, pairs)
        estimate = cosines.estimate_cosine_rows(distance, self.bits)
        scored = ScoredPairs(pairs, distance, estimate, cosine)
        config = self.config
        kept = scored.select(
            cosines.keep_mask(scored, threshold=config.threshold, verify=config.verify)
        )
        self.kept.append(kept)
        self.n_kept += len(kept)
        if config.max_pairs is not None and self.n_kept > config.max_pairs:
            raise pair_budget_error(config, self.docs)


def pair_budget_error(config: DedupeConfig, docs: Corpus) -> PairBudgetError:
    """More than ``config.max_pairs`` pairs of ``docs`` reach the threshold: what to do."""
    tfidf = (
        "with term counts, common words make documents alike: try {weighting} tfidf; or "
        if docs.settings.common_words_dominate
        else ""
    )
    return PairBudgetError(
        f"more than {config.max_pairs:,} pairs reach {config.verify.value} cosine >= "
        f"{config.threshold:g} among {len(docs):,} documents, which are alike as "
        f"a whole: {tfidf}raise {{threshold}}; {{max_pairs}} raises the limit",
        parameters=("weighting", "threshold", "max_pairs"),
    )


def sorted_pairs(parts: list[ScoredPairs]) -> ScoredPairs:
    """Scored pairs from chunks as one, sorted by pair."""
    if not parts:
        empty = np.empty(0, dtype=np.float64)
        return ScoredPairs(np.empty((0, 2), dtype=np.int64), np.empty(0, np.int64), empty, empty)
    pairs = np.concatenate([part.pairs for part in parts])
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return ScoredPairs(
        pairs[order],
        np.concatenate([part.hamming for part in parts])[order],
        np.concatenate([part.estimated_cosine for part in parts])[order],
        np.concatenate([part.cosine for part in parts])[order],
    )
