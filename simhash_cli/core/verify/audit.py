"""``--audit``: the blocking scheme measured against every pair's true cosine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..corpus import Corpus
from . import cosines
from .cosines import ScoredPairs

__all__ = ["Audit", "audit"]


@dataclass(frozen=True)
class Audit:
    """The blocking scheme measured against all pairs' true cosine (``--audit``).

    Attributes:
        similar_pairs: pairs with true cosine >= threshold.
        found: how many of them became candidates.
        recall: found / similar_pairs (1.0 when there are none).
        false_candidates: candidates whose true cosine is below the threshold.
        missed: the similar pairs the scheme did not find, scored.
    """

    similar_pairs: int
    found: int
    recall: float
    false_candidates: int
    missed: ScoredPairs


def audit(docs: Corpus, candidate_pairs: NDArray[np.int64], threshold: float) -> Audit:
    """All pairs' true cosine from one sparse product, against the candidates."""
    assert docs.weights is not None
    n = len(docs)
    unit, _ = cosines.unit_rows(docs.weights, docs.column_order)
    products = sp.coo_array(sp.triu(unit @ unit.T, k=1))
    similar = products.data >= threshold - cosines.THRESHOLD_TOLERANCE
    similar_codes = np.sort(
        products.row[similar].astype(np.int64) * n + products.col[similar].astype(np.int64)
    )
    candidate_codes = candidate_pairs[:, 0] * np.int64(n) + candidate_pairs[:, 1]
    found = np.isin(similar_codes, candidate_codes)
    missed_codes = similar_codes[~found]
    missed = np.stack((missed_codes // n, missed_codes % n), axis=1)
    n_similar = int(similar_codes.size)
    n_found = int(found.sum())
    return Audit(
        similar_pairs=n_similar,
        found=n_found,
        recall=n_found / n_similar if n_similar else 1.0,
        false_candidates=int(candidate_codes.size) - n_found,
        missed=cosines.score_pairs(
            missed, docs.fingerprints, bits=docs.settings.bits, weights=docs.weights
        ),
    )
