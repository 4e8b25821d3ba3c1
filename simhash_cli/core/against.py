"""Decontamination (``dedupe --against REF``): which documents come within the threshold of a
reference set (an evaluation set kept out of training data), and the reference document each
one matches best.

Only pairs of a document and a reference document count: the documents are not compared with
each other, nor the reference documents. Candidates are every such pair when there are at most
:data:`EVERY_PAIR` of them, so that the answer is exact; past that, the pairs that share a block
of their fingerprints (the fewest blocks that reach 0.95 expected recall at the threshold, or
``--blocks``), made by a sorted join on each block's values. Each candidate is then verified by
its true cosine (the documents' vectors and the reference's, compared in one space of 64-bit
feature keys: :func:`~simhash_cli.core.sketch.fingerprint.feature_keys`) or by the estimate
``cos(pi * hamming / bits)``.

The documents' vectors may live elsewhere (the dask engine's workers): ``rows`` fetches those of
the documents a chunk needs, a chunk at a time, so memory follows the chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import ParameterError
from .config import AUTO, DedupeConfig
from .corpus import Corpus
from .distinct import distinct
from .search import blocking
from .search.blocking import suggest_blocks
from .sketch.fingerprint import estimate_cosine_rows, feature_keys, hamming_rows
from .verify import cosines
from .verify.cosines import ScoredPairs, Verify
from .verify.verifier import sorted_pairs

__all__ = [
    "EVERY_PAIR",
    "Against",
    "Decontamination",
    "KeyedRows",
    "against",
    "count_candidates",
    "keyed_rows",
]

EVERY_PAIR = 20_000_000
"""Pairs of a document and a reference document compared exhaustively at the most (by a
sparse product, chunk by chunk): a training set of 100,000 against an evaluation set of
200."""

_CHUNK_PAIRS = 2_000_000  # pairs a chunk of documents makes against the whole reference

KeyedRows = Callable[[NDArray[np.int64]], tuple[sp.csr_array, NDArray[np.uint64]]]
"""The weights of some documents (rows of the result in the order asked) and each column's
64-bit feature key."""


def keyed_rows(docs: Corpus) -> KeyedRows:
    """:data:`KeyedRows` of documents whose weights are here."""
    assert docs.weights is not None
    weights = sp.csr_array(docs.weights)
    keys = feature_keys(docs.features)

    def rows(which: NDArray[np.int64]) -> tuple[sp.csr_array, NDArray[np.uint64]]:
        return sp.csr_array(weights[which]), keys

    return rows


@dataclass(frozen=True)
class Against:
    """How candidates were found: ``every`` pair, or the pairs sharing one of ``blocks``;
    ``why`` says why every pair was compared when blocks were priced first."""

    kind: Literal["every", "blocks"]
    blocks: int
    expected_recall: float
    why: str = ""

    def label(self, bits: int) -> str:
        if self.kind == "every":
            return "every pair of a document and a reference document"
        plural = "block" if self.blocks == 1 else "blocks"
        return f"{self.blocks} {plural} of {bits // self.blocks} bits"


@dataclass(frozen=True)
class Decontamination:
    """Documents against a reference set.

    Attributes:
        corpus: the documents.
        reference: the reference documents (their vectors dropped).
        config: the threshold and the verification.
        scheme: how candidates were found.
        candidates: pairs compared.
        pairs: (document row, reference row) at or above the threshold, sorted.
        matched: each document's nearest reference row at or above the threshold, or -1.
        cosine: each document's cosine to it (the estimate when verifying by estimate; NaN
            where none).
    """

    corpus: Corpus
    reference: Corpus
    config: DedupeConfig
    scheme: Against
    candidates: int
    pairs: ScoredPairs
    matched: NDArray[np.int64]
    cosine: NDArray[np.float64]

    @property
    def flagged(self) -> NDArray[np.int64]:
        """The rows of the documents within the threshold of a reference document."""
        return np.flatnonzero(self.matched >= 0)


def against(
    docs: Corpus,
    reference: Corpus,
    config: DedupeConfig,
    rows: KeyedRows | None = None,
    *,
    every_pair: int = EVERY_PAIR,
) -> Decontamination:
    """The documents of ``docs`` within ``config.threshold`` of a document of ``reference``.

    Args:
        docs: the documents (their weights here, or fetched by ``rows``).
        reference: the reference set, with its weights for exact verification.
        config: threshold, verification, ``blocks`` (an int, or auto) and ``max_candidates``.
        rows: the documents' weights where they are not in ``docs``.
        every_pair: compare every pair when there are at most this many.

    Raises:
        ParameterError: exact verification without vectors.
        CandidateBudgetError: the blocks would make more than ``config.max_candidates``.
    """
    bits = docs.settings.bits
    exact = config.verify is Verify.EXACT
    if exact and (reference.weights is None or (rows is None and docs.weights is None)):
        raise ParameterError(
            "exact verification needs the vectors of both sides; {verify} estimate compares "
            "fingerprints",
            parameters=("verify",),
        )
    fetch = rows if rows is not None else (keyed_rows(docs) if exact else None)
    scheme = _scheme(docs.fingerprints, reference.fingerprints, bits, config, every_pair)
    space = _Space.of(reference) if fetch is not None else None
    found: list[ScoredPairs] = []
    candidates = 0
    for chunk in _candidates(docs.fingerprints, reference.fingerprints, bits, scheme, config):
        candidates += len(chunk)
        if scheme.kind == "every" and fetch is not None and space is not None:
            chunk = chunk[_near(chunk, space, fetch, config.threshold)]
        scored = _scored(chunk, docs, reference, fetch, space, bits)
        found.append(
            scored.select(
                cosines.keep_mask(scored, threshold=config.threshold, verify=config.verify)
            )
        )
    pairs = sorted_pairs(found)
    matched, best = _nearest(pairs, len(docs), exact)
    kept = Corpus(reference.ids, reference.fingerprints, reference.n_features, reference.settings)
    return Decontamination(docs, kept, config, scheme, candidates, pairs, matched, best)


# What a candidate of a blocks scheme costs, in pairs compared by the every-pair product
# (measured: 2,000 texts against 20,000, exact 0.07 us a pair against 1.2 us a candidate;
# by estimate 0.04 us against 0.07 to 0.29 us, more blocks costing more).
_CANDIDATE_COST = {Verify.EXACT: 16, Verify.ESTIMATE: 4}

EVERY_PAIR_MOST = 4_000_000_000
"""Pairs compared by the every-pair product at the most when a blocks scheme would pass the
candidate budget (about 5 minutes exact on one core)."""


def _scheme(
    fa: NDArray[np.uint64], fr: NDArray[np.uint64], bits: int, config: DedupeConfig, every: int
) -> Against:
    """Every pair when there are few, or when asked; else blocks (those asked, or the fewest
    that reach 0.95 expected recall), their candidates counted before any is made: every
    pair instead when that costs less, or when the blocks would pass the budget.

    Raises:
        CandidateBudgetError: the blocks would make more candidates than the budget.
    """
    pairs = fa.shape[0] * fr.shape[0]
    if config.blocks == "every" or (config.blocks == AUTO and pairs <= every):
        return Against("every", 0, 1.0)
    auto = config.blocks == AUTO
    blocks = int(config.blocks) if not auto else suggest_blocks(bits, config.threshold)
    blocks = blocking.validate_blocks(bits, blocks if blocks is not None else bits)
    probability = float(blocking.candidate_probability(config.threshold, bits=bits, blocks=blocks))
    scheme = Against("blocks", blocks, probability)
    most = count_candidates(fa, fr, bits, blocks)
    label = f"{scheme.label(bits)} would make up to {most:,} candidates"
    if auto and most * _CANDIDATE_COST[config.verify] >= pairs:
        return Against("every", 0, 1.0, f"{label}, which costs more")
    budget = config.max_candidates
    if budget is not None and most > budget:
        if auto and pairs <= EVERY_PAIR_MOST:
            return Against("every", 0, 1.0, f"{label}, more than the budget ({budget:,})")
        raise blocking.budget_error(bits, blocks, None, most, fa.shape[0] + fr.shape[0], budget)
    return scheme


def count_candidates(fa: NDArray[np.uint64], fr: NDArray[np.uint64], bits: int, blocks: int) -> int:
    """The candidates ``blocks`` blocks make between ``fa`` and ``fr``, a pair counted once
    for each block it shares (so at least as many as there will be), by sorted search alone:
    nothing is made."""
    total = 0
    for start, width in blocking.block_bounds(bits, blocks):
        keys = np.sort(_block_key(fr, start, width))
        mine = _block_key(fa, start, width)
        found = np.searchsorted(keys, mine, side="right") - np.searchsorted(keys, mine)
        total += int(found.sum())
    return total


def _candidates(
    fa: NDArray[np.uint64],
    fr: NDArray[np.uint64],
    bits: int,
    scheme: Against,
    config: DedupeConfig,
) -> Iterator[NDArray[np.int64]]:
    """(document row, reference row) candidates, a chunk of documents at a time."""
    n, m = fa.shape[0], fr.shape[0]
    if not n or not m:
        return
    step = max(1, _CHUNK_PAIRS // m)
    if scheme.kind == "every":
        for start in range(0, n, step):
            stop = min(n, start + step)
            i = np.repeat(np.arange(start, stop, dtype=np.int64), m)
            j = np.tile(np.arange(m, dtype=np.int64), stop - start)
            yield np.column_stack([i, j])
        return
    bounds = blocking.block_bounds(bits, scheme.blocks)
    keys_r = [_block_key(fr, start, width) for start, width in bounds]
    orders = [np.argsort(keys, kind="stable") for keys in keys_r]
    sorted_r = [keys[order] for keys, order in zip(keys_r, orders, strict=True)]
    total = 0
    for start in range(0, n, step):
        part = fa[start : start + step]
        codes = []
        for (start_bit, width), order, keys in zip(bounds, orders, sorted_r, strict=True):
            mine = _block_key(part, start_bit, width)
            first = np.searchsorted(keys, mine, side="left")
            sizes = np.searchsorted(keys, mine, side="right") - first
            rows = np.repeat(np.arange(part.shape[0], dtype=np.int64), sizes)
            at = blocking.run_positions(first.astype(np.int64), sizes.astype(np.int64))
            codes.append((rows + start) * m + order[at])
        joined = distinct(np.concatenate(codes))  # a pair sharing several blocks, once
        total += joined.size
        if config.max_candidates is not None and total > config.max_candidates:
            raise blocking.budget_error(
                bits, scheme.blocks, None, total, n + m, config.max_candidates
            )
        yield np.column_stack([joined // m, joined % m])


def _block_key(fingerprints: NDArray[np.uint64], start: int, width: int) -> NDArray[np.uint64]:
    """Bits [start, start + width) of each fingerprint as one number: the block itself up to
    64 bits, a hash of its words past that (equal blocks, equal keys; a rare shared key is
    one more candidate, which verification refuses)."""
    words = blocking.bit_slice(fingerprints, start, width)
    key: NDArray[np.uint64] = words[:, 0].copy()
    for k in range(1, words.shape[1]):
        key = blocking.splitmix64(key ^ words[:, k])
    return key


@dataclass(frozen=True)
class _Space:
    """The reference's rows made unit once, their columns its feature keys in increasing
    order: each chunk of documents is brought into it (:meth:`units`), never the reference
    remade for a chunk (at 200,000 reference documents that was most of the time)."""

    keys: NDArray[np.uint64]
    unit: sp.csr_array
    has_norm: NDArray[np.bool_]

    @classmethod
    def of(cls, reference: Corpus) -> _Space:
        assert reference.weights is not None
        keys, columns = np.unique(feature_keys(reference.features), return_inverse=True)
        weights = sp.csr_array(reference.weights)
        ranked = sp.csr_array(
            (weights.data, columns.ravel()[weights.indices], weights.indptr),
            shape=(weights.shape[0], keys.size),
        )
        unit, has_norm = cosines.unit_rows(ranked)
        return cls(keys, unit, has_norm)

    def units(
        self, weights: sp.csr_array, keys: NDArray[np.uint64]
    ) -> tuple[sp.csr_array, NDArray[np.bool_]]:
        """Rows of documents (columns: ``keys``) made unit, as rows of this space: each row
        scaled over all its features in the order of their keys, as in one space with the
        reference, then those the reference lacks left out (they add nothing to a product)."""
        used = distinct(weights.indices)
        order = np.argsort(keys[used], kind="stable")
        rank = np.empty(used.size, dtype=np.int64)
        rank[order] = np.arange(used.size)
        column = np.zeros(keys.size, dtype=np.int64)
        column[used] = rank
        mine = sp.csr_array(
            (weights.data, column[weights.indices], weights.indptr),
            shape=(weights.shape[0], used.size),
        )
        unit, has_norm = cosines.unit_rows(mine)
        sorted_keys = keys[used][order]
        at = np.minimum(np.searchsorted(self.keys, sorted_keys), max(self.keys.size - 1, 0))
        shared = self.keys[at] == sorted_keys if self.keys.size else np.zeros(used.size, bool)
        keep = shared[unit.indices]
        row_of = np.repeat(np.arange(unit.shape[0]), np.diff(unit.indptr))[keep]
        indptr = np.zeros(unit.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of, minlength=unit.shape[0]), out=indptr[1:])
        placed = sp.csr_array(
            (unit.data[keep], at[unit.indices[keep]], indptr),
            shape=(unit.shape[0], self.keys.size),
        )
        return placed, has_norm


def _near(
    pairs: NDArray[np.int64], space: _Space, rows: KeyedRows, threshold: float
) -> NDArray[np.bool_]:
    """Which of a chunk's every pairs may reach the threshold, by one sparse product of the
    chunk's unit rows with the reference's (pairs made of rows ``start..stop`` times every
    reference row, as :func:`_candidates` makes them): the pairs left are scored one by one
    (:func:`_scored`), with the cosines the rest of the tool computes."""
    wanted, local = np.unique(pairs[:, 0], return_inverse=True)
    unit, _ = space.units(*rows(wanted))
    dots = sp.csr_array(unit @ space.unit.T).toarray()
    near: NDArray[np.bool_] = dots[local.ravel(), pairs[:, 1]] >= threshold - _MARGIN
    return near


# How far below the threshold a product's cosine may be and its pair still be scored: far
# beyond the few units in the last place by which two sums of the same products differ.
_MARGIN = 1e-6


def _scored(
    pairs: NDArray[np.int64],
    docs: Corpus,
    reference: Corpus,
    rows: KeyedRows | None,
    space: _Space | None,
    bits: int,
) -> ScoredPairs:
    """The candidates with their Hamming distances, estimates and (with ``rows``) cosines."""
    hamming = hamming_rows(docs.fingerprints[pairs[:, 0]], reference.fingerprints[pairs[:, 1]])
    estimate = estimate_cosine_rows(hamming, bits)
    cosine = np.full(len(pairs), np.nan)
    if rows is not None and space is not None and len(pairs):
        wanted, local = np.unique(pairs[:, 0], return_inverse=True)
        unit, has_norm = space.units(*rows(wanted))
        ends = (unit, has_norm), (space.unit, space.has_norm)
        cosine = cosines.cross_cosine_pairs(*ends, np.column_stack([local.ravel(), pairs[:, 1]]))
    return ScoredPairs(pairs, hamming, estimate, cosine)


def _nearest(
    pairs: ScoredPairs, n: int, exact: bool
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each document's nearest reference row among ``pairs`` (ties: the first), or -1."""
    matched = np.full(n, -1, dtype=np.int64)
    best = np.full(n, np.nan)
    if not len(pairs):
        return matched, best
    value = pairs.cosine if exact else pairs.estimated_cosine
    order = np.lexsort((pairs.pairs[:, 1], -value, pairs.pairs[:, 0]))
    first = order[np.r_[True, np.diff(pairs.pairs[order, 0]) != 0]]
    matched[pairs.pairs[first, 0]] = pairs.pairs[first, 1]
    best[pairs.pairs[first, 0]] = value[first]
    return matched, best
