"""Documents from files: paths, directories (walked in sorted order) and standard input.

The encoding and skip policy lives here, and only here:

* Text is UTF-8 unless a byte-order mark says UTF-8, UTF-16 or UTF-32.  Bytes that do not
  decode are replaced (U+FFFD) and reported once per file.
* A file with a NUL byte in its first 8 KiB (and no BOM) is not text: skipped.
* Unreadable files, and files inside directories that are not regular files (FIFOs, sockets,
  devices, which could block forever), are skipped.  A FIFO named explicitly, like
  ``<(curl ...)``, is read.
* The same file reached twice (a path given twice, a root inside another, a hard link) is read
  once, so it can never be reported as its own duplicate; when a walk meets a symbolic link
  to a file and the file itself, the file is the one read.

Every skip and warning goes to the caller's ``on_event`` callback; nothing here prints.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ...core.config import DEFAULT_MAX_BYTES
from ...core.events import (
    BINARY,
    NO_STAMP,
    Excluded,
    OnEvent,
    Skipped,
    Stamp,
    Warned,
    stamp_of,
)
from ...errors import InputError, PathNotFoundError, TooLarge
from ..opening import open_descriptor
from .selection import Selection

ALL_BUT_HIDDEN_AND_IGNORED = Selection()

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_POLICY",
    "STDIN",
    "Document",
    "Listed",
    "ReadPolicy",
    "check_paths_exist",
    "decode_text",
    "list_files",
    "list_sized",
    "os_reason",
    "read_documents",
    "size_text",
]

STDIN = "-"
SNIFF_BYTES = 8192
READ_CHUNK = 1 << 16
MAX_READ = 1 << 30  # bytes asked of one system call at most

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian BOM starts with UTF-16's.
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


@dataclass(frozen=True)
class Document:
    """One text document: ``id`` is its path as the user would write it (``-`` for stdin), and
    ``stamp`` the file as it was opened, before reading (:data:`NO_STAMP` for a stream)."""

    id: str
    text: str
    stamp: Stamp = NO_STAMP


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
    selection: Selection = ALL_BUT_HIDDEN_AND_IGNORED,
) -> list[str]:
    """The files of :func:`list_sized`, in order."""
    listed = list_sized(
        paths, on_event, distinct=distinct, follow_symlinks=follow_symlinks, selection=selection
    )
    return listed.files


class Listed(NamedTuple):
    """Files to read, in order, and the size of each as it was listed."""

    files: list[str]
    sizes: list[int]


def _unstatable(path: str, exc: OSError) -> str:
    """Why a path listed cannot be read: a symbolic link to nothing is said so (it is not a
    file that could not be read), else the system's reason."""
    try:
        dangling = exc.errno == errno.ENOENT and stat.S_ISLNK(os.lstat(path).st_mode)
        target = os.readlink(path) if dangling else ""
    except OSError:
        dangling = False
    if dangling:
        return f"dangling symbolic link (to {target})"
    return f"unreadable: {os_reason(exc)}"


