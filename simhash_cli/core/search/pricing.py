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

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...errors import ParameterError
from ..sketch.fingerprint import validate_bits
from ..sketch.minhash import MAX_SLOTS, fewest_bands, least_jaccard
from .background import Background, background_pairs, sample_background
from .blocking import validate_blocks
from .pilot import Pilot
from .scheme import Scheme
from .tables import choose_tables

__all__ = [
    "Assessment",
    "Background",
    "Scheme",
    "Survey",
    "assess",
    "background_pairs",
    "load",
    "minhash_schemes",
    "sample_background",
    "schemes_for",
    "survey",
]

TARGET_RECALL = 0.95
PAGE_BLOCKS = (1, 4, 8)


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


def minhash_schemes(
    threshold: float, target: float = TARGET_RECALL, *, jaccards: Sequence[float] = ()
) -> list[Scheme]:
    """For each band of 1 to MAX_ROWS bins, the fewest bands (MIN_BANDS at least) that reach
    ``target`` for the sets that overlap least at cosine ``threshold``, where they fit in
    MAX_SLOTS bins; and the same for each of ``jaccards`` (the pilot's: the Jaccard of the
    pairs the corpus really holds, which term counts can put far below that bound)."""
    designs = [float(least_jaccard(threshold)), *jaccards]
    found: list[Scheme] = []
    for rows in range(1, MAX_ROWS + 1):
        for jaccard in designs:
            bands = fewest_bands(jaccard, rows, target)
            if bands is not None and max(bands, MIN_BANDS) * rows <= MAX_SLOTS:
                scheme = Scheme.minhash(max(bands, MIN_BANDS), rows)
                if scheme not in found:
                    found.append(scheme)
    return found


MINHASH_PASS = 32
"""What making a document's signature costs, in rows of a sorted table (measured on 100,000
prose documents of 80-400 words: 0.5 s of signatures, where a table of them sorts in 0.016 s)."""


CHECK_ENTRY = 0.22
"""What checking a candidate exactly costs for each stored entry of its two rows, in rows of a
table (measured on 20,000 prose documents of about 170 features each: 12 us a pair)."""

PRODUCT_WORK = 1 / 25
"""What one multiply-add of the exact products costs, in rows of a sorted table (measured on
20,000 prose documents: 1.6e8 multiply-adds a second, where a row of a table is 0.16 us)."""


def assess(
    scheme: Scheme,
    *,
    bits: int,
    threshold: float,
    n_docs: int,
    background: Background,
    every_work: int = 0,
    check_cost: float = 0.0,
) -> Assessment:
    """Recall at the threshold, expected chance candidates and cost of one scheme
    (``every_work``: the multiply-adds of every pair's products, for ``every``;
    ``check_cost``: what checking one candidate exactly costs, in rows of a table)."""
    if scheme.kind == "blocks":
        validate_blocks(bits, scheme.blocks)
    if scheme.kind == "every":
        return Assessment(scheme, 1.0, 0.0, every_work * PRODUCT_WORK, 0.0)
    all_pairs = n_docs * (n_docs - 1) / 2
    expected = all_pairs * background.work(scheme, bits)
    per_doc = scheme.tables + (MINHASH_PASS if scheme.rows is not None else 0)
    return Assessment(
        scheme=scheme,
        recall=float(scheme.probability(threshold, bits)),
        expected_candidates=expected,
        cost=expected
        + per_doc * n_docs
        + all_pairs * background.checked(scheme, bits) * check_cost,
        expected_pairs=all_pairs * background.chance(scheme, bits),
    )


