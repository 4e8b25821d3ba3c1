"""A persistent index of fingerprints in one SQLite file: add documents over time, and ask which
stored documents lie within a Hamming distance of a new one without a scan.

Each fingerprint is cut into ``m`` near-equal blocks of about 16 bits
(:func:`~simhash_cli.core.blocking.block_bounds`), and each block has a table (Manku's tables):
keyed by the block's value, each row holds the list of the documents having that value, as
packed (row, fingerprint) entries. Two fingerprints within ``k`` bits differ in at most ``k``
bits, so at least one block differs in at most ``k // m`` bits (pigeonhole): a query reads, in
each table, the list of its own block value and of every value within ``k // m`` bits of it,
and checks the Hamming distance of what it finds in numpy. At ``k < m`` that is ``m`` B-tree
look-ups; past the point where that costs more than reading every stored fingerprint, the
index is scanned instead (the query: :mod:`.search`; the tables: :mod:`.lists`). This module
is the file: opening it, writing documents to it, reading them back, its statistics.

The file holds the settings its fingerprints were made with and its schema version; adding or
querying with other settings is refused, naming both. Writes are batched transactions taken
with ``BEGIN IMMEDIATE`` in WAL mode: readers never wait, a second writer waits up to a busy
timeout and is then told the index is busy, and a killed ``add`` leaves every batch it
committed and nothing of the one it was in. A file that is not an index of this schema is
refused and never written to.
"""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.blocking import block_bounds
from ..core.corpus import Settings
from ..core.distinct import distinct
from ..core.fingerprint import n_words
from ..errors import (
    IndexBusyError,
    InputError,
    PathNotFoundError,
    SettingsMismatchError,
)
from .lists import (
    IN_CHUNK,
    Lists,
    agree,
    disagreement,
    no_rows,
    rows_and_prints,
)
from .schema import (
    KEY_BITS,
    SCHEMA_VERSION,
    check_lists,
    connect,
    create_file,
    damaged,
    decode_id,
    encode_id,
    encode_ids,
    integers,
    read_settings,
    recognise,
    signed,
    stored_name,
    translated,
    unsigned,
)

__all__ = ["Store"]

BUSY_TIMEOUT = 10.0
BULK_ROWS = 50_000
"""An add of at least this many rows, more than the index holds, builds the tables after
loading (one sort each) instead of updating their lists batch by batch."""
_PARAMETERS = 5_000  # bound parameters in one statement (SQLite allows 32,766)


