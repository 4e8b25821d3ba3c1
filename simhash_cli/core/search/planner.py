"""The scheme a dedupe runs on a corpus: the one its config names, or the planner's choice for
these documents. The planner reads the corpus (its distinct fingerprints, how often unrelated
ones agree by chance, how much their word sets overlap) and, when it can, runs the pilot on
its near-duplicates (:mod:`~simhash_cli.core.search.pilot`), then prices every scheme on what it saw
(:mod:`~simhash_cli.core.search.pricing`) and takes the cheapest that reaches the target recall."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from ...errors import ParameterError
from ..config import AUTO, EVERY, DedupeConfig
from ..corpus import Corpus
from ..distinct import distinct
from ..sketch.fingerprint import hamming_rows
from ..text.keyed import Vectors
from ..verify import cosines
from ..verify.cosines import Verify
from . import allpairs, blocking, tables
from .pilot import (
    FIRST_ANCHORS,
    GROWN_WORK,
    PILOT_PER_ENTRY,
    PILOT_WORK,
    Goal,
    Pilot,
    PilotPart,
    Round,
    affordable,
    assembled,
    first_anchors,
    grow,
    run_pilot,
    without,
)
from .pilot_pieces import KeyCounts
from .pricing import (
    CHECK_ENTRY,
    SAMPLE_MARGIN,
    TARGET_RECALL,
    Scheme,
    Survey,
    background_pairs,
    sample_background,
    survey,
)

__all__ = [
    "choose_scheme",
    "measures",
    "pilot_budget",
    "pilot_for",
    "pilot_goal",
    "pilot_in_pieces",
    "pilot_skipped",
    "planner_rows",
    "plans",
    "scheme_for",
    "skipped_by_config",
    "survey_for",
    "unmeasured",
]


def scheme_for(
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
    # Every pair is offered where a pilot prices the schemes: priced at the threshold, its
    # products (unpruned) are no measure of what the others find.
    if pilot is not None and pilot.usable and docs.weights is not None:
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


def pilot_for(
    docs: Corpus,
    config: DedupeConfig,
    copies: blocking.Copies,
) -> Pilot | None:
    """The pilot of this corpus at the config's threshold (:mod:`~simhash_cli.core.search.pilot`),
    grown within its budget while its pairs are too few, when it can be run (see
    :func:`pilot_skipped`) and every document's vector is at hand."""
    weights = docs.weights
    if weights is None or not np.array_equal(np.diff(weights.indptr), docs.n_features):
        return None  # some rows hold no vector (read again in part: see pilot_in_pieces)
    if skipped_by_config(config) is not None:
        return None  # (before the unit rows, which exact verification alone reads)
    total = allpairs.product_work(weights, df=docs.unit.column_counts)
    if pilot_skipped(config, len(docs), copies.counts.size, total, weights.nnz) is not None:
        return None
    return run_pilot(
        docs.unit,
        docs.fingerprints,
        np.arange(len(docs), dtype=np.int64),
        config.threshold,
        bits=docs.settings.bits,
        sets=docs.has_word_sets,
        work=PILOT_WORK,
        budget=pilot_budget(weights.nnz),
        seed=docs.settings.seed,
        goal=pilot_goal(docs, config, copies),
    )


def pilot_goal(docs: Corpus, config: DedupeConfig, copies: blocking.Copies) -> Goal:
    """What the pilot grows to measure: the share the scheme the config names finds (to
    within :data:`~simhash_cli.core.search.pilot.PRECISION`), or one at the share the planner's
    choice aims at."""
    named = None if plans(config) else scheme_for(docs, config, copies)[0]
    aimed = min(1.0, TARGET_RECALL + SAMPLE_MARGIN)
    if named is not None and named.kind == "every":
        named = None  # (nothing to measure: every pair is compared)
    return Goal(docs.settings.bits, aimed, named)


def pilot_budget(entries: int) -> int:
    """The multiply-adds a pilot may take in all rounds, for a corpus of so many stored
    entries (:data:`~simhash_cli.core.search.pilot.PILOT_PER_ENTRY`, and
    :data:`~simhash_cli.core.search.pilot.GROWN_WORK` however small)."""
    return max(PILOT_WORK, GROWN_WORK, PILOT_PER_ENTRY * entries)


def pilot_skipped(
    config: DedupeConfig, n_docs: int, n_distinct: int, total: int, entries: int
) -> str | None:
    """Why no pilot is run (None: one is): ``total``, the multiply-adds of every document's
    product with the corpus, ``entries`` the corpus's stored entries."""
    skipped = skipped_by_config(config)
    if skipped is not None:
        return skipped
    if n_distinct < 2:
        return "the documents have fewer than two distinct fingerprints"
    if affordable(n_docs, total, pilot_budget(entries)) == 0:
        return "not one document's products with the corpus fit the pilot's budget"
    return None


def skipped_by_config(config: DedupeConfig) -> str | None:
    """Why no pilot is run whatever the corpus (None: one may be)."""
    if not config.pilot:
        return "--no-pilot"
    if config.verify is not Verify.EXACT:
        return "pairs are flagged by their estimated cosine (--verify estimate)"
    if config.threshold <= 0:
        return "a threshold at or below 0 (the pilot's products see only pairs that share a word)"
    return None


