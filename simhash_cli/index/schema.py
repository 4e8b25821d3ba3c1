"""The index file: how one is made (whole, under a temporary name, then linked into place),
recognised (its application id and schema version, without ever writing to a file that is not
one), its settings read, and how document ids are stored (a file name that is not UTF-8 stays
its bytes)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..core.corpus import Settings
from ..core.search.blocking import block_bounds
from ..core.sketch.fingerprint import n_words
from ..errors import (
    IndexBusyError,
    InputError,
    ParameterError,
)
from ..io.opening import open_file

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "check_lists",
    "connect",
    "create_file",
    "create_schema",
    "damaged",
    "decode_id",
    "encode_id",
    "encode_ids",
    "integers",
    "read_settings",
    "recognise",
    "stored_name",
    "translated",
]


SCHEMA_VERSION = 1


APPLICATION_ID = 0x53484958  # "SHIX": what makes an SQLite file a simhash index


def encode_id(doc_id: str) -> bytes:
    """A document id as the bytes stored: a file name that is not UTF-8 stays its bytes."""
    try:
        return doc_id.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate from a JSON id
        return doc_id.encode("utf-8", "surrogatepass")


def encode_ids(ids: Sequence[str]) -> list[bytes]:
    """:func:`encode_id` of each id, in one encoding of them all when none holds a NUL."""
    try:
        parts = "\0".join(ids).encode("utf-8", "surrogateescape").split(b"\0")
    except UnicodeEncodeError:
        return [encode_id(doc_id) for doc_id in ids]
    return parts if len(parts) == len(ids) and ids else [encode_id(doc_id) for doc_id in ids]


def damaged(path: str, what: str) -> InputError:
    """An index whose contents are not what simhash wrote (edited by hand, another program)."""
    return InputError(
        f"the index {path} is damaged ({what}); restore it from a copy, or make it again with "
        "simhash index add"
    )


def stored_name(data: object, index: str) -> bytes:
    """A ``docs.path`` cell, which simhash writes as bytes (anything else: damaged)."""
    if not isinstance(data, bytes):
        raise damaged(index, f"a stored name is {type(data).__name__}, not bytes")
    return data


def decode_id(data: object, index: str) -> str:
    """A stored path as the id it was given (bytes that are not UTF-8 kept by escapes)."""
    data = stored_name(data, index)
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def integers(index: str, rows: Sequence[Sequence[object]], width: int) -> NDArray[np.int64]:
    """Rows of cells read from the index that must each hold an integer, as an (n, width)
    array: a cell of another type (text, a real number, NULL) is a damaged index, never a
    number guessed from it."""
    if not rows:
        return np.zeros((0, width), np.int64)
    found = np.asarray(rows)  # all integers: int64; any text, real or NULL: another kind
    if found.dtype.kind != "i" or found.shape != (len(rows), width):
        raise damaged(index, "a cell that holds a number holds something else")
    return found.astype(np.int64, copy=False)


def translated(path: str, exc: sqlite3.Error) -> InputError:
    """An SQLite error as what it means for the user."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return IndexBusyError(
            f"the index {path} is busy: another simhash is writing to it; try again when it is done"
        )
    if "readonly" in text or "read-only" in text:
        return read_only(path, unwritable(path) or "SQLite could not write to it")
    if "full" in text:
        return InputError(
            f"the disk holding {path} is full: the index keeps every batch written before this "
            "one; free some space and run the same command again to go on"
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return InputError(f"the index {path} is damaged ({text}); restore it from a copy")
    return InputError(f"the index {path}: {text}")


_HEADER = b"SQLite format 3\x00"


def recognise(path: str) -> None:
    """Refuse a file that is not a simhash index from its first 100 bytes alone (the SQLite
    header holds the application id and the schema version), before SQLite ever opens it: an
    SQLite database of another program is never opened, so never changed (opening a WAL-mode
    database read-write checkpoints its ``-wal`` and deletes it on close).

    Raises:
        InputError: not SQLite, another program's SQLite, or a newer schema.
    """
    try:
        with open_file(path) as handle:
            header = handle.read(100)
    except OSError as exc:
        raise InputError(f"cannot read the index {path}: {exc.strerror}") from None
    if not header.startswith(_HEADER):
        raise InputError(f"{path} is not a simhash index (not an SQLite database)")
    if len(header) < 100:
        raise InputError(f"the index {path} is damaged or truncated; restore it from a copy")
    _check_kind(path, int.from_bytes(header[68:72], "big"), int.from_bytes(header[60:64], "big"))


def _check_kind(path: str, application: int, version: int) -> None:
    """An SQLite file's application id and schema version must be an index's, this one's."""
    if application != APPLICATION_ID:
        raise InputError(f"{path} is not a simhash index (an SQLite database of another kind)")
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{path} was made by a newer simhash (index schema {version}; this one reads "
            f"{SCHEMA_VERSION}): upgrade simhash-cli"
        )


def settings_check(settings: Settings) -> str:
    """What the ``check`` row of ``meta`` holds: a digest of the settings, so that a settings
    row edited by hand (another seed, another tokenizer) is found out rather than used."""
    names = json.dumps(settings.names(), sort_keys=True)
    return hashlib.sha256(f"simhash index settings {names}".encode()).hexdigest()


def expected_schema(settings: Settings) -> set[tuple[str, str, str | None]]:
    """Every table and index an index of ``settings`` holds, as ``sqlite_master`` lists them."""
    memory = sqlite3.connect(":memory:", isolation_level=None)
    try:
        create_schema(":memory:", memory, settings)
        return set(memory.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
    finally:
        memory.close()


def check_schema(path: str, connection: sqlite3.Connection, settings: Settings) -> None:
    """Raise InputError ("damaged") unless the file holds exactly the tables and indexes of an
    index of ``settings``: no table dropped or changed, no trigger or view added."""
    try:
        found = set(connection.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
        check = connection.execute("SELECT value FROM meta WHERE key = 'check'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"the index {path} is damaged ({exc}); restore it from a copy") from None
    wanted = expected_schema(settings)
    if found != wanted:
        odd = sorted(name for _, name, _ in found ^ wanted)
        raise InputError(
            f"the index {path} is damaged (its tables are not an index's: {', '.join(odd)}); "
            "restore it from a copy"
        )
    if check is not None and check[0] != settings_check(settings):
        raise InputError(
            f"the index {path} is damaged (its settings were changed after it was made); "
            "restore it from a copy"
        )


def read_settings(path: str, connection: sqlite3.Connection) -> Settings:
    try:
        application = connection.execute("PRAGMA application_id").fetchone()[0]
        version = connection.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        with open_file(path) as handle:
            sqlite_file = handle.read(16) == b"SQLite format 3\x00"
        if sqlite_file:
            raise InputError(
                f"the index {path} is damaged or truncated ({exc}); restore it from a copy"
            ) from None
        raise InputError(f"{path} is not a simhash index (not an SQLite database)") from None
    _check_kind(path, application, version)  # again: what SQLite reads, WAL included
    try:
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        settings = Settings.from_names(
            int(meta["bits"]), int(meta["seed"]), str(meta["tokenizer"]), str(meta["weighting"])
        )
    except (sqlite3.DatabaseError, KeyError, ValueError, TypeError, ParameterError) as exc:
        raise InputError(f"the index {path} is damaged ({exc}); restore it from a copy") from None
    if settings.bits > MAX_INDEX_BITS:
        raise InputError(f"the index {path} is damaged (bits {settings.bits}); restore it")
    check_schema(path, connection, settings)
    return settings


def create_file(path: str, settings: Settings) -> None:
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
            create_schema(path, connection, settings)
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


def create_schema(path: str, connection: sqlite3.Connection, settings: Settings) -> None:
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
            [(key, str(value)) for key, value in settings.names().items()]
            + [("stale", "0"), ("check", settings_check(settings))],
        )
        # path: the document's id as bytes (a file's absolute path); size and mtime_ns as the
        # file was read, NULL for records that are not files (--vectors, --fingerprints).
        connection.execute(
            "CREATE TABLE docs (id INTEGER PRIMARY KEY, path BLOB NOT NULL, size INTEGER, "
            f"mtime_ns INTEGER, features INTEGER NOT NULL, {words})"
        )
        # A path is found through its CRC-32 (several paths may share one): 14 bytes a
        # document, where an index on the paths themselves would store each path again.
        connection.execute(
            "CREATE TABLE names (hash INTEGER NOT NULL, row INTEGER NOT NULL, "
            "PRIMARY KEY (hash, row)) WITHOUT ROWID"
        )
        # One table per block of the fingerprint: its value, and the list of the documents
        # having it (packed rows and fingerprints, see :attr:`.lists.Lists.entry`).
        blocks = block_bounds(settings.bits, max(1, settings.bits // KEY_BITS))
        for j in range(len(blocks)):
            connection.execute(
                f"CREATE TABLE keys{j} (key INTEGER PRIMARY KEY, entries BLOB NOT NULL)"
            )
        connection.execute("COMMIT")
    except sqlite3.Error as exc:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise translated(path, exc) from None


MAX_INDEX_BITS = 128


def signed(words: NDArray[np.uint64]) -> NDArray[np.int64]:
    """SQLite integers are signed 64-bit: each word is stored as its bit pattern."""
    return np.ascontiguousarray(words, dtype=np.uint64).view(np.int64)


def unsigned(words: NDArray[np.int64]) -> NDArray[np.uint64]:
    return np.ascontiguousarray(words, dtype=np.int64).view(np.uint64)


KEY_BITS = 16
"""Bits per table key: 1,000,000 random fingerprints share a 16-bit block with ~15 others."""


def unwritable(path: str) -> str | None:
    """Why simhash cannot write the index at ``path``, or None: a read-only file system, a
    file this user may not write, or a directory where SQLite cannot make its journal."""
    # SQLite follows a link to the index and keeps its journal beside the file it reaches.
    folder = os.path.dirname(os.path.realpath(path))
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "its file system is mounted read-only"
    except OSError:
        pass
    if not os.access(path, os.W_OK):
        return "this user may not write to it"
    if not os.access(folder, os.W_OK):
        return f"its directory {folder} is not writable here, and SQLite keeps a journal there"
    return None


def read_only(path: str, why: str) -> InputError:
    """A healthy index that cannot be written: say so (it is not damaged)."""
    return InputError(
        f"the index {path} is read-only: {why}; commands that only read it (index query, "
        "index dedupe, --against) still work"
    )


def connect(path: str, timeout: float, readonly: bool) -> sqlite3.Connection:
    """A connection to the index. A read-only one to an index this user may write is an
    ordinary connection that changes no data (``query_only``), so that, the last to close, it
    takes the write-ahead log and the shared-memory file away as a writer does (opened
    read-only, it left them beside the index, where the next walk of that directory met two
    binary files); to another's index, by URI, so that SQLite writes nothing, and immutable
    where even its shared-memory file cannot be made (a read-only filesystem)."""
    why = unwritable(path)
    if not readonly and why is not None:
        raise read_only(path, why)
    try:
        if not readonly:
            return sqlite3.connect(path, timeout=timeout, isolation_level=None)
        uri = "file:" + urllib.parse.quote(os.path.abspath(path))
        if why is None:  # (mode=rw: an index gone meanwhile is not made anew, empty)
            connection = sqlite3.connect(
                f"{uri}?mode=rw", timeout=timeout, isolation_level=None, uri=True
            )
            connection.execute("PRAGMA query_only = 1")
            return connection
        try:
            connection = sqlite3.connect(
                f"{uri}?mode=ro", timeout=timeout, isolation_level=None, uri=True
            )
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return connection
        except sqlite3.OperationalError:
            return sqlite3.connect(
                f"{uri}?mode=ro&immutable=1", timeout=timeout, isolation_level=None, uri=True
            )
    except sqlite3.Error as exc:
        raise translated(path, exc) from None


def check_lists(path: str, connection: sqlite3.Connection, tables: int, entry_size: int) -> None:
    """Every table must list each stored document once: a list cut short, or documents
    deleted behind the tables' back, make the index "damaged" here, not wrong later. Read in
    one snapshot, whatever a writer commits meanwhile; a stale index (its tables rebuilt by
    the next writer) is not checked."""
    try:
        connection.execute("BEGIN")
        try:
            stale = connection.execute("SELECT value FROM meta WHERE key = 'stale'").fetchone()
            if stale is not None and stale[0] == "1":
                return
            documents = int(connection.execute("SELECT count(*) FROM docs").fetchone()[0])
            totals = [
                connection.execute(f"SELECT total(length(entries)) FROM keys{j}").fetchone()[0]
                for j in range(tables)
            ]
        finally:
            connection.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise translated(path, exc) from None
    for j, found in enumerate(totals):
        if found != documents * entry_size:
            raise InputError(
                f"the index {path} is damaged (table keys{j} lists {found / entry_size:,.1f} "
                f"documents, {documents:,} are stored); restore it from a copy, or make it "
                "again with simhash index add"
            )
