"""The one way apply touches the user's tree: through directories held open.

A file's directory is opened from its root down, one name at a time, never through a
symbolic link (``O_DIRECTORY | O_NOFOLLOW``), and every look at the file and every act on it
is made relative to that descriptor (``dir_fd=``, ``follow_symlinks=False``): what was checked
is what is acted on. A directory of the tree swapped for a link to somewhere else after the
check changes nothing (the descriptor is the directory that was checked), and a file is
created only where nothing is (``O_CREAT | O_EXCL | O_NOFOLLOW``), never through a link
planted at its name. The same holds under ``move-to DIR``: its subdirectories are made and
entered the same way.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from ...errors import PlaceRefused
from ..plans.document import digest_of

__all__ = ["Spot", "holding", "link", "replace", "spot_in", "spot_under"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Spot:
    """A name in a directory held open (``directory``: its descriptor; None when the
    directory does not exist yet, under DIR before a move makes it).

    Attributes:
        path: the file's path, as the plan spells it.
        directory: the descriptor of its directory, reached without following a link.
        name: its name in that directory.
    """

    path: str
    directory: int | None
    name: str

    def lstat(self) -> os.stat_result | None:
        """What is at the name (a link itself, not followed), or None when nothing is."""
        if self.directory is None:
            return None
        try:
            return os.stat(self.name, dir_fd=self.directory, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def readlink(self) -> str:
        assert self.directory is not None
        return os.readlink(self.name, dir_fd=self.directory)

    def sha256(self, expected: os.stat_result | None = None) -> str:
        """The SHA-256 of the regular file at the name (never through a link), as
        :func:`~.plans.sha256_of` takes it by path."""
        with os.fdopen(self.open_read(), "rb") as handle:
            return digest_of(handle, self.path, expected)

    def open_read(self) -> int:
        """A descriptor of the regular file at the name, for reading (never through a link)."""
        assert self.directory is not None
        descriptor = os.open(self.name, _READ, dir_fd=self.directory)
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            raise OSError(errno.EINVAL, "not a regular file", self.path)
        return descriptor

    def beside(self, name: str) -> Spot:
        """Another name in the same directory (held by this spot: not closed on its own)."""
        return Spot(os.path.join(os.path.dirname(self.path), name), self.directory, name)

    def create(self, mode: int = 0o600) -> int:
        """A new file at the name, for writing: fails (EEXIST) when anything is there, a
        link included."""
        assert self.directory is not None
        return os.open(self.name, _CREATE, mode, dir_fd=self.directory)

    def unlink(self) -> None:
        assert self.directory is not None
        os.unlink(self.name, dir_fd=self.directory)

    def sync(self) -> None:
        """Make a rename or unlink in the directory durable."""
        if self.directory is not None:
            os.fsync(self.directory)


def link(source: Spot, target: Spot) -> None:
    """A hard link at ``target`` to the file at ``source`` (the name itself, not followed)."""
    assert source.directory is not None and target.directory is not None
    os.link(
        source.name,
        target.name,
        src_dir_fd=source.directory,
        dst_dir_fd=target.directory,
        follow_symlinks=False,
    )


def replace(source: Spot, target: Spot) -> None:
    """The file at ``source`` renamed over ``target``."""
    assert source.directory is not None and target.directory is not None
    os.replace(source.name, target.name, src_dir_fd=source.directory, dst_dir_fd=target.directory)


def _parts(path: str, root: str) -> list[str] | None:
    """The names from ``root`` down to ``path`` (both absolute, normalized), or None when
    ``path`` is not below ``root``."""
    if root == os.sep:
        return [part for part in path.split(os.sep) if part]
    if not path.startswith(root + os.sep):
        return None
    return path[len(root) + 1 :].split(os.sep)


def _down(descriptor: int, names: Sequence[str], *, make: bool, where: str) -> int | None:
    """From the directory ``descriptor`` (consumed) down through ``names``, each entered
    without following a link; with ``make``, made where missing. None when one is missing
    (and not ``make``).

    Raises:
        PlaceRefused: one of them is a symbolic link (or not a directory).
    """
    for depth, name in enumerate(names):
        if make:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=descriptor)
        try:
            entered = os.open(name, _DIRECTORY | os.O_NOFOLLOW, dir_fd=descriptor)
        except OSError as exc:
            os.close(descriptor)
            if exc.errno == errno.ENOENT and not make:
                return None
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                reached = os.path.join(where, *names[: depth + 1])
                raise PlaceRefused(
                    f"reached through a symbolic link ({reached} is not a directory)"
                ) from None
            raise
        os.close(descriptor)
        descriptor = entered
    return descriptor


def spot_in(path: str, roots: Sequence[tuple[str, tuple[int, int]]]) -> Spot:
    """``path`` in its directory, opened from the deepest of ``roots`` (each a path and the
    identity it had when the run began) that holds it (the spot has no directory when one on
    the way is gone).

    Raises:
        PlaceRefused: under none of the roots, a root that is no longer the directory it was, or
            a directory on the way that is a symbolic link.
        OSError: a directory on the way cannot be opened.
    """
    path = os.path.normpath(os.path.abspath(path))
    if any(os.path.normpath(root) == path for root, _ in roots):
        # A file named as a root (dedupe a.txt b.txt): its directory is the one it was named in.
        head, name = os.path.split(path)
        return Spot(path, os.open(head, _DIRECTORY), name)
    found = [
        (root, place, parts)
        for root, place in roots
        if (parts := _parts(path, os.path.normpath(root))) is not None
    ]
    if not found:
        raise PlaceRefused("outside the roots this run may act in")
    root, place, parts = max(found, key=lambda item: len(item[0]))
    descriptor = os.open(root, _DIRECTORY)
    info = os.fstat(descriptor)
    if (info.st_dev, info.st_ino) != place:
        os.close(descriptor)
        raise PlaceRefused(f"outside the roots this run may act in ({root} was replaced)")
    # (A directory gone: nothing is there, as for a file gone.)
    return Spot(path, _down(descriptor, parts[:-1], make=False, where=root), parts[-1])


def spot_under(directory: str, path: str, *, make: bool) -> Spot:
    """``path`` (absolute, below the directory ``directory``) in its directory, reached from
    ``directory`` without following a link; its directories made with ``make`` (else the
    spot has no directory when one is missing).

    Raises:
        PlaceRefused: a directory on the way is a symbolic link.
        OSError: one cannot be opened or made.
    """
    parts = _parts(os.path.normpath(path), os.path.normpath(os.path.abspath(directory)))
    assert parts is not None
    if make:  # the directory named by the user, made as named
        os.makedirs(directory, exist_ok=True)
    try:
        top = os.open(directory, _DIRECTORY)
    except FileNotFoundError:
        if make:
            raise
        return Spot(path, None, parts[-1])
    return Spot(path, _down(top, parts[:-1], make=make, where=directory), parts[-1])


@contextmanager
def holding(*spots: Spot | None) -> Iterator[None]:
    """Close the spots' directories when the block ends."""
    try:
        yield
    finally:
        closed: set[int] = set()
        for spot in spots:
            if spot is not None and spot.directory is not None and spot.directory not in closed:
                closed.add(spot.directory)
                os.close(spot.directory)
