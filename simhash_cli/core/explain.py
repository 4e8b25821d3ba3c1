"""Why two documents match: the features that carry their cosine, those only one of them has,
the fingerprint blocks they share, and a word-level diff of their texts.

The cosine of two weight vectors is a sum over the features they share,
``cos = sum_f a_f * b_f / (|a| |b|)``: each shared feature contributes ``a_f * b_f / (|a| |b|)``,
and the contributions add up to the cosine exactly. A feature only one side has adds nothing
to the dot product but still lengthens its side's vector: its cost is its share of that side's
squared length, ``a_f**2 / |a|**2`` (the shares of one side's features add up to 1).

Two fingerprints become candidates under a scheme of ``k`` equal blocks when one block is
equal in both (the pigeonhole scheme), so the blocks they share say why a pair was found, or
why it was missed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .corpus import Corpus, Settings
from .sketch.fingerprint import hamming, to_int

__all__ = [
    "MAX_DIFF_CHARS",
    "PAGE_BLOCKS",
    "BlockMatch",
    "Contribution",
    "Explained",
    "Explanation",
    "Segment",
    "explain",
    "explained",
    "shared_blocks",
    "word_diff",
]

PAGE_BLOCKS = (1, 4, 8)
"""The schemes shown when none is named: strict, balanced and loose."""

TOP = 12
"""Features listed in each part of an explanation."""

MAX_DIFF_CHARS = 200_000
"""Characters of each text diffed: the diff's cost grows with the product of the lengths."""


@dataclass(frozen=True)
class Contribution:
    """One feature's part in an explanation.

    Attributes:
        feature: the feature.
        a: its weight in A (0 when A lacks it).
        b: its weight in B.
        share: for a shared feature, its contribution to the cosine (they add up to it); for
            a feature one side lacks, its share of that side's squared length (what it costs).
    """

    feature: str
    a: float
    b: float
    share: float


@dataclass(frozen=True)
class BlockMatch:
    """The blocks of one scheme two fingerprints share.

    Attributes:
        blocks: the scheme's number of equal blocks.
        width: bits per block.
        shared: the blocks (numbered from 0, bit 0 in block 0) equal in both.
    """

    blocks: int
    width: int
    shared: tuple[int, ...]

    @property
    def candidate(self) -> bool:
        """Whether the scheme makes the pair a candidate."""
        return bool(self.shared)


@dataclass(frozen=True)
class Explanation:
    """Why A and B match (or do not).

    Attributes:
        a, b: the documents' ids.
        fingerprint_a, fingerprint_b: their fingerprints (slot i = bit i).
        bits: fingerprint width.
        hamming: bits in which their fingerprints differ.
        estimated_cosine: ``cos(pi * hamming / bits)``.
        cosine: the true cosine of their weights (None when a side has none).
        shared_features, only_a, only_b: how many features each part holds in all.
        carrying: the shared features that contribute most to the cosine, largest first.
        costing_a, costing_b: the features only A (only B) has, costliest first.
        blocks: for each scheme, the blocks the fingerprints share.
    """

    a: str
    b: str
    fingerprint_a: int
    fingerprint_b: int
    bits: int
    hamming: int
    estimated_cosine: float
    cosine: float | None
    shared_features: int
    only_a: int
    only_b: int
    carrying: tuple[Contribution, ...]
    costing_a: tuple[Contribution, ...]
    costing_b: tuple[Contribution, ...]
    blocks: tuple[BlockMatch, ...]


def shared_blocks(a: int, b: int, *, bits: int, blocks: int) -> BlockMatch:
    """The blocks of ``blocks`` equal blocks (of ``bits // blocks`` bits) in which the int
    fingerprints ``a`` and ``b`` agree."""
    width = bits // blocks
    mask = (1 << width) - 1
    differ = a ^ b
    shared = tuple(k for k in range(blocks) if not (differ >> (k * width)) & mask)
    return BlockMatch(blocks, width, shared)


def explain(
    a: str,
    b: str,
    fingerprints: tuple[int, int],
    weights: sp.csr_array | None,
    features: list[str],
    *,
    bits: int,
    schemes: tuple[int, ...] = PAGE_BLOCKS,
    top: int = TOP,
) -> Explanation:
    """Explain the pair whose weights are the two rows of ``weights``.

    Args:
        a, b: the documents' ids.
        fingerprints: their fingerprints, as ints (slot i = bit i).
        weights: (2, n_features) CSR, row 0 A's weights and row 1 B's; None: fingerprints
            alone (no feature is listed, no true cosine).
        features: the weight matrix's column names.
        bits: fingerprint width.
        schemes: numbers of equal blocks whose shared blocks are listed (divisors of bits).
        top: features listed in each part.
    """
    distance = hamming(*fingerprints)
    estimate = float(np.cos(np.pi * distance / bits))
    matches = tuple(
        shared_blocks(*fingerprints, bits=bits, blocks=k) for k in schemes if bits % k == 0
    )
    if weights is None:
        return Explanation(
            a, b, *fingerprints, bits, distance, estimate, None, 0, 0, 0, (), (), (), matches
        )
    rows = sp.csr_array(weights)
    cols_a, vals_a = _entries(rows, 0)
    cols_b, vals_b = _entries(rows, 1)
    norm_a, norm_b = float(np.sqrt(vals_a @ vals_a)), float(np.sqrt(vals_b @ vals_b))
    both, at_a, at_b = np.intersect1d(cols_a, cols_b, assume_unique=True, return_indices=True)
    alone_a = np.setdiff1d(np.arange(cols_a.size), at_a, assume_unique=True)
    alone_b = np.setdiff1d(np.arange(cols_b.size), at_b, assume_unique=True)
    cosine = None
    carrying: tuple[Contribution, ...] = ()
    if norm_a > 0 and norm_b > 0:
        parts = vals_a[at_a] * vals_b[at_b] / (norm_a * norm_b)
        cosine = float(parts.sum())
        carrying = _listed(features, both, parts, vals_a[at_a], vals_b[at_b], top)
    zeros_a, zeros_b = np.zeros(alone_a.size), np.zeros(alone_b.size)
    costs_a = vals_a[alone_a] ** 2 / norm_a**2 if norm_a > 0 else zeros_a
    costs_b = vals_b[alone_b] ** 2 / norm_b**2 if norm_b > 0 else zeros_b
    return Explanation(
        a,
        b,
        *fingerprints,
        bits,
        distance,
        estimate,
        cosine,
        int(both.size),
        int(alone_a.size),
        int(alone_b.size),
        carrying,
        _listed(features, cols_a[alone_a], costs_a, vals_a[alone_a], zeros_a, top),
        _listed(features, cols_b[alone_b], costs_b, zeros_b, vals_b[alone_b], top),
        matches,
    )


