"""The same dedupe on a Dask cluster (``--engine dask``): the core's stage functions, run
partition by partition on the workers; only paths, parameters and arrays travel.

partitions of files (or blocks of JSON Lines, row groups of Parquet) -> fingerprints (and
vectors) by the same functions as locally (:func:`fingerprint_batch`, ``from_*_records``)
-> for each table of the scheme, every row routed by its key (:func:`.tables.key_buckets`):
a shuffle -> in each bucket, copies collapsed, the pairs sharing this table's key and no
earlier one (:func:`.tables.shared_key_chunks`) spread over the copies and verified
(:func:`verify_candidates`) -> the pairs back to the client -> clusters.

A pair sharing several keys is found in the first table only, and every copy of a
fingerprint lands in the same bucket of every table, so the buckets' pairs add up to exactly
the local engine's. The client holds the documents' ids and fingerprints (the plan, the
summary and the output need them), never their text or vectors.

Needs the ``distributed`` extra: ``pip install 'simhash-cli[distributed]'``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...app.from_fingerprints import verified_from_candidates
from ...app.hooks import Hooks, Silent
from ...core import pipeline as core_search
from ...core.clusters import cluster as clustering
from ...core.config import DedupeConfig
from ...core.corpus import Corpus, Settings
from ...core.pipeline import check_config, dedupe_result
from ...core.result import DedupeResult
from ...core.search import blocking, tables
from ...core.search.planner import choose_scheme
from ...core.verify.cosines import ScoredPairs, Verify
from ...core.verify.verifier import (
    CandidateCount,
    Verifier,
    pair_budget_error,
    sorted_pairs,
    verify_candidates,
)
from ...errors import ParameterError
from ...io.sources.records import RecordKind
from . import fetching
from .cluster import Cluster, reported
from .fetching import taker
from .reading import (
    PARTITION_DOCS,
    OnCluster,
    Part,
    read_paths,
    read_records,
    send_corpus,
)

__all__ = [
    "CLIENT_PAIRS",
    "StreamedPairs",
    "dedupe",
    "dedupe_corpus",
    "dedupe_paths",
    "dedupe_records",
]

MAX_BUCKETS = 256
# Rows a bucket task holds, summed over the tables (16 bytes each, and the vector when exact).
BUCKET_ROWS = 4_000_000
# Pairs brought to the client at the most (about 40 bytes each); past this many they stay on
# the workers: components found there in rounds, pairs read back in order as they are written.
CLIENT_PAIRS = 20_000_000


@dataclass(frozen=True)
class Piece:
    """The rows of one partition that go to one bucket of one table: their global rows and
    fingerprints."""

    rows: NDArray[np.int64]
    fingerprints: NDArray[np.uint64]


@dataclass(frozen=True)
class Share:
    """What one partition sends to one bucket: a piece per table."""

    pieces: list[Piece]


@dataclass(frozen=True)
class Search:
    """What every bucket task needs to know about the run."""

    settings: Settings
    config: DedupeConfig
    tables: list[tuple[int, ...]]
    blocks: int
    max_distance: int | None

    def key(self, table: int) -> blocking.Key:
        """The bit ranges of table ``table``'s key."""
        return tables.table_key(self.settings.bits, self.blocks, self.tables[table])


@dataclass(frozen=True)
class Found:
    """A bucket's outcome: the pairs it kept (global rows) and what it counted."""

    pairs: ScoredPairs
    candidates: int
    checked: int
    key_pairs: int


def _split(part: Part, offset: int, search: Search, n_buckets: int) -> list[Share]:
    """For each bucket, the partition's rows whose key in some table goes to that bucket:
    a piece per table (rows ascending)."""
    fingerprints = part.docs.fingerprints
    rows = offset + np.arange(fingerprints.shape[0], dtype=np.int64)
    chosen: list[list[NDArray[np.int64]]] = [[] for _ in range(n_buckets)]
    for table in range(len(search.tables)):
        bucket_of = tables.key_buckets(fingerprints, search.key(table), n_buckets)
        order = np.argsort(bucket_of, kind="stable")
        bounds = np.searchsorted(bucket_of[order], np.arange(n_buckets + 1)).tolist()
        for bucket, (lo, hi) in enumerate(itertools.pairwise(bounds)):
            chosen[bucket].append(order[lo:hi])
    return [
        Share([Piece(rows[local], fingerprints[local]) for local in by_table])
        for by_table in chosen
    ]


def _pick(shares: list[Share], bucket: int) -> Share:
    return shares[bucket]


