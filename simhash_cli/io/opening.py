"""Every file simhash reads is opened here, and nowhere else (a test over the source keeps it so).

A path found by a walk, named in a plan or an index, or given on the command line may lead to
something that is not a file: a FIFO nobody writes to (opening it would wait forever), a
device that never ends (``/dev/zero``), a socket, a directory. So a path is opened read-only
and non-blocking, the descriptor (not the path, which may change in between) is looked at, and
only then is it read:

* a regular file is read as usual;
* a pipe or a character device is read only where a stream is expected (a path the user named
  as input, ``<(curl ...)``), never where a walk found it or a small file is wanted;
* anything else is refused with what it is, as an :class:`OSError`, so every caller's handling
  of unreadable files covers it;

and :func:`read_bounded` never holds more than its bound in memory, whatever the file says its
size is.
"""

from __future__ import annotations

import os
import select
import stat
from typing import BinaryIO

from ..errors import NotAFile, TooLarge

__all__ = ["NotAFile", "kind_of", "open_descriptor", "open_file", "read_bounded"]

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "a regular file" if stat.S_ISREG(mode) else "not a file"


def open_file(path: str, *, stream: bool = False, follow: bool = True) -> BinaryIO:
    """``path`` opened for reading (binary, buffered), without ever blocking on the open.

    Args:
        path: what to open.
        stream: a pipe or a character device is read too (a path named as input); otherwise
            only a regular file is.
        follow: follow a symbolic link at ``path`` (without it, a link is refused: ELOOP).

    Raises:
        OSError: it cannot be opened; :class:`NotAFile` when it is not what may be read.
    """
    descriptor, _ = open_descriptor(path, stream=stream, follow=follow)
    # Once the file object holds the descriptor it is the one to close it (io.open closes it
    # when it fails), and closing it here as well would fail with EBADF, an OSError in place
    # of what interrupted (a Ctrl-C read as an unreadable file), or close a descriptor another
    # thread has just been given.
    return os.fdopen(descriptor, "rb")


def open_descriptor(
    path: str, *, stream: bool = False, follow: bool = True
) -> tuple[int, os.stat_result]:
    """``path`` opened as :func:`open_file` opens it, as a bare descriptor (the caller closes
    it), with what the descriptor is (its ``fstat``): for reading many small files, where a
    file object costs more than the read.

    Raises:
        OSError: it cannot be opened; :class:`NotAFile` when it is not what may be read.
    """
    descriptor = os.open(path, _FLAGS if follow else _FLAGS | os.O_NOFOLLOW)
    try:
        info = os.fstat(descriptor)
        mode = info.st_mode
        readable = stat.S_ISREG(mode) or (stream and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)))
        if not readable:
            raise NotAFile(path, kind_of(mode))
        if stat.S_ISFIFO(mode):
            # A named pipe waits for its writer, as cat does (opened without blocking, it read
            # as empty when the writer came late, and the writer then waited for ever): until
            # the writer has written, or has come and gone (Linux reports the hang-up only of
            # a writer that came after this reader opened), on this very descriptor.
            waiting = select.poll()
            waiting.register(descriptor, select.POLLIN)
            waiting.poll()
        # A pipe opened without blocking is read blocking: its writer's bytes, then its end.
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, info


def read_bounded(path: str, limit: int, *, stream: bool = False) -> bytes:
    """The bytes of ``path``, never more than ``limit`` of them held.

    Raises:
        OSError: as :func:`open_file`, or a read that fails.
        TooLarge: it holds more than ``limit`` bytes.
    """
    with open_file(path, stream=stream) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"more than {limit:,} bytes")
    return data
