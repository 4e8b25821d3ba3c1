"""A persistent index of fingerprints in one SQLite file: add documents over time, and ask which
stored documents lie within a Hamming distance of a new one without a scan.

Each fingerprint is cut into ``m`` near-equal blocks of about 16 bits
(:func:`~simhash_cli.core.search.blocking.block_bounds`), and each block has a table (Manku's
tables):
keyed by the block's value, each row holds the list of the documents having that value, as
packed (row, fingerprint) entries. Two fingerprints within ``k`` bits differ in at most ``k``
bits, so at least one block differs in at most ``k // m`` bits (pigeonhole): a query reads, in
each table, the list of its own block value and of every value within ``k // m`` bits of it,
and checks the Hamming distance of what it finds in numpy. At ``k < m`` that is ``m`` B-tree
look-ups; past the point where that costs more than reading every stored fingerprint, the
index is scanned instead (the query: :mod:`.search`; the tables: :mod:`.lists`).

This module is the open file: opening it, its settings, its transactions and the rows every
reader and writer starts from. What is read from it is :mod:`.reading`; what changes it,
:mod:`.writing`.

The file holds the settings its fingerprints were made with and its schema version; adding or
querying with other settings is refused, naming both. Writes are transactions taken with
``BEGIN IMMEDIATE`` in WAL mode: readers never wait, a second writer waits up to a busy timeout
and is then told the index is busy. A file that is not an index of this schema is refused and
never written to.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.corpus import Settings
from ..core.search.blocking import block_bounds
from ..core.sketch.fingerprint import n_words
from ..errors import InputError, PathNotFoundError, SettingsMismatchError
from ..io.opening import kind_of
from .lists import IN_CHUNK, Lists
from .schema import (
    KEY_BITS,
    check_lists,
    connect,
    create_file,
    integers,
    read_settings,
    recognise,
    translated,
    unsigned,
)

__all__ = ["BUSY_TIMEOUT", "Store"]

BUSY_TIMEOUT = 10.0


class Store:
    """An open index file. Use :meth:`open`; close with :meth:`close` (or ``with``)."""

    def __init__(self, path: str, connection: sqlite3.Connection, settings: Settings):
        self.path = path
        self.connection = connection
        self.settings = settings
        self.blocks = block_bounds(settings.bits, max(1, settings.bits // KEY_BITS))
        self.words = n_words(settings.bits)
        self.lists = Lists(path, self.blocks, self.words)

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
        another user's). A stale index (a bulk add that did not finish) is scanned by readers
        until a writer (:class:`.writing.Writer`) builds its tables.

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
        kind = os.stat(path).st_mode
        if not stat.S_ISREG(kind):  # a device or a pipe: neither empty nor to be removed
            raise InputError(f"{path} is {kind_of(kind)}, not an index")
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
            store = cls(path, connection, settings)
            # Every table must list each stored document once (:func:`.schema.check_lists`).
            check_lists(path, connection, len(store.blocks), store.lists.entry.itemsize)
        except BaseException:
            connection.close()
            raise
        return store

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

    def word_columns(self) -> list[str]:
        """The columns of a stored fingerprint's 64-bit words."""
        return [f"w{j}" for j in range(self.words)]

    def stale(self) -> bool:
        """Whether a bulk add left the tables to be built (readers scan meanwhile)."""
        found = self.connection.execute("SELECT value FROM meta WHERE key = 'stale'").fetchone()
        return found is not None and found[0] == "1"

    def count(self) -> int:
        return int(self.connection.execute("SELECT count(*) FROM docs").fetchone()[0])

    def stored(
        self, where: str, parameters: Sequence[Any]
    ) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
        """(rows, fingerprints) of the stored documents ``where`` selects."""
        columns = ", ".join(self.word_columns())
        found = self.connection.execute(f"SELECT id, {columns} FROM docs WHERE {where}", parameters)
        numbers = integers(self.path, found.fetchall(), 1 + self.words)
        return numbers[:, 0].copy(), unsigned(numbers[:, 1:])

    def locate(self, paths: Sequence[bytes]) -> dict[bytes, tuple[Any, ...]]:
        """Those of ``paths`` (encoded ids) stored: (row, size, mtime_ns, features, words...)
        by path, found through the table of their CRC-32s (a path is stored once)."""
        wanted = set(paths)
        found: dict[bytes, tuple[Any, ...]] = {}
        hashes = sorted({zlib.crc32(path) for path in paths})
        columns = ", ".join(f"d.{c}" for c in self.word_columns())
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
