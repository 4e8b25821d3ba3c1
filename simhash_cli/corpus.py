"""Where documents come from: paths, directories, stdin, and JSON Lines of vectors or fingerprints.

The encoding and skip policy lives here, and only here:

* Text is UTF-8 unless a byte-order mark says UTF-8, UTF-16 or UTF-32.  Bytes that do not
  decode are replaced (U+FFFD) and reported once per file.
* A file with a NUL byte in its first 8 KiB (and no BOM) is not text: skipped.
* Unreadable files, and files inside directories that are not regular files (FIFOs, sockets,
  devices, which could block forever), are skipped.  A FIFO named explicitly, like
  ``<(curl ...)``, is read.
* The same file reached twice (a path given twice, a root inside another, a hard link) is read
  once, so it can never be reported as its own duplicate.

Every skip and warning goes to the caller's ``on_event`` callback; nothing here prints.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from .errors import InputError, MalformedLineError, PathNotFoundError, SimhashError
from .fingerprint import from_hex, validate_bits, validate_seed

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_POLICY",
    "NO_STAMP",
    "STDIN",
    "Document",
    "Event",
    "FingerprintRecord",
    "ReadPolicy",
    "Record",
    "Skipped",
    "Stamp",
    "TextRecord",
    "VectorRecord",
    "Warned",
    "block_lines",
    "check_paths_exist",
    "decode_text",
    "list_files",
    "parse_lines",
    "parse_value",
    "read_documents",
    "read_fingerprints",
    "read_texts",
    "read_vectors",
    "stamp_of",
]

STDIN = "-"
R = TypeVar("R")
SNIFF_BYTES = 8192

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian BOM starts with UTF-16's.
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


Stamp = tuple[int, int, int, int, int]
"""A file as it was read: (device, inode, size, mtime_ns, ctime_ns)."""
NO_STAMP: Stamp = (0, 0, -1, 0, 0)
"""Standard input or a pipe: nothing on disk that could be acted on later."""


def stamp_of(info: os.stat_result) -> Stamp:
    """The fields of a stat result that change whenever a file is replaced or written: the
    inode's ctime changes on every write, even one that sets mtime back."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@dataclass(frozen=True)
class Document:
    """One text document: ``id`` is its path as the user would write it (``-`` for stdin), and
    ``stamp`` the file as it was opened, before reading (:data:`NO_STAMP` for a stream)."""

    id: str
    text: str
    stamp: Stamp = NO_STAMP


@dataclass(frozen=True)
class Skipped:
    """A document left out of the run, and why (``binary``, ``empty``, ``unreadable: ...``)."""

    id: str
    reason: str


@dataclass(frozen=True)
class Warned:
    """A document that was used, with something the user should know about it."""

    id: str
    message: str


Event = Skipped | Warned
OnEvent = Callable[[Event], None]


@dataclass(frozen=True)
class VectorRecord:
    """One ``--vectors`` line: a document id and its weighted features, in the given order."""

    id: str
    features: dict[str, float]


@dataclass(frozen=True)
class FingerprintRecord:
    """One record of ``simhash fingerprint`` output, read back for ``dedupe --fingerprints``."""

    id: str
    fingerprint: int
    bits: int
    seed: int
    tokenizer: str
    weighting: str
    features: int


@dataclass(frozen=True)
class TextRecord:
    """One ``--texts`` line: a document id and its text."""

    id: str
    text: str


Record = VectorRecord | FingerprintRecord | TextRecord
RecordKind = str
"""``vectors``, ``fingerprints`` or ``texts``: which records a JSON Lines input holds."""


def check_paths_exist(paths: Sequence[str]) -> None:
    """Raise PathNotFoundError for the first path that does not exist, before any work."""
    if sum(path == STDIN for path in paths) > 1:
        raise PathNotFoundError("'-' (standard input) can be given only once")
    for path in paths:
        if path != STDIN and not os.path.lexists(path):
            raise PathNotFoundError(f"no such file or directory: {path}")


