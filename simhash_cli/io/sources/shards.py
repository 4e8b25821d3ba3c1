"""Record inputs in shards, as datasets are kept: a directory of JSON Lines or Parquet files (a
Hugging Face dataset's ``data/``), or a glob of them, each JSON Lines file perhaps compressed
(``.gz``, ``.zst``).

The shards are read in the order of their paths, as one input: an id is unique across all of
them, and a record without one is named by its shard and line (``data/part-1.jsonl.gz:7``). A
directory is walked below it; hidden files, names starting with ``_`` (``_SUCCESS``) and our own
sidecars (``*.simhash.json``) are passed over, and so is plain ``.json`` (more often a
dataset's description than its records; name such shards with a glob).
"""

from __future__ import annotations

import fnmatch
import glob
import io
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from ...core.events import Excluded
from ...errors import InputError, ParameterError, PathNotFoundError
from ..opening import open_file
from .files import STDIN, os_reason
from .reads import opened

__all__ = [
    "COMPRESSED",
    "MISSING_ZSTANDARD",
    "RECORD_SUFFIXES",
    "compression_of",
    "decompressed",
    "decompression_errors",
    "glob_matches",
    "holds_parquet",
    "is_sharded",
    "open_binary",
    "passed_over",
    "root_of_shards",
    "shards_of",
]

MISSING_ZSTANDARD = "reading or writing .zst needs zstandard: pip install 'simhash-cli[zstd]'"
COMPRESSED = {".gz": "gzip", ".zst": "zstd"}
_PARQUET = (".parquet", ".pq")
_JSON_LINES = (".jsonl", ".ndjson")
# What a directory's walk takes as shards: plain .json only compressed (c4's .json.gz).
_WALKED = (
    *_PARQUET,
    *_JSON_LINES,
    *(f"{suffix}{packed}" for suffix in (*_JSON_LINES, ".json") for packed in COMPRESSED),
)
RECORD_SUFFIXES = (*_WALKED, ".json")
"""Names of files of records (which a directory's name should not look like)."""
SIDECAR = ".simhash.json"
_MAGIC = ("*", "?", "[")


def compression_of(path: str) -> str | None:
    """``gzip`` or ``zstd`` for a compressed name, else None."""
    for suffix, name in COMPRESSED.items():
        if path.lower().endswith(suffix):
            return name
    return None


def holds_parquet(location: str) -> bool:
    """Whether ``location`` (a file, URL, directory or glob) names Parquet files."""
    first = shards_of(location)[0] if is_sharded(location) else location
    return first.lower().endswith(_PARQUET)


def decompression_errors() -> tuple[type[BaseException], ...]:
    """What reading a corrupt or truncated compressed stream raises."""
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)
    try:
        import zstandard
    except ImportError:
        return errors
    return (*errors, zstandard.ZstdError)


def is_glob(location: str) -> bool:
    """Whether ``location`` is a pattern (not a URL: those are the dask engine's to expand).
    A name that exists is that file or directory, whatever characters it holds
    (``train[v2].jsonl``)."""
    return (
        "://" not in location
        and any(char in location for char in _MAGIC)
        and not os.path.lexists(location)
    )


def glob_matches(path: str, pattern: str) -> bool:
    """Whether :func:`shards_of` would read the file ``path`` for the glob ``pattern``, as
    ``glob.glob(pattern, recursive=True)`` matches: a part of the pattern matches one part of
    the path (``*`` never crosses a ``/``), and ``**`` any number of parts. Hidden names are
    matched too, where glob would pass over them: a check that refuses more, never less."""
    if os.path.isabs(path) != os.path.isabs(pattern):
        path, pattern = os.path.abspath(path), os.path.abspath(pattern)
    parts = os.path.normpath(path).split(os.sep)
    wanted = os.path.normpath(pattern).split(os.sep)

    def match(at: int, of: int) -> bool:
        if of == len(wanted):
            return at == len(parts)
        if wanted[of] == "**":
            return any(match(start, of + 1) for start in range(at, len(parts) + 1))
        return at < len(parts) and fnmatch.fnmatch(parts[at], wanted[of]) and match(at + 1, of + 1)

    return match(0, 0)


def is_sharded(location: str | None) -> bool:
    """Whether ``location`` names shards (a directory or a glob) rather than one file."""
    if location is None or location == STDIN or "://" in location:
        return False
    return is_glob(location) or os.path.isdir(location)


def root_of_shards(location: str) -> str:
    """The directory the shards' paths are relative to: the directory given, or the part of
    a glob before its first pattern."""
    if not is_glob(location):
        return location
    head = location[: min(location.index(c) for c in _MAGIC if c in location)]
    return os.path.dirname(head) or "."


