"""What a candidate scheme is: blocks, Manku's tables, MinHash bands (with a fingerprint part,
a union), or every pair; its label, its option, and its chance of finding a pair."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ...errors import ParameterError
from ..sketch.minhash import MAX_SLOTS, least_jaccard
from ..sketch.minhash import candidate_probability as band_probability
from .blocking import candidate_probability
from .tables import within_probability

__all__ = ["Scheme"]


@dataclass(frozen=True)
class Scheme:
    """A way of finding candidates.

    Attributes:
        kind: ``blocks``, ``tables`` or ``minhash``.
        blocks: m, the number of blocks the fingerprint is cut into; for ``minhash``, bands.
        max_distance: k for ``tables`` (pairs within k bits), None otherwise.
        rows: for ``minhash``, the bins of a band; None otherwise.
    """

    kind: Literal["blocks", "tables", "minhash", "every"]
    blocks: int
    max_distance: int | None = None
    rows: int | None = None
    also: Scheme | None = None
    """For ``minhash``: a fingerprint scheme whose candidates are taken too (a union: each
    finds pairs the other misses, MinHash those whose word sets overlap, the fingerprints
    those whose cosine is high whatever their sets)."""

    @classmethod
    def every(cls) -> Scheme:
        """Every pair compared exactly, by sparse products (:mod:`.allpairs`)."""
        return cls("every", 0)

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

    def with_fingerprints(self, also: Scheme) -> Scheme:
        """This MinHash scheme and the fingerprint scheme ``also`` together."""
        assert self.rows is not None and also.rows is None and also.kind != "every"
        return Scheme("minhash", self.blocks, rows=self.rows, also=also)

    @property
    def tables(self) -> int:
        """Sorted tables the scheme builds: m for blocks, C(m, k) for Manku's tables, one
        per band for MinHash (and those of its fingerprint part), none for every pair."""
        if self.also is not None:
            return self.blocks + self.also.tables
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
        3``, ``--minhash 16x8``, ``--minhash 8x4 --max-distance 3``, ``--blocks every``."""
        if self.kind == "every":
            return "--blocks every"
        if self.rows is not None:
            own = f"--minhash {self.blocks}x{self.rows}"
            return own if self.also is None else f"{own} {self.also.option}"
        if self.max_distance is not None:
            return f"--max-distance {self.max_distance}"
        return f"--blocks {self.blocks}"

    def label(self, bits: int) -> str:
        """``4 blocks of 16 bits``, ``10 Manku tables for pairs within 3 bits`` or
        ``MinHash of feature sets, 16 bands of 8 bins`` (``, with ...`` its fingerprint part)
        or ``every pair, by exact products``."""
        if self.kind == "every":
            return "every pair, by exact products"
        if self.rows is not None:
            plural = "band" if self.blocks == 1 else "bands"
            bins = "bin" if self.rows == 1 else "bins"
            own = f"MinHash of feature sets, {self.blocks} {plural} of {self.rows} {bins}"
            return own if self.also is None else f"{own}, with {self.also.label(bits)}"
        if self.max_distance is None:
            plural = "block" if self.blocks == 1 else "blocks"
            width = bits // self.blocks
            return f"{self.blocks} {plural} of {width} {'bit' if width == 1 else 'bits'}"
        plural = "table" if self.tables == 1 else "tables"
        return f"{self.tables} Manku {plural} for pairs within {self.max_distance} bits"

    def probability(self, cosine: float | NDArray[np.float64], bits: int) -> NDArray[np.float64]:
        """Chance that a pair with this true cosine becomes a candidate (the S-curve); for
        MinHash, of a pair of sets at this cosine that overlap least (:func:`least_jaccard`)."""
        if self.kind == "every":
            return np.ones_like(np.asarray(cosine, dtype=np.float64))
        if self.rows is not None:
            return self.chance(np.asarray(cosine, dtype=np.float64), least_jaccard(cosine), bits)
        if self.max_distance is None:
            return candidate_probability(cosine, bits=bits, blocks=self.blocks)
        return within_probability(cosine, bits=bits, max_distance=self.max_distance)

    def probability_at_jaccard(self, jaccard: float | NDArray[np.float64]) -> NDArray[np.float64]:
        """For MinHash: chance that a pair whose sets are at this Jaccard shares a band (its
        own bands alone, without a fingerprint part)."""
        assert self.rows is not None
        return band_probability(jaccard, bands=self.blocks, rows=self.rows)

    def chance(
        self,
        cosine: NDArray[np.float64],
        jaccard: NDArray[np.float64] | None,
        bits: int,
    ) -> NDArray[np.float64]:
        """Chance that each pair, at this true cosine and (for MinHash) Jaccard of its sets,
        becomes a candidate: a MinHash scheme and its fingerprint part hash independently,
        so a union misses a pair only when both do."""
        if self.rows is None:
            return np.asarray(self.probability(cosine, bits), dtype=np.float64)
        assert jaccard is not None
        bands = np.asarray(self.probability_at_jaccard(jaccard), dtype=np.float64)
        if self.also is None:
            return bands
        missed = (1.0 - bands) * (1.0 - self.also.probability(cosine, bits))
        return np.asarray(1.0 - missed, dtype=np.float64)