def list_files(
    paths: Sequence[str],
    on_event: OnEvent,
    *,
    distinct: bool = True,
    follow_symlinks: bool = False,
) -> list[str]:
    """Expand directories recursively (sorted; symlinked directories followed only if asked).

    Args:
        paths: files, directories and ``-``, as the user gave them.
        on_event: receives a Skipped for each file listed twice or not a regular file, and
            for each directory reached again through a symbolic link (a loop, reported once).
        distinct: list a file reached twice only once (False for ``compare a a``).
        follow_symlinks: descend into symbolic links to directories, each directory once.

    Returns:
        The files to read, in a deterministic order, each named as the user would write it.
    """
    check_paths_exist(paths)
    seen: dict[tuple[int, int], str] = {}
    files: list[str] = []

    def add(path: str, explicit: bool) -> None:
        try:
            info = os.stat(path)
        except OSError as exc:
            on_event(Skipped(path, f"unreadable: {_reason(exc)}"))
            return
        if not explicit and not stat.S_ISREG(info.st_mode):
            on_event(Skipped(path, "not a regular file"))
            return
        key = (info.st_dev, info.st_ino)
        if distinct and stat.S_ISREG(info.st_mode) and key in seen:
            on_event(Skipped(path, f"same file as {seen[key]}"))
            return
        seen[key] = path
        files.append(path)

    visited: dict[tuple[int, int], str] = {}
    for path in paths:
        if path != STDIN and os.path.isdir(path):
            for file in _walk(path, on_event, visited if follow_symlinks else None):
                add(file, explicit=False)
        elif path == STDIN:
            files.append(path)
        else:
            add(path, explicit=True)
    return files


def _walk(
    root: str, on_event: OnEvent, visited: dict[tuple[int, int], str] | None
) -> Iterator[str]:
    """Files below ``root``, sorted. With ``visited`` (directories seen, by device and inode),
    symbolic links to directories are followed, and a directory reached again is reported
    once and not entered: a link loop ends there."""

    def failed(exc: OSError) -> None:
        on_event(Skipped(exc.filename or root, f"unreadable directory: {_reason(exc)}"))

    for directory, subdirs, names in os.walk(root, onerror=failed, followlinks=visited is not None):
        if visited is not None:
            info = os.stat(directory)
            key = (info.st_dev, info.st_ino)
            if key in visited:
                on_event(Skipped(directory, f"symlink loop: the directory {visited[key]} again"))
                subdirs[:] = []
                continue
            visited[key] = directory
        subdirs.sort()
        for name in sorted(names):
            yield os.path.join(directory, name)


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def decode_text(data: bytes) -> tuple[str, bool] | None:
    """Bytes -> (text, replaced) by the encoding policy, or None when the bytes are not text.

    ``replaced`` is True when some bytes did not decode and became U+FFFD.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            return _decode(body, encoding)
    if b"\x00" in data[:SNIFF_BYTES]:
        return None
    return _decode(data, "utf-8")


def _binary_reason(data: bytes) -> str:
    """Why bytes with NULs are not read as text, with a hint when they look like UTF-16."""
    head = data[:SNIFF_BYTES]
    even, odd = head[0::2], head[1::2]

    def mostly_text(part: bytes) -> bool:
        return sum(32 <= b < 127 or b in (9, 10, 13) for b in part) > 0.9 * len(part)

    # Latin text in UTF-16 has a NUL in every other byte, and readable ASCII in the others.
    zeros_odd, zeros_even = odd.count(0) > 0.9 * len(odd), even.count(0) > 0.9 * len(even)
    if len(head) >= 4 and ((zeros_odd and mostly_text(even)) or (zeros_even and mostly_text(odd))):
        return (
            "binary (NUL bytes, no byte-order mark; it looks like UTF-16 without one: "
            "add a BOM or convert it to UTF-8)"
        )
    return "binary (NUL bytes, no byte-order mark)"


def _undecodable(data: bytes) -> str:
    """Where ``data`` stops decoding under the encoding policy, in words."""
    encoding, body = "utf-8", data
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding, body = name, data[len(bom) :]
            break
    try:
        body.decode(encoding)
    except UnicodeDecodeError as exc:
        shown = body[exc.start : exc.end].hex(" ")
        return f"not valid {encoding} at byte {exc.start + len(data) - len(body)} ({shown})"
    return f"not valid {encoding}"


def _decode(data: bytes, encoding: str) -> tuple[str, bool]:
    try:
        return data.decode(encoding), False
    except UnicodeDecodeError:
        return data.decode(encoding, errors="replace"), True


class _TooLarge(Exception):
    """A file over the size limit (its size, or "more than N bytes" for a stream)."""


def _read_bytes(path: str, max_bytes: int | None) -> tuple[bytes, Stamp]:
    """A file's bytes and its stamp, taken from the open file before reading: any write after
    that changes the ctime, so a later comparison sees it."""
    if path == STDIN:
        return _read_limited(sys.stdin.buffer, max_bytes), NO_STAMP
    info = os.stat(path)
    if stat.S_ISFIFO(info.st_mode):
        return _read_fifo(path, max_bytes), NO_STAMP
    if max_bytes is not None and info.st_size > max_bytes:
        raise _TooLarge(f"{info.st_size:,} bytes")
    with open(path, "rb") as handle:
        stamp = stamp_of(os.fstat(handle.fileno()))
        return _read_limited(handle, max_bytes), stamp


def _read_limited(handle: IO[bytes], max_bytes: int | None) -> bytes:
    """Everything, or _TooLarge as soon as there is more than ``max_bytes`` (a file that grew,
    a stream): never more than that in memory."""
    if max_bytes is None:
        return handle.read()
    data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _TooLarge(f"more than {max_bytes:,} bytes")
    return data


def _read_fifo(path: str, max_bytes: int | None) -> bytes:
    """A pipe named explicitly (``<(curl ...)``, a FIFO): read what its writer sends.

    Opened without blocking, then read blocking: opening a FIFO that nobody writes to would
    wait forever, whereas reading it gives end-of-file at once (an empty document).
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(descriptor, True)
    with open(descriptor, "rb") as handle:
        return _read_limited(handle, max_bytes)