def _search_bucket(shares: list[Share], search: Search) -> Found:
    """The pairs of one bucket of every table (``shares``: one per partition), verified by
    estimate: the local engine's work on these rows."""
    found = [
        _search_table([share.pieces[table] for share in shares], table, search)
        for table in range(len(search.tables))
    ]
    return Found(
        sorted_pairs([one.pairs for one in found]),
        sum(one.candidates for one in found),
        sum(one.checked for one in found),
        sum(one.key_pairs for one in found),
    )


def _search_table(pieces: list[Piece], table: int, search: Search) -> Found:
    """The rows of one bucket of one table."""
    rows = np.concatenate([piece.rows for piece in pieces])
    words = np.concatenate([piece.fingerprints for piece in pieces])
    settings, config = search.settings, search.config
    docs = Corpus([""] * rows.size, words, np.ones(rows.size, np.int64), settings)
    copies = blocking.collapse(words, settings.bits)
    key_pairs = tables.key_pair_count(copies.fingerprints, search.key(table))
    if config.max_candidates is not None and key_pairs > config.max_candidates:
        raise blocking.budget_error(
            settings.bits,
            search.blocks,
            search.max_distance,
            key_pairs,
            copies.fingerprints.shape[0],
            config.max_candidates,
        )
    verifier = Verifier(docs, config, sketches=False)
    budget = CandidateCount(config.max_candidates, rows.size)
    chunks = tables.shared_key_chunks(
        copies.fingerprints,
        settings.bits,
        search.blocks,
        search.tables[table],
        max_distance=search.max_distance,
    )
    verify_candidates(verifier, copies, chunks, budget, with_copies=table == 0)
    kept = verifier.finish()
    return Found(
        dataclasses.replace(kept, pairs=rows[kept.pairs]),
        budget.total,
        verifier.checked,
        key_pairs,
    )


def _propose(found: Found, labels: NDArray[np.int64]) -> tuple[NDArray[np.int64], ...]:
    """One round of hooking over a bucket's edges (:func:`.cluster.hook_offers`)."""
    return clustering.hook_offers(found.pairs.pairs, labels)


def _slice(found: Found, start: int, stop: int) -> ScoredPairs:
    return found.pairs.rows(slice(start, stop))


def _counts(found: Found) -> tuple[int, int, int, int]:
    return len(found.pairs), found.candidates, found.checked, found.key_pairs


def _pairs(found: Found) -> ScoredPairs:
    return found.pairs


def dedupe_paths(
    cluster: Cluster, paths: Sequence[str], config: DedupeConfig, **reading: Any
) -> DedupeResult:
    """:func:`read_paths` then :func:`dedupe`: the local engine's result for these files."""
    keep_vectors = config.verify is Verify.EXACT or config.audit
    return dedupe(cluster, read_paths(cluster, paths, keep_vectors=keep_vectors, **reading), config)


def dedupe_records(
    cluster: Cluster, source: str, kind: RecordKind, config: DedupeConfig, **reading: Any
) -> DedupeResult:
    """:func:`read_records` then :func:`dedupe`: the local engine's result for these records."""
    # Held as the local engine holds them: --texts always (MinHash schemes need them).
    needed = config.verify is Verify.EXACT or config.audit or kind == "texts"
    keep_vectors = needed and kind != "fingerprints"
    fingerprinted = read_records(cluster, source, kind, keep_vectors=keep_vectors, **reading)
    return dedupe(cluster, fingerprinted, config)


def dedupe_corpus(
    cluster: Cluster,
    docs: Corpus,
    config: DedupeConfig,
    *,
    partition_docs: int = PARTITION_DOCS,
) -> DedupeResult:
    """:func:`send_corpus` then :func:`dedupe`: the local engine's result for these documents."""
    check_config(docs, config, has_vectors=docs.weights is not None)
    keep_vectors = docs.weights is not None  # as the local engine, which plans on them
    sent = send_corpus(cluster, docs, keep_vectors=keep_vectors, partition_docs=partition_docs)
    return dedupe(cluster, sent, config)


