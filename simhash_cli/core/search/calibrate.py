"""The reference page's experiments, run on the user's corpus.

* How far the estimate cos(pi * hamming / b) lands from the true cosine, for b from 8 to 512,
  over many seeds (the page: mean absolute error 0.350 at b=8 down to 0.050 at b=512, each
  doubling of b cutting it by about 1/sqrt(2)).
* Weighted against unweighted fingerprints on the near-duplicate pairs: dropping the weights
  turns SimHash into a set signature, and the page measures the loss (0.048 against 0.086).
* Each blocking scheme's measured recall and false-candidate rate against "true cosine >= T",
  next to the recall its S-curve predicts.

Every pair of up to ``max_docs`` documents is evaluated (a larger corpus is sampled, with a
fixed seed), so the numbers are exact for what they cover.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...errors import InputError, ParameterError
from ..config import CALIBRATE_MAX_DOCS
from ..sketch.fingerprint import (
    estimate_cosine_rows,
    fingerprint_matrix,
    hamming_rows,
    validate_bits,
)
from ..verify.cosines import THRESHOLD_TOLERANCE, unit_rows
from .blocking import block_equalities, candidate_probability

__all__ = [
    "DEFAULT_BITS_SWEEP",
    "Calibration",
    "SchemeMeasurement",
    "calibrate",
]

DEFAULT_BITS_SWEEP = (8, 16, 32, 64, 128, 256, 512)


@dataclass(frozen=True)
class SchemeMeasurement:
    """One blocking scheme over all seeds.

    Attributes:
        blocks: equal blocks per fingerprint.
        recall: share of (pair, seed) with true cosine >= T that became candidates.
        expected_recall: the S-curve's mean over those pairs' true cosines.
        false_candidate_rate: share of (pair, seed) below T that became candidates.
    """

    blocks: int
    recall: float
    expected_recall: float
    false_candidate_rate: float


@dataclass(frozen=True)
class Calibration:
    """What ``simhash calibrate`` measured.

    Attributes:
        documents: documents evaluated (all, or a seeded sample).
        pairs: pairs evaluated (every pair of those documents).
        similar_pairs: pairs with true cosine >= threshold.
        threshold: T.
        seeds: seeds per measurement (0, 1, ...).
        bits: the fingerprint width of the weighted/unweighted and scheme measurements.
        error_by_bits: b -> mean absolute error of the estimate over all pairs and seeds.
        weighted_error: mean absolute error on the similar pairs, weighted fingerprints.
        unweighted_error: the same with every present feature at weight 1.
        schemes: the page's blocking schemes (1, 4, 8 blocks where they divide ``bits``).
    """

    documents: int
    pairs: int
    similar_pairs: int
    threshold: float
    seeds: int
    bits: int
    error_by_bits: dict[int, float]
    weighted_error: float | None
    unweighted_error: float | None
    schemes: list[SchemeMeasurement]


def _all_pairs(weights: sp.csr_array) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Every pair i < j and its true cosine (one sparse product; zero rows give 0)."""
    unit, _ = unit_rows(weights)
    dense = np.asarray((unit @ unit.T).toarray())
    i, j = np.triu_indices(weights.shape[0], k=1)
    pairs = np.stack((i, j), axis=1).astype(np.int64)
    return pairs, np.clip(dense[i, j], -1.0, 1.0)


def _estimates(
    weights: sp.csr_array,
    features: Sequence[str],
    pairs: NDArray[np.int64],
    *,
    bits: int,
    seed: int,
) -> tuple[NDArray[np.float64], NDArray[np.uint64]]:
    fingerprints = fingerprint_matrix(weights, features, bits=bits, seed=seed)
    distance = hamming_rows(fingerprints[pairs[:, 0]], fingerprints[pairs[:, 1]])
    return estimate_cosine_rows(distance, bits), fingerprints


def calibrate(
    weights: sp.csr_array,
    features: Sequence[str],
    *,
    threshold: float = 0.9,
    bits: int = 64,
    bits_sweep: Sequence[int] = DEFAULT_BITS_SWEEP,
    seeds: int = 20,
    max_docs: int = CALIBRATE_MAX_DOCS,
) -> Calibration:
    """Run the page's experiments on a weight matrix.

    Args:
        weights: (n_docs, n_features) CSR weights (documents without features removed).
        features: column names.
        threshold: T for "similar" pairs.
        bits: width for the weighted/unweighted and blocking measurements.
        bits_sweep: widths for the estimator-error sweep.
        seeds: seeds 0 .. seeds - 1 for every measurement.
        max_docs: documents evaluated; a larger corpus is sampled (seeded).

    Raises:
        InputError: fewer than two documents.
        ParameterError: no seeds, or a bad width.
    """
    bits = validate_bits(bits)
    sweep = [validate_bits(b) for b in bits_sweep]
    if seeds < 1:
        raise ParameterError("calibrate needs at least one seed")
    if weights.shape[0] < 2:
        raise InputError("calibrate needs at least two documents with features")
    if weights.shape[0] > max_docs:
        keep = np.sort(np.random.default_rng(0).choice(weights.shape[0], max_docs, replace=False))
        weights = sp.csr_array(weights[keep])
    pairs, cosine = _all_pairs(weights)
    similar: NDArray[np.bool_] = np.asarray(cosine >= threshold - THRESHOLD_TOLERANCE)
    binary = weights.copy()
    binary.data = np.where(binary.data != 0, 1.0, 0.0)

    error_by_bits = {}
    for width in sweep:
        errors = [
            np.abs(_estimates(weights, features, pairs, bits=width, seed=s)[0] - cosine).mean()
            for s in range(seeds)
        ]
        error_by_bits[width] = float(np.mean(errors))

    weighted, unweighted = [], []
    scheme_blocks = [m for m in (1, 4, 8) if bits % m == 0]
    found = {m: [0, 0] for m in scheme_blocks}  # blocks -> [similar found, dissimilar found]
    for s in range(seeds):
        estimate, fingerprints = _estimates(weights, features, pairs, bits=bits, seed=s)
        weighted.append(np.abs(estimate[similar] - cosine[similar]))
        plain, _ = _estimates(binary, features, pairs, bits=bits, seed=s)
        unweighted.append(np.abs(plain[similar] - cosine[similar]))
        first, second = fingerprints[pairs[:, 0]], fingerprints[pairs[:, 1]]
        for m in scheme_blocks:
            shared: NDArray[np.bool_] = np.any(
                block_equalities(first, second, bits=bits, blocks=m), axis=1
            )
            found[m][0] += int(shared[similar].sum())
            found[m][1] += int(shared[~similar].sum())
    n_similar, n_other = int(similar.sum()), int((~similar).sum())
    schemes = [
        SchemeMeasurement(
            blocks=m,
            recall=found[m][0] / (n_similar * seeds) if n_similar else 1.0,
            expected_recall=(
                float(candidate_probability(cosine[similar], bits=bits, blocks=m).mean())
                if n_similar
                else 1.0
            ),
            false_candidate_rate=found[m][1] / (n_other * seeds) if n_other else 0.0,
        )
        for m in scheme_blocks
    ]
    return Calibration(
        documents=weights.shape[0],
        pairs=pairs.shape[0],
        similar_pairs=n_similar,
        threshold=threshold,
        seeds=seeds,
        bits=bits,
        error_by_bits=error_by_bits,
        weighted_error=float(np.concatenate(weighted).mean()) if n_similar else None,
        unweighted_error=float(np.concatenate(unweighted).mean()) if n_similar else None,
        schemes=schemes,
    )
