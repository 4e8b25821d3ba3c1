"""Whether unrelated documents come near the threshold, and what would set them apart.

Term counts make any two texts of one language alike through their common words: on natural
prose two unrelated documents sit near cosine 0.5, and on a corpus of one kind (licences, man
pages, support tickets) many sit at 0.8 and some above 0.9. There the threshold no longer
separates near-duplicates from documents that merely share a vocabulary. The corpus's own
chance pairs show it: the true cosine of random pairs of its documents (distinct fingerprints,
a seeded sample), measured under the run's weighting and, for term counts, under tf-idf on the
same counts, whose weights discount the words every document has. Pairs inside one group of
flagged pairs are not chance pairs and are left out; a corpus of fewer than MIN_DOCUMENTS
distinct documents has too few pairs to tell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..clusters import cluster
from ..corpus import Corpus
from ..search import blocking
from ..search.pricing import background_pairs
from ..text.vectorize import Weighting, apply_weighting
from .cosines import THRESHOLD_TOLERANCE, ScoredPairs, cosine_pairs

__all__ = ["AMBIGUOUS_SHARE", "NEAR", "Ambiguity", "Spread", "ambiguity", "chance_sample"]

SAMPLE_PAIRS = 4_000
MIN_DOCUMENTS = 20
NEAR = 0.1
"""How far below the threshold a chance pair counts as near it."""
AMBIGUOUS_SHARE = 0.01
"""The share of chance pairs near or above the threshold from which the data is ambiguous."""


@dataclass(frozen=True)
class Spread:
    """Where the chance pairs sit under one weighting.

    Attributes:
        weighting: the weighting.
        median: their median cosine.
        near: the share within NEAR below the threshold.
        above: the share at or above it.
        flagged: of the run's flagged pairs measured again under this weighting, how many stay
            at or above the threshold (None: the run's own weighting).
    """

    weighting: Weighting
    median: float
    near: float
    above: float
    flagged: int | None = None


@dataclass(frozen=True)
class Ambiguity:
    """Chance pairs near the threshold: under the run's weighting and under one that separates
    them better (None when none can be measured from what the run holds).

    Attributes:
        pairs: the random pairs measured (those of two groups).
        threshold: the run's threshold.
        flagged: the run's flagged pairs with a true cosine.
        now: the run's weighting.
        instead: tf-idf on the same counts (for term counts only).
        grouped: the pairs include pairs inside one group of flagged pairs (when most pairs
            are: common words have joined most documents into few groups, and the pairs left
            between groups would not show where the corpus's pairs sit).
    """

    pairs: int
    threshold: float
    flagged: int
    now: Spread
    instead: Spread | None
    grouped: bool = False


def ambiguity(
    docs: Corpus,
    flagged: ScoredPairs,
    threshold: float,
    *,
    labels: NDArray[np.int64] | None = None,
    copies: blocking.Copies | None = None,
) -> Ambiguity | None:
    """The corpus's chance pairs against ``threshold``, when they come near it (a share of at
    least AMBIGUOUS_SHARE within NEAR below it or above it); None when they do not, or when
    the documents' vectors are not all at hand (fingerprints alone, or read again in part).
    ``labels`` (the groups of ``flagged``) and ``copies`` (the collapsed fingerprints): when
    the caller has them already."""
    weights, weighting = docs.weights, docs.settings.weighting
    if weights is None or weighting is None or len(docs) < 3 or threshold <= NEAR:
        return None
    if not np.array_equal(np.diff(weights.indptr), docs.n_features):
        return None  # some rows hold no vector (the index reads again only what it needs)
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits) if copies is None else copies
    rows = copies.representatives
    if rows.size < MIN_DOCUMENTS:
        return None
    group = cluster.cluster_labels(flagged.pairs, len(docs)) if labels is None else labels
    sample = chance_sample(rows, group)
    grouped = sample.shape[0] < SAMPLE_PAIRS // 2
    if grouped:
        sample = chance_sample(rows, np.arange(len(docs), dtype=np.int64))
    if not sample.shape[0]:
        return None
    order = docs.column_order
    now = _spread(cosine_pairs(weights, sample, order), weighting, threshold)
    if now.near + now.above < AMBIGUOUS_SHARE:
        return None
    real = flagged.select(np.isfinite(flagged.cosine))
    instead = None
    if weighting is Weighting.TF:
        tfidf = apply_weighting(weights, Weighting.TFIDF)
        kept = cosine_pairs(tfidf, real.pairs, order) >= threshold - THRESHOLD_TOLERANCE
        tfidf_now = cosine_pairs(tfidf, sample, order)
        instead = _spread(tfidf_now, Weighting.TFIDF, threshold, int(kept.sum()))
    return Ambiguity(int(sample.shape[0]), threshold, len(real), now, instead, grouped)


def chance_sample(
    rows: NDArray[np.int64],
    group: NDArray[np.int64],
    *,
    pairs: int = SAMPLE_PAIRS,
    every: bool = False,
) -> NDArray[np.int64]:
    """(k, 2) chance pairs: pairs of ``rows`` (one document of each distinct fingerprint)
    whose ``group`` (each document's label) differs. ``pairs`` random ones
    (:func:`~simhash_cli.core.search.pricing.background_pairs`), or with ``every`` each pair once
    when
    there are no more than ``pairs`` of them."""
    if every and rows.size * (rows.size - 1) // 2 <= pairs:
        first, second = np.triu_indices(rows.size, k=1)
    else:
        first, second = background_pairs(rows.size, pairs=pairs)
    sample = np.stack((rows[first], rows[second]), axis=1).astype(np.int64)
    apart: NDArray[np.int64] = sample[group[sample[:, 0]] != group[sample[:, 1]]]
    return apart


def _spread(
    cosine: NDArray[np.float64], weighting: Weighting, threshold: float, flagged: int | None = None
) -> Spread:
    above = cosine >= threshold - THRESHOLD_TOLERANCE
    near = (cosine >= threshold - NEAR) & ~above
    return Spread(
        weighting, float(np.median(cosine)), float(near.mean()), float(above.mean()), flagged
    )