def dedupe(
    cluster: Cluster, fingerprinted: OnCluster, config: DedupeConfig, hooks: Hooks | None = None
) -> DedupeResult:
    """A dedupe of documents already on the cluster: the local engine's answer, in every byte.

    With vectors on the workers (exact verification, and wherever the local engine holds
    them: ``--texts``, tf-idf), the answer of a machine holding every vector
    (:func:`~simhash_cli.app.from_fingerprints.verified_from_candidates`): the workers make the
    pilot and the MinHash signatures, the client plans, finds the candidates and verifies them
    (exactly, with the vectors they name, fetched once each: :mod:`.fetching`). Fingerprints
    alone, verified by estimate: the shuffle and the buckets' search (:func:`estimated`).

    Empty documents (``--include-empty``) are set aside on the workers, the others searched,
    and the empty ones paired here (:func:`~simhash_cli.core.pipeline.with_empty`), as the
    local engine does.

    Raises:
        ParameterError: exact verification without vectors.
        CandidateBudgetError, PairBudgetError: as the local engine, over the whole run.
        WorkerLostError: a worker died.
    """
    docs = fingerprinted.docs
    if np.any(docs.n_features == 0):
        real = _without_empty(cluster, fingerprinted)
        result = dedupe(cluster, real, config, hooks)
        if isinstance(result.pairs, StreamedPairs):
            raise ParameterError(
                f"more than {CLIENT_PAIRS:,} flagged pairs with --include-empty on the dask "
                "engine: run without --include-empty, or on the local engine"
            )
        return core_search.with_empty(docs, config, result)
    check_config(docs, config, has_vectors=fingerprinted.vectors)
    told = hooks or Silent()
    if config.audit:
        # Every pair's true cosine, in one product: every vector fetched (an audit is of a
        # few thousand documents, check_config says), then the local engine's own run.
        every = np.arange(len(docs), dtype=np.int64)
        held = fetching.vectors_of(cluster, fingerprinted, told)(docs, every, "the audit")
        return core_search.dedupe(held, config)
    if not fingerprinted.vectors:
        return estimated(cluster, fingerprinted, config)
    words = docs.settings.tokenizer is not None
    return verified_from_candidates(
        docs,
        config,
        fetching.vectors_of(cluster, fingerprinted, told),
        told,
        fetching.band_keys_of(cluster, fingerprinted, told) if words else None,
        fetching.pilot_of(cluster, fingerprinted, told),
    )


def _real_part(part: Part) -> Part:
    """A partition without its empty documents (their vectors too)."""
    kept = np.flatnonzero(part.docs.n_features != 0)
    vectors = None if part.vectors is None else part.vectors.take(kept)
    return dataclasses.replace(part, docs=part.docs.select(kept), vectors=vectors)


def _without_empty(cluster: Cluster, fingerprinted: OnCluster) -> OnCluster:
    """The documents with a feature, in their order: each partition's empty ones left out on
    the worker that holds it."""
    docs, sizes = fingerprinted.docs, fingerprinted.sizes
    bounds = np.cumsum([0, *sizes])
    real = docs.n_features != 0
    kept = [int(np.count_nonzero(real[start:stop])) for start, stop in itertools.pairwise(bounds)]
    client = cluster.client
    with reported():
        parts = [client.submit(_real_part, part) for part in fingerprinted.parts]
    return OnCluster(docs.select(np.flatnonzero(real)), parts, kept, fingerprinted.vectors)


