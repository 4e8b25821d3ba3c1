"""What a dedupe is asked to do (:class:`DedupeConfig`) and its defaults: the type every stage
of the pipeline takes, below all of them, so that none imports back up to find it; and the
choices a run is made of (the weighting, the verification, the clustering) with the bounds
and defaults the command line declares. Declarations only, without numpy: a command's help
reads them and imports no array library."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

__all__ = [
    "AUDIT_MAX_DOCS",
    "AUTO",
    "CALIBRATE_MAX_DOCS",
    "DEFAULT_BITS",
    "DEFAULT_GROUP_PAIRS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_CANDIDATES",
    "DEFAULT_MAX_PAIRS",
    "DEFAULT_SEED",
    "DEFAULT_THRESHOLD",
    "EVERY",
    "MAX_BITS",
    "MAX_NGRAM",
    "MAX_SLOTS",
    "Clustering",
    "DedupeConfig",
    "Verify",
    "Weighting",
]

AUTO: Literal["auto"] = "auto"
EVERY: Literal["every"] = "every"


DEFAULT_BITS = 64
DEFAULT_SEED = 12345
MAX_BITS = 4096

MAX_SLOTS = 256
"""Bins a MinHash signature may have (bands x rows): 1 KB a document."""

MAX_NGRAM = 64

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
"""Bytes of a file read whole as one document, at most, unless asked (``--max-bytes``)."""

DEFAULT_MAX_CANDIDATES = 100_000_000

CALIBRATE_MAX_DOCS = 2000
"""Documents ``calibrate`` samples at most unless asked (``--max-docs``)."""

DEFAULT_THRESHOLD = 0.9
"""The cosine that makes a pair a near-duplicate unless asked otherwise."""


AUDIT_MAX_DOCS = 5000


DEFAULT_MAX_PAIRS = 10_000_000


DEFAULT_GROUP_PAIRS = 10_000_000
"""Pairs inside found groups checked at most, per run (``--group-pairs``)."""


class Weighting(str, Enum):
    """How term counts become weights."""

    TF = "tf"
    """The term count (the reference page's weighted word-count vectors)."""
    BINARY = "binary"
    """1 for every present term: a set, as plain LSH sees it."""
    LOG = "log"
    """1 + ln(count): damps terms repeated many times."""
    TFIDF = "tfidf"
    """count * (ln((1 + n) / (1 + df)) + 1) over the corpus at hand (scikit-learn's smooth idf)."""

    @property
    def corpus_wide(self) -> bool:
        """Whether a document's weights depend on the other documents read with it (tfidf's
        document frequencies): they need the whole corpus at once (never a batch, a stream or
        an index), and two corpora weighted apart do not compare."""
        return self is Weighting.TFIDF

    @property
    def whole(self) -> bool:
        """Whether every weight is a whole number (tf, binary): a fingerprint's sums of them are
        exact, so they come out the same whatever order a document's features are in."""
        return self in (Weighting.TF, Weighting.BINARY)


class Verify(str, Enum):
    """How candidates are checked against the threshold."""

    EXACT = "exact"
    """True cosine of the weighted vectors."""
    ESTIMATE = "estimate"
    """cos(pi * hamming / bits), from the fingerprints alone."""


class Clustering(str, Enum):
    """How flagged pairs become clusters (``--clustering``)."""

    REPRESENTATIVE = "representative"
    """Each member a flagged near-duplicate of its cluster's representative."""
    COMPONENTS = "components"
    """Connected components: chains of near-duplicates, however far apart their ends."""


@dataclass(frozen=True)
class DedupeConfig:
    """Tuning of ``dedupe``: blocking scheme, verification and threshold."""

    blocks: int | Literal["auto", "every"] = AUTO
    """Equal blocks per fingerprint, ``every`` pair by exact products, or ``auto``: the
    planner's cheapest scheme that reaches 0.95 recall on this corpus's own pairs (measured
    by the pilot, :mod:`~simhash_cli.core.search.pilot`) or, when it cannot see enough of them, at
    the threshold."""
    threshold: float = DEFAULT_THRESHOLD
    verify: Verify = Verify.EXACT
    max_candidates: int | None = DEFAULT_MAX_CANDIDATES
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
    """How flagged pairs become clusters (:mod:`~simhash_cli.core.clusters.groups`)."""
    group_pairs: int = DEFAULT_GROUP_PAIRS
    """Pairs inside found groups checked at most (:mod:`~simhash_cli.core.clusters.closure`); 0:
    none."""
    hamming_gate: bool = True
    """Skip the exact check of candidates whose Hamming distance a pair at the threshold
    reaches with odds below 1 in 10,000 (:func:`~simhash_cli.core.verify.cosines.hamming_gate`)."""
