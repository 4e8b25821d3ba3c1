"""Holding a step's files against every other simhash run while it checks and acts on them.

Two plans of one tree can ask for opposite steps (one keeps ``a`` and removes ``b``, the other
keeps ``b`` and removes ``a``). Each step checks its kept file and then acts; without a hold,
the other run acts in between and both files go. So a step takes an exclusive ``flock`` on
each of its files (kept and removed) before it checks them, and keeps it until it has acted:

* the locks are taken in one global order (device, inode), so two runs never wait on each
  other in a circle;
* a file is opened read-only and non-blocking, without following a link, and only a regular
  file is locked (a FIFO never hangs the run, a link is not followed to a file outside);
* once every lock is held, each name must still lead to the file locked under it; when one
  was replaced meanwhile, everything is let go and taken again, so the checks that follow
  see the files as they are while they are held.

A name that is gone, or no longer a regular file, is not held: the step's checks refuse it.
The locks are advisory: they keep simhash runs apart (of any user), not other programs, which
the checks of each step (identity and SHA-256, just before it acts) stand against.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import BinaryIO

from ...io.opening import open_file

__all__ = ["HOLD_SECONDS", "held"]

HOLD_SECONDS = 60.0
"""How long a step waits for another run to let its files go before it is refused."""

_ATTEMPTS = 5
"""How many times a step takes its locks again when a name is replaced as it does."""


def _open(path: str) -> tuple[BinaryIO, tuple[int, int]] | None:
    """The regular file at ``path`` opened read-only (not through a link), with its identity,
    or None."""
    try:
        handle = open_file(path, follow=False)
    except OSError:
        return None  # gone, a link, not a file, unreadable: the step's checks say which
    info = os.fstat(handle.fileno())
    return handle, (info.st_dev, info.st_ino)


def _lock(descriptor: int, deadline: float) -> str | None:
    """Wait (until ``deadline``) for the exclusive lock on ``descriptor``; why not, or None."""
    pause = 0.001
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return None
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return f"another simhash run held it for {HOLD_SECONDS:.0f} s"
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        except OSError as exc:  # a filesystem without flock
            if exc.errno in (errno.ENOLCK, errno.EBADF, errno.EINVAL, errno.EOPNOTSUPP):
                return f"it cannot be locked against other simhash runs ({exc.strerror})"
            raise


def _still_there(paths: Sequence[str], locked: dict[tuple[int, int], int]) -> bool:
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue  # gone: not held, refused by the checks
        if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in locked:
            return False  # a regular file that is not the one locked under this name
    return True


@contextmanager
def held(paths: Sequence[str], seconds: float = HOLD_SECONDS) -> Iterator[str | None]:
    """Hold every regular file of ``paths`` for the block; yield None when all are held, or
    why they could not be (the step is then refused, and nothing is held).

    Args:
        paths: the step's files (the kept file and the file acted on).
        seconds: how long to wait for another run to let them go.
    """
    deadline = time.monotonic() + seconds
    with contextlib.ExitStack() as stack:
        reason: str | None = "its files kept changing while they were locked"
        for _ in range(_ATTEMPTS):
            stack.close()
            locked: dict[tuple[int, int], int] = {}
            for path in paths:
                opened = _open(path)
                if opened is None:
                    continue
                handle, place = opened
                stack.enter_context(handle)
                locked.setdefault(place, handle.fileno())  # two names of one file: one lock
            reason = None
            for place in sorted(locked):
                reason = _lock(locked[place], deadline)
                if reason is not None:
                    break
            if reason is not None:
                break
            if _still_there(paths, locked):
                break
            reason = "its files kept changing while they were locked"
        if reason is not None:
            stack.close()
        yield reason