# Larger files are skipped unless --max-bytes says otherwise: a document is read whole, and
# its tokens take several times its size in memory.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ReadPolicy:
    """How strictly files are read.

    Attributes:
        policy: strict decoding, and the largest file read.
        max_bytes: larger files are skipped ("too large"); None for no limit.
        follow_symlinks: descend into symbolic links to directories (see :func:`list_files`).
    """

    strict_encoding: bool = False
    max_bytes: int | None = DEFAULT_MAX_BYTES
    follow_symlinks: bool = False


DEFAULT_POLICY = ReadPolicy()


def read_documents(
    files: Sequence[str],
    on_event: OnEvent,
    *,
    on_read: Callable[[], None] | None = None,
    policy: ReadPolicy = DEFAULT_POLICY,
) -> Iterator[Document]:
    """Read and decode each file of :func:`list_files`; skip what is not text.

    Args:
        files: paths (and ``-``) to read, in order.
        on_event: receives Skipped (binary, unreadable) and Warned (bytes replaced) events.
        on_read: called once per file, read or skipped (for progress).
        policy: strict decoding, and the largest file read.

    Yields:
        One Document per readable text file, in the order of ``files``.
    """
    for path in files:
        try:
            data, stamp = _read_bytes(path, policy.max_bytes)
        except OSError as exc:
            on_event(Skipped(path, f"unreadable: {_reason(exc)}"))
        except _TooLarge as exc:
            on_event(Skipped(path, f"too large ({exc}; --max-bytes {policy.max_bytes})"))
        else:
            decoded = decode_text(data)
            if decoded is None:
                on_event(Skipped(path, _binary_reason(data)))
            else:
                text, replaced = decoded
                if replaced and policy.strict_encoding:
                    raise InputError(f"{path}: {_undecodable(data)} (--strict-encoding)")
                if replaced:
                    on_event(Warned(path, "bytes that are not valid text were replaced"))
                yield Document(path, text, stamp)
        if on_read is not None:
            on_read()


