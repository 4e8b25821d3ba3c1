"""The pilot: the corpus's own near-duplicate pairs, found exactly, with known odds.

A scheme's recall depends on the pairs the corpus really holds: their cosines (the fingerprint
schemes' chance), and for MinHash how much their word sets overlap, which no bound on term
counts can tell (two licences that share the whole GPL text sit at tf cosine 0.95 with word
sets at Jaccard 0.3). So before a scheme is chosen, the pilot finds every pair at the
threshold that involves one of ``m`` anchors, drawn at random among the n distinct documents,
by exact products of the anchors' rows with the corpus (:mod:`~simhash_cli.core.search.allpairs`).
Documents, not fingerprints, are drawn: two texts may share a fingerprint and not their
cosines with a third, and the pairs a user wants are pairs of documents.

Every pair of documents is drawn with the same chance, ``1 - (n-m)(n-m-1)/(n(n-1))``
(one of its two documents is an anchor), whatever it looks like: the pilot's pairs are a
uniform sample of the pairs at the threshold. The share of them a scheme would find, or a run
did find, estimates that scheme's or that run's recall without any model of the corpus. The
pairs an anchor draws come together (a family of copies gives many), so the interval counts
anchors, not pairs (:meth:`Pilot.share`). When the whole corpus fits the pilot's budget,
every document is an anchor and the pilot is the answer itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..sketch.fingerprint import hamming_rows
from ..sketch.minhash import jaccard_pairs
from ..verify.cosines import THRESHOLD_TOLERANCE, UnitRows, unit_cosine_pairs
from . import allpairs
from .blocking import LargeCopies, size_spans
from .scheme import Scheme

__all__ = [
    "FIRST_ANCHORS",
    "GROWN_WORK",
    "GROWTH",
    "MIN_EFFECTIVE",
    "MIN_PRICED",
    "PILOT_PER_ENTRY",
    "PILOT_WORK",
    "PRECISION",
    "Goal",
    "Pilot",
    "PilotPart",
    "Round",
    "Share",
    "affordable",
    "assembled",
    "first_anchors",
    "grow",
    "row_work",
    "run_pilot",
    "without",
]

PILOT_WORK = 100_000_000
"""Multiply-adds the pilot's first round may take (about half a second on one core): a few
percent of a run at 100,000 documents, the whole search of every pair of a few thousand."""

PILOT_PER_ENTRY = 40
"""Multiply-adds (of the unpruned products, which the pruned search takes 2-3 times faster) a
pilot that grows may take in all for each stored entry of the corpus (at least PILOT_WORK).
At 5, 100,000 prose records (1.7e7 entries) had a pilot of 28 anchors and 6 pairs, too few to
price a scheme, and the run chose by the bound at the threshold: 33 s. At 40 it grows to 178
anchors and 88 pairs (5 s of a 14 s run, measured), whose prices choose a scheme that finds
0.995 of every pair."""

GROWN_WORK = 500_000_000
"""Multiply-adds a pilot that grows may take in all however small the corpus (a few seconds at
most, pruned): at PILOT_WORK, 5,924 Python sources had a pilot of 379 anchors whose 1,582
pairs were worth 67 independent ones; it stated 0.97 (0.90 to 1.00) of a run that found
0.909."""

MIN_EFFECTIVE = 25
"""Pairs (counted as independent: see :meth:`Pilot.effective`) a pilot grows to have at least,
within its budget."""

PRECISION = 0.03
"""The half-width of the 95% interval a pilot grows to measure its share at, within its
budget (:class:`Goal`): the share it then states is within 0.05 of the share found nearly
every time. At a share of 0.97 that takes about 125 independent pairs, at 0.5 about 1,000."""

MIN_PRICED = 10
"""Pairs (counted as independent) a pilot must have to price the schemes; one that grew to
fewer than :data:`MIN_EFFECTIVE` within its budget still prices them (a million prose
records drew 78 pairs worth 24.9, and a run priced at the threshold instead found 0.52 of
its pairs). Below ten, a share's 95% interval is wider than 0.25 whatever its value: such a
pilot still measures the run's recall, with that interval, but prices nothing, and the
planner chooses among the fingerprint schemes at the threshold (their chance there is a
bound for every pair above it)."""

_Z = 1.96
"""The normal quantile of a two-sided 95% interval."""


@dataclass(frozen=True)
class Share:
    """A share of the pilot's pairs, with a 95% interval.

    Attributes:
        value: the share.
        low: its interval's lower end.
        high: its upper end.
        pairs: the pilot's pairs it is a share of.
        exact: the pilot held every pair (the interval is the value).
    """

    value: float
    low: float
    high: float
    pairs: int
    exact: bool


@dataclass(frozen=True)
class Pilot:
    """The pairs at the threshold drawn by the pilot's anchors.

    Attributes:
        threshold: the cosine the pairs reach.
        n_docs: the documents anchors are drawn from.
        anchors: (m,) the anchors' rows, ascending.
        pairs: (k, 2) rows of the pairs at the threshold (i < j), sorted.
        anchor: (k,) for each pair, the position in ``anchors`` of the anchor that drew it.
        cosine: (k,) each pair's true cosine.
        hamming: (k,) the Hamming distance of its fingerprints.
        jaccard: (k,) the Jaccard of its feature sets, when the corpus has sets.
        work: the multiply-adds the pilot took.
        every_work: the multiply-adds of comparing every pair of its rows (what
            :func:`~simhash_cli.core.search.allpairs.product_work` counts, summed here once).
    """

    threshold: float
    n_docs: int
    anchors: NDArray[np.int64]
    pairs: NDArray[np.int64]
    anchor: NDArray[np.int64]
    cosine: NDArray[np.float64]
    hamming: NDArray[np.int64]
    jaccard: NDArray[np.float64] | None
    work: int
    every_work: int = 0

    @property
    def complete(self) -> bool:
        """Every distinct document was an anchor: the pairs are all the pairs."""
        return self.anchors.size >= self.n_docs

    @property
    def inclusion(self) -> float:
        """The chance that a given pair of distinct documents is one of the pilot's."""
        n, m = self.n_docs, self.anchors.size
        if n < 2:
            return 1.0
        return 1.0 - (n - m) * (n - m - 1) / (n * (n - 1))

    @property
    def effective(self) -> float:
        """How many independent pairs the pilot's pairs are worth: ``(sum P_a)^2 / sum
        P_a^2`` over the anchors' counts P_a (k when each anchor drew one pair; the size of a
        family when one anchor drew them all)."""
        if self.complete:
            return float(len(self.cosine))
        return _worth(np.bincount(self.anchor, minlength=self.anchors.size))

    @property
    def usable(self) -> bool:
        """Whether schemes can be priced on the pilot's pairs (enough of them, or all:
        :data:`MIN_PRICED`)."""
        return self.complete or self.effective >= MIN_PRICED

    def total(self) -> Share:
        """The pairs at the threshold among the documents: the pilot's count over
        its inclusion, with an interval from the spread of the anchors' counts (each anchor's
        draw is one cluster of pairs)."""
        k = len(self.cosine)
        if self.complete:
            return Share(float(k), float(k), float(k), k, True)
        estimate = k / self.inclusion
        m = self.anchors.size
        counts = np.bincount(self.anchor, minlength=m).astype(np.float64)
        mean = float(counts.mean()) if m else 0.0
        relative = float(np.std(counts, ddof=1)) / (mean * math.sqrt(m)) if m > 1 and mean else 0.0
        half = _Z * relative * estimate
        return Share(estimate, max(float(k), estimate - half), estimate + half, k, False)

    def chances(self, scheme: Scheme, bits: int) -> NDArray[np.float64]:
        """Each of the pilot's pairs' chance of becoming a candidate of ``scheme``: 1 for
        two documents that share a fingerprint (copies are always paired), else the scheme's
        chance at the pair's cosine (and Jaccard, for MinHash)."""
        if self.jaccard is None and scheme.rows is not None:
            raise ValueError("a MinHash scheme's chance needs the pairs' Jaccard")
        # Only the pairs that are not copies are priced: a boilerplate page's 2,000 copies
        # gave the pilot 100,000s of pairs at distance 0, each priced 24 times a run.
        chance = np.ones(self.cosine.size, dtype=np.float64)
        apart = np.flatnonzero(self.hamming != 0)
        if apart.size:
            jaccard = None if self.jaccard is None else self.jaccard[apart]
            chance[apart] = scheme.chance(self.cosine[apart], jaccard, bits)
        return chance

    def share(self, found: NDArray[np.bool_] | NDArray[np.float64]) -> Share:
        """The share of the pilot's pairs that ``found`` marks (booleans), or the mean of a
        chance per pair (floats in [0, 1]), with a 95% interval: the wider of Wilson's, on
        the pairs' effective count (:attr:`effective`), and the normal one of the ratio of
        the anchors' sums (:func:`_ratio_error`), which grows where misses gather in one
        anchor's pairs."""
        values = np.asarray(found, dtype=np.float64)
        k = values.size
        if k == 0:  # no pair to miss: all of none when the pilot saw every pair
            return Share(1.0, 1.0 if self.complete else 0.0, 1.0, 0, self.complete)
        value = float(values.mean())
        if self.complete:
            return Share(value, value, value, k, True)
        low, high = _wilson(value, self.effective)
        # Misses held by one anchor's many pairs (a family whose words overlap little) widen
        # it further: the spread of the anchors' own shares, by linearization of the ratio.
        # On 100,000 prose records one anchor's 5 pairs were 5 of the 88 missed, Wilson's
        # interval at their worth (25) ended at 0.987, and the run had found 0.995.
        spread = _Z * _ratio_error(self.anchor, values, self.anchors.size)
        low, high = min(low, value - spread), max(high, value + spread)
        # The interval holds its value, whatever the last bit of the arithmetic.
        return Share(value, max(0.0, min(low, value)), min(1.0, max(high, value)), k, False)


