"""What the client asks of the documents its workers hold: the vectors of some of them, the
parts of the pilot, the band keys of their MinHash signatures. With these, a dedupe verified
exactly is the one a machine holding every vector runs
(:func:`~simhash_cli.app.from_fingerprints.verified_from_candidates`): the workers read,
fingerprint and hold the vectors, and do the work that touches every document (the pilot's
products, the signatures); the client plans, finds the candidates and verifies them with the
vectors of the documents they name, each fetched once, from the worker that holds it.

Vectors travel keyed by feature (:class:`~simhash_cli.core.text.keyed.Vectors`), so every sum over a
row takes the order it takes on one machine and every cosine is the same bits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...app.from_fingerprints import BandKeysOf, PilotOf, VectorsOf, placed_vectors
from ...app.hooks import Hooks
from ...core.against import KeyedRows
from ...core.config import DedupeConfig
from ...core.corpus import Corpus
from ...core.search import blocking
from ...core.search.blocking import LargeCopies
from ...core.search.pilot import Pilot, PilotPart
from ...core.search.pilot_pieces import KeyCounts, anchor_pairs
from ...core.search.planner import pilot_in_pieces
from ...core.sketch import minhash
from ...core.text.keyed import Vectors
from .cluster import Cluster, reported
from .reading import OnCluster, Part

__all__ = ["band_keys_of", "fetched", "keyed_taker", "pilot_of", "taker", "vectors_of"]


def fetched(cluster: Cluster, fingerprinted: OnCluster, rows: NDArray[np.int64]) -> Vectors:
    """The vectors of ``rows`` (ascending), from the workers that hold their partitions."""
    return _gathered(cluster, fingerprinted, rows, _vectors_of)[0]


def named_matrix(
    cluster: Cluster, fingerprinted: OnCluster, rows: NDArray[np.int64]
) -> tuple[sp.csr_array, list[str]]:
    """The weights of ``rows`` (ascending), their columns in key order and named by their
    features, as a corpus holding them names its columns (what a 256-bit sketch of each
    document, made from its features, needs)."""
    vectors, found = _gathered(cluster, fingerprinted, rows, _named_vectors_of)
    # Each worker numbered its entries by its own distinct keys; here those are merged (a few
    # per document), not every entry sorted again.
    keys = np.unique(np.concatenate([known for known, _, _ in found])) if found else vectors.keys
    names = np.empty(keys.size, dtype=object)
    columns = []
    for known, named, local in found:
        place = np.searchsorted(keys, known)
        names[place] = named
        columns.append(place[local])
    column = np.concatenate(columns) if columns else np.zeros(0, np.int64)
    weights = sp.csr_array((vectors.values, column, vectors.indptr), shape=(rows.size, keys.size))
    return weights, names.tolist()


def _gathered(
    cluster: Cluster,
    fingerprinted: OnCluster,
    rows: NDArray[np.int64],
    task: Callable[[Part, NDArray[np.int64]], tuple[Vectors, Any]],
) -> tuple[Vectors, list[Any]]:
    """``task`` on each partition holding some of ``rows`` (ascending): their vectors joined
    in order, and what else each task returned."""
    bounds = np.cumsum([0, *fingerprinted.sizes])
    cut = np.searchsorted(rows, bounds)
    asked = [
        (part, rows[lo:hi] - start)
        for part, start, lo, hi in zip(
            fingerprinted.parts, bounds[:-1], cut[:-1], cut[1:], strict=True
        )
        if hi > lo
    ]
    with reported():
        done = cluster.gather([cluster.client.submit(task, part, local) for part, local in asked])
    vectors = [one for one, _ in done]
    return (Vectors.join(vectors) if vectors else Vectors.empty()), [more for _, more in done]


def _vectors_of(part: Part, rows: NDArray[np.int64]) -> tuple[Vectors, None]:
    assert part.vectors is not None
    return part.vectors.take(rows), None


def _named_vectors_of(
    part: Part, rows: NDArray[np.int64]
) -> tuple[Vectors, tuple[NDArray[np.uint64], list[str], NDArray[np.int64]]]:
    """The vectors of some rows, with their distinct keys (ascending), the features they
    name, and each entry's place among them."""
    assert part.vectors is not None
    taken = part.vectors.take(rows)
    keys, local = np.unique(taken.keys, return_inverse=True)
    return taken, (keys, part.named(keys), local.ravel())


def taker(cluster: Cluster, fingerprinted: OnCluster) -> Callable[[NDArray[np.int64]], Corpus]:
    """The documents at some rows with their vectors, fetched from the workers that hold them
    (for the pairs inside found groups: a few of the documents)."""

    def take(rows: NDArray[np.int64]) -> Corpus:
        weights = fetched(cluster, fingerprinted, rows).matrix()
        return dataclasses.replace(fingerprinted.docs.select(rows), weights=weights, features=[])

    return take


