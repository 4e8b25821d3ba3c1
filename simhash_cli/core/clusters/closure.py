"""Pairs inside found groups, checked: recall that does not hang on one seed.

A scheme's chance of making a pair a candidate is a chance per pair, over seeds. In one run the
misses are not spread evenly: a family of many similar documents shares most of its fingerprint
bits, so when one seed splits the family's blocks a little unluckily, many of its pairs are
missed together. Those pairs almost always have both ends in one group the run did find (a
connected component of the flagged pairs). Once the groups are known, the pairs inside them
are candidates for free: each is checked as any candidate is (the same Hamming gate, the same
verification), and the ones that reach the threshold join the flagged pairs.

The cost is bounded: groups are closed smallest first while their pairs fit in
``group_pairs``; a group too large for what is left keeps only the pairs its candidates found,
and :class:`Closure` says how many groups and documents that was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ..config import DedupeConfig
from ..corpus import Corpus
from ..search import blocking
from ..search.blocking import COPIES_PAIRED
from ..sketch.fingerprint import hamming_rows
from ..verify.cosines import ScoredPairs
from ..verify.verifier import Verifier
from . import cluster

__all__ = ["Closure", "close_groups"]

_CHUNK = 1_000_000


@dataclass(frozen=True)
class Closure:
    """What checking the pairs inside the found groups did.

    Attributes:
        groups: groups whose every pair was checked.
        checked: pairs inside them that were not already flagged, handed to verification.
        found: how many of those reach the threshold (now among the flagged pairs).
        bounded_groups: groups too large for the budget: only their candidates were checked.
        bounded_documents: the documents in those groups.
        limit: the budget, in pairs (``group_pairs``).
    """

    groups: int
    checked: int
    found: int
    bounded_groups: int
    bounded_documents: int
    limit: int


Take = Callable[[NDArray[np.int64]], Corpus]
"""The documents at some rows (ascending), with their vectors when verification is exact."""


def close_groups(
    docs: Corpus,
    config: DedupeConfig,
    kept: ScoredPairs,
    take: Take | None = None,
    *,
    labels: NDArray[np.int64] | None = None,
    copies: blocking.Copies | None = None,
) -> tuple[ScoredPairs, Closure]:
    """The pairs inside the groups of ``kept`` (its connected components) that reach the
    threshold and are not in ``kept`` (sorted), and what was done.

    Documents that share one fingerprint with more than :data:`COPIES_PAIRED` others stand for
    each other through their first one, as candidates do (each is paired with that one only).
    Only the documents of the groups closed are taken (``take``, by default ``docs.select``:
    an engine whose vectors are elsewhere fetches those). Each pair is checked exactly when
    verification is, without the 256-bit sketches (so that every engine checks the same).
    ``labels`` (the components of ``kept``,
    :func:`~simhash_cli.core.clusters.cluster.cluster_labels`)
    and ``copies`` (the corpus's collapsed fingerprints): when the caller has them already.
    """
    n, limit = len(docs), config.group_pairs
    labels = cluster.cluster_labels(kept.pairs, n) if labels is None else labels
    components = cluster.clusters_of_labels(labels)
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits) if copies is None else copies
    standing = np.ones(n, dtype=bool)
    standing[blocking.pairs_with_first(copies, copies.counts > COPIES_PAIRED)[:, 1]] = False
    members = np.concatenate(components) if components else np.zeros(0, dtype=np.int64)
    whole = np.array([c.size for c in components], dtype=np.int64)
    label = np.repeat(np.arange(len(components)), whole)
    members, label = members[standing[members]], label[standing[members]]
    sizes = np.bincount(label, minlength=len(components)).astype(np.int64)
    # Smallest groups first, while their pairs fit in the budget; a group of two is its one
    # flagged pair, and costs nothing.
    needs = np.where(sizes >= 3, sizes * (sizes - 1) // 2, 0)
    by_size = np.argsort(sizes, kind="stable")
    fits = np.cumsum(needs[by_size]) <= limit
    closed = np.zeros(len(components), dtype=bool)
    closed[by_size[fits]] = True
    closed &= sizes >= 3
    bounded = ~closed & (sizes >= 3)
    members, label = members[closed[label]], label[closed[label]]
    rows = np.sort(members)
    sizes = sizes[closed]
    # Members come group after group (clusters() orders them so).
    found, checked = _checked(docs, config, kept, rows, members, sizes, take)
    return found, Closure(
        groups=int(closed.sum()),
        checked=checked,
        found=len(found),
        bounded_groups=int(bounded.sum()),
        bounded_documents=int(whole[bounded].sum()),
        limit=limit,
    )


def _checked(
    docs: Corpus,
    config: DedupeConfig,
    kept: ScoredPairs,
    rows: NDArray[np.int64],
    grouped: NDArray[np.int64],
    sizes: NDArray[np.int64],
    take: Take | None,
) -> tuple[ScoredPairs, int]:
    """Every pair within the groups (``grouped`` holds their members group after group, of
    ``sizes``) that is not in ``kept``, verified on the documents at ``rows``: the pairs that
    reach the threshold (sorted), and how many were checked."""
    n = len(docs)
    # Verified on the documents themselves (their unit scales found once, no copy), or on the
    # few that ``take`` reads again: ``at`` is each of ``rows``' row in the ones verified.
    few, at = (docs, rows) if take is None else (take(rows), np.arange(rows.size))
    verifier = Verifier(few, config, sketches=False)
    flagged = kept.pairs[:, 0] * np.int64(n) + kept.pairs[:, 1]  # sorted, as kept is
    position = np.searchsorted(rows, grouped)  # each member's place among the rows
    starts = np.cumsum(sizes) - sizes
    checked = 0
    for pairs in blocking.pair_chunks(position, starts, sizes, _CHUNK):
        codes = rows[pairs[:, 0]] * np.int64(n) + rows[pairs[:, 1]]
        place = np.minimum(np.searchsorted(flagged, codes), max(flagged.size - 1, 0))
        new = at[pairs[flagged[place] != codes] if flagged.size else pairs]
        checked += new.shape[0]
        verifier.add(new, hamming_rows(few.fingerprints[new[:, 0]], few.fingerprints[new[:, 1]]))
    found = verifier.finish()
    back = found if take is None else replace(found, pairs=rows[found.pairs])
    return back, checked
