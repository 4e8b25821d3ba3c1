"""Paths compared by what they are, not by how they are spelled.

Two spellings of one file (``a/./b``, ``a/../a/b``, a symbolic link, a hard link, another case
on a case-insensitive filesystem, a bind mount) are one place when the operating system says
so: the same device and inode. Every check of the form "is this output one of the inputs?",
"does this file lie under that root?" or "is this destination the file itself?" is made here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "Identity",
    "Spot",
    "ancestors",
    "identity",
    "inside",
    "root_of",
    "spot",
]

Identity = tuple[int, int]
"""A file or directory as the operating system knows it: (device, inode)."""


def identity(path: str, *, follow: bool = True) -> Identity | None:
    """The (device, inode) of ``path`` (of the link itself without ``follow``), or None when
    there is nothing there or it cannot be looked at."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    return info.st_dev, info.st_ino


def ancestors(path: str) -> Iterator[Identity]:
    """The identities of the directories ``path`` lies in, innermost first, after resolving
    symbolic links (``path`` itself included when it is a directory)."""
    current = os.path.realpath(path)
    while True:
        found = identity(current)
        if found is not None:
            yield found
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def inside(path: str, roots: Iterable[Identity]) -> bool:
    """True when ``path`` (resolved) is one of ``roots`` or lies anywhere below one."""
    wanted = set(roots)
    return bool(wanted) and any(place in wanted for place in ancestors(path))


def root_of(path: str, roots: Iterable[str]) -> str | None:
    """The first of ``roots`` that ``path`` is or lies under (by identity, after resolving
    links), or None. ``path`` need not exist: its nearest existing directory decides. A root
    that cannot be looked at is compared by its resolved spelling (it still guards)."""
    real = os.path.realpath(path)
    for root in roots:
        place = identity(root)
        if place is not None and inside(path, [place]):
            return root
        if place is None:
            base = os.path.realpath(root)
            if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
                return root
    return None


@dataclass(frozen=True)
class Spot:
    """A directory entry: the directory (by identity) and the name in it. Writing a file by
    renaming onto ``path`` replaces exactly this entry, whatever the path's spelling."""

    directory: Identity | None
    name: str


def spot(path: str) -> Spot:
    """The entry a write to ``path`` would replace (its directory need not exist yet)."""
    absolute = os.path.abspath(path)
    head, name = os.path.split(absolute)
    return Spot(identity(head), name)
