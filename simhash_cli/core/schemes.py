"""The scheme planner: which candidate scheme finds the pairs at a threshold for the least work.

A scheme is ``blocks`` (m equal blocks, a shared block makes a candidate), ``tables``
(Manku's tables: exactly the pairs within k bits) or, for documents made of words, ``minhash``
(bands of a MinHash signature of each document's set of features). For a pair at cosine c
every fingerprint bit differs with p = arccos(c) / pi, which gives the fingerprint schemes'
chance of making that pair a candidate: their expected recall at the threshold. A band of r
MinHash bins agrees with probability J^r for a pair whose sets are at Jaccard J, and the
planner designs those schemes for the least Jaccard of sets at cosine c (c^2).

What a scheme costs depends on the corpus: how many of its n(n-1)/2 pairs become candidates
by chance. That rate is measured on a sample of
random pairs of the corpus's own fingerprints when there is a corpus (term counts make unrelated
texts look alike: the rate can be far above the rate for random fingerprints), and otherwise
modelled from a background cosine.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import ParameterError
from .blocking import block_equalities, candidate_probability, validate_blocks
from .fingerprint import validate_bits
from .minhash import MAX_SLOTS, fewest_bands, jaccard_pairs, least_jaccard
from .minhash import candidate_probability as band_probability
from .tables import choose_tables, table_key_bits, within_probability

__all__ = [
    "Assessment",
    "Background",
    "Scheme",
    "Survey",
    "assess",
    "background_pairs",
    "minhash_schemes",
    "sample_background",
    "schemes_for",
    "survey",
]

TARGET_RECALL = 0.95
SAMPLE_PAIRS = 20_000
PAGE_BLOCKS = (1, 4, 8)


@dataclass(frozen=True)
class Scheme:
    """A way of finding candidates.

    Attributes:
        kind: ``blocks``, ``tables`` or ``minhash``.
        blocks: m, the number of blocks the fingerprint is cut into; for ``minhash``, bands.
        max_distance: k for ``tables`` (pairs within k bits), None otherwise.
        rows: for ``minhash``, the bins of a band; None otherwise.
    """

    kind: Literal["blocks", "tables", "minhash"]
    blocks: int
    max_distance: int | None = None
    rows: int | None = None

    @classmethod
    def minhash(cls, bands: int, rows: int) -> Scheme:
        """Bands of ``rows`` MinHash bins each; a shared band makes a candidate.

        Raises:
            ParameterError: no bands or rows, or more than MAX_SLOTS bins in all.
        """
        if bands < 1 or rows < 1 or bands * rows > MAX_SLOTS:
            raise ParameterError(
                f"{bands} bands of {rows} bins: each must be at least 1, and at most "
                f"{MAX_SLOTS} bins in all"
            )
        return cls("minhash", bands, rows=rows)

    @property
    def tables(self) -> int:
        """Sorted tables the scheme builds: m for blocks, C(m, k) for Manku's tables, one
        per band for MinHash."""
        if self.max_distance is None:
            return self.blocks
        return math.comb(self.blocks, self.max_distance)

    @property
    def slots(self) -> int:
        """MinHash bins per document (0 for the fingerprint schemes)."""
        return self.blocks * self.rows if self.rows is not None else 0

    @property
    def option(self) -> str:
        """The command-line option that runs this scheme: ``--blocks 4``, ``--max-distance
        3``, ``--minhash 16x8``."""
        if self.rows is not None:
            return f"--minhash {self.blocks}x{self.rows}"
        if self.max_distance is not None:
            return f"--max-distance {self.max_distance}"
        return f"--blocks {self.blocks}"

    def label(self, bits: int) -> str:
        """``4 blocks of 16 bits``, ``10 Manku tables for pairs within 3 bits`` or
        ``MinHash of feature sets, 16 bands of 8 bins``."""
        if self.rows is not None:
            plural = "band" if self.blocks == 1 else "bands"
            bins = "bin" if self.rows == 1 else "bins"
            return f"MinHash of feature sets, {self.blocks} {plural} of {self.rows} {bins}"
        if self.max_distance is None:
            plural = "block" if self.blocks == 1 else "blocks"
            width = bits // self.blocks
            return f"{self.blocks} {plural} of {width} {'bit' if width == 1 else 'bits'}"
        plural = "table" if self.tables == 1 else "tables"
        return f"{self.tables} Manku {plural} for pairs within {self.max_distance} bits"

    def probability(self, cosine: float | NDArray[np.float64], bits: int) -> NDArray[np.float64]:
        """Chance that a pair with this true cosine becomes a candidate (the S-curve); for
        MinHash, of a pair of sets at this cosine that overlap least (:func:`least_jaccard`)."""
        if self.rows is not None:
            return self.probability_at_jaccard(least_jaccard(cosine))
        if self.max_distance is None:
            return candidate_probability(cosine, bits=bits, blocks=self.blocks)
        return within_probability(cosine, bits=bits, max_distance=self.max_distance)

    def probability_at_jaccard(self, jaccard: float | NDArray[np.float64]) -> NDArray[np.float64]:
        """For MinHash: chance that a pair whose sets are at this Jaccard becomes a candidate."""
        assert self.rows is not None
        return band_probability(jaccard, bands=self.blocks, rows=self.rows)


@dataclass(frozen=True)
class Background:
    """How often unrelated pairs become candidates: a model cosine, or a measured sample.

    Attributes:
        cosine: the cosine of a typical unrelated pair (used when there is no sample).
        sample: (s, 2, n_words) uint64, fingerprints of s random pairs of the corpus.
        jaccard: (s,) the exact Jaccard of the same pairs' feature sets, when the corpus has
            them (documents of words): what MinHash schemes are priced with.
    """

    cosine: float = 0.0
    sample: NDArray[np.uint64] | None = None
    jaccard: NDArray[np.float64] | None = None

    @property
    def has_sets(self) -> bool:
        """Whether MinHash schemes can be priced (and so offered)."""
        return self.jaccard is not None

    def work(self, scheme: Scheme, bits: int) -> float:
        """Times an unrelated pair is compared, summed over the scheme's blocks or tables.

        For blocks this is the pairs each block's groups hold (what the candidate budget
        counts); for tables, the pairs sharing each table's key, every one of which is checked;
        for MinHash, the pairs each band's groups hold.
        """
        if scheme.rows is not None:
            jaccard = self.jaccard if self.jaccard is not None else least_jaccard(self.cosine)
            return scheme.blocks * float(np.mean(np.asarray(jaccard) ** scheme.rows))
        if self.sample is None:
            agree = 1.0 - float(np.arccos(np.clip(self.cosine, -1.0, 1.0)) / np.pi)
            if scheme.max_distance is None:
                return scheme.blocks * agree ** (bits // scheme.blocks)
            return sum(
                count * agree**key_bits
                for key_bits, count in table_key_bits(bits, scheme.blocks, scheme.max_distance)
            )
        equal = block_equalities(
            self.sample[:, 0, :], self.sample[:, 1, :], bits=bits, blocks=scheme.blocks
        )
        if scheme.max_distance is None:
            return float(equal.mean(axis=0).sum())
        kept = scheme.blocks - scheme.max_distance
        return float(
            sum(
                np.all(equal[:, list(columns)], axis=1).mean()
                for columns in itertools.combinations(range(scheme.blocks), kept)
            )
        )

    def chance(self, scheme: Scheme, bits: int) -> float:
        """Chance that an unrelated pair becomes a candidate at all (in one block or table at
        least): the share of the corpus's pairs a run compares by chance."""
        if scheme.rows is not None:
            jaccard = self.jaccard if self.jaccard is not None else least_jaccard(self.cosine)
            return float(
                np.mean(
                    band_probability(np.asarray(jaccard), bands=scheme.blocks, rows=scheme.rows)
                )
            )
        if self.sample is None:
            agree = 1.0 - float(np.arccos(np.clip(self.cosine, -1.0, 1.0)) / np.pi)
            if scheme.max_distance is None:
                return 1.0 - (1.0 - agree ** (bits // scheme.blocks)) ** scheme.blocks
            missed = 1.0
            for key_bits, count in table_key_bits(bits, scheme.blocks, scheme.max_distance):
                missed *= (1.0 - agree**key_bits) ** count
            return 1.0 - missed
        equal = block_equalities(
            self.sample[:, 0, :], self.sample[:, 1, :], bits=bits, blocks=scheme.blocks
        )
        if scheme.max_distance is None:
            return float(equal.any(axis=1).mean())
        # Within max_distance blocks of agreeing: at least blocks - max_distance blocks equal.
        return float((equal.sum(axis=1) >= scheme.blocks - scheme.max_distance).mean())


def background_pairs(
    n: int, *, pairs: int = SAMPLE_PAIRS, seed: int = 0
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The random pairs (i != j, of n >= 2) :func:`sample_background` draws: the same for the
    same n, pairs and seed."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n, size=pairs)
    second = (first + rng.integers(1, n, size=pairs)) % n
    return first.astype(np.int64), second.astype(np.int64)


def sample_background(
    fingerprints: NDArray[np.uint64],
    *,
    pairs: int = SAMPLE_PAIRS,
    seed: int = 0,
    sets: sp.csr_array | None = None,
    set_rows: NDArray[np.int64] | None = None,
) -> Background:
    """Random pairs (i != j) of the corpus's fingerprints, drawn with a fixed seed; with
    ``sets``, their Jaccard too (fingerprint i is row ``set_rows[i]`` of ``sets``, or row i
    without ``set_rows``)."""
    n = fingerprints.shape[0]
    if n < 2:
        return Background()
    first, second = background_pairs(n, pairs=pairs, seed=seed)
    jaccard = None
    if sets is not None:
        drawn = np.stack((first, second), axis=1).astype(np.int64)
        jaccard = jaccard_pairs(sets, drawn if set_rows is None else set_rows[drawn])
    return Background(
        sample=np.stack((fingerprints[first], fingerprints[second]), axis=1), jaccard=jaccard
    )


@dataclass(frozen=True)
class Assessment:
    """A scheme judged for one threshold and corpus size.

    Attributes:
        scheme: the scheme.
        recall: chance that a pair exactly at the threshold becomes a candidate.
        expected_candidates: comparisons of unrelated documents the scheme would make among
            n documents, a pair counted once per block or table that pairs them (what the
            candidate budget counts; pairs at or above the threshold come on top, and are
            what the run is for).
        cost: expected candidates plus one row per document per table: the work to compare.
        expected_pairs: the unrelated pairs among them, each counted once (at most all
            pairs).
    """

    scheme: Scheme
    recall: float
    expected_candidates: float
    cost: float
    expected_pairs: float = 0.0


MAX_TABLES = 256


def schemes_for(bits: int, n_docs: int) -> list[Scheme]:
    """Every block count that divides ``bits``, and Manku's tables (k = 1 .. 16, at most
    256 tables, as many blocks as :func:`choose_tables` picks for this corpus size or the
    fewest, k + 1)."""
    bits = validate_bits(bits)
    block_schemes = [Scheme("blocks", m) for m in range(1, bits + 1) if bits % m == 0]
    table_schemes = []
    for k in range(1, min(16, bits // 4) + 1):
        for m in sorted({k + 1, choose_tables(max(n_docs, 2), bits, k)}):
            if math.comb(m, k) <= MAX_TABLES:
                table_schemes.append(Scheme("tables", m, k))
    return block_schemes + table_schemes


MAX_ROWS = 16


MIN_BANDS = 4
"""Bands of a MinHash scheme at least. In a bin, a document whose own features (those none of
its copies share) hold the least hash disagrees with every copy at once; with one or two
bands that cuts a document off from its whole family now and then, and no check of the pairs
inside groups can bring it back (measured: 2 bands of 1 bin isolated 2 to 6 of 150 edited
copies at one seed in three)."""


def minhash_schemes(threshold: float, target: float = TARGET_RECALL) -> list[Scheme]:
    """For each band of 1 to MAX_ROWS bins, the fewest bands (MIN_BANDS at least) that reach
    ``target`` for the sets that overlap least at cosine ``threshold``, where they fit in
    MAX_SLOTS bins."""
    least = float(least_jaccard(threshold))
    found = []
    for rows in range(1, MAX_ROWS + 1):
        bands = fewest_bands(least, rows, target)
        if bands is not None and max(bands, MIN_BANDS) * rows <= MAX_SLOTS:
            found.append(Scheme.minhash(max(bands, MIN_BANDS), rows))
    return found


MINHASH_PASS = 32
"""What making a document's signature costs, in rows of a sorted table (measured on 100,000
prose documents of 80-400 words: 0.5 s of signatures, where a table of them sorts in 0.016 s)."""


def assess(
    scheme: Scheme, *, bits: int, threshold: float, n_docs: int, background: Background
) -> Assessment:
    """Recall at the threshold, expected chance candidates and cost of one scheme."""
    if scheme.kind == "blocks":
        validate_blocks(bits, scheme.blocks)
    all_pairs = n_docs * (n_docs - 1) / 2
    expected = all_pairs * background.work(scheme, bits)
    per_doc = scheme.tables + (MINHASH_PASS if scheme.kind == "minhash" else 0)
    return Assessment(
        scheme=scheme,
        recall=float(scheme.probability(threshold, bits)),
        expected_candidates=expected,
        cost=expected + per_doc * n_docs,
        expected_pairs=all_pairs * background.chance(scheme, bits),
    )


@dataclass(frozen=True)
class Survey:
    """A survey of the schemes for a threshold and corpus: the chosen one (None when none
    reaches the target within the budget) and every scheme judged, cheapest first."""

    bits: int
    threshold: float
    n_docs: int
    target: float
    max_candidates: float | None
    chosen: Assessment | None
    assessments: Sequence[Assessment]
    documents: int | None = None

    @property
    def all_documents(self) -> int:
        """The documents surveyed, copies included (``n_docs`` counts distinct fingerprints:
        copies of one are compared once)."""
        return self.n_docs if self.documents is None else self.documents

    def in_budget(self, assessment: Assessment) -> bool:
        """Whether the scheme is expected to stay within the candidate budget."""
        return self.max_candidates is None or assessment.expected_candidates <= self.max_candidates

    def over_budget(self) -> Assessment | None:
        """When nothing in budget reaches the target: the cheapest scheme that does, at any
        budget (None when none does at these bits)."""
        if self.chosen is not None:
            return None
        reaching = [a for a in self.assessments if a.recall >= self.target]
        return min(reaching, key=lambda a: a.cost) if reaching else None

    def best_effort(self) -> Assessment:
        """The chosen scheme, or failing that the one with the highest recall in budget."""
        if self.chosen is not None:
            return self.chosen
        pool = [a for a in self.assessments if self.in_budget(a)] or list(self.assessments)
        return max(pool, key=lambda a: (a.recall, -a.cost))


def survey(
    *,
    bits: int,
    threshold: float,
    n_docs: int,
    background: Background | None = None,
    target: float = TARGET_RECALL,
    max_candidates: float | None = None,
    documents: int | None = None,
) -> Survey:
    """Judge every scheme and choose the cheapest whose recall at ``threshold`` >= ``target``.

    Args:
        bits: fingerprint width.
        threshold: the cosine pairs must reach.
        n_docs: documents in the corpus (distinct fingerprints: copies are compared once).
        background: how unrelated pairs look (default: random fingerprints, cosine 0); with
            the Jaccard of its pairs' sets, MinHash schemes are judged too.
        target: the recall a scheme must reach at the threshold.
        max_candidates: leave out schemes expected to produce more candidates than this.
        documents: the documents, copies included, when they are more than ``n_docs``.

    Raises:
        ParameterError: a threshold outside [-1, 1] or a negative corpus size.
    """
    bits = validate_bits(bits)
    if not -1.0 <= threshold <= 1.0:
        raise ParameterError(f"threshold must be a cosine from -1 to 1, not {threshold}")
    if n_docs < 0:
        raise ParameterError(f"the number of documents cannot be negative ({n_docs})")
    background = background or Background()
    offered = schemes_for(bits, n_docs)
    if background.has_sets:
        offered += minhash_schemes(threshold, target)
    judged = [
        assess(s, bits=bits, threshold=threshold, n_docs=n_docs, background=background)
        for s in offered
    ]
    judged.sort(key=lambda a: (a.cost, a.scheme.tables, a.scheme.kind))
    in_budget = [
        a for a in judged if max_candidates is None or a.expected_candidates <= max_candidates
    ]
    reaching = [a for a in in_budget if a.recall >= target]
    return Survey(
        bits=bits,
        threshold=threshold,
        n_docs=n_docs,
        target=target,
        max_candidates=max_candidates,
        chosen=reaching[0] if reaching else None,
        assessments=judged,
        documents=documents,
    )