def list_sized(
    paths: Sequence[str],
    on_event: OnEvent,
    *,
    distinct: bool = True,
    follow_symlinks: bool = False,
    selection: Selection = ALL_BUT_HIDDEN_AND_IGNORED,
) -> Listed:
    """Expand directories recursively (sorted; symlinked directories followed only if asked),
    listing what ``selection`` keeps of each.

    Args:
        paths: files, directories and ``-``, as the user gave them.
        on_event: receives a Skipped for each file listed twice or not a regular file, and
            for each directory reached again through a symbolic link (a loop, reported once).
        distinct: list a file reached twice only once (False for ``compare a a``).
        follow_symlinks: descend into symbolic links to directories, each directory once.
        selection: which files and directories a walk lists and enters (hidden ones, ignore
            files, patterns; an Excluded event for each path it leaves out). A path given is
            always read.

    Returns:
        The files to read, in a deterministic order, each named as the user would write it,
        with its size as listed (0 for standard input, or a stream): how batches are cut,
        without asking the system again.
    """
    check_paths_exist(paths)
    seen: dict[tuple[int, int], str] = {}
    linked: set[tuple[int, int]] = set()  # files seen first through a symbolic link, in a walk
    files: list[str] = []
    sizes: list[int] = []
    own = _own_output()

    def add(path: str, explicit: bool, link: bool = False) -> None:
        """``path``, given (``explicit``) or found by a walk (``link``: the walk's entry is a
        symbolic link)."""
        try:
            info = os.stat(path)
        except OSError as exc:
            on_event(Skipped(path, _unstatable(path, exc)))
            return
        if not explicit and not stat.S_ISREG(info.st_mode):
            on_event(Skipped(path, "not a regular file"))
            return
        key = (info.st_dev, info.st_ino)
        if key == own:
            on_event(Skipped(path, "this command's own output (standard output is this file)"))
            return
        if distinct and stat.S_ISREG(info.st_mode) and key in seen:
            first = seen[key]
            if not (key in linked and not explicit and not link):
                on_event(Skipped(path, f"same file as {first}"))
                return
            # A link met first in a walk gives way to the file it names: the file itself is
            # the document (what a plan keeps or removes), the link only a second name.
            at = files.index(first)
            del files[at], sizes[at]
            on_event(Skipped(first, f"same file as {path}"))
        if not explicit and link:
            linked.add(key)
        else:
            linked.discard(key)
        seen[key] = path
        files.append(path)
        sizes.append(info.st_size if stat.S_ISREG(info.st_mode) else 0)

    visited: dict[tuple[int, int], str] = {}
    for path in paths:
        if path != STDIN and os.path.isdir(path):
            walked = _walk(path, on_event, visited if follow_symlinks else None, selection)
            for file, link in walked:
                add(file, explicit=False, link=link)
        elif path == STDIN:
            files.append(path)
            sizes.append(0)
        else:
            add(path, explicit=True)
    return Listed(files, sizes)


def _own_output() -> tuple[int, int] | None:
    """The file standard output is redirected to (``> FILE``), which the shell has already
    emptied: it is never read as a document."""
    try:
        info = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # closed, or replaced by a test runner
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def _walk(
    root: str,
    on_event: OnEvent,
    visited: dict[tuple[int, int], str] | None,
    selection: Selection,
) -> Iterator[tuple[str, bool]]:
    """Files below ``root``, sorted, each with whether its entry is a symbolic link: each
    directory's files, then its subdirectories in order.
    With ``visited`` (directories seen, by device and inode), symbolic links to directories are
    followed, and a directory reached again is reported once and not entered: a link loop ends
    there. Iterative, so a tree of any depth is walked (os.walk recurses)."""
    pending = [(root, selection.rules(root, on_event))]
    while pending:
        directory, rules = pending.pop()
        if visited is not None:
            try:
                info = os.stat(directory)
            except OSError as exc:
                on_event(Skipped(directory, f"unreadable directory: {os_reason(exc)}"))
                continue
            key = (info.st_dev, info.st_ino)
            if key in visited:
                on_event(Skipped(directory, f"symlink loop: the directory {visited[key]} again"))
                continue
            visited[key] = directory
        try:
            with os.scandir(directory) as entries:
                listed = [(entry.name, _is_directory(entry), _is_link(entry)) for entry in entries]
        except OSError as exc:
            on_event(Skipped(exc.filename or directory, f"unreadable directory: {os_reason(exc)}"))
            continue
        rules = rules.entering(directory, on_event)
        subdirs = []
        for name, is_directory, is_link in sorted(listed):
            path = os.path.join(directory, name)
            rule = rules.left_out(path, directory=is_directory)
            if rule is not None:
                on_event(Excluded(path, rule))
            elif not is_directory:
                yield path, is_link
            elif visited is not None or not is_link:
                subdirs.append((path, rules))
        pending.extend(reversed(subdirs))


def _is_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    """Whether the entry is a symbolic link, from the directory's listing (no system call
    where the file system gives each entry's type)."""
    try:
        return entry.is_symlink()
    except OSError:
        return False


def size_text(size: int) -> str:
    """A size as ``--max-bytes`` takes it: ``64M``, ``500K``, else the bytes (``1,000,001``)."""
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size:,}"