def _ratio_error(anchor: NDArray[np.int64], values: NDArray[np.float64], anchors: int) -> float:
    """The standard error of a share of pairs drawn by clusters (each anchor's pairs), by
    linearization of the ratio of the anchors' sums: ``sqrt(m / (m - 1) * sum((f_a - R p_a)
    ^ 2)) / sum(p_a)``, with f_a the anchor's found share summed, p_a its pairs, R their
    ratio and m the anchors (those that drew no pair among them)."""
    if anchors < 2 or not values.size:
        return 0.0
    pairs = np.bincount(anchor, minlength=anchors).astype(np.float64)
    found = np.bincount(anchor, weights=values, minlength=anchors)
    ratio = float(found.sum() / pairs.sum())
    residual = found - ratio * pairs
    return math.sqrt(anchors / (anchors - 1) * float(residual @ residual)) / float(pairs.sum())


def _wilson(share: float, count: float) -> tuple[float, float]:
    """Wilson's 95% interval for a share observed on ``count`` independent trials."""
    if count <= 0:
        return 0.0, 1.0
    z2 = _Z * _Z
    centre = (share + z2 / (2 * count)) / (1 + z2 / count)
    half = _Z * math.sqrt(share * (1 - share) / count + z2 / (4 * count * count)) / (1 + z2 / count)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Goal:
    """What a growing pilot's pairs must measure: the share of them the run's scheme finds,
    to within :data:`PRECISION` (the half-width of its 95% interval).

    Attributes:
        bits: fingerprint width (a scheme's chance at a pair's cosine).
        aimed: the share a scheme the planner chooses reaches, when none is named.
        scheme: the scheme the user named (None: the planner's choice, not known before
            the pilot prices it).
    """

    bits: int
    aimed: float
    scheme: Scheme | None = None

    def met(self, pilot: Pilot) -> bool:
        """Whether ``pilot`` measures the share well enough: all pairs, or at least
        :data:`MIN_EFFECTIVE` independent ones and an interval no wider than the goal's
        (the named scheme's own, or one at the share aimed at)."""
        if pilot.complete:
            return True
        if pilot.effective < MIN_EFFECTIVE:
            return False
        scheme = self.scheme
        if scheme is not None and (scheme.rows is None or pilot.jaccard is not None):
            share = pilot.share(pilot.chances(scheme, self.bits))
            low, high = share.low, share.high
        else:
            low, high = _wilson(self.aimed, pilot.effective)
        return (high - low) / 2 <= PRECISION


