"""What an input held when it was first read, to know that a second reading reads the same.

``dedupe --texts FILE --kept OUT`` decides on the records of a first reading and copies them on
a second. Between the two, the file may be replaced (renamed over, or written in place) by
another program or a hostile user: the ids may all still be there with other texts, or other
records. So before the first reading each file of the input (each shard of a directory or a
glob) is read once for a SHA-256 of its bytes as stored, with its identity (device, inode,
size, modification and change times); after the copy, before any output is renamed into
place, the same is taken again, and any difference (another list of shards, another file,
other bytes, a change time that moved) writes nothing and says what changed.

A change time cannot be set by a user: a file written or renamed over since the first digest
has another one, whatever its modification time says. But the readings in between open the
files by path too: a parent directory renamed away after the first digest, and back before the
last, would have the run decide on other records than it copies. So while a run is
:func:`watching` a snapshot, every file of the input a reading opens reports the identity of
the descriptor it read (:mod:`.reads`), and :meth:`Snapshot.check_reads` refuses any that is
not the file digested.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ...errors import InputError
from ..opening import open_file
from .reads import Identity, identity_of, recording
from .shards import shards_of

__all__ = ["Snapshot", "snapshot", "watching"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class FileState:
    """One file: its path, its identity and the SHA-256 of its bytes."""

    path: str
    identity: tuple[int, int, int, int, int]
    digest: str


def _state(path: str, progress: Callable[[int], None]) -> FileState:
    try:
        handle = open_file(path)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        before = identity_of(os.fstat(handle.fileno()))
        digest = hashlib.sha256()
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            progress(len(chunk))
        after = identity_of(os.fstat(handle.fileno()))
    if before != after:
        raise InputError(f"{path} changed while it was read: run the command again")
    return FileState(path, before, digest.hexdigest())


@dataclass(frozen=True)
class Snapshot:
    """The files of an input as they were, each with its identity and digest; ``reads``, the
    identity of each descriptor a reading opened while the run was :func:`watching` it."""

    location: str
    files: tuple[FileState, ...]
    reads: dict[str, set[Identity]] = field(default_factory=dict, compare=False)

    def check_all(self) -> None:
        """:meth:`check_reads`, then :meth:`check`.

        Raises:
            InputError: what the run read, or the input now, is not what was digested.
        """
        self.check_reads()
        self.check()

    def check_reads(self) -> None:
        """Raises: InputError: a reading of the run opened another file than the one digested
        under its path (the records decided on are not the ones to be copied)."""
        digested = {f.path: f.identity for f in self.files}
        for path, seen in self.reads.items():
            if path in digested and seen - {digested[path]}:
                raise InputError(
                    f"{self.location} changed since it was first read ({path} as read is not "
                    "the file digested before the run: replaced, or reached through another "
                    "directory): nothing was written; run the command again"
                )

    def changed(self, progress: Callable[[int], None] = lambda done: None) -> str:
        """How the input differs now from this snapshot ('' when it does not): read again,
        every file whole."""
        now = snapshot(self.location, progress)
        if [f.path for f in now.files] != [f.path for f in self.files]:
            return "its files are not the ones it had"
        for was, is_ in zip(self.files, now.files, strict=True):
            if was.digest != is_.digest:
                return f"{was.path} does not hold the bytes it held"
            if was.identity != is_.identity:
                return f"{was.path} was written or replaced (its change time or inode moved)"
        return ""

    def check(self, progress: Callable[[int], None] = lambda done: None) -> None:
        """Raises: InputError: the input is not as it was (nothing may be written from it)."""
        why = self.changed(progress)
        if why:
            raise InputError(
                f"{self.location} changed since it was first read ({why}): the records decided "
                "on are not the ones there now, so nothing was written; run the command again"
            )

    @property
    def size(self) -> int:
        """The bytes of every file."""
        return sum(f.identity[2] for f in self.files)


def snapshot(location: str, progress: Callable[[int], None] = lambda done: None) -> Snapshot:
    """Each file of ``location`` (a file, a directory of shards or a glob) read whole for its
    digest, ``progress`` told of every megabyte.

    Raises:
        InputError: a file cannot be read, or changed while it was.
    """
    return Snapshot(location, tuple(_state(path, progress) for path in shards_of(location)))


@contextmanager
def watching(before: Snapshot | None) -> Iterator[None]:
    """Record in ``before`` the identity of every file of its input a reading opens, for the
    block (nothing without a snapshot)."""
    if before is None:
        yield
        return
    with recording(before.reads):
        yield
