"""What changes an open index (:mod:`.store`): documents added, replaced and removed, a batch per
transaction, the block tables kept in step with them.

A killed ``add`` leaves every batch it committed and nothing of the one it was in. A large add
into a smaller index (a bulk add) appends its rows as they come and leaves the tables alone
until its end, where they are built with one sort each; the index says it is stale meanwhile
(readers scan it), and one whose bulk add was killed is finished by the next writer to open it.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.corpus import Settings
from ..errors import IndexBusyError, InputError
from .lists import IN_CHUNK, no_rows, rows_and_prints
from .schema import decode_id, encode_id, encode_ids, integers, signed, stored_name
from .store import Store

__all__ = ["BULK_ROWS", "Writer"]

BULK_ROWS = 50_000
"""An add of at least this many rows, more than the index holds, builds the tables after
loading (one sort each) instead of updating their lists batch by batch."""

_Pending = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint64]]


class Writer:
    """The writer of an open index. Use :meth:`open`; close with :meth:`close` (or ``with``)."""

    def __init__(self, store: Store):
        self.store = store
        # A bulk add into an empty index keeps what it stored (CRC-32s of the paths, rows,
        # fingerprints), so that its end need not read it all back.
        self._pending: list[_Pending] = []
        self._pending_valid = False

    @classmethod
    def open(
        cls, path: str, *, create: Settings | None = None, timeout: float | None = None
    ) -> Writer:
        """Open the index at ``path`` for writing (see :meth:`.Store.open`), and build the
        tables a bulk add that did not reach :meth:`finish` left stale."""
        writer = cls(Store.open(path, create=create, timeout=timeout))
        try:
            writer.finish()
        except BaseException:
            writer.close()
            raise
        return writer

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def finish(self) -> None:
        """After an add: the tables a bulk add left alone, built (one sort each). Finding the
        index busy, the next writer is left to do it (readers scan meanwhile)."""
        if not self.store.stale():
            return
        try:
            with self.store.transaction() as connection:
                if self.store.stale():
                    self._rebuild(connection)
        except IndexBusyError:
            pass

    def add(
        self,
        ids: Sequence[str],
        fingerprints: NDArray[np.uint64],
        features: NDArray[np.int64],
        files: Sequence[tuple[int, int] | None] | None = None,
        *,
        expected: int = 0,
    ) -> None:
        """Store a batch of documents in one transaction, replacing those of the same id.

        Args:
            ids: document ids (absolute paths for files), each once.
            fingerprints: (n, n_words) uint64 made with the index's settings.
            features: (n,) distinct features per document.
            files: each file's (size, mtime_ns) as read, or None (not a file: never pruned).
            expected: how many rows the whole add will bring. A large add into a smaller index
                leaves the tables alone batch by batch and builds them at :meth:`finish`
                (a killed one is finished by the next writer to open the index).
        """
        store = self.store
        latest = dict(zip(encode_ids(ids), range(len(ids)), strict=True))
        take = np.fromiter(latest.values(), dtype=np.int64, count=len(latest))  # last wins
        paths = list(latest)
        fingerprints = fingerprints.reshape(len(ids), store.words)[take]
        words = signed(fingerprints).T.tolist()
        counts = features[take].tolist()
        chosen = [files[i] if files else None for i in take.tolist()]
        sizes = [None if f is None else f[0] for f in chosen]
        mtimes = [None if f is None else f[1] for f in chosen]
        columns = ["size", "mtime_ns", "features", *store.word_columns()]
        with store.transaction() as connection:
            # (count() reads the whole table: asked only when a bulk add may begin.)
            if expected >= BULK_ROWS and not store.stale() and expected > (stored := store.count()):
                connection.execute("UPDATE meta SET value = '1' WHERE key = 'stale'")
                self._pending, self._pending_valid = [], stored == 0
            start = "SELECT coalesce(max(id), 0) + 1 FROM docs"
            first = int(connection.execute(start).fetchone()[0])  # the next new row
            if store.stale():
                self._append(connection, paths, first, sizes, mtimes, [counts, *words])
                if self._pending_valid:
                    appended = np.arange(first, first + len(paths), dtype=np.int64)
                    crcs = np.fromiter(map(zlib.crc32, paths), np.int64, len(paths))
                    self._pending.append((crcs, appended, fingerprints))
                return
            located = store.locate(paths)
            rows: list[int] = []
            for path in paths:
                if path in located:
                    rows.append(located[path][0])
                else:
                    rows.append(first)
                    first += 1
            new = [i for i, path in enumerate(paths) if path not in located]
            old = [i for i, path in enumerate(paths) if path in located]
            values = list(zip(sizes, mtimes, counts, *words, rows, strict=True))
            connection.executemany(
                f"UPDATE docs SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?",
                (values[i] for i in old),
            )
            connection.executemany(
                f"INSERT INTO docs (path, {', '.join(columns)}, id) "
                f"VALUES (?, {', '.join('?' * (len(columns) + 1))})",
                ((paths[i], *values[i]) for i in new),
            )
            hashes = sorted((zlib.crc32(paths[i]), rows[i]) for i in new)
            connection.executemany("INSERT INTO names (hash, row) VALUES (?, ?)", hashes)
            before = rows_and_prints(store.path, [located[paths[i]] for i in old], store.words)
            after = (np.array(rows, dtype=np.int64), fingerprints)
            self._change_lists(connection, before, after)

    def _append(
        self,
        connection: sqlite3.Connection,
        paths: list[bytes],
        first: int,
        sizes: list[int | None],
        mtimes: list[int | None],
        numbers: list[list[int]],
    ) -> None:
        """A bulk add's batch: rows appended as they come, numbered by SQLite from ``first``
        (this transaction is the only writer); the names and the tables are built at the end,
        when a path stored twice keeps its last row (:meth:`_rebuild`). Records that are not
        files leave size and mtime out (NULL)."""
        given: list[tuple[str, Sequence[Any]]] = [("path", paths)]
        if any(size is not None for size in sizes):
            given += [("size", sizes), ("mtime_ns", mtimes)]
        given += list(zip(["features", *self.store.word_columns()], numbers, strict=True))
        connection.executemany(
            f"INSERT INTO docs ({', '.join(name for name, _ in given)}) "
            f"VALUES ({', '.join('?' * len(given))})",
            zip(*(values for _, values in given), strict=True),
        )
        last = connection.execute("SELECT last_insert_rowid()").fetchone()[0]
        if paths and last != first + len(paths) - 1:
            raise InputError(f"the index {self.store.path} numbered rows unexpectedly")

    def remove(self, ids: Sequence[str]) -> None:
        """Forget these documents, and take them out of the tables (a transaction per chunk)."""
        store = self.store
        paths = [encode_id(doc_id) for doc_id in ids]
        for start in range(0, len(paths), IN_CHUNK):
            chunk = paths[start : start + IN_CHUNK]
            with store.transaction() as connection:
                located = store.locate(chunk)
                gone = rows_and_prints(store.path, list(located.values()), store.words)
                connection.execute(
                    "DELETE FROM docs WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(gone[0].tolist()),),
                )
                connection.executemany(
                    "DELETE FROM names WHERE hash = ? AND row = ?",
                    ((zlib.crc32(path), row[0]) for path, row in located.items()),
                )
                self._change_lists(connection, gone, no_rows(store.words))

    def prune(self, keep: Callable[[str, int, int], bool]) -> list[str]:
        """Remove the files for which ``keep(path, size, mtime_ns)`` is False (gone, changed);
        records that are not files stay. Returns the removed ids."""
        store = self.store
        files = store.connection.execute(
            "SELECT path, size, mtime_ns FROM docs WHERE size IS NOT NULL"
        ).fetchall()
        stamps = integers(store.path, [(size, mtime) for _, size, mtime in files], 2).tolist()
        ids = [decode_id(path, store.path) for path, _, _ in files]
        gone = [name for name, stamp in zip(ids, stamps, strict=True) if not keep(name, *stamp)]
        self.remove(gone)
        return gone

    def _change_lists(
        self,
        connection: sqlite3.Connection,
        gone: tuple[NDArray[np.int64], NDArray[np.uint64]],
        added: tuple[NDArray[np.int64], NDArray[np.uint64]],
    ) -> None:
        """The tables' lists of the keys ``gone`` and ``added`` rows touch, rewritten; left
        alone while a bulk add is under way (it builds every table at its end)."""
        if not self.store.stale():
            self.store.lists.change(connection, gone, added)

    def _rebuild(self, connection: sqlite3.Connection) -> None:
        """After a bulk add: a path stored twice keeps its last row, then the names and every
        table are built from the stored documents, one sort each."""
        store = self.store
        if self._pending_valid and self._pending:
            hashes, rows, prints = (
                np.concatenate(part) for part in zip(*self._pending, strict=True)
            )
            last = connection.execute("SELECT count(*), max(id) FROM docs").fetchone()
            if (rows.size, int(rows.max())) == (last[0], last[1]):  # nobody else added
                self._pending, self._pending_valid = [], False
                self._build(connection, hashes, rows, prints)
                return
        self._pending, self._pending_valid = [], False
        found = connection.execute("SELECT path FROM docs ORDER BY id").fetchall()
        hashes = np.fromiter(
            (zlib.crc32(stored_name(path, store.path)) for (path,) in found), np.int64
        )
        rows, fingerprints = store.stored("1 ORDER BY id", ())
        self._build(connection, hashes, rows, fingerprints)

    def _build(
        self,
        connection: sqlite3.Connection,
        hashes: NDArray[np.int64],
        rows: NDArray[np.int64],
        fingerprints: NDArray[np.uint64],
    ) -> None:
        """Names and tables from every stored document: (CRC-32 of its path, row,
        fingerprint), by row. Rows of one path, but the last, are dropped first."""
        inverse = np.unique(hashes, return_inverse=True)[1]
        repeated = np.flatnonzero(np.bincount(inverse) > 1)
        if repeated.size:
            suspects = rows[np.isin(inverse, repeated)]
            last: dict[bytes, int] = {}
            for row, path in connection.execute(
                "SELECT id, path FROM docs WHERE id IN (SELECT value FROM json_each(?)) "
                "ORDER BY id",
                (json.dumps(suspects.tolist()),),
            ):
                last[path] = row
            dropped = np.setdiff1d(suspects, np.fromiter(last.values(), np.int64))
            connection.execute(
                "DELETE FROM docs WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(dropped.tolist()),),
            )
            keep = ~np.isin(rows, dropped)
            hashes, rows, fingerprints = hashes[keep], rows[keep], fingerprints[keep]
        connection.execute("DELETE FROM names")
        # In key order, the B-tree is filled, not split (rows are below 2**32, and unique).
        order = np.argsort((hashes << np.int64(32)) | rows)
        connection.executemany(
            "INSERT INTO names (hash, row) VALUES (?, ?)",
            zip(hashes[order].tolist(), rows[order].tolist(), strict=True),
        )
        for j in range(len(self.store.blocks)):
            connection.execute(f"DELETE FROM keys{j}")
        self.store.lists.write(connection, rows, fingerprints, {}, replace=False)
        connection.execute("UPDATE meta SET value = '0' WHERE key = 'stale'")