def _entries(rows: sp.csr_array, row: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """A row's non-zero columns, ascending, and their weights (repeats summed)."""
    start, stop = int(rows.indptr[row]), int(rows.indptr[row + 1])
    columns = rows.indices[start:stop].astype(np.int64)
    values = rows.data[start:stop].astype(np.float64)
    unique, at = np.unique(columns, return_inverse=True)
    summed = np.bincount(at, weights=values, minlength=unique.size)
    keep = summed != 0
    return unique[keep], summed[keep]


def _listed(
    features: list[str],
    columns: NDArray[np.int64],
    shares: NDArray[np.float64],
    weights_a: NDArray[np.float64],
    weights_b: NDArray[np.float64],
    top: int,
) -> tuple[Contribution, ...]:
    """The ``top`` largest shares, largest first (ties by feature, for a stable answer)."""
    if not columns.size:
        return ()
    # The top by share in C; then the few ties at the cut broken by name.
    cut = np.sort(shares)[::-1][min(top, shares.size) - 1]
    chosen = np.flatnonzero(shares >= cut).tolist()
    chosen.sort(key=lambda i: (-shares[i], features[int(columns[i])]))
    return tuple(
        Contribution(
            features[int(columns[i])], float(weights_a[i]), float(weights_b[i]), float(shares[i])
        )
        for i in chosen[:top]
    )


Op = Literal["equal", "delete", "insert", "replace"]


@dataclass(frozen=True)
class Segment:
    """A stretch of a word-level diff: ``a`` is A's text of it, ``b`` is B's (equal in an
    ``equal`` stretch, empty on the side that lacks it)."""

    op: Op
    a: str
    b: str


_WORD = re.compile(r"\S+\s*")


def _units(text: str) -> list[str]:
    """Each word with the spaces after it (spaces before the first word go with it)."""
    body = text.lstrip()
    units = _WORD.findall(body)
    lead = text[: len(text) - len(body)]
    if lead:
        if units:
            units[0] = lead + units[0]
        else:
            units = [lead]
    return units


def word_diff(a: str, b: str) -> list[Segment]:
    """The word-level diff of two texts: words are compared, the spaces between them are not
    (a line wrapped elsewhere is no change), and the ``a`` sides of the segments join to
    ``a``, the ``b`` sides to ``b``."""
    units_a, units_b = _units(a), _units(b)
    matcher = difflib.SequenceMatcher(
        None, [u.strip() for u in units_a], [u.strip() for u in units_b], autojunk=False
    )
    segments: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        op: Op = tag  # difflib's four tags
        text_a, text_b = "".join(units_a[i1:i2]), "".join(units_b[j1:j2])
        if not text_a.split() and not text_b.split():
            op = "equal"  # spaces alone (a text of no word) are no change either
        segments.append(Segment(op, text_a, text_b))
    return segments


@dataclass(frozen=True)
class Explained:
    """An explanation with the settings of its fingerprints, and the diff of the two texts
    (None for vectors, which have none), ``cut`` when the texts were cut short for it."""

    explanation: Explanation
    settings: Settings
    diff: list[Segment] | None
    cut: bool = False


def explained(
    docs: Corpus,
    rows: tuple[int, int],
    texts: tuple[str, str] | None,
    *,
    schemes: tuple[int, ...] = PAGE_BLOCKS,
    top: int = TOP,
    weights: sp.csr_array | None = None,
    features: list[str] | None = None,
) -> Explained:
    """Documents ``rows`` of ``docs`` explained (A first), their ``texts`` diffed. Their
    ``weights`` (two rows) and ``features``, when not the corpus's own rows."""
    a, b = rows
    if weights is None and docs.weights is not None:
        weights, features = docs.weights[[a, b]], docs.features
    explanation = explain(
        docs.ids[a],
        docs.ids[b],
        (to_int(docs.fingerprints[a]), to_int(docs.fingerprints[b])),
        weights,
        features or [],
        bits=docs.settings.bits,
        schemes=schemes,
        top=top,
    )
    if texts is None:
        return Explained(explanation, docs.settings, None)
    cut = any(len(text) > MAX_DIFF_CHARS for text in texts)
    diff = word_diff(texts[0][:MAX_DIFF_CHARS], texts[1][:MAX_DIFF_CHARS])
    return Explained(explanation, docs.settings, diff, cut)