def unmeasured(docs: Corpus, config: DedupeConfig, pilot: Pilot | None) -> str | None:
    """Why a run's recall is not measured (None: it is): no pilot ran (:func:`pilot_skipped`,
    or the corpus's vectors were not all at hand), or its anchors drew no pair at the
    threshold."""
    if pilot is not None:
        if pilot.complete or len(pilot.cosine):
            return None
        return (
            f"the pilot's {pilot.anchors.size:,} documents drawn at random have no pair at "
            f"cosine >= {pilot.threshold:g} with any other"
        )
    skipped = skipped_by_config(config)
    weights = docs.weights
    if skipped is not None:
        return skipped
    if weights is None or not np.array_equal(np.diff(weights.indptr), docs.n_features):
        return "the documents' vectors were not all at hand for the pilot"
    n_distinct = blocking.collapse(docs.fingerprints, docs.settings.bits).counts.size
    total = allpairs.product_work(weights)
    return pilot_skipped(config, len(docs), n_distinct, total, weights.nnz) or "no pilot ran"


def pilot_in_pieces(
    docs: Corpus,
    config: DedupeConfig,
    counts: KeyCounts,
    vectors_of: Callable[[NDArray[np.int64]], Vectors],
    pairs_with: Callable[[Vectors, NDArray[np.int64]], Sequence[PilotPart]],
) -> Pilot | str:
    """:func:`pilot_for` of a corpus whose vectors are elsewhere, in pieces (read again, or on
    a cluster's workers): ``counts``, its features' document frequencies summed over the
    pieces; ``vectors_of(rows)``, the keyed vectors of some documents; ``pairs_with(anchors'
    vectors, anchors)``, every piece's pairs with them (one pass over the pieces a round).
    The same pilot, to the bit (:mod:`~simhash_cli.core.search.pilot`), or why none runs."""
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    entries = int(counts.counts.sum())
    skipped = pilot_skipped(config, len(docs), copies.counts.size, counts.work, entries)
    if skipped is not None:
        return skipped

    budget, seed = pilot_budget(entries), docs.settings.seed
    # Each round is a pass over the pieces: the anchors every round may draw (a prefix of one
    # random order) are paired in the first, and each round takes its own anchors' pairs
    # from them (the same pairs a pass of its own finds); a round past them makes its pass.
    # (Twice what a large corpus's budget pays for: a small one's pilot grows to its own
    # budget only where its pairs call for it.)
    ahead_work = min(budget, max(PILOT_WORK, PILOT_PER_ENTRY * entries))
    ahead = first_anchors(
        len(docs), 2 * affordable(len(docs), counts.work, ahead_work) + FIRST_ANCHORS, seed=seed
    )
    made: list[tuple[PilotPart, NDArray[np.int64]]] = []

    def round_of(new: NDArray[np.int64], earlier: NDArray[np.int64]) -> Round:
        if not np.isin(new, ahead).all():
            chosen = vectors_of(new)
            parts = pairs_with(chosen, new)
            return Round(without(parts, earlier), int(counts.rows_work(chosen).sum()))
        if not made:
            chosen = vectors_of(ahead)
            made.append((without(pairs_with(chosen, ahead), ahead[:0]), counts.rows_work(chosen)))
        found, work = made[0]
        mine = np.isin(found.pairs, new).any(axis=1)
        part = PilotPart(
            found.pairs[mine],
            found.cosine[mine],
            None if found.jaccard is None else found.jaccard[mine],
        )
        return Round(without([part], earlier), int(work[np.searchsorted(ahead, new)].sum()))

    def pilot_of(parts: Sequence[PilotPart], anchors: NDArray[np.int64], spent: int) -> Pilot:
        return assembled(
            parts,
            threshold=config.threshold,
            n_docs=len(docs),
            anchors=anchors,
            fingerprints=docs.fingerprints,
            anchor_work=spent,
            every_work=counts.work,
            sets=docs.settings.tokenizer is not None,
        )

    goal = pilot_goal(docs, config, copies)
    anchors, parts, spent = grow(
        len(docs), counts.work, first=PILOT_WORK, budget=budget, seed=seed, round_of=round_of,
        enough=lambda found, drawn: goal.met(pilot_of(found, drawn, 0)),
    )  # fmt: skip
    return pilot_of(parts, anchors, spent)


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


def choose_scheme(
    docs: Corpus, config: DedupeConfig, *, minhash: bool = True
) -> tuple[Scheme, Survey | None]:
    """The scheme :func:`dedupe` would run on these documents, and the planner's view when
    it chose (``blocks="auto"``; MinHash schemes only with ``minhash``)."""
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    return scheme_for(docs, config, copies, minhash=minhash)


def measures(config: DedupeConfig) -> bool:
    """Whether a run's recall is measured by a pilot, whatever scheme finds its candidates
    (unless :func:`pilot_skipped` says why not from the config alone, or every pair is
    compared: none can be missed)."""
    skipped = skipped_by_config(config) is not None
    return not skipped and config.blocks != EVERY


def plans(config: DedupeConfig) -> bool:
    """Whether the planner chooses the scheme (none is named)."""
    named = config.minhash is not None or config.max_distance is not None
    return config.pilot and config.blocks == AUTO and not named
