"""A persistent index of fingerprints in one SQLite file: add documents over time, and ask which
stored documents lie within a Hamming distance of a new one without a scan.

Each fingerprint is cut into ``m`` near-equal blocks of about 16 bits
(:func:`~simhash_cli.blocking.block_bounds`), and each block's value is an indexed column:
Manku's tables, one B-tree per block. Two fingerprints within ``k`` bits differ in at most ``k``
blocks' worth of bits, so at least one block differs in at most ``k // m`` bits (pigeonhole):
a query looks up, in each table, its own block value and every value within ``k // m`` bits of
it, then checks the Hamming distance of what it finds. At ``k < m`` that is ``m`` exact look-ups.

The file holds the settings its fingerprints were made with and its schema version; adding or
querying with other settings is refused, naming both. Writes are batched transactions taken
with ``BEGIN IMMEDIATE`` in WAL mode: readers never wait, a second writer waits up to a busy
timeout and is then told the index is busy, and a killed ``add`` leaves every batch it
committed and nothing of the one it was in. A file that is not an index of this schema is
refused and never written to.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .blocking import bit_slice, block_bounds
from .errors import InputError, SettingsMismatchError
from .fingerprint import n_words
from .pipeline import Settings

__all__ = [
    "APPLICATION_ID",
    "KEY_BITS",
    "MAX_INDEX_BITS",
    "SCHEMA_VERSION",
    "IndexBusyError",
    "Matches",
    "Store",
    "decode_id",
    "encode_id",
]

SCHEMA_VERSION = 1
APPLICATION_ID = 0x53484958  # "SHIX": what makes an SQLite file a simhash index
KEY_BITS = 16
"""Bits per table key: 1,000,000 random fingerprints share a 16-bit block with ~15 others."""
MAX_INDEX_BITS = 128
BUSY_TIMEOUT = 10.0
# Costs in microseconds, measured on the 2-core machine of docs/benchmarks.md: a table
# look-up and each stored row it returns, against reading a stored row for a scan and comparing
# it with one query in numpy.
LOOKUP_COST = 1.0
ROW_COST = 1.0
SCAN_READ_COST = 0.3
SCAN_COMPARE_COST = 0.002
BULK_ROWS = 50_000
"""An add of at least this many new rows, and more than the index holds, builds the tables
after loading (one sort each) instead of updating them row by row."""
_IN_CHUNK = 20_000
_PARAMETERS = 5_000  # bound parameters in one statement (SQLite allows 32,766)


class IndexBusyError(InputError):
    """Another process held the index's write lock for longer than the busy timeout."""


@dataclass(frozen=True)
class Matches:
    """Stored documents near each query: row k is query ``query[k]`` and stored row ``doc[k]``
    at ``hamming[k]`` bits, sorted by query, then distance, then stored row."""

    query: NDArray[np.int64]
    doc: NDArray[np.int64]
    hamming: NDArray[np.int64]


def encode_id(doc_id: str) -> bytes:
    """A document id as the bytes stored: a file name that is not UTF-8 stays its bytes."""
    try:
        return doc_id.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate from a JSON id
        return doc_id.encode("utf-8", "surrogatepass")


