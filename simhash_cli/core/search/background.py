"""How often unrelated pairs of a corpus become candidates under each scheme: a model cosine,
or a measured sample of the corpus's own random pairs (their fingerprints, the Jaccard of
their word sets, and whether each would pass the Hamming gate of exact verification).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..sketch.minhash import candidate_probability as band_probability
from ..sketch.minhash import jaccard_pairs, least_jaccard
from .blocking import block_equalities
from .scheme import Scheme
from .tables import table_key_bits

__all__ = ["SAMPLE_PAIRS", "Background", "background_pairs", "sample_background"]

SAMPLE_PAIRS = 20_000


@dataclass(frozen=True)
class Background:
    """How often unrelated pairs become candidates: a model cosine, or a measured sample.

    Attributes:
        cosine: the cosine of a typical unrelated pair (used when there is no sample).
        sample: (s, 2, n_words) uint64, fingerprints of s random pairs of the corpus.
        jaccard: (s,) the exact Jaccard of the same pairs' feature sets, when the corpus has
            them (documents of words): what MinHash schemes are priced with.
        near: see the attribute.
    """

    cosine: float = 0.0
    sample: NDArray[np.uint64] | None = None
    jaccard: NDArray[np.float64] | None = None
    near: NDArray[np.bool_] | None = None
    """(s,) whether each sampled pair's fingerprints are within the Hamming gate of exact
    verification (a candidate beyond it is never checked), when that is known."""

    @property
    def has_sets(self) -> bool:
        """Whether MinHash schemes can be priced (and so offered)."""
        return self.jaccard is not None

    def work(self, scheme: Scheme, bits: int) -> float:
        """Times an unrelated pair is compared, summed over the scheme's blocks or tables.

        For blocks this is the pairs each block's groups hold (what the candidate budget
        counts); for tables, the pairs sharing each table's key, every one of which is checked;
        for MinHash, the pairs each band's groups hold (and its fingerprint part's); for
        every pair, none: its work is the products' (:func:`assess`).
        """
        if scheme.kind == "every":
            return 0.0
        if scheme.also is not None:
            return self.work(dataclasses.replace(scheme, also=None), bits) + self.work(
                scheme.also, bits
            )
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
        if scheme.kind == "every":
            return 0.0
        each = self._pair_chances(scheme, bits)
        if each is not None:
            return float(each.mean())
        agree = 1.0 - float(np.arccos(np.clip(self.cosine, -1.0, 1.0)) / np.pi)
        if scheme.max_distance is None:
            return 1.0 - (1.0 - agree ** (bits // scheme.blocks)) ** scheme.blocks
        missed = 1.0
        for key_bits, count in table_key_bits(bits, scheme.blocks, scheme.max_distance):
            missed *= (1.0 - agree**key_bits) ** count
        return 1.0 - missed

    def checked(self, scheme: Scheme, bits: int) -> float:
        """Chance that an unrelated pair becomes a candidate and is then checked exactly (it
        passes the Hamming gate, :attr:`near`): what verification costs. 0 without a sample
        of the corpus's fingerprints."""
        if self.near is None or scheme.kind == "every":
            return 0.0
        each = self._pair_chances(scheme, bits)
        return 0.0 if each is None else float((each * self.near).mean())

    def _pair_chances(self, scheme: Scheme, bits: int) -> NDArray[np.float64] | None:
        """Each sampled pair's chance of becoming a candidate (None without a sample)."""
        if scheme.also is not None:
            alone = self._pair_chances(dataclasses.replace(scheme, also=None), bits)
            other = self._pair_chances(scheme.also, bits)
            if alone is None or other is None:
                return None
            return np.asarray(1.0 - (1.0 - alone) * (1.0 - other), dtype=np.float64)
        if scheme.rows is not None:
            jaccard = self.jaccard if self.jaccard is not None else least_jaccard(self.cosine)
            each: NDArray[np.float64] = np.atleast_1d(
                band_probability(np.asarray(jaccard), bands=scheme.blocks, rows=scheme.rows)
            ).astype(np.float64)
            return each
        if self.sample is None:
            return None
        equal = block_equalities(
            self.sample[:, 0, :], self.sample[:, 1, :], bits=bits, blocks=scheme.blocks
        )
        if scheme.max_distance is None:
            shared: NDArray[np.float64] = np.asarray(equal.any(axis=1), dtype=np.float64)
            return shared
        # Within max_distance blocks of agreeing: at least blocks - max_distance blocks equal.
        within: NDArray[np.float64] = (
            equal.sum(axis=1) >= scheme.blocks - scheme.max_distance
        ).astype(np.float64)
        return within


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