def _unions(
    judged: Sequence[Assessment], chances: dict[Scheme, NDArray[np.float64]], pilot: Pilot
) -> list[Assessment]:
    """Each MinHash scheme with each fingerprint scheme, judged from its parts: the work adds
    up, and a pair is missed only when both parts miss it."""
    minhashes = [a for a in judged if a.scheme.rows is not None]
    prints = [a for a in judged if a.scheme.rows is None and a.scheme.kind != "every"]
    unions = []
    for band in minhashes:
        for fingerprint in prints:
            missed = (1.0 - chances[band.scheme]) * (1.0 - chances[fingerprint.scheme])
            unions.append(
                Assessment(
                    scheme=band.scheme.with_fingerprints(fingerprint.scheme),
                    recall=pilot.share(1.0 - missed).value,
                    expected_candidates=band.expected_candidates + fingerprint.expected_candidates,
                    cost=band.cost + fingerprint.cost,
                    expected_pairs=band.expected_pairs + fingerprint.expected_pairs,
                )
            )
    return unions


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
    pilot: Pilot | None = None
    """The corpus's own pairs the schemes were priced on (None, or not :attr:`priced`:
    priced at the threshold by the bound)."""

    @property
    def priced(self) -> bool:
        """Whether each scheme's recall is its share of the pilot's pairs (not its chance at
        the threshold)."""
        return self.pilot is not None and self.pilot.usable

    @property
    def all_documents(self) -> int:
        """The documents surveyed, copies included (``n_docs`` counts distinct fingerprints:
        copies of one are compared once)."""
        return self.n_docs if self.documents is None else self.documents

    def in_budget(self, assessment: Assessment) -> bool:
        """Whether the scheme is expected to stay within the candidate budget (:func:`load`)."""
        return self.max_candidates is None or load(assessment) <= self.max_candidates

    def over_budget(self) -> Assessment | None:
        """When nothing in budget reaches the target: the cheapest scheme that does, at any
        budget (None when none does at these bits)."""
        if self.chosen is not None:
            return None
        reaching = [a for a in self.assessments if a.recall >= self.target]
        return min(reaching, key=lambda a: a.cost) if reaching else None

    def best_effort(self) -> Assessment:
        """The chosen scheme, or failing that the cheapest in budget whose recall is within
        :data:`SAMPLE_MARGIN` of the highest there when they are shares of a sampled pilot
        (shares closer than that are not told apart: on 100,000 prose records the highest,
        0.962, cost three times the candidates of one at 0.950), the highest otherwise."""
        if self.chosen is not None:
            return self.chosen
        pool = [a for a in self.assessments if self.in_budget(a)] or list(self.assessments)
        best = max(a.recall for a in pool)
        sampled = self.priced and self.pilot is not None and not self.pilot.complete
        near = [a for a in pool if a.recall >= best - (SAMPLE_MARGIN if sampled else 0.0)]
        return min(near, key=lambda a: (a.cost, -a.recall))


def survey(
    *,
    bits: int,
    threshold: float,
    n_docs: int,
    background: Background | None = None,
    target: float = TARGET_RECALL,
    max_candidates: float | None = None,
    documents: int | None = None,
    pilot: Pilot | None = None,
    every_work: int | None = None,
    check_cost: float = 0.0,
) -> Survey:
    """Judge every scheme and choose the cheapest whose recall reaches ``target``.

    A scheme's recall is its mean chance over the ``pilot``'s pairs when the pilot holds
    enough of them (a little above the target when they are a sample: they are a sample);
    otherwise its chance at ``threshold``, a bound that holds for the fingerprint schemes
    alone. So MinHash schemes are judged only on such a pilot: designed for the Jaccard of
    its pairs and for the least Jaccard at the threshold, each alone and together with each
    fingerprint scheme.

    Args:
        bits: fingerprint width.
        threshold: the cosine pairs must reach.
        n_docs: documents in the corpus (distinct fingerprints: copies are compared once).
        background: how unrelated pairs look (default: random fingerprints, cosine 0); with
            the Jaccard of its pairs' sets, MinHash schemes are judged too.
        target: the recall a scheme must reach.
        max_candidates: leave out schemes expected to produce more candidates than this.
        documents: the documents, copies included, when they are more than ``n_docs``.
        pilot: the corpus's own pairs at the threshold (:mod:`.pilot`).
        every_work: the multiply-adds of comparing every pair (None: not offered).
        check_cost: what checking one candidate exactly costs (0: not counted).

    Raises:
        ParameterError: a threshold outside [-1, 1] or a negative corpus size.
    """
    bits = validate_bits(bits)
    if not -1.0 <= threshold <= 1.0:
        raise ParameterError(f"threshold must be a cosine from -1 to 1, not {threshold}")
    if n_docs < 0:
        raise ParameterError(f"the number of documents cannot be negative ({n_docs})")
    background = background or Background()
    priced = pilot if pilot is not None and pilot.usable else None
    goal = _goal(target, priced)
    offered = _offered(bits, n_docs, threshold, goal, background, priced)
    judged = [
        assess(
            s,
            bits=bits,
            threshold=threshold,
            n_docs=n_docs,
            background=background,
            check_cost=check_cost,
        )
        for s in offered
    ]
    if every_work is not None:
        every = Scheme.every()
        judged.append(
            assess(
                every,
                bits=bits,
                threshold=threshold,
                n_docs=n_docs,
                background=background,
                every_work=every_work,
            )
        )
    if priced is not None:
        judged = _priced_on(judged, priced, bits)
    judged.sort(key=lambda a: (a.cost, a.scheme.tables, a.scheme.kind))
    in_budget = [a for a in judged if max_candidates is None or load(a) <= max_candidates]
    reaching = [a for a in in_budget if a.recall >= goal]
    return Survey(
        bits=bits,
        threshold=threshold,
        n_docs=n_docs,
        target=target,
        max_candidates=max_candidates,
        chosen=reaching[0] if reaching else None,
        assessments=judged,
        documents=documents,
        pilot=pilot,
    )


