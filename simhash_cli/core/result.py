"""What a dedupe found (:class:`DedupeResult`): the pairs, their clusters and the numbers
behind them, as every stage after the search reads them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .clusters.closure import Closure
from .clusters.groups import Groups
from .config import DedupeConfig
from .corpus import Corpus
from .search.pilot import Pilot, Share
from .search.pricing import Survey
from .search.recall import Advice
from .search.scheme import Scheme
from .verify.ambiguity import Ambiguity
from .verify.audit import Audit
from .verify.cosines import ScoredPairs

__all__ = ["DedupeResult"]


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
    pilot: Pilot | None = None
    """The corpus's own pairs at the threshold, found exactly with known odds (None: not
    run)."""
    measured_recall: Share | None = None
    """The share of the pilot's pairs this run found, with its interval: the run's recall,
    measured on a uniform sample of the pairs at the threshold (exact when the pilot held all
    of them; 1 when every pair was compared). None: not measured (:attr:`unmeasured`)."""
    unmeasured: str | None = None
    """Why the run's recall was not measured, when it was not."""
    advice: Advice | None = None
    """When that share is below the target: the cheapest scheme whose chance over the
    pilot's pairs reaches it."""
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
