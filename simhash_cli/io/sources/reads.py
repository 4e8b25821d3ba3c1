"""Which files the readings of a run opened, as the descriptors read them.

A dataset's check (:mod:`.snapshot`) compares the files its readings read with the files it
digested before the run: each opener of records (:func:`.shards.open_binary`, the Parquet
opener) reports the ``fstat`` of the descriptor it opened here, and whoever is
:func:`recording` collects them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Identity", "identity_of", "opened", "recording"]

Identity = tuple[int, int, int, int, int]
"""A file as read: device, inode, size, modification and change times (ns)."""

_SINKS: list[dict[str, set[Identity]]] = []


def identity_of(info: os.stat_result) -> Identity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@contextmanager
def recording(into: dict[str, set[Identity]]) -> Iterator[None]:
    """Collect, for the block, the identity of each file a reading opens, by its path."""
    _SINKS.append(into)
    try:
        yield
    finally:
        _SINKS.remove(into)


def opened(path: str, info: os.stat_result) -> None:
    """A reading opened ``path``; ``info``: its descriptor's ``fstat``."""
    for sink in _SINKS:
        sink.setdefault(path, set()).add(identity_of(info))