def _goal(target: float, priced: Pilot | None) -> float:
    """The recall a scheme must reach: a sampled pilot's share must clear the target by a
    margin (the schemes are designed for that goal, or none of them would be chosen)."""
    sampled = priced is not None and not priced.complete
    return min(1.0, target + SAMPLE_MARGIN if sampled else target)


def _offered(
    bits: int,
    n_docs: int,
    threshold: float,
    goal: float,
    background: Background,
    priced: Pilot | None,
) -> list[Scheme]:
    """The schemes judged: the fingerprint schemes at these bits, and MinHash designed for
    the Jaccard of the pilot's pairs when a pilot prices them.

    MinHash finds a pair by the overlap of its word sets, which no bound on term counts tells
    (licences at tf cosine 0.95 overlap at Jaccard 0.3): only a pilot's pairs price it. The
    fingerprint schemes' chance is a function of the angle alone (Charikar): at the threshold
    it bounds every pair above it, whatever the corpus."""
    offered = schemes_for(bits, n_docs)
    sets = None if priced is None else priced.jaccard
    if background.has_sets and sets is not None and sets.size:
        designs = [float(q) for q in np.quantile(sets, DESIGN_QUANTILES)]
        offered += minhash_schemes(threshold, goal, jaccards=designs)
    return offered


def _priced_on(judged: list[Assessment], pilot: Pilot, bits: int) -> list[Assessment]:
    """Each scheme's recall, its share of the pilot's pairs (a MinHash scheme only where the
    pairs have their Jaccard), and with their Jaccard the unions of a MinHash scheme and a
    fingerprint scheme."""
    chances = {
        a.scheme: pilot.chances(a.scheme, bits)
        for a in judged
        if a.scheme.rows is None or pilot.jaccard is not None
    }
    judged = [
        dataclasses.replace(a, recall=pilot.share(chances[a.scheme]).value)
        for a in judged
        if a.scheme in chances
    ]
    if pilot.jaccard is not None:
        judged += _unions(judged, chances, pilot)
    return judged


def load(assessment: Assessment) -> float:
    """What a scheme weighs against the candidate budget: its expected candidates, and for
    comparing every pair its whole cost in candidates (it makes none, but its products are
    work like theirs: at 100,000 prose records they were ten minutes of it, measured)."""
    if assessment.scheme.kind == "every":
        return assessment.cost
    return assessment.expected_candidates


DESIGN_QUANTILES = (0.02, 0.05, 0.1, 0.25)
"""The Jaccards of the pilot's pairs MinHash schemes are designed for: the lowest few, so
that a design reaches nearly all of them."""

SAMPLE_MARGIN = 0.02
"""How far above the target a scheme's share of a sampled pilot must reach: the share is
measured on a sample, and a scheme chosen at exactly the target would fall short half the
time."""