class Store:
    """An open index file. Use :meth:`open`; close with :meth:`close` (or ``with``)."""

    def __init__(self, path: str, connection: sqlite3.Connection, settings: Settings):
        self.path = path
        self.connection = connection
        self.settings = settings
        self.blocks = block_bounds(settings.bits, max(1, settings.bits // KEY_BITS))
        self.words = n_words(settings.bits)
        self.lists = Lists(path, self.blocks, self.words)
        # A bulk add into an empty index keeps what it stored (CRC-32s of the paths, rows,
        # fingerprints), so that its end need not read it all back.
        self._pending: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint64]]]
        self._pending = []
        self._pending_valid = False

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        path: str,
        *,
        create: Settings | None = None,
        timeout: float | None = None,
        readonly: bool = False,
    ) -> Store:
        """Open the index at ``path``; with ``create``, make it first if there is no file.
        A writer waits up to ``timeout`` seconds (default :data:`BUSY_TIMEOUT`) for another.
        With ``readonly`` nothing is ever written (an index on a read-only filesystem, or
        another user's): the tables are not repaired, a stale index is scanned.

        Raises:
            InputError: no such index (without ``create``), or a file that is not an index of
                this schema (never written to).
        """
        if not os.path.exists(path) and create is not None:
            create_file(path, create)
        if not os.path.exists(path):
            raise PathNotFoundError(f"no index at {path} (simhash index add {path} ... makes one)")
        if os.path.isdir(path):
            raise InputError(f"{path} is a directory, not an index")
        if os.path.getsize(path) == 0:
            raise InputError(
                f"{path} is an empty file, not an index (a truncated copy?); remove it to start "
                "a new index there"
            )
        recognise(path)  # another program's SQLite file is never opened by SQLite
        wait = BUSY_TIMEOUT if timeout is None else timeout
        connection = connect(path, wait, readonly)
        try:
            settings = read_settings(path, connection)
            connection.execute("PRAGMA cache_size = -65536")
            if not readonly:
                # In WAL mode NORMAL never corrupts the file; a power cut (not a kill) may
                # lose the last batches, which the next add reads again.
                connection.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            connection.close()
            raise
        store = cls(path, connection, settings)
        try:
            if not readonly:
                store._repair_tables()
            store._check_tables()
        except BaseException:
            connection.close()
            raise
        return store

    def _check_tables(self) -> None:
        """Every table must list each stored document once (:func:`.schema.check_lists`); a
        stale index, whose tables a writer rebuilds next, is scanned meanwhile."""
        check_lists(self.path, self.connection, len(self.blocks), self.lists.entry.itemsize)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self, wanted: Settings) -> None:
        """Refuse fingerprints made otherwise than the stored ones, naming both."""
        if wanted != self.settings:
            raise SettingsMismatchError(
                f"the index {self.path} holds fingerprints made with {self.settings.describe()}; "
                f"these were made with {wanted.describe()}"
            )

    # ------------------------------------------------------------------ writing

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): all of it is stored, or none."""
        try:
            self.connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise translated(self.path, exc) from None
        try:
            yield self.connection
            self.connection.execute("COMMIT")
        except BaseException as exc:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise translated(self.path, exc) from None
            raise

    def _word_columns(self) -> list[str]:
        return [f"w{j}" for j in range(self.words)]

    def stale(self) -> bool:
        found = self.connection.execute("SELECT value FROM meta WHERE key = 'stale'").fetchone()
        return found is not None and found[0] == "1"

    def _repair_tables(self) -> None:
        """Build the tables again after a bulk add that did not reach :meth:`finish`; a
        reader that finds the index busy leaves that to the next writer (it scans meanwhile)."""
        if not self.stale():
            return
        try:
            with self.transaction() as connection:
                if self.stale():
                    self._rebuild(connection)
        except IndexBusyError:
            pass

    def _rebuild(self, connection: sqlite3.Connection) -> None:
        """After a bulk add: a path stored twice keeps its last row, then the names and every
        table are built from the stored documents, one sort each."""
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
            (zlib.crc32(stored_name(path, self.path)) for (path,) in found), np.int64
        )
        rows, fingerprints = self.stored("1 ORDER BY id", ())
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
        for j in range(len(self.blocks)):
            connection.execute(f"DELETE FROM keys{j}")
        self.lists.write(connection, rows, fingerprints, {}, replace=False)
        connection.execute("UPDATE meta SET value = '0' WHERE key = 'stale'")

    def _change_lists(
        self,
        connection: sqlite3.Connection,
        gone: tuple[NDArray[np.int64], NDArray[np.uint64]],
        added: tuple[NDArray[np.int64], NDArray[np.uint64]],
    ) -> None:
        """The tables' lists of the keys ``gone`` and ``added`` rows touch, rewritten; left
        alone while a bulk add is under way (it builds every table at its end)."""
        if not self.stale():
            self.lists.change(connection, gone, added)

    def stored(
        self, where: str, parameters: Sequence[Any]
    ) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
        """(rows, fingerprints) of the stored documents ``where`` selects."""
        columns = ", ".join(self._word_columns())
        found = self.connection.execute(f"SELECT id, {columns} FROM docs WHERE {where}", parameters)
        numbers = integers(self.path, found.fetchall(), 1 + self.words)
        return numbers[:, 0].copy(), unsigned(numbers[:, 1:])

    def count(self) -> int:
        return int(self.connection.execute("SELECT count(*) FROM docs").fetchone()[0])

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
        latest = dict(zip(encode_ids(ids), range(len(ids)), strict=True))
        take = np.fromiter(latest.values(), dtype=np.int64, count=len(latest))  # last wins
        paths = list(latest)
        fingerprints = fingerprints.reshape(len(ids), self.words)[take]
        words = signed(fingerprints).T.tolist()
        counts = features[take].tolist()
        chosen = [files[i] if files else None for i in take.tolist()]
        sizes = [None if f is None else f[0] for f in chosen]
        mtimes = [None if f is None else f[1] for f in chosen]
        columns = ["size", "mtime_ns", "features", *self._word_columns()]
        with self.transaction() as connection:
            # (count() reads the whole table: asked only when a bulk add may begin.)
            if expected >= BULK_ROWS and not self.stale() and expected > (stored := self.count()):
                connection.execute("UPDATE meta SET value = '1' WHERE key = 'stale'")
                self._pending, self._pending_valid = [], stored == 0
            start = "SELECT coalesce(max(id), 0) + 1 FROM docs"
            first = int(connection.execute(start).fetchone()[0])  # the next new row
            if self.stale():
                # A bulk add: rows are appended as they come; the names and the tables are
                # built at the end, when a path stored twice keeps its last row (_rebuild).
                appended = np.arange(first, first + len(paths), dtype=np.int64)
                # Rows numbered by SQLite, as ``appended`` says (this transaction is the only
                # writer); records that are not files leave size and mtime out (NULL).
                given: list[tuple[str, Sequence[Any]]] = [("path", paths)]
                if any(size is not None for size in sizes):
                    given += [("size", sizes), ("mtime_ns", mtimes)]
                given += list(zip(columns[2:], [counts, *words], strict=True))
                connection.executemany(
                    f"INSERT INTO docs ({', '.join(name for name, _ in given)}) "
                    f"VALUES ({', '.join('?' * len(given))})",
                    zip(*(values for _, values in given), strict=True),
                )
                last = connection.execute("SELECT last_insert_rowid()").fetchone()[0]
                if paths and last != appended[-1]:
                    raise InputError(f"the index {self.path} numbered rows unexpectedly")
                if self._pending_valid:
                    crcs = np.fromiter(map(zlib.crc32, paths), np.int64, len(paths))
                    self._pending.append((crcs, appended, fingerprints))
                return
            located = self._locate(paths)
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
            before = rows_and_prints(self.path, [located[paths[i]] for i in old], self.words)
            after = (np.array(rows, dtype=np.int64), fingerprints)
            self._change_lists(connection, before, after)

    def _locate(self, paths: Sequence[bytes]) -> dict[bytes, tuple[Any, ...]]:
        """Those of ``paths`` stored: (row, size, mtime_ns, features, words...) by path, found
        through the table of their CRC-32s (a path is stored once, not again in an index)."""
        wanted = set(paths)
        found: dict[bytes, tuple[Any, ...]] = {}
        hashes = sorted({zlib.crc32(path) for path in paths})
        columns = ", ".join(f"d.{c}" for c in self._word_columns())
        for start in range(0, len(hashes), IN_CHUNK):
            for path, *rest in self.connection.execute(
                f"SELECT d.path, n.row, d.size, d.mtime_ns, d.features, {columns} "
                "FROM names AS n JOIN docs AS d ON d.id = n.row "
                "WHERE n.hash IN (SELECT value FROM json_each(?))",
                (json.dumps(hashes[start : start + IN_CHUNK]),),
            ):
                if path in wanted:
                    found[path] = tuple(rest)
        return found

    def finish(self) -> None:
        """After an add: the tables a bulk add left alone, built (one sort each)."""
        self._repair_tables()

    def find(self, ids: Sequence[str]) -> dict[str, tuple[int, int | None, int | None]]:
        """Those of ``ids`` the index holds: (row, size, mtime_ns), size and mtime None for a
        record that is not a file."""
        located = self._locate([encode_id(doc_id) for doc_id in ids])
        return {
            decode_id(path, self.path): (row[0], row[1], row[2]) for path, row in located.items()
        }

    def remove(self, ids: Sequence[str]) -> None:
        """Forget these documents, and take them out of the tables (a transaction per chunk)."""
        paths = [encode_id(doc_id) for doc_id in ids]
        for start in range(0, len(paths), IN_CHUNK):
            chunk = paths[start : start + IN_CHUNK]
            with self.transaction() as connection:
                located = self._locate(chunk)
                gone = rows_and_prints(self.path, list(located.values()), self.words)
                connection.execute(
                    "DELETE FROM docs WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(gone[0].tolist()),),
                )
                connection.executemany(
                    "DELETE FROM names WHERE hash = ? AND row = ?",
                    ((zlib.crc32(path), row[0]) for path, row in located.items()),
                )
                self._change_lists(connection, gone, no_rows(self.words))

    def prune(self, keep: Callable[[str, int, int], bool]) -> list[str]:
        """Remove the files for which ``keep(path, size, mtime_ns)`` is False (gone, changed);
        records that are not files stay. Returns the removed ids."""
        files = self.connection.execute(
            "SELECT path, size, mtime_ns FROM docs WHERE size IS NOT NULL"
        ).fetchall()
        stamps = integers(self.path, [(size, mtime) for _, size, mtime in files], 2).tolist()
        ids = [decode_id(path, self.path) for path, _, _ in files]
        gone = [name for name, stamp in zip(ids, stamps, strict=True) if not keep(name, *stamp)]
        self.remove(gone)
        return gone

    # ------------------------------------------------------------------ reading

    def documents(
        self,
    ) -> tuple[NDArray[np.int64], list[str], NDArray[np.uint64], NDArray[np.int64]]:
        """Every stored document: (rows, ids, fingerprints (n, n_words), features), by row."""
        columns = ", ".join(self._word_columns())
        rows = self.connection.execute(
            f"SELECT id, path, features, {columns} FROM docs ORDER BY id"
        ).fetchall()
        if not rows:
            empty = np.zeros((0, self.words), np.uint64)
            return np.zeros(0, np.int64), [], empty, np.zeros(0, np.int64)
        ids = [decode_id(row[1], self.path) for row in rows]
        numbers = integers(self.path, [(row[0], row[2], *row[3:]) for row in rows], 2 + self.words)
        fingerprints = unsigned(numbers[:, 2:])
        self.check_agree(numbers[:, 0], fingerprints)
        return numbers[:, 0], ids, fingerprints, numbers[:, 1]

    def check_agree(self, rows: NDArray[np.int64], fingerprints: NDArray[np.uint64]) -> None:
        """Every document read (all of them, by row) is what the first table lists; a stale
        index's tables wait for the next writer and say nothing yet."""
        if not self.stale() and not agree(
            rows, fingerprints, *self.lists.everything(self.connection)
        ):
            raise disagreement(self.path)

    def documents_of(
        self, ids: Sequence[str]
    ) -> tuple[list[str], NDArray[np.uint64], NDArray[np.int64]]:
        """Those of ``ids`` stored, in the order given: (ids, fingerprints, features)."""
        encoded = [encode_id(doc_id) for doc_id in ids]
        located = self._locate(encoded)
        present = [i for i, path in enumerate(encoded) if path in located]
        values = [located[encoded[i]] for i in present]
        _, fingerprints = rows_and_prints(self.path, values, self.words)
        features = integers(self.path, [value[3:4] for value in values], 1)[:, 0]
        return [ids[i] for i in present], fingerprints, features

    def ids_of(self, rows: NDArray[np.int64]) -> dict[int, str]:
        """Stored ids by row."""
        found: dict[int, str] = {}
        unique = distinct(rows).tolist()
        for start in range(0, len(unique), IN_CHUNK):
            for row, path in self.connection.execute(
                "SELECT id, path FROM docs WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(unique[start : start + IN_CHUNK]),),
            ):
                found[row] = decode_id(path, self.path)
        if len(found) < len(unique):
            raise damaged(self.path, "its tables name documents it does not hold")
        return found

    # ------------------------------------------------------------------ stats

    def stats(self) -> dict[str, Any]:
        """Documents, settings, tables, size on disk and how evenly the tables' keys spread."""
        documents = self.count()
        query = "SELECT count(*) FROM docs WHERE size IS NOT NULL"
        files = int(self.connection.execute(query).fetchone()[0])
        tables = self.lists.summary(self.connection, documents)
        size = sum(
            os.path.getsize(self.path + suffix)
            for suffix in ("", "-wal")
            if os.path.exists(self.path + suffix)
        )
        return {
            "index": os.path.abspath(self.path),
            "schema_version": SCHEMA_VERSION,
            "documents": documents,
            "files": files,
            "records": documents - files,
            **self.settings.names(),
            "tables": tables,
            "tables_built": not self.stale(),
            "bytes": size,
            "bytes_per_document": size / documents if documents else None,
        }


# ---------------------------------------------------------------------------- the file