@contextmanager
def _open_text(source: str) -> Iterator[IO[str]]:
    """A UTF-8 text stream (a leading BOM dropped) over a file or stdin; stdin stays open."""
    if source == STDIN:
        wrapper = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="strict")
        try:
            yield wrapper
        finally:
            wrapper.detach()
        return
    try:
        # Opened outside the with-block so that only opening errors are reported as such.
        handle = open(source, encoding="utf-8-sig", errors="strict")  # noqa: SIM115
    except FileNotFoundError:
        raise PathNotFoundError(f"no such file or directory: {source}") from None
    except OSError as exc:
        raise InputError(f"cannot read {source}: {_reason(exc)}") from None
    with handle:
        yield handle


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number (weights must be finite)")


# What to do with a malformed line of JSON input: None stops the run (the error names the file
# and the line); a function is given the error and the run goes on without that line.
OnBadLine = Callable[[MalformedLineError], None] | None


def _json_lines(source: str, on_bad_line: OnBadLine = None) -> Iterator[tuple[str, int, Any]]:
    """(where, line number, parsed value) for each non-blank line; errors name file:line."""
    name = "<stdin>" if source == STDIN else source
    with _open_text(source) as handle:
        lineno = 0
        try:
            for lineno, line in enumerate(handle, start=1):
                value = _json_value(name, lineno, line, on_bad_line)
                if value is not _NOTHING:
                    yield name, lineno, value
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}:{lineno + 1}: not UTF-8 ({exc.reason})") from None


_NOTHING = object()