def keyed_taker(cluster: Cluster, fingerprinted: OnCluster) -> KeyedRows:
    """The vectors of some documents, fetched from the workers that hold them, with the
    feature key of each column (for ``--against``: the documents of a chunk's candidates)."""

    def rows(wanted: NDArray[np.int64]) -> tuple[sp.csr_array, NDArray[np.uint64]]:
        order = np.argsort(wanted, kind="stable")
        weights, keys = fetched(cluster, fingerprinted, wanted[order]).keyed()
        back = np.empty_like(order)
        back[order] = np.arange(order.size)
        return sp.csr_array(weights[back]), keys

    return rows


def vectors_of(cluster: Cluster, fingerprinted: OnCluster, hooks: Hooks) -> VectorsOf:
    """``docs`` with the vectors of some rows, fetched (their columns keyed by feature)."""

    def vectors(docs: Corpus, rows: NDArray[np.int64], why: str) -> Corpus:
        with hooks.status(f"fetching {rows.size:,} documents' vectors from the workers"):
            weights, names = named_matrix(cluster, fingerprinted, rows)
        read = dataclasses.replace(docs.select(rows), weights=weights, features=names)
        hooks.info(f"fetched the vectors of {rows.size:,} of the {len(docs):,} documents ({why})")
        return placed_vectors(docs, rows, read)

    return vectors


def pilot_of(cluster: Cluster, fingerprinted: OnCluster, hooks: Hooks) -> PilotOf:
    """The pilot made where the documents are
    (:func:`~simhash_cli.core.search.planner.pilot_in_pieces`):
    each partition counts its features, the anchors' vectors go to every partition, and each
    finds its pairs with them."""
    client = cluster.client
    offsets = (np.cumsum([0, *fingerprinted.sizes])[:-1]).tolist()

    def pilot(docs: Corpus, config: DedupeConfig) -> Pilot | str:
        with hooks.status("counting the features on the workers for the pilot"), reported():
            counts = KeyCounts.merged(
                cluster.gather([client.submit(_counts, part) for part in fingerprinted.parts])
            )

        copies = LargeCopies.of(docs.fingerprints, docs.settings.bits)

        def pairs_with(anchors: Vectors, rows: NDArray[np.int64]) -> list[PilotPart]:
            sets = docs.settings.tokenizer is not None
            shared = client.scatter((anchors, rows, copies), broadcast=True)
            what = f"the pilot's {rows.size:,} anchors against every document, on the workers"
            with hooks.status(what), reported():
                return list(
                    cluster.gather(
                        [
                            client.submit(_pairs, part, shared, offset, config.threshold, sets)
                            for part, offset in zip(fingerprinted.parts, offsets, strict=True)
                        ]
                    )
                )

        return pilot_in_pieces(
            docs, config, counts, lambda rows: fetched(cluster, fingerprinted, rows), pairs_with
        )

    return pilot


def _counts(part: Part) -> KeyCounts:
    assert part.vectors is not None
    return KeyCounts.of(part.vectors)


def _pairs(
    part: Part,
    shared: tuple[Vectors, NDArray[np.int64], LargeCopies | None],
    offset: int,
    threshold: float,
    sets: bool,
) -> PilotPart:
    assert part.vectors is not None
    anchors, anchor_rows, copies = shared
    rows = offset + np.arange(len(part.docs), dtype=np.int64)
    return anchor_pairs(
        anchors, anchor_rows, part.vectors, rows, threshold, sets=sets, copies=copies
    )


def band_keys_of(cluster: Cluster, fingerprinted: OnCluster, hooks: Hooks) -> BandKeysOf:
    """The band keys of one document of each distinct fingerprint's MinHash signature, each
    made on the worker that holds the document, from its words' keys."""
    client = cluster.client

    def band_keys(docs: Corpus, bands: tuple[int, int]) -> NDArray[np.uint64]:
        seed = docs.settings.seed
        what = f"MinHash signatures on the workers ({bands[0]} bands of {bands[1]} bins)"
        with hooks.status(what), reported():
            keys = cluster.gather(
                [client.submit(_band_keys, part, bands, seed) for part in fingerprinted.parts]
            )
        every = np.concatenate(keys) if keys else np.zeros((0, bands[0]), dtype=np.uint64)
        representatives = blocking.collapse(docs.fingerprints, docs.settings.bits).representatives
        chosen: NDArray[np.uint64] = every[representatives]
        return chosen

    return band_keys


def _band_keys(part: Part, bands: tuple[int, int], seed: int) -> NDArray[np.uint64]:
    assert part.vectors is not None
    weights, keys = part.vectors.keyed()
    every = np.arange(weights.shape[0], dtype=np.int64)
    return minhash.banded(weights, keys, bands=bands[0], rows=bands[1], seed=seed, chosen=every)