def decode_id(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def _signed(words: NDArray[np.uint64]) -> NDArray[np.int64]:
    """SQLite integers are signed 64-bit: each word is stored as its bit pattern."""
    return np.ascontiguousarray(words, dtype=np.uint64).view(np.int64)


def _unsigned(words: NDArray[np.int64]) -> NDArray[np.uint64]:
    return np.ascontiguousarray(words, dtype=np.int64).view(np.uint64)


class Store:
    """An open index file. Use :meth:`open`; close with :meth:`close` (or ``with``)."""

    def __init__(self, path: str, connection: sqlite3.Connection, settings: Settings):
        self.path = path
        self.connection = connection
        self.settings = settings
        self.blocks = block_bounds(settings.bits, max(1, settings.bits // KEY_BITS))
        self.words = n_words(settings.bits)

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        path: str,
        *,
        create: Settings | None = None,
        timeout: float | None = None,
    ) -> Store:
        """Open the index at ``path``; with ``create``, make it first if there is no file.
        A writer waits up to ``timeout`` seconds (default :data:`BUSY_TIMEOUT`) for another.

        Raises:
            InputError: no such index (without ``create``), or a file that is not an index of
                this schema (never written to).
        """
        if not os.path.exists(path) and create is not None:
            _create_file(path, create)
        exists = os.path.exists(path)
        if not exists:
            raise InputError(f"no index at {path} (simhash index add {path} ... makes one)")
        if exists and os.path.isdir(path):
            raise InputError(f"{path} is a directory, not an index")
        if exists and os.path.getsize(path) == 0:
            raise InputError(
                f"{path} is an empty file, not an index (a truncated copy?); remove it to start "
                "a new index there"
            )
        try:
            connection = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT if timeout is None else timeout, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise InputError(f"cannot open the index {path}: {exc}") from None
        try:
            settings = _read_settings(path, connection)
            connection.execute("PRAGMA cache_size = -65536")
        except BaseException:
            connection.close()
            raise
        store = cls(path, connection, settings)
        store._repair_tables()
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

    # ------------------------------------------------------------------ writing

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): all of it is stored, or none."""
        try:
            self.connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise _translated(self.path, exc) from None
        try:
            yield self.connection
            self.connection.execute("COMMIT")
        except BaseException as exc:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _translated(self.path, exc) from None
            raise

    def _key_columns(self) -> list[str]:
        """Each table's key as an SQL expression over the word columns (an index on an
        expression: the key takes no room in the row)."""
        return [_key_expression(start, width) for start, width in self.blocks]

    def _word_columns(self) -> list[str]:
        return [f"w{j}" for j in range(self.words)]

    def _repair_tables(self) -> None:
        """Build the tables an interrupted bulk add dropped (see :meth:`add`)."""
        have = {row[0] for row in self.connection.execute("SELECT name FROM sqlite_master")}
        if all(f"docs_k{j}" in have for j in range(len(self.blocks))):
            return
        with self.transaction() as connection:
            self._create_tables(connection)

    def _create_tables(self, connection: sqlite3.Connection) -> None:
        for j, key in enumerate(self._key_columns()):
            connection.execute(f"CREATE INDEX IF NOT EXISTS docs_k{j} ON docs({key})")

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
            ids: document ids (absolute paths for files).
            fingerprints: (n, n_words) uint64 made with the index's settings.
            features: (n,) distinct features per document.
            files: each file's (size, mtime_ns) as read, or None (not a file: never pruned).
            expected: how many rows the whole add will bring; a large add into a smaller index
                drops the tables in its first batch and builds them again at :meth:`finish`.
        """
        words = _signed(fingerprints.reshape(len(ids), self.words))
        sizes = [None if f is None else f[0] for f in files] if files else [None] * len(ids)
        mtimes = [None if f is None else f[1] for f in files] if files else [None] * len(ids)
        columns = ["path", "size", "mtime_ns", "features", *self._word_columns()]
        rows = zip(
            (encode_id(doc_id) for doc_id in ids),
            sizes,
            mtimes,
            features.tolist(),
            *words.T.tolist(),
            strict=True,
        )
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns[1:])
        statement = (
            f"INSERT INTO docs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
            f"ON CONFLICT (path) DO UPDATE SET {updates}"
        )
        with self.transaction() as connection:
            if expected >= BULK_ROWS and expected > self.count():
                for j in range(len(self.blocks)):
                    connection.execute(f"DROP INDEX IF EXISTS docs_k{j}")
            connection.executemany(statement, rows)

    def finish(self) -> None:
        """After an add: the tables a bulk add dropped, built again (one sort each)."""
        self._repair_tables()

    def _keys(self, fingerprints: NDArray[np.uint64]) -> NDArray[np.int64]:
        """(n, m) each fingerprint's block values, as :func:`_key_expression` computes them."""
        if fingerprints.shape[0] == 0:
            return np.zeros((0, len(self.blocks)), np.int64)
        return np.stack(
            [
                bit_slice(fingerprints, start, width)[:, 0].astype(np.int64) - _offset(width)
                for start, width in self.blocks
            ],
            axis=1,
        )

    def find(self, ids: Sequence[str]) -> dict[str, tuple[int, int | None, int | None]]:
        """Those of ``ids`` the index holds: (row, size, mtime_ns), size and mtime None for a
        record that is not a file."""
        found: dict[str, tuple[int, int | None, int | None]] = {}
        for start in range(0, len(ids), _PARAMETERS):
            chunk = [encode_id(doc_id) for doc_id in ids[start : start + _PARAMETERS]]
            rows = self.connection.execute(
                f"SELECT path, id, size, mtime_ns FROM docs WHERE path IN "
                f"({', '.join('?' * len(chunk))})",
                chunk,
            )
            for path, row, size, mtime in rows:
                found[decode_id(path)] = (row, size, mtime)
        return found

    def remove(self, ids: Sequence[str]) -> None:
        """Forget these documents (one transaction per chunk)."""
        for start in range(0, len(ids), _PARAMETERS):
            chunk = [encode_id(doc_id) for doc_id in ids[start : start + _PARAMETERS]]
            with self.transaction() as connection:
                connection.execute(
                    f"DELETE FROM docs WHERE path IN ({', '.join('?' * len(chunk))})", chunk
                )

    def prune(self, keep: Callable[[str, int, int], bool]) -> list[str]:
        """Remove the files for which ``keep(path, size, mtime_ns)`` is False (gone, changed);
        records that are not files stay. Returns the removed ids."""
        gone: list[int] = []
        names: list[str] = []
        for row, path, size, mtime in self.connection.execute(
            "SELECT id, path, size, mtime_ns FROM docs WHERE size IS NOT NULL"
        ).fetchall():
            name = decode_id(path)
            if not keep(name, size, mtime):
                gone.append(row)
                names.append(name)
        for start in range(0, len(gone), _IN_CHUNK):
            with self.transaction() as connection:
                connection.execute(
                    "DELETE FROM docs WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(gone[start : start + _IN_CHUNK]),),
                )
        return names

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
        ids = [decode_id(row[1]) for row in rows]
        numbers = np.array([(row[0], row[2], *row[3:]) for row in rows], dtype=np.int64)
        return numbers[:, 0], ids, _unsigned(numbers[:, 2:]), numbers[:, 1]

    def ids_of(self, rows: NDArray[np.int64]) -> dict[int, str]:
        """Stored ids by row."""
        found: dict[int, str] = {}
        unique = np.unique(rows).tolist()
        for start in range(0, len(unique), _IN_CHUNK):
            for row, path in self.connection.execute(
                "SELECT id, path FROM docs WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(unique[start : start + _IN_CHUNK]),),
            ):
                found[row] = decode_id(path)
        return found

    def probes(self, max_distance: int) -> int:
        """Look-ups per query at this distance: per table, every key within k // m bits."""
        radius = max_distance // len(self.blocks)
        return sum(
            sum(math.comb(width, d) for d in range(min(radius, width) + 1))
            for _, width in self.blocks
        )

    def scans(self, n_queries: int, max_distance: int) -> bool:
        """Whether reading every stored fingerprint costs less than the look-ups: each look-up
        meets about count / 2^width stored rows by chance."""
        stored = self.count()
        per_probe = sum(stored / 2.0**width for _, width in self.blocks) / len(self.blocks)
        looking = n_queries * self.probes(max_distance) * (LOOKUP_COST + ROW_COST * per_probe)
        scanning = stored * (SCAN_READ_COST + SCAN_COMPARE_COST * n_queries)
        return scanning < looking

    def search(self, fingerprints: NDArray[np.uint64], max_distance: int) -> Matches:
        """The stored documents within ``max_distance`` bits of each query fingerprint.

        Look-ups in the tables (see the module's docstring), or a scan of every stored
        fingerprint when that costs less (:meth:`scans`).
        """
        queries = np.ascontiguousarray(fingerprints, dtype=np.uint64).reshape(-1, self.words)
        if self.scans(queries.shape[0], max_distance):
            found = self._scan(queries, max_distance)
        else:
            found = self._look_up(queries, max_distance)
        query, doc, hamming = found
        order = np.lexsort((doc, hamming, query))
        return Matches(query[order], doc[order], hamming[order])

    def _look_up(
        self, queries: NDArray[np.uint64], max_distance: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        radius = max_distance // len(self.blocks)
        values = self._keys(queries)
        columns = ", ".join(self._word_columns())
        parts: list[NDArray[np.int64]] = []
        for (_, width), key in zip(self.blocks, self._key_columns(), strict=True):
            masks = _masks(width, radius)
            j = len(parts)
            # (query, probe key) for every query and every key within the radius of its block.
            probe_query = np.repeat(np.arange(queries.shape[0]), masks.size)
            block = values[:, j, None] + _offset(width)
            probe_key = ((block ^ masks[None, :]) - _offset(width)).ravel()
            wanted = np.unique(probe_key)
            rows = []
            for start in range(0, wanted.size, _IN_CHUNK):
                rows += self.connection.execute(
                    f"SELECT id, {key}, {columns} FROM docs "
                    f"WHERE {key} IN (SELECT value FROM json_each(?))",
                    (json.dumps(wanted[start : start + _IN_CHUNK].tolist()),),
                ).fetchall()
            if not rows:
                parts.append(np.zeros((0, 3), np.int64))
                continue
            found = np.array(rows, dtype=np.int64)
            found = found[np.argsort(found[:, 1], kind="stable")]
            # Each probe meets the stored rows of its key: a range of the sorted rows.
            low = np.searchsorted(found[:, 1], probe_key, side="left")
            high = np.searchsorted(found[:, 1], probe_key, side="right")
            count = high - low
            which = np.repeat(probe_query, count)
            starts = np.repeat(low - np.cumsum(count) + count, count)
            picked = starts + np.arange(which.size)
            distance = np.bitwise_count(_unsigned(found[picked, 2:]) ^ queries[which]).sum(
                axis=1, dtype=np.int64
            )
            close = distance <= max_distance
            parts.append(np.stack((which[close], found[picked[close], 0], distance[close]), 1))
        return _unique_matches(parts)

    def _scan(
        self, queries: NDArray[np.uint64], max_distance: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        rows, _, stored, _ = self.documents()
        parts: list[NDArray[np.int64]] = []
        for q in range(queries.shape[0]):
            distance = np.bitwise_count(stored ^ queries[q]).sum(axis=1, dtype=np.int64)
            close = np.flatnonzero(distance <= max_distance)
            parts.append(np.stack((np.full(close.size, q), rows[close], distance[close]), 1))
        return _unique_matches(parts)

    # ------------------------------------------------------------------ stats

    def stats(self) -> dict[str, Any]:
        """Documents, settings, tables, size on disk and how evenly the tables' keys spread."""
        documents = self.count()
        files = int(
            self.connection.execute("SELECT count(*) FROM docs WHERE size IS NOT NULL").fetchone()[
                0
            ]
        )
        tables = []
        for j, ((start, width), key) in enumerate(
            zip(self.blocks, self._key_columns(), strict=True)
        ):
            largest, keys = self.connection.execute(
                f"SELECT max(n), count(*) FROM (SELECT count(*) AS n FROM docs GROUP BY {key})"
            ).fetchone()
            tables.append(
                {
                    "table": j,
                    "bits": f"{start}-{start + width - 1}",
                    "keys": keys,
                    "largest_bucket": largest or 0,
                    "mean_bucket": documents / keys if keys else 0.0,
                }
            )
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
            "bits": self.settings.bits,
            "seed": self.settings.seed,
            "tokenizer": self.settings.tokenizer,
            "weighting": self.settings.weighting,
            "tables": tables,
            "bytes": size,
            "bytes_per_document": size / documents if documents else None,
        }


def _offset(width: int) -> int:
    """Keys are stored centred on 0 (a 16-bit block in 2 bytes, not 3)."""
    return 1 << (width - 1)


def _key_expression(start: int, width: int) -> str:
    """SQL for bits [start, start + width) of the fingerprint, minus :func:`_offset`: the
    words are signed, so each piece is shifted (arithmetic) and then masked."""
    pieces, low = [], 0
    while low < width:
        word, offset = divmod(start + low, 64)
        take = min(width - low, 64 - offset)
        piece = f"((w{word} >> {offset}) & {(1 << take) - 1})"
        pieces.append(f"({piece} << {low})" if low else piece)
        low += take
    return f"({' | '.join(pieces)}) - {_offset(width)}"


def _masks(width: int, radius: int) -> NDArray[np.int64]:
    """Every value of ``width`` bits with at most ``radius`` bits set, 0 first."""
    masks = [0]
    frontier = [0]
    for _ in range(min(radius, width)):
        frontier = sorted({m | (1 << b) for m in frontier for b in range(width) if not m >> b & 1})
        masks += frontier
    return np.array(masks, dtype=np.int64)


def _unique_matches(
    parts: list[NDArray[np.int64]],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(query, row, distance) found through several tables, each pair once."""
    if not parts:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    found = np.concatenate(parts)
    _, first = np.unique(found[:, :2], axis=0, return_index=True)
    found = found[first]
    return found[:, 0], found[:, 1], found[:, 2]


# ---------------------------------------------------------------------------- the file


def _translated(path: str, exc: sqlite3.Error) -> InputError:
    """An SQLite error as what it means for the user."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return IndexBusyError(
            f"the index {path} is busy: another simhash is writing to it; try again when it is done"
        )
    if "full" in text:
        return InputError(
            f"the disk holding {path} is full: the index keeps every batch written before this "
            "one; free some space and run the same command again to go on"
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return InputError(f"the index {path} is damaged ({text}); restore it from a copy")
    return InputError(f"the index {path}: {text}")


def _read_settings(path: str, connection: sqlite3.Connection) -> Settings:
    try:
        application = connection.execute("PRAGMA application_id").fetchone()[0]
        version = connection.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        with open(path, "rb") as handle:
            sqlite_file = handle.read(16) == b"SQLite format 3\x00"
        if sqlite_file:
            raise InputError(
                f"the index {path} is damaged or truncated ({exc}); restore it from a copy"
            ) from None
        raise InputError(f"{path} is not a simhash index (not an SQLite database)") from None
    if application != APPLICATION_ID:
        raise InputError(f"{path} is not a simhash index (an SQLite database of another kind)")
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{path} was made by a newer simhash (index schema {version}; this one reads "
            f"{SCHEMA_VERSION}): upgrade simhash-cli"
        )
    try:
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        return Settings(
            int(meta["bits"]), int(meta["seed"]), str(meta["tokenizer"]), str(meta["weighting"])
        )
    except (sqlite3.DatabaseError, KeyError, ValueError) as exc:
        raise InputError(f"the index {path} is damaged ({exc}); restore it from a copy") from None


def _create_file(path: str, settings: Settings) -> None:
    """A new index at ``path``, made whole under a temporary name and then linked into place,
    so that nobody ever opens it half made; if another process made one first, that stays."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        descriptor, temp = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory
        )
    except OSError as exc:
        raise InputError(f"cannot make the index {path}: {exc.strerror}") from None
    os.close(descriptor)
    os.unlink(temp)  # SQLite makes the file itself
    try:
        connection = sqlite3.connect(temp, isolation_level=None)
        try:
            _create(path, connection, settings)
            made = Store(temp, connection, settings)
            with made.transaction() as writing:
                made._create_tables(writing)
        finally:
            connection.close()
        try:
            os.link(temp, path)
        except FileExistsError:
            pass
        except OSError as exc:
            raise InputError(f"cannot make the index {path}: {exc.strerror}") from None
    finally:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp + suffix)


def _create(path: str, connection: sqlite3.Connection, settings: Settings) -> None:
    """Make the schema in a new file."""
    if settings.bits > MAX_INDEX_BITS:
        raise InputError(
            f"an index holds fingerprints of up to {MAX_INDEX_BITS} bits, not {settings.bits}"
        )
    words = ", ".join(f"w{j} INTEGER NOT NULL" for j in range(n_words(settings.bits)))
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [
                ("bits", str(settings.bits)),
                ("seed", str(settings.seed)),
                ("tokenizer", settings.tokenizer),
                ("weighting", settings.weighting),
            ],
        )
        # path: the document's id as bytes (a file's absolute path); size and mtime_ns as the
        # file was read, NULL for records that are not files (--vectors, --fingerprints).
        connection.execute(
            "CREATE TABLE docs (id INTEGER PRIMARY KEY, path BLOB NOT NULL, size INTEGER, "
            f"mtime_ns INTEGER, features INTEGER NOT NULL, {words})"
        )
        connection.execute("CREATE UNIQUE INDEX docs_path ON docs(path)")
        connection.execute("COMMIT")
    except sqlite3.Error as exc:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise _translated(path, exc) from None
