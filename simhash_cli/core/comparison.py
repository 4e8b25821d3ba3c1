"""Two documents side by side (``simhash compare``): the first of a corpus with each other."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .corpus import Corpus, Settings
from .sketch.fingerprint import to_int
from .verify import cosines

__all__ = ["Comparison", "compare", "compare_with"]


@dataclass(frozen=True)
class Comparison:
    """Two documents side by side (``simhash compare``)."""

    a: str
    b: str
    fingerprint_a: int
    fingerprint_b: int
    settings: Settings
    hamming: int
    estimated_cosine: float
    cosine: float | None

    def reaches(self, threshold: float) -> bool:
        """Whether the pair is a near-duplicate at ``threshold``: by its true cosine, or its
        estimate when there is none."""
        value = self.estimated_cosine if self.cosine is None else self.cosine
        return value >= threshold - cosines.THRESHOLD_TOLERANCE


def compare(pair: Corpus) -> Comparison:
    """Compare the two documents of ``pair``.

    Raises:
        InputError: the corpus does not hold exactly two documents (one was skipped).
    """
    if len(pair) != 2:
        reasons = "; ".join(f"{s.id}: {s.reason}" for s in pair.skipped)
        raise InputError(f"compare needs two documents with features ({reasons})")
    return compare_with(pair)[0]


def compare_with(docs: Corpus) -> list[Comparison]:
    """The first document of ``docs`` compared with each of the others, the most similar
    first (by true cosine where there is one, else by the estimate; input order breaks ties)."""
    others = np.arange(1, len(docs), dtype=np.int64)
    scored = cosines.score_pairs(
        np.stack([np.zeros_like(others), others], axis=1),
        docs.fingerprints,
        bits=docs.settings.bits,
        weights=docs.weights,
    )
    first = to_int(docs.fingerprints[0])
    similarity = np.where(np.isnan(scored.cosine), scored.estimated_cosine, scored.cosine)
    order = np.argsort(-similarity, kind="stable")
    return [
        Comparison(
            a=docs.ids[0],
            b=docs.ids[other],
            fingerprint_a=first,
            fingerprint_b=to_int(docs.fingerprints[other]),
            settings=docs.settings,
            hamming=hamming,
            estimated_cosine=estimate,
            cosine=None if math.isnan(cosine) else cosine,
        )
        for other, hamming, estimate, cosine in zip(
            others[order].tolist(),
            scored.hamming[order].tolist(),
            scored.estimated_cosine[order].tolist(),
            scored.cosine[order].tolist(),
            strict=True,
        )
    ]
