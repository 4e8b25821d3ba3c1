"""What a dedupe is asked to do (:class:`DedupeConfig`) and its defaults: the type every stage
of the pipeline takes, below all of them, so that none imports back up to find it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from . import blocking
from .cosines import Verify
from .groups import Clustering

__all__ = [
    "AUDIT_MAX_DOCS",
    "AUTO",
    "DEFAULT_GROUP_PAIRS",
    "DEFAULT_MAX_PAIRS",
    "DEFAULT_THRESHOLD",
    "EVERY",
    "DedupeConfig",
]

AUTO: Literal["auto"] = "auto"
EVERY: Literal["every"] = "every"


DEFAULT_THRESHOLD = 0.9
"""The cosine that makes a pair a near-duplicate unless asked otherwise."""


AUDIT_MAX_DOCS = 5000


DEFAULT_MAX_PAIRS = 10_000_000


DEFAULT_GROUP_PAIRS = 10_000_000
"""Pairs inside found groups checked at most, per run (``--group-pairs``)."""


@dataclass(frozen=True)
class DedupeConfig:
    """Tuning of ``dedupe``: blocking scheme, verification and threshold."""

    blocks: int | Literal["auto", "every"] = AUTO
    """Equal blocks per fingerprint, ``every`` pair by exact products, or ``auto``: the
    planner's cheapest scheme that reaches 0.95 recall on this corpus's own pairs (measured
    by the pilot, :mod:`~simhash_cli.core.pilot`) or, when it cannot see enough of them, at
    the threshold."""
    threshold: float = DEFAULT_THRESHOLD
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
    feature sets; with a number of ``blocks`` or a ``max_distance``, their candidates too."""
    pilot: bool = True
    """With ``blocks="auto"``: run the pilot (:func:`pilot_for`) and price the schemes on its
    pairs; False prices them at the threshold."""
    clustering: Clustering = Clustering.REPRESENTATIVE
    """How flagged pairs become clusters (:mod:`~simhash_cli.core.groups`)."""
    group_pairs: int = DEFAULT_GROUP_PAIRS
    """Pairs inside found groups checked at most (:mod:`~simhash_cli.core.closure`); 0: none."""
    hamming_gate: bool = True
    """Skip the exact check of candidates whose Hamming distance a pair at the threshold
    reaches with odds below 1 in 10,000 (:func:`~simhash_cli.core.cosines.hamming_gate`)."""