def shards_of(location: str) -> list[str]:
    """The files ``location`` names, in order: itself (a file, ``-`` or a URL), the shards
    under a directory, or the files a glob matches (``**`` for any depth).

    Raises:
        PathNotFoundError: a glob that matches no file. InputError: a directory without
            shards, or shards of JSON Lines and of Parquet together.
    """
    if not is_sharded(location):
        return [location]
    if is_glob(location):
        found = sorted(
            path
            for path in glob.glob(location, recursive=True)
            if _regular(path) and not path.endswith(SIDECAR)
        )
        if not found:
            raise PathNotFoundError(f"no file matches {location}")
    else:
        found = sorted(_walk(location))
        if not found:
            raise InputError(
                f"{location} holds no shards ({', '.join(_WALKED[:4])}, or JSON Lines "
                "compressed with .gz or .zst)"
            )
    formats = {path.lower().endswith(_PARQUET) for path in found}
    if len(formats) > 1:
        raise InputError(
            f"{location} holds Parquet and JSON Lines shards: give the ones to read with a glob "
            f"({os.path.join(location, '*.parquet')!r})"
        )
    return found


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _entries(directory: str) -> Iterator[tuple[str, str | None]]:
    """Every file below ``directory`` with why a walk passes over it (None: a shard)."""
    for top, directories, files in os.walk(directory):
        for name in sorted(directories):
            if name.startswith((".", "_")):
                yield os.path.join(top, name), _passed_over_name(name)
        directories[:] = sorted(d for d in directories if not d.startswith((".", "_")))
        for name in sorted(files):
            path = os.path.join(top, name)
            lowered = name.lower()
            if name.startswith((".", "_")):
                yield path, _passed_over_name(name)
            elif lowered.endswith(SIDECAR):
                yield path, "simhash's own sidecar"
            elif not lowered.endswith(_WALKED):
                why = (
                    "plain .json: name such shards with a glob"
                    if lowered.endswith(".json")
                    else "not a shard"
                )
                yield path, why
            elif not _regular(path):
                yield path, "not a regular file"
            else:
                yield path, None


def _passed_over_name(name: str) -> str:
    return "hidden" if name.startswith(".") else "a name starting with _"


def _walk(directory: str) -> Iterator[str]:
    return (path for path, why in _entries(directory) if why is None)


def passed_over(location: str) -> list[Excluded]:
    """What reading the shards of ``location`` passes over, with why (for the user to see, as
    the file walker says what it left out): nothing for one file."""
    if not is_sharded(location):
        return []
    if is_glob(location):
        return [
            Excluded(path, "not a regular file")
            for path in sorted(glob.glob(location, recursive=True))
            if not os.path.isdir(path) and not _regular(path)
        ]
    return [Excluded(path, why) for path, why in _entries(location) if why is not None]


@contextmanager
def open_binary(source: str) -> Iterator[IO[bytes]]:
    """The bytes of ``source`` (a path), decompressed when its name says ``.gz`` or ``.zst``; a
    stream that is not what its name says is an InputError as it is read.

    Raises:
        PathNotFoundError, InputError: it cannot be opened.
    """
    try:
        # Opened outside the with-block so that only opening errors are reported as such.
        handle = open_file(source, stream=True)
    except FileNotFoundError:
        raise PathNotFoundError(f"no such file or directory: {source}") from None
    except OSError as exc:
        raise InputError(f"cannot read {source}: {os_reason(exc)}") from None
    opened(source, os.fstat(handle.fileno()))  # what was read, for a dataset's check
    with handle, decompressed(handle, source) as stream:
        yield stream


@contextmanager
def decompressed(handle: IO[bytes], name: str) -> Iterator[IO[bytes]]:
    """The bytes of ``handle`` decompressed as ``name`` says (``.gz``, ``.zst``; else as they
    are); a corrupt or truncated stream is an InputError naming ``name`` as it is read."""
    compression = compression_of(name)
    if compression is None:
        yield handle
        return
    inner, errors = _decompressing(handle, compression)
    message = f"cannot read {name} as {compression}"
    with io.BufferedReader(_Checked(inner, errors, message), 1 << 20) as stream:
        yield stream


def _decompressing(
    handle: IO[bytes], compression: str
) -> tuple[Any, tuple[type[BaseException], ...]]:
    """A stream of the decompressed bytes, and the errors a corrupt stream raises."""
    if compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=handle, mode="rb"), decompression_errors()
    try:
        import zstandard
    except ImportError as exc:
        raise ParameterError(MISSING_ZSTANDARD) from exc
    return _ZstdFrames(handle, zstandard), decompression_errors()


class _ZstdFrames(io.RawIOBase):
    """The zstd frames of a stream one after another, as ``zstd -d`` reads them; a stream that
    ends inside a frame is an error (the library's own reader ends there quietly)."""

    def __init__(self, handle: IO[bytes], zstandard: Any) -> None:
        super().__init__()
        self._handle, self._zstandard = handle, zstandard
        self._context = zstandard.ZstdDecompressor()
        self._frame = self._context.decompressobj()
        self._in_frame = False
        self._pending, self._at = memoryview(b""), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._at == len(self._pending):
            chunk = self._handle.read(1 << 17)
            if not chunk:
                if self._in_frame:
                    raise self._zstandard.ZstdError("the data ends inside a frame (truncated)")
                return 0
            self._pending, self._at = memoryview(self._decompress(chunk)), 0
        size = min(len(buffer), len(self._pending) - self._at)
        buffer[:size] = self._pending[self._at : self._at + size]
        self._at += size
        return size

    def _decompress(self, chunk: bytes) -> bytes:
        out = []
        while chunk:
            self._in_frame = True
            out.append(self._frame.decompress(chunk))
            chunk = b""
            if self._frame.eof:  # the frame ended: what follows it starts the next
                chunk = self._frame.unused_data
                self._frame = self._context.decompressobj()
                self._in_frame = False
        return b"".join(out)


class _Checked(io.RawIOBase):
    """A decompressing stream whose errors (a truncated or corrupt file) are InputErrors
    saying so."""

    def __init__(self, inner: Any, errors: tuple[type[BaseException], ...], message: str) -> None:
        super().__init__()
        self._inner, self._errors, self._message = inner, errors, message

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            return int(self._inner.readinto(buffer))
        except self._errors as exc:
            raise InputError(f"{self._message}: {exc}") from None
