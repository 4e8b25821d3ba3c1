"""``--weighting tfidf`` on a cluster: a term's weight depends on how many documents of the
whole corpus hold it, so no partition can weight its documents alone. The partitions are read
and counted first (term counts, as the local engine counts them); the document frequencies
are a reduction over the partitions, by feature key; then each partition weights its counts
and fingerprints them again, with the local engine's arithmetic (scikit-learn's smooth idf,
``ln((1 + n) / (1 + df)) + 1``, entry by entry, each document's entries summed in their own
order): the same weights and fingerprints, to the bit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from ...core.corpus import Settings
from ...core.search.pilot_pieces import KeyCounts
from ...core.sketch.fingerprint import fingerprint_matrix
from ...core.text.keyed import Vectors
from ...core.text.vectorize import smooth_idf
from .cluster import Cluster, reported
from .reading import OnCluster, Part

__all__ = ["weighted"]


def weighted(
    cluster: Cluster, counted: OnCluster, settings: Settings, *, keep_vectors: bool
) -> OnCluster:
    """Documents read and counted on the cluster (their vectors term counts), weighted by
    tf-idf over all of them and fingerprinted with ``settings``; their weighted vectors kept
    on the workers with ``keep_vectors`` (exact verification)."""
    client = cluster.client
    with reported():
        counts = KeyCounts.merged(cluster.gather([client.submit(_df, p) for p in counted.parts]))
        # Every document read holds a term (one without is skipped as empty), as every row the
        # local engine weights does.
        documents = len(counted.docs)
        shared = client.scatter(counts, broadcast=True)
        parts = [
            client.submit(_weighted, part, shared, documents, settings, keep_vectors)
            for part in counted.parts
        ]
        heads = cluster.gather([client.submit(_fingerprints, part) for part in parts])
    fingerprints = np.concatenate(heads) if heads else counted.docs.fingerprints
    docs = dataclasses.replace(counted.docs, fingerprints=fingerprints, settings=settings)
    return OnCluster(docs, parts, counted.sizes, keep_vectors)


def _df(part: Part) -> KeyCounts:
    assert part.vectors is not None
    return KeyCounts.of(part.vectors)


def _weighted(
    part: Part, df: KeyCounts, documents: int, settings: Settings, keep_vectors: bool
) -> Part:
    """One partition's counts weighted by tf-idf and fingerprinted again."""
    assert part.vectors is not None and part.names is not None
    vectors = part.vectors
    found = df.counts[np.searchsorted(df.keys, vectors.keys)]
    values = vectors.values.astype(np.float64) * smooth_idf(found, documents)
    weights = Vectors(vectors.indptr, vectors.keys, values)
    # Each document's entries in their stored order (their own, as counted): the order in
    # which a fingerprint sums them, here as there.
    matrix, keys = weights.keyed()
    fingerprints = fingerprint_matrix(
        matrix, part.named(keys), bits=settings.bits, seed=settings.seed
    )
    docs = dataclasses.replace(part.docs, fingerprints=fingerprints, settings=settings)
    if not keep_vectors:
        return dataclasses.replace(part, docs=docs, vectors=None, names=None)
    return dataclasses.replace(part, docs=docs, vectors=weights)


def _fingerprints(part: Part) -> NDArray[np.uint64]:
    return part.docs.fingerprints