def row_work(weights: sp.csr_array, df: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """Each row's product with the corpus in multiply-adds: for each of its features, the
    rows holding that feature (``df``, when counted already: a few million entries at a
    time)."""
    df = allpairs.column_counts(weights) if df is None else df
    sizes = np.diff(weights.indptr).astype(np.int64)
    work = np.zeros(sizes.size, dtype=np.int64)
    for lo, hi in size_spans(sizes, 1 << 22):
        start, stop = int(weights.indptr[lo]), int(weights.indptr[hi])
        sums = np.concatenate(([0], np.cumsum(df[weights.indices[start:stop]])))
        ends = weights.indptr[lo : hi + 1] - start
        work[lo:hi] = sums[ends[1:]] - sums[ends[:-1]]
    return work


def affordable(n_docs: int, total: int, work: int) -> int:
    """How many anchors ``work`` multiply-adds pay for, at the mean row's cost (all of them
    when every row's product fits)."""
    if total <= work:
        return n_docs
    return min(n_docs, int(work * n_docs // total))


def first_anchors(n_docs: int, count: int, *, seed: int) -> NDArray[np.int64]:
    """The first ``count`` rows (ascending) of the seed's random order of the ``n_docs`` rows:
    a uniform random subset, and each larger count holds each smaller one, so that a pilot
    grows by drawing more rows of the same order."""
    if count >= n_docs:
        return np.arange(n_docs, dtype=np.int64)
    order = np.random.default_rng(seed).permutation(n_docs)
    return np.sort(order[:count]).astype(np.int64)


@dataclass(frozen=True)
class Round:
    """What one round of a growing pilot found: its new anchors' pairs at the threshold (with
    every document but the anchors of earlier rounds, whose pairs are known) and the
    multiply-adds its anchors' products took."""

    part: PilotPart
    work: int


GROWTH = 4
"""How many times its anchors a pilot's next round holds at most."""

FIRST_ANCHORS = 32
"""Anchors a pilot's first round draws at least, when its budget pays for them: each round
passes over the whole corpus (at a million prose records, 3.5 s a round, as much as 50
anchors' products), and the first round's work alone paid for 2 anchors there, so the pilot
took five rounds to reach 180."""


def grow(
    n_docs: int,
    total: int,
    *,
    first: int,
    budget: int,
    seed: int,
    round_of: Callable[[NDArray[np.int64], NDArray[np.int64]], Round],
    enough: Callable[[Sequence[PilotPart], NDArray[np.int64]], bool] | None = None,
) -> tuple[NDArray[np.int64], list[PilotPart], int]:
    """The anchors of a pilot that grows, its parts and the work they took.

    The first round draws as many anchors as ``first`` multiply-adds pay for (at least
    :data:`FIRST_ANCHORS` that the budget pays for); while the pairs
    found are not ``enough`` (default: worth :data:`MIN_EFFECTIVE` independent ones) and the
    ``budget`` is not spent, the next round draws more rows of the same random order (at most
    :data:`GROWTH` times as many, as many as the budget left pays for at the mean row's cost).
    The anchors stay a uniform random subset of the rows: each round's count is fixed before
    its rows are drawn. ``round_of(new, earlier)`` finds a round's pairs: those of the new
    anchors (ascending) with every row but the ``earlier`` anchors.

    Args:
        n_docs: the rows anchors are drawn from.
        total: the multiply-adds of every row's product (each row's cost, summed).
        first: the first round's work.
        budget: the work of all rounds together.
        seed: the random order of the rows.
        round_of: one round's pairs and work.
        enough: whether the parts found with these anchors (rows, ascending) suffice
            (:meth:`Goal.met`).
    """
    least = min(FIRST_ANCHORS, affordable(n_docs, total, budget))
    count = max(affordable(n_docs, total, min(first, budget)), least)
    anchors = np.zeros(0, dtype=np.int64)
    parts: list[PilotPart] = []
    spent = 0
    while count > anchors.size:
        drawn = first_anchors(n_docs, count, seed=seed)
        new = np.setdiff1d(drawn, anchors, assume_unique=True)
        found = round_of(new, anchors)
        anchors, spent = drawn, spent + found.work
        parts.append(found.part)
        if anchors.size >= n_docs or spent >= budget:
            break
        if enough(parts, anchors) if enough else _effective(parts, anchors) >= MIN_EFFECTIVE:
            break
        more = affordable(n_docs, total, budget - spent)
        count = min(n_docs, anchors.size * GROWTH, anchors.size + more)
    return anchors, parts, spent


def _effective(parts: Sequence[PilotPart], anchors: NDArray[np.int64]) -> float:
    """:attr:`Pilot.effective` of the pairs found so far."""
    pairs = np.concatenate([p.pairs for p in parts]) if parts else np.zeros((0, 2), np.int64)
    drawer = np.where(np.isin(pairs[:, 0], anchors), pairs[:, 0], pairs[:, 1])
    return _worth(np.bincount(np.searchsorted(anchors, drawer), minlength=anchors.size))


def _worth(counts: NDArray[np.int64]) -> float:
    """How many independent pairs the anchors' counts of pairs are worth: ``(sum P_a)^2 /
    sum P_a^2``."""
    values = counts.astype(np.float64)
    squares = float(values @ values)
    return float(values.sum()) ** 2 / squares if squares else 0.0


def run_pilot(
    unit: UnitRows,
    fingerprints: NDArray[np.uint64],
    rows: NDArray[np.int64],
    threshold: float,
    *,
    bits: int,
    sets: bool,
    work: int = PILOT_WORK,
    budget: int | None = None,
    seed: int = 0,
    goal: Goal | None = None,
) -> Pilot:
    """Every pair at ``threshold`` that involves an anchor, anchors drawn among ``rows``
    (ascending) as many as ``work`` allows, in more rounds up to ``budget`` while their pairs
    are too few (:func:`grow`) or do not meet the ``goal``.

    Args:
        unit: the corpus's weights with their scales.
        fingerprints: (n_docs, words) every document's fingerprint.
        rows: the documents anchors are drawn from and paired with.
        threshold: the cosine the pairs must reach.
        bits: fingerprint width.
        sets: whether the documents are word sets too (the pairs' Jaccard is measured).
        work: the multiply-adds the first round's products may take.
        budget: those of all rounds (None: ``work``, one round).
        seed: the anchors' draw.
        goal: what the pairs must measure (None: :data:`MIN_EFFECTIVE` of them).
    """
    weights = unit.weights
    per_row = row_work(weights, unit.column_counts)[rows]
    index = allpairs.Suffixes.among(unit, rows, threshold)  # once for every round
    copies = LargeCopies.of(fingerprints, bits)
    wanted = None if copies is None else copies.wanted

    def round_of(new: NDArray[np.int64], earlier: NDArray[np.int64]) -> Round:
        pairs = allpairs.near_pairs(
            unit, threshold, among=rows, anchors=rows[new], index=index, wanted=wanted
        )
        cosine = unit_cosine_pairs(unit, pairs)
        near = cosine >= threshold - THRESHOLD_TOLERANCE
        pairs, cosine = pairs[near], cosine[near]
        jaccard = jaccard_pairs(weights, pairs) if sets else None
        part = without([PilotPart(pairs, cosine, jaccard)], rows[earlier])
        return Round(part, int(per_row[new].sum()))

    total = int(per_row.sum())

    def pilot_of(parts: Sequence[PilotPart], positions: NDArray[np.int64], spent: int) -> Pilot:
        return assembled(
            parts,
            threshold=threshold,
            n_docs=int(rows.size),
            anchors=rows[positions],
            fingerprints=fingerprints,
            anchor_work=spent,
            every_work=total,
            sets=sets,
        )

    positions, parts, spent = grow(
        rows.size, total, first=work, budget=work if budget is None else budget, seed=seed,
        round_of=round_of,
        enough=None if goal is None else lambda found, drawn: goal.met(pilot_of(found, drawn, 0)),
    )  # fmt: skip
    return pilot_of(parts, positions, spent)


# ---------------------------------------------------------------------------- parts
#
# A pilot's pairs come in parts (its rounds, or the pieces of a corpus read in pieces:
# :mod:`~simhash_cli.core.search.pilot_pieces`), put together by :func:`assembled`.


@dataclass(frozen=True)
class PilotPart:
    """A piece's pairs with the anchors: (k, 2) rows of the whole corpus (i < j), their
    cosine, and their Jaccard when the documents are word sets."""

    pairs: NDArray[np.int64]
    cosine: NDArray[np.float64]
    jaccard: NDArray[np.float64] | None


def without(parts: Sequence[PilotPart], earlier: NDArray[np.int64]) -> PilotPart:
    """The parts' pairs as one part, less those with one of the ``earlier`` anchors (rows,
    ascending): a pair of a new anchor with an earlier one was found in that one's round."""
    pairs = np.concatenate([p.pairs for p in parts]) if parts else np.zeros((0, 2), np.int64)
    cosine = np.concatenate([p.cosine for p in parts]) if parts else np.zeros(0)
    keep = ~np.isin(pairs, earlier).any(axis=1)
    jaccard = None
    measured = [p.jaccard for p in parts if p.jaccard is not None]
    if measured:
        jaccard = np.concatenate(measured)[keep]
    return PilotPart(pairs[keep], cosine[keep], jaccard)


def assembled(
    parts: Sequence[PilotPart],
    *,
    threshold: float,
    n_docs: int,
    anchors: NDArray[np.int64],
    fingerprints: NDArray[np.uint64],
    anchor_work: int,
    every_work: int,
    sets: bool,
) -> Pilot:
    """The pilot of the pieces' pairs: what :func:`run_pilot` gives for the whole corpus."""
    pairs = np.concatenate([p.pairs for p in parts]) if parts else np.zeros((0, 2), np.int64)
    cosine = np.concatenate([p.cosine for p in parts]) if parts else np.zeros(0)
    jaccard = None
    if sets:
        measured = [p.jaccard for p in parts if p.jaccard is not None]
        jaccard = np.concatenate(measured) if measured else np.zeros(0)
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    pairs, cosine = pairs[order], cosine[order]
    is_anchor = np.isin(pairs[:, 0], anchors)
    drawer = np.where(is_anchor, pairs[:, 0], pairs[:, 1])
    return Pilot(
        threshold=threshold,
        n_docs=n_docs,
        anchors=anchors,
        pairs=pairs,
        anchor=np.searchsorted(anchors, drawer).astype(np.int64),
        cosine=cosine,
        hamming=hamming_rows(fingerprints[pairs[:, 0]], fingerprints[pairs[:, 1]]).astype(np.int64),
        jaccard=None if jaccard is None else jaccard[order],
        work=anchor_work,
        every_work=every_work,
    )