def estimated(cluster: Cluster, fingerprinted: OnCluster, config: DedupeConfig) -> DedupeResult:
    """The shuffle and the buckets' search over documents already on the cluster, verified by
    estimate (:func:`dedupe`)."""
    docs, parts, sizes = fingerprinted.docs, fingerprinted.parts, fingerprinted.sizes
    bits = docs.settings.bits
    scheme, planned = choose_scheme(docs, config, minhash=False)
    if len(docs) < 2:
        none = sorted_pairs([])
        return dedupe_result(docs, config, scheme, planned, 0, 0, none)
    keys = tables.scheme_tables(bits, scheme.blocks, scheme.max_distance)
    search = Search(docs.settings, config, keys, scheme.blocks, scheme.max_distance)
    offsets = (np.cumsum(sizes) - sizes).tolist()
    # Buckets: two per worker at least, and about BUCKET_ROWS rows (of all tables) each.
    wanted = -(-len(docs) * len(keys) // BUCKET_ROWS)
    n_buckets = min(MAX_BUCKETS, max(2 * cluster.workers, wanted))
    client = cluster.client
    with reported():
        splits = [
            client.submit(_split, part, offset, search, n_buckets)
            for part, offset in zip(parts, offsets, strict=True)
        ]
        found = [
            client.submit(
                _search_bucket, [client.submit(_pick, split, bucket) for split in splits], search
            )
            for bucket in range(n_buckets)
        ]
        counts = cluster.gather([client.submit(_counts, one) for one in found])
        kept, candidates, checked, key_pairs = (sum(column) for column in zip(*counts, strict=True))
        _check_budgets(docs, config, scheme, kept, candidates, key_pairs)
        if kept > CLIENT_PAIRS:
            # Too many edges to hold here: they stay on the workers, the components are found
            # there in rounds, and the pairs come back in order a chunk at a time, to be written.
            sizes_of = [count[0] for count in counts]
            labels = _labels_in_rounds(cluster, found, len(docs))
            streamed = StreamedPairs(cluster, found, sizes_of, len(docs))
            return dedupe_result(
                docs,
                config,
                scheme,
                planned,
                candidates,
                checked,
                streamed,
                components=clustering.clusters_of_labels(labels),
                closure_skipped=(
                    f"more than {CLIENT_PAIRS:,} flagged pairs stay on the workers, where the "
                    "pairs inside their groups are not checked"
                ),
            )
        pairs = sorted_pairs(cluster.gather([client.submit(_pairs, one) for one in found]))
    del splits, found
    take = taker(cluster, fingerprinted) if fingerprinted.vectors else None
    return dedupe_result(docs, config, scheme, planned, candidates, checked, pairs, take=take)


def _labels_in_rounds(cluster: Cluster, found: list[Any], n_docs: int) -> NDArray[np.int64]:
    """Connected components of the edges held by the buckets, without bringing them here
    (Shiloach and Vishkin's hooking and pointer jumping): every document points to a root,
    at first itself; each round the roots go to every bucket, which offers each root joined
    by an edge to a smaller one that smaller one; each root takes its lowest offer, and every
    document then follows its pointers to its new root. When no edge joins two roots, each
    document's root is the smallest member of its component. The roots fall fast: a chain
    of 100,000 documents in random order takes 11 rounds (3,000: 9), not 100,000."""
    client = cluster.client
    labels = np.arange(n_docs, dtype=np.int64)
    while True:
        shared = client.scatter(labels, broadcast=True)
        offers = cluster.gather([client.submit(_propose, one, shared) for one in found])
        roots = np.concatenate([root for root, _ in offers])
        if roots.size == 0:
            return labels
        labels = clustering.hooked(labels, roots, np.concatenate([offer for _, offer in offers]))


class StreamedPairs(ScoredPairs):
    """Pairs that stay on the workers, sorted in each bucket, read in order a chunk at a time
    (:meth:`chunks`: a merge of the buckets' sorted runs); the arrays themselves are empty."""

    _where: tuple[Cluster, list[Any], list[int], int]

    def __init__(self, cluster: Cluster, found: list[Any], sizes: list[int], n_docs: int):
        empty = np.zeros(0, np.float64)
        super().__init__(np.zeros((0, 2), np.int64), np.zeros(0, np.int64), empty, empty)
        object.__setattr__(self, "_where", (cluster, found, sizes, n_docs))

    def __len__(self) -> int:
        return int(sum(self._where[2]))

    def chunks(self, size: int) -> Iterator[ScoredPairs]:
        """All pairs in order (as the local engine sorts them), about ``size`` per bucket at
        a time: the buckets' sorted runs merged, never more than a chunk of each held here."""
        cluster, found, sizes, n_docs = self._where
        client = cluster.client
        read = [0] * len(found)
        held = [_nothing() for _ in found]

        def codes(pairs: ScoredPairs) -> NDArray[np.int64]:
            coded: NDArray[np.int64] = pairs.pairs[:, 0] * np.int64(n_docs) + pairs.pairs[:, 1]
            return coded

        with reported():
            while True:
                for bucket, one in enumerate(found):
                    if len(held[bucket]) == 0 and read[bucket] < sizes[bucket]:
                        stop = min(read[bucket] + size, sizes[bucket])
                        held[bucket] = cluster.result(
                            client.submit(_slice, one, read[bucket], stop)
                        )
                        read[bucket] = stop
                live = [bucket for bucket in range(len(found)) if len(held[bucket])]
                if not live:
                    return
                # A bucket with pairs still unread has none below the last it holds: every
                # pair up to the lowest such last one can go out now.
                open_ = [int(codes(held[b])[-1]) for b in live if read[b] < sizes[b]]
                bound = min(open_) if open_ else None
                out = []
                for bucket in live:
                    taken = len(held[bucket])
                    if bound is not None:
                        taken = int(np.searchsorted(codes(held[bucket]), bound, side="right"))
                    out.append(held[bucket].rows(slice(0, taken)))
                    held[bucket] = held[bucket].rows(slice(taken, None))
                yield sorted_pairs(out)


def _nothing() -> ScoredPairs:
    return sorted_pairs([])


def _check_budgets(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Any,
    kept: int,
    candidates: int,
    key_pairs: int,
) -> None:
    """The local engine's budgets over the whole run (each bucket checked its own share)."""
    limit = config.max_candidates
    if limit is not None and key_pairs > limit:
        n_distinct = blocking.collapse(docs.fingerprints, docs.settings.bits).fingerprints.shape[0]
        raise blocking.budget_error(
            docs.settings.bits, scheme.blocks, scheme.max_distance, key_pairs, n_distinct, limit
        )
    CandidateCount(limit, len(docs)).add(candidates)
    if config.max_pairs is not None and kept > config.max_pairs:
        raise pair_budget_error(config, docs)
