"""What is read from an open index (:mod:`.store`): every stored document, those of given ids,
ids by row, and the index's statistics. Each read of every document is checked against the
first table, so that a damaged index is found out rather than answered from."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.distinct import distinct
from .lists import IN_CHUNK, agree, disagreement, rows_and_prints
from .schema import SCHEMA_VERSION, damaged, decode_id, encode_id, integers, unsigned
from .store import Store

__all__ = ["check_agree", "documents", "documents_of", "find", "ids_of", "stats"]


def documents(
    store: Store,
) -> tuple[NDArray[np.int64], list[str], NDArray[np.uint64], NDArray[np.int64]]:
    """Every stored document: (rows, ids, fingerprints (n, n_words), features), by row."""
    columns = ", ".join(store.word_columns())
    rows = store.connection.execute(
        f"SELECT id, path, features, {columns} FROM docs ORDER BY id"
    ).fetchall()
    if not rows:
        empty = np.zeros((0, store.words), np.uint64)
        return np.zeros(0, np.int64), [], empty, np.zeros(0, np.int64)
    ids = [decode_id(row[1], store.path) for row in rows]
    numbers = integers(store.path, [(row[0], row[2], *row[3:]) for row in rows], 2 + store.words)
    fingerprints = unsigned(numbers[:, 2:])
    check_agree(store, numbers[:, 0], fingerprints)
    return numbers[:, 0], ids, fingerprints, numbers[:, 1]


def check_agree(store: Store, rows: NDArray[np.int64], fingerprints: NDArray[np.uint64]) -> None:
    """Every document read (all of them, by row) is what the first table lists; a stale
    index's tables wait for the next writer and say nothing yet."""
    if not store.stale() and not agree(
        rows, fingerprints, *store.lists.everything(store.connection)
    ):
        raise disagreement(store.path)


def find(store: Store, ids: Sequence[str]) -> dict[str, tuple[int, int | None, int | None]]:
    """Those of ``ids`` the index holds: (row, size, mtime_ns), size and mtime None for a
    record that is not a file."""
    located = store.locate([encode_id(doc_id) for doc_id in ids])
    return {decode_id(path, store.path): (row[0], row[1], row[2]) for path, row in located.items()}


def documents_of(
    store: Store, ids: Sequence[str]
) -> tuple[list[str], NDArray[np.uint64], NDArray[np.int64]]:
    """Those of ``ids`` stored, in the order given: (ids, fingerprints, features)."""
    encoded = [encode_id(doc_id) for doc_id in ids]
    located = store.locate(encoded)
    present = [i for i, path in enumerate(encoded) if path in located]
    values = [located[encoded[i]] for i in present]
    _, fingerprints = rows_and_prints(store.path, values, store.words)
    features = integers(store.path, [value[3:4] for value in values], 1)[:, 0]
    return [ids[i] for i in present], fingerprints, features


def ids_of(store: Store, rows: NDArray[np.int64]) -> dict[int, str]:
    """Stored ids by row.

    Raises:
        InputError: a row the index does not hold (its tables name it: damaged).
    """
    found: dict[int, str] = {}
    unique = distinct(rows).tolist()
    for start in range(0, len(unique), IN_CHUNK):
        for row, path in store.connection.execute(
            "SELECT id, path FROM docs WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(unique[start : start + IN_CHUNK]),),
        ):
            found[row] = decode_id(path, store.path)
    if len(found) < len(unique):
        raise damaged(store.path, "its tables name documents it does not hold")
    return found


def stats(store: Store) -> dict[str, Any]:
    """Documents, settings, tables, size on disk and how evenly the tables' keys spread."""
    count = store.count()
    query = "SELECT count(*) FROM docs WHERE size IS NOT NULL"
    files = int(store.connection.execute(query).fetchone()[0])
    tables = store.lists.summary(store.connection, count)
    size = sum(
        os.path.getsize(store.path + suffix)
        for suffix in ("", "-wal")
        if os.path.exists(store.path + suffix)
    )
    return {
        "index": os.path.abspath(store.path),
        "schema_version": SCHEMA_VERSION,
        "documents": count,
        "files": files,
        "records": count - files,
        **store.settings.names(),
        "tables": tables,
        "tables_built": not store.stale(),
        "bytes": size,
        "bytes_per_document": size / count if count else None,
    }