def os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def decode_text(data: bytes) -> tuple[str, bool] | None:
    """Bytes -> (text, replaced) by the encoding policy, or None when the bytes are not text.

    ``replaced`` is True when some bytes did not decode and became U+FFFD.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            return _decode(body, encoding)
    if _binary(data):
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
    return BINARY


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


def _read_bytes(path: str, max_bytes: int | None) -> tuple[bytes, Stamp]:
    """A file's bytes and its stamp, taken from the open file before reading: any write after
    that changes the ctime, so a later comparison sees it. A pipe named explicitly (``<(curl
    ...)``, a FIFO) is read as its writer sends it (opened without blocking, it gives
    end-of-file at once when nobody writes: an empty document). A regular file is read from
    its descriptor, without a file object: half the cost of a small file."""
    if path == STDIN:
        return _read_limited(sys.stdin.buffer.read, max_bytes), NO_STAMP
    descriptor, info = open_descriptor(path, stream=True)
    if not stat.S_ISREG(info.st_mode):
        with os.fdopen(descriptor, "rb") as handle:
            return _read_limited(handle.read, max_bytes), NO_STAMP
    try:
        if max_bytes is not None and info.st_size > max_bytes:
            raise TooLarge(f"{info.st_size:,} bytes")
        return _read_limited(_Descriptor(descriptor, info.st_size).read, max_bytes), stamp_of(info)
    finally:
        os.close(descriptor)


class _Descriptor:
    """A regular file's descriptor, read as a file object reads it: ``read(n)`` gives n bytes,
    fewer only at the end, and ``read(-1)`` all that is left. Each system call asks for what
    the file's size when opened says is left (a 2 KB file is never given a buffer of the
    largest size allowed), and a file that grew since is read to its end all the same."""

    def __init__(self, descriptor: int, size: int) -> None:
        self.descriptor = descriptor
        self.size = size
        self.position = 0

    def read(self, wanted: int = -1) -> bytes:
        parts = []
        while wanted != 0:
            ask = max(self.size - self.position, READ_CHUNK)
            if wanted > 0:
                ask = min(ask, wanted)
            part = os.read(self.descriptor, min(ask, MAX_READ))
            if not part:
                break
            parts.append(part)
            self.position += len(part)
            if wanted > 0:
                wanted -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)


def _read_limited(read: Callable[[int], bytes], max_bytes: int | None) -> bytes:
    """Everything ``read`` gives (a file object's, or a :class:`_Descriptor`'s), or TooLarge as
    soon as there is more than ``max_bytes`` (a file that grew, a stream): never more than that
    in memory. Bytes that are binary by their first KiBs are not read further (they are
    skipped as binary): an endless device ends there too."""
    wanted = SNIFF_BYTES if max_bytes is None else min(SNIFF_BYTES, max_bytes + 1)
    head = read(wanted)
    if _binary(head) or len(head) < wanted:  # binary, or the end (a terminal's Ctrl-D: once)
        if max_bytes is not None and len(head) > max_bytes:
            raise TooLarge(f"more than {max_bytes:,} bytes")
        return head
    rest = read(-1) if max_bytes is None else read(max_bytes + 1 - len(head))
    data = head + rest
    if max_bytes is not None and len(data) > max_bytes:
        raise TooLarge(f"more than {max_bytes:,} bytes")
    return data


def _binary(head: bytes) -> bool:
    """Not text by its first bytes (as :func:`decode_text` decides)."""
    return b"\x00" in head[:SNIFF_BYTES] and not any(head.startswith(bom) for bom, _ in _BOMS)


# Larger files are skipped unless --max-bytes says otherwise: a document is read whole, and
# its tokens take several times its size in memory.


@dataclass(frozen=True)
class ReadPolicy:
    """How strictly files are read.

    Attributes:
        policy: strict decoding, and the largest file read.
        max_bytes: larger files are skipped ("too large"); None for no limit.
        follow_symlinks: descend into symbolic links to directories (see :func:`list_files`).
        selection: which files a walk of a directory lists (see :func:`list_files`).
    """

    strict_encoding: bool = False
    max_bytes: int | None = DEFAULT_MAX_BYTES
    follow_symlinks: bool = False
    selection: Selection = ALL_BUT_HIDDEN_AND_IGNORED


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
            on_event(Skipped(path, f"unreadable: {os_reason(exc)}"))
        except TooLarge as exc:
            limit = size_text(policy.max_bytes or 0)
            on_event(Skipped(path, f"too large ({exc}; --max-bytes {limit})"))
        else:
            decoded = decode_text(data)
            if decoded is None:
                on_event(Skipped(path, _binary_reason(data)))
            else:
                text, replaced = decoded
                if replaced and policy.strict_encoding:
                    raise InputError(
                        f"{path}: {_undecodable(data)} ({{strict_encoding}})",
                        parameters=("strict_encoding",),
                    )
                if replaced:
                    on_event(Warned(path, "bytes that are not valid text were replaced"))
                yield Document(path, text, stamp)
        if on_read is not None:
            on_read()
