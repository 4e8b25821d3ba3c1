"""A report written whole or not at all: a temporary file beside the target, renamed over it
when complete (``-o FILE``, ``--plan``, ``--script``), so a reader never sees half of one.

What is not a file is never replaced: a named pipe, a terminal or another character device
(``/dev/null``, ``-o >(gzip > x.gz)``) is written into as the shell's ``>`` does, and
anything else that is not a regular file is refused."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, cast

from ...errors import OutputError

__all__ = [
    "AtomicFile",
    "atomic_output",
    "in_place",
    "new_file_mode",
    "opened",
    "write_bytes",
    "written_into",
]


def in_place(path: str) -> bool:
    """Whether ``path`` (through its links) is a named pipe or a character device: written
    into where it is, never replaced (:func:`written_into`)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def written_into(path: str) -> int | None:
    """A descriptor open for writing on what is at ``path`` when it is a named pipe or a
    character device (opened as the shell's ``>`` opens it: a pipe waits for its reader), or
    None when it is a regular file or nothing, to be written beside and renamed over. What was
    opened is what is judged (the descriptor's own type, not the path looked up again).

    Raises:
        OutputError: something else is there (a socket, a block device), never replaced.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        # Nothing there, a directory, no permission: the file written beside it says why.
        # A socket cannot be opened; it is not replaced either.
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return None
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            return None
        raise OutputError(f"cannot write {path}: it is a {_kind(mode)}") from None
    mode = os.fstat(descriptor).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return descriptor
    os.close(descriptor)
    if stat.S_ISREG(mode):
        return None
    raise OutputError(f"cannot write {path}: it is a {_kind(mode)}")


def _kind(mode: int) -> str:
    if stat.S_ISSOCK(mode):
        return "socket, not a file"
    if stat.S_ISBLK(mode):
        return "block device, not a file (it is not written over)"
    return "special file, not a regular file"


def new_file_mode(path: str) -> int:
    """The mode ``path`` written anew gets: the file's own if it exists, else what the umask
    leaves of 0666 (a temporary file's 0600 is never the final one)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class AtomicFile:
    """``-o FILE``: a report written beside its destination and renamed over it when complete.

    An interrupted or failed run leaves the previous file as it was, never half a report. The
    temporary file is created at the first write, after the inputs were listed, so that a
    report written into a directory being read is not read as one of its documents.
    """

    encoding = "utf-8"

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self._handle: IO[bytes] | None = None
        self._temp: str | None = None
        self._into = False  # written into a pipe or device, not beside it

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        # backslashreplace, as on standard output: a file name that is not UTF-8 (a lone
        # surrogate) becomes \udcXX, which inside a JSON string is that very escape. No newline
        # translation: CSV's \r\n line ends are written as they are.
        self.write_bytes(text.encode("utf-8", "backslashreplace"))
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        """Bytes as they are (a shell script naming files that are not UTF-8)."""
        if self._handle is None:
            into = written_into(self.path)
            if into is not None:
                self._handle, self._into = open(into, "wb"), True  # noqa: SIM115
        if self._handle is None:
            try:
                descriptor, self._temp = tempfile.mkstemp(
                    prefix=f".{os.path.basename(self.path)}.",
                    suffix=".tmp",
                    dir=os.path.dirname(self.path),
                )
                # The mode a new file would get (mkstemp's is 0600), or the replaced file's.
                os.fchmod(descriptor, new_file_mode(self.path))
            except OSError as exc:
                raise OutputError(f"cannot write {self.path}: {exc.strerror}") from None
            self._handle = open(descriptor, "wb")  # noqa: SIM115
        try:
            self._handle.write(data)
        except OSError as exc:
            self._failed(exc)

    def flush(self) -> None:
        if self._handle is not None:
            try:
                self._handle.flush()
            except OSError as exc:
                self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        """A write that failed (a full disk, a file size limit): the unfinished report is
        removed at once, the file at ``path`` left as it was, and the run stops saying so."""
        self.discard()
        left = "" if self._into else " (it is left as it was)"
        raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}{left}") from None

    def commit(self) -> None:
        """Make the report the file at ``path`` (an empty one when nothing was written)."""
        if self._handle is None:
            self.write("")
        assert self._handle is not None
        if self._into:  # a pipe or a device: what was written is there
            try:
                self._handle.close()
            except OSError as exc:
                self._failed(exc)
            self._handle = None
            return
        assert self._temp is not None
        try:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            os.replace(self._temp, self.path)
        except OSError as exc:
            self._failed(exc)
        self._temp = None

    def discard(self) -> None:
        """Remove the unfinished report; the file at ``path`` stays as it was (a pipe or a
        device keeps what it was sent, as from the shell's ``>``)."""
        if self._handle is not None:
            with contextlib.suppress(OSError):  # its buffer cannot be written either
                self._handle.close()
            self._handle = None
        if self._temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._temp)
            self._temp = None


@contextmanager
def atomic_output(path: str) -> Iterator[IO[str]]:
    """A stream whose text becomes the file at ``path`` only if the block completes: on any
    exception (Ctrl-C included) the unfinished file is removed and ``path`` left as it was."""
    target = AtomicFile(path)
    try:
        # It writes, flushes and says its encoding, all that the writers and rich ask of it.
        yield cast(IO[str], target)
    except BaseException:
        target.discard()
        raise
    target.commit()


@contextmanager
def opened(path: str | None) -> Iterator[IO[str]]:
    """Where a command's data goes: standard output (``path`` None or ``-``), or ``path``
    written whole (:func:`atomic_output`)."""
    if path is None or path == "-":
        yield sys.stdout
        return
    with atomic_output(path) as out:
        yield out


def write_bytes(out: IO[str], data: bytes) -> None:
    """Bytes to a text output as they are (names that are not UTF-8, NUL separators): to the
    buffer under standard output, or to an :class:`AtomicFile` directly."""
    if isinstance(out, AtomicFile):
        out.write_bytes(data)
        return
    out.flush()
    buffer = getattr(out, "buffer", None)
    if buffer is None:  # a str buffer (StringIO): the text it can hold
        out.write(data.decode("utf-8", "surrogateescape"))
        return
    buffer.write(data)
    buffer.flush()
