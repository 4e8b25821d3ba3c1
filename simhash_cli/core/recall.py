"""How much of the answer a run found, estimated from the pairs it found, and what would find more.

A scheme's expected recall is a promise about one pair exactly at the threshold. What a user
needs is this run's share of all the pairs that reach the threshold, most of which sit above
it. Every pair the run kept had a known chance p of becoming a candidate: the scheme's S-curve
at the pair's true cosine (fingerprint schemes) or at the Jaccard of its feature sets
(MinHash). Each found pair then stands for 1/p pairs of its kind (the Horvitz-Thompson
estimator), so the pairs at or above the threshold number about sum(1/p), and the run found
``found / sum(1/p)`` of them. The same weights tell what another scheme would have found:
``sum(p'/p) / sum(1/p)``.

The estimate cannot count pairs the scheme almost never finds: a pair that few seeds make a
candidate leaves almost no trace, and one found against the odds would stand for many that
may not exist. Found pairs whose chance was below LEAST_CHANCE are therefore set aside and
counted apart; the estimate is of the pairs the scheme finds with at least that chance, and
says where that ends (a Jaccard for MinHash, a cosine for the fingerprint schemes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .corpus import Corpus
from .cosines import ScoredPairs
from .minhash import jaccard_pairs
from .schemes import Assessment, Scheme

__all__ = ["Advice", "RunRecall", "advise", "run_recall"]

SAMPLE_PAIRS = 200_000
"""Found pairs the estimate is made from (a seeded sample of them when there are more)."""

LEAST_CHANCE = 0.05
"""Found pairs whose chance of being found was below this are set aside, not counted: each
would stand for more than 20 others, and one found against the odds would swing the estimate
from run to run."""


@dataclass(frozen=True)
class RunRecall:
    """The share of the pairs at or above the threshold that this run found.

    Attributes:
        recall: found / estimated pairs at or above the threshold, among the pairs the scheme
            finds with a chance of at least LEAST_CHANCE.
        pairs: the found pairs the estimate was made from (scaled from the sample when the
            pairs found were more than SAMPLE_PAIRS).
        rare: found pairs set aside, their chance below LEAST_CHANCE (scaled likewise).
        sampled: whether the estimate was made on a sample of the pairs found.
        rarely_below: where that chance ends: the Jaccard (MinHash) or cosine (fingerprint
            schemes) below which pairs are rarely found; None when every pair at the
            threshold is found with at least that chance.
        weights: 1/p of each counted pair (for :func:`advise`).
        cosine: their true cosine.
        jaccard: their feature sets' Jaccard, when the corpus has sets.
    """

    recall: float
    pairs: int
    rare: int
    sampled: bool
    rarely_below: float | None
    weights: NDArray[np.float64]
    cosine: NDArray[np.float64]
    jaccard: NDArray[np.float64] | None

    def predicted(self, scheme: Scheme, bits: int) -> float | None:
        """The share of the same pairs ``scheme`` would find (None: it needs sets this
        corpus does not have)."""
        chance = _chance(scheme, bits, self.cosine, self.jaccard)
        if chance is None:
            return None
        return float(np.sum(chance * self.weights) / np.sum(self.weights))


def _chance(
    scheme: Scheme,
    bits: int,
    cosine: NDArray[np.float64],
    jaccard: NDArray[np.float64] | None,
) -> NDArray[np.float64] | None:
    if scheme.rows is None:
        return scheme.probability(cosine, bits)
    if jaccard is None:
        return None
    # A pair is also found when the two fingerprints are equal (copies are always paired).
    same = (1.0 - np.arccos(np.clip(cosine, -1.0, 1.0)) / np.pi) ** bits
    chance: NDArray[np.float64] = 1.0 - (1.0 - scheme.probability_at_jaccard(jaccard)) * (
        1.0 - same
    )
    return chance


def run_recall(
    docs: Corpus,
    scheme: Scheme,
    kept: ScoredPairs,
    threshold: float,
    more: ScoredPairs | None = None,
) -> RunRecall | None:
    """This run's recall, estimated from the pairs its candidates found (``kept``), counting
    also the pairs found afterwards (``more``, inside the groups found); None without their
    true cosines (verification by estimate) or without any pair.

    Only the pairs found as candidates had a known chance of being found; they estimate how
    many pairs there are (sum 1/p), and every pair found, however, counts as found."""
    counted = _counted(docs, scheme, kept)
    if counted is None:
        return None
    chance, cosine, jaccard, scale = counted
    least = chance >= LEAST_CHANCE
    if not least.any():
        return None
    found = least.sum() * scale
    extra = _counted(docs, scheme, more) if more is not None and len(more) else None
    if extra is not None:
        found += (extra[0] >= LEAST_CHANCE).sum() * extra[3]
    return RunRecall(
        recall=float(min(1.0, found / (scale * np.sum(1.0 / chance[least])))),
        pairs=round(int(least.sum()) * scale),
        rare=round(int((~least).sum()) * scale),
        sampled=scale > 1,
        rarely_below=_rarely_below(scheme, docs.settings.bits, threshold),
        weights=1.0 / chance[least],
        cosine=cosine[least],
        jaccard=None if jaccard is None else jaccard[least],
    )


def _counted(
    docs: Corpus, scheme: Scheme, kept: ScoredPairs
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None, float] | None:
    """(each pair's chance of being found, its cosine, its Jaccard, how many pairs each
    stands for) of the pairs with a true cosine, or a seeded sample of SAMPLE_PAIRS of them;
    None when there are none, or when the chance needs sets the corpus does not have."""
    real = np.flatnonzero(np.isfinite(kept.cosine))
    if real.size == 0:
        return None
    scale = real.size / min(real.size, SAMPLE_PAIRS)
    if real.size > SAMPLE_PAIRS:
        real = np.sort(np.random.default_rng(0).choice(real, SAMPLE_PAIRS, replace=False))
    pairs, cosine = kept.pairs[real], kept.cosine[real]
    jaccard = None
    if docs.has_word_sets and docs.weights is not None:
        jaccard = jaccard_pairs(docs.weights, pairs)
    chance = _chance(scheme, docs.settings.bits, cosine, jaccard)
    if chance is None:
        return None
    return chance, cosine, jaccard, scale


def _rarely_below(scheme: Scheme, bits: int, threshold: float) -> float | None:
    """The Jaccard (MinHash) or cosine below which the scheme's chance is under LEAST_CHANCE
    (None for a cosine at or below the threshold: every pair at the threshold counts)."""
    if scheme.rows is not None:
        # 1 - (1 - J^r)^b = LEAST_CHANCE, solved for J.
        per_band = 1.0 - (1.0 - LEAST_CHANCE) ** (1.0 / scheme.blocks)
        return float(per_band ** (1.0 / scheme.rows))
    grid = np.linspace(-1.0, 1.0, 20_001)
    reached = np.flatnonzero(scheme.probability(grid, bits) >= LEAST_CHANCE)
    if reached.size == 0 or grid[reached[0]] <= threshold:
        return None
    return float(grid[reached[0]])


@dataclass(frozen=True)
class Advice:
    """A scheme that would find more: the planner's judgement and its share of this run's
    pairs."""

    assessment: Assessment
    recall: float


def advise(
    found: RunRecall, assessments: Sequence[Assessment], *, bits: int, target: float
) -> Advice | None:
    """The cheapest of the judged schemes predicted to find ``target`` of this run's pairs
    (None when none is; pass only the schemes within the budget)."""
    reaching = []
    for assessment in assessments:
        predicted = found.predicted(assessment.scheme, bits)
        if predicted is not None and predicted >= target:
            reaching.append(Advice(assessment, predicted))
    return min(reaching, key=lambda advice: advice.assessment.cost, default=None)
