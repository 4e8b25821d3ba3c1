"""The query of an index: which stored documents lie within ``k`` bits of each query
fingerprint, by look-ups in its tables (:mod:`.lists`) or by a scan of every stored
fingerprint, whichever costs less; and each distance the tables gave confirmed from the stored
fingerprints, so that a damaged index is found out rather than answered from."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
from numpy.typing import NDArray

from ..core.distinct import distinct
from ..core.matches import Matches
from .lists import IN_CHUNK, disagreement, unique_matches
from .reading import check_agree, ids_of
from .schema import translated
from .store import Store

__all__ = ["scan", "scans", "within"]

# Costs in microseconds, measured on the 2-core machine of docs/benchmarks.md: a table
# look-up and each stored row it returns, against reading a stored row for a scan and comparing
# it with one query in numpy.
LOOKUP_COST = 1.0
ENTRY_COST = 0.02
SCAN_READ_COST = 0.3
SCAN_COMPARE_COST = 0.002


def scans(store: Store, n_queries: int, max_distance: int) -> bool:
    """Whether reading every stored fingerprint costs less than the look-ups: each look-up
    reads one list, of about count / 2^width entries."""
    stored = store.count()
    per_probe = sum(stored / 2.0**width for _, width in store.blocks) / len(store.blocks)
    probes = store.lists.probes(max_distance)
    looking = n_queries * probes * (LOOKUP_COST + ENTRY_COST * per_probe)
    scanning = stored * (SCAN_READ_COST + SCAN_COMPARE_COST * n_queries)
    return scanning < looking


def within(store: Store, fingerprints: NDArray[np.uint64], max_distance: int) -> Matches:
    """The stored documents within ``max_distance`` bits of each query fingerprint.

    Look-ups in the tables, or a scan of every stored fingerprint when that costs less
    (:func:`scans`) or the tables wait to be built after an interrupted bulk add. One read
    transaction: what it finds is one state of the index.
    """
    queries = np.ascontiguousarray(fingerprints, dtype=np.uint64).reshape(-1, store.words)
    connection = store.connection
    connection.execute("BEGIN")
    try:
        if store.stale() or scans(store, queries.shape[0], max_distance):
            query, doc, hamming = scan(store, queries, max_distance)
        else:
            query, doc, hamming = store.lists.look_up(connection, queries, max_distance)
            _confirm(store, queries, query, doc, hamming)
    except sqlite3.Error as exc:
        raise translated(store.path, exc) from None
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")
    order = np.lexsort((doc, hamming, query))
    return Matches(query[order], doc[order], hamming[order])


def _confirm(
    store: Store,
    queries: NDArray[np.uint64],
    query: NDArray[np.int64],
    doc: NDArray[np.int64],
    hamming: NDArray[np.int64],
) -> None:
    """The distances the tables gave, recomputed from the stored fingerprints of the rows
    they matched (a few): a disagreement is a damaged index."""
    wanted = distinct(doc)
    rows: list[NDArray[np.int64]] = []
    prints: list[NDArray[np.uint64]] = []
    for start in range(0, wanted.size, IN_CHUNK):
        chunk = json.dumps(wanted[start : start + IN_CHUNK].tolist())
        got = store.stored("id IN (SELECT value FROM json_each(?))", (chunk,))
        rows.append(got[0])
        prints.append(got[1])
    stored_rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    order = np.argsort(stored_rows)  # sorted here: ORDER BY would make SQLite scan them all
    stored_rows = stored_rows[order]
    if not np.array_equal(stored_rows, wanted):
        ids_of(store, doc)  # rows the tables name and the index does not hold: damaged
    stored = np.concatenate(prints)[order] if prints else np.zeros((0, store.words), np.uint64)
    at = np.searchsorted(stored_rows, doc)
    distance = np.bitwise_count(stored[at] ^ queries[query]).sum(axis=1, dtype=np.int64)
    if not np.array_equal(distance, hamming):
        raise disagreement(store.path)


def scan(
    store: Store, queries: NDArray[np.uint64], max_distance: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(query, row, distance) of every stored fingerprint within ``max_distance`` bits of a
    query, read from the stored fingerprints alone (no ids: they are not needed here)."""
    rows, stored = store.stored("1 ORDER BY id", ())
    check_agree(store, rows, stored)
    parts: list[NDArray[np.int64]] = []
    for q in range(queries.shape[0]):
        distance = np.bitwise_count(stored ^ queries[q]).sum(axis=1, dtype=np.int64)
        close = np.flatnonzero(distance <= max_distance)
        parts.append(np.stack((np.full(close.size, q), rows[close], distance[close]), 1))
    return unique_matches(parts)