def _json_value(name: str, lineno: int, line: str, on_bad_line: OnBadLine) -> Any:
    """One line's JSON value; _NOTHING for a blank line, or a malformed one that is skipped."""
    if not line.strip():
        return _NOTHING
    try:
        return json.loads(line, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        error = MalformedLineError(f"{name}:{lineno}", f"invalid JSON: {exc}")
        if on_bad_line is None:
            raise error from None
        on_bad_line(error)
        return _NOTHING


def parse_value(kind: RecordKind, name: str, lineno: int, value: Any) -> Record:
    """One parsed JSON value (or a row of another format, as a dict) as a ``kind`` record.

    Raises:
        MalformedLineError: not such a record, naming ``name:lineno``.
    """
    return _PARSERS[kind](name, lineno, value)


def block_lines(data: bytes, name: str, first_line: int, *, first_block: bool) -> list[str]:
    """The lines of a block of a JSON Lines file (whole lines, as a reader of byte ranges cuts
    them), split as :func:`open` splits a text file (universal newlines; a BOM dropped from the
    file's first block).

    Raises:
        InputError: bytes that are not UTF-8, naming the line.
    """
    try:
        text = data.decode("utf-8-sig" if first_block else "utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data[: exc.start].count(b"\n")
        raise InputError(f"{name}:{line}: not UTF-8 ({exc.reason})") from None
    return list(io.StringIO(text, newline=None))


def parse_lines(
    lines: Sequence[str],
    name: str,
    first_line: int,
    kind: RecordKind,
    on_bad_line: OnBadLine = None,
) -> list[Record]:
    """The records of ``lines`` (line ``first_line`` onwards of ``name``), as the file's reader
    (:func:`read_vectors`, :func:`read_fingerprints`, :func:`read_texts`) would give them."""
    records: list[Record] = []
    for lineno, line in enumerate(lines, start=first_line):
        value = _json_value(name, lineno, line, on_bad_line)
        if value is _NOTHING:
            continue
        try:
            records.append(parse_value(kind, name, lineno, value))
        except MalformedLineError as error:
            if on_bad_line is None:
                raise
            on_bad_line(error)
    return records


def _record_id(where: str, lineno: int, value: Any) -> str:
    if "id" not in value:
        return f"{where}:{lineno}"
    raw = value["id"]
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise MalformedLineError(f"{where}:{lineno}", '"id" must be a string or an integer')
    return str(raw)


def _weight(where: str, lineno: int, key: str, raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise MalformedLineError(
            f"{where}:{lineno}", f"weight of {key!r} must be a number, not {raw!r}"
        )
    try:
        weight = float(raw)
    except OverflowError:
        weight = float("inf")
    if weight != weight or weight in (float("inf"), float("-inf")):
        shown = raw if isinstance(raw, float) else f"{str(raw)[:20]}..."
        raise MalformedLineError(f"{where}:{lineno}", f"weight of {key!r} is not finite: {shown}")
    return weight


def read_vectors(source: str, on_bad_line: OnBadLine = None) -> Iterator[VectorRecord]:
    """Read ``--vectors`` JSON Lines: ``{"id": ..., "features": {feature: weight}}`` per line.

    A UTF-8 BOM, CRLF line ends and blank lines are accepted.  A missing ``id`` becomes
    ``FILE:LINE``.  NaN, Infinity and numbers too large for float64 are refused by name (NaN
    would silently make every slot 0).

    Args:
        source: a path, or ``-`` for standard input.
        on_bad_line: None to stop at a malformed line; else called with its error, and the
            line is left out.

    Raises:
        InputError: a malformed line, naming file and line; nothing is yielded past it.
    """
    return _records(source, _vector_record, on_bad_line)


def _records(
    source: str, parse: Callable[[str, int, Any], R], on_bad_line: OnBadLine
) -> Iterator[R]:
    """``parse`` applied to each JSON line; a malformed one stops, or goes to ``on_bad_line``."""
    for where, lineno, value in _json_lines(source, on_bad_line):
        try:
            yield parse(where, lineno, value)
        except MalformedLineError as error:
            if on_bad_line is None:
                raise
            on_bad_line(error)


def _vector_record(where: str, lineno: int, value: Any) -> VectorRecord:
    if not isinstance(value, dict) or not isinstance(value.get("features"), dict):
        raise MalformedLineError(
            f"{where}:{lineno}", 'expected {"id": ..., "features": {feature: weight}}'
        )
    features = {key: _weight(where, lineno, key, raw) for key, raw in value["features"].items()}
    return VectorRecord(_record_id(where, lineno, value), features)


def read_texts(source: str, on_bad_line: OnBadLine = None) -> Iterator[TextRecord]:
    """Read ``--texts`` JSON Lines: ``{"id": ..., "text": "..."}`` per line (a missing ``id``
    becomes ``FILE:LINE``). ``on_bad_line``: as for :func:`read_vectors`."""
    return _records(source, _text_record, on_bad_line)


def _text_record(where: str, lineno: int, value: Any) -> TextRecord:
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        raise MalformedLineError(f"{where}:{lineno}", 'expected {"id": ..., "text": "..."}')
    return TextRecord(_record_id(where, lineno, value), value["text"])


_FINGERPRINT_KEYS = ("fingerprint", "bits", "seed", "tokenizer", "weighting")


def read_fingerprints(source: str, on_bad_line: OnBadLine = None) -> Iterator[FingerprintRecord]:
    """Read the JSON Lines that ``simhash fingerprint`` writes (``-f jsonl``).

    ``on_bad_line``: as for :func:`read_vectors`.

    Raises:
        InputError: a malformed record, naming file and line.
    """
    return _records(source, _fingerprint_record, on_bad_line)


def _fingerprint_record(where: str, lineno: int, value: Any) -> FingerprintRecord:
    if not isinstance(value, dict) or any(key not in value for key in _FINGERPRINT_KEYS):
        raise MalformedLineError(
            f"{where}:{lineno}",
            "not a fingerprint record (expected the keys id, "
            + ", ".join(_FINGERPRINT_KEYS)
            + " as written by 'simhash fingerprint -f jsonl')",
        )
    try:
        bits = validate_bits(value["bits"])
        seed = validate_seed(value["seed"])
        fingerprint = from_hex(str(value["fingerprint"]), bits)
    except SimhashError as exc:
        raise MalformedLineError(f"{where}:{lineno}", str(exc)) from None
    return FingerprintRecord(
        id=_record_id(where, lineno, value),
        fingerprint=fingerprint,
        bits=bits,
        seed=seed,
        tokenizer=str(value["tokenizer"]),
        weighting=str(value["weighting"]),
        features=int(value.get("features", 0)),
    )


_PARSERS: dict[str, Callable[[str, int, Any], Record]] = {
    "vectors": _vector_record,
    "fingerprints": _fingerprint_record,
    "texts": _text_record,
}
