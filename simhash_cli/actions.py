"""Clusters of near-duplicate files -> a plan of what would be done with each: which file is
kept and why, and what would happen to the others. Nothing here touches a file.

The choice of the kept file follows a total order (``--keep``), the path breaking every tie,
so the same input always gives the same plan. A file under a protected root (``--protect``)
is never to be touched. Each file's state at planning time (device, inode, size, mtime) is in
the plan, so that whatever acts on it later can refuse a file that changed since.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import InputError
from .fingerprint import to_hex, to_int

__all__ = ["PLAN_VERSION", "FileState", "Keep", "make_plan"]

PLAN_VERSION = 1


class Keep(str, Enum):
    """Which file of a cluster is kept (the path breaks every tie)."""

    OLDEST = "oldest"
    """Earliest modification time."""
    NEWEST = "newest"
    """Latest modification time."""
    LONGEST = "longest"
    """Most bytes."""
    SHORTEST_PATH = "shortest-path"
    """Fewest characters in the path."""
    FIRST = "first"
    """First in the order the files were read (sorted paths, in the order given)."""


@dataclass(frozen=True)
class FileState:
    """A file as it was when the plan was made."""

    path: str
    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str) -> FileState:
        try:
            info = os.stat(path)
        except OSError as exc:
            raise InputError(f"cannot plan for {path}: {exc.strerror}") from None
        return cls(path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _order(keep: Keep) -> Callable[[tuple[int, FileState]], tuple[Any, ...]]:
    """Sort key of (input position, state): the kept file sorts first."""
    keys: dict[Keep, Callable[[tuple[int, FileState]], tuple[Any, ...]]] = {
        Keep.OLDEST: lambda item: (item[1].mtime_ns, item[1].path),
        Keep.NEWEST: lambda item: (-item[1].mtime_ns, item[1].path),
        Keep.LONGEST: lambda item: (-item[1].size, item[1].path),
        Keep.SHORTEST_PATH: lambda item: (len(item[1].path), item[1].path),
        Keep.FIRST: lambda item: (item[0], item[1].path),
    }
    return keys[keep]


def _protected(path: str, roots: Sequence[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def make_plan(
    ids: Sequence[str],
    fingerprints: NDArray[np.uint64],
    bits: int,
    clusters: Sequence[NDArray[np.int64]],
    *,
    keep: Keep,
    protect: Sequence[str] = (),
    stat: Callable[[str], FileState] = FileState.of,
) -> dict[str, Any]:
    """The plan for these clusters: per cluster, the file kept and why, and the others.

    Every cluster keeps exactly one file (``keep``), and a file under a ``protect`` root is
    never marked for removal (``protected``), so no plan can leave a cluster without a copy
    or touch a protected file.

    Args:
        ids: document ids (file paths) of the corpus.
        fingerprints: (n, n_words) uint64, to be checked again before acting.
        bits: fingerprint width.
        clusters: member indices of each cluster (as :func:`~simhash_cli.cluster.clusters`).
        keep: which member is kept.
        protect: roots whose files are never touched.
        stat: a file's current state (a parameter for tests).

    Raises:
        InputError: a member that is not a file on disk (standard input, a vector id).
    """
    roots = [os.path.realpath(root) for root in protect]
    planned = []
    for number, members in enumerate(clusters):
        states = []
        for position, member in enumerate(members.tolist()):
            if ids[member] == "-":
                raise InputError("--plan needs files: standard input cannot be kept or removed")
            states.append((position, stat(ids[member]), member))
        ranked = sorted(states, key=lambda item: _order(keep)((item[0], item[1])))
        kept = ranked[0][1]
        files = []
        for _, state, member in ranked:
            if state is kept:
                action = "keep"
            elif _protected(state.path, roots):
                action = "protected"
            else:
                action = "remove"
            files.append(
                {
                    "path": state.path,
                    "action": action,
                    "fingerprint": to_hex(to_int(fingerprints[member]), bits),
                    "device": state.device,
                    "inode": state.inode,
                    "size": state.size,
                    "mtime_ns": state.mtime_ns,
                }
            )
        planned.append({"cluster": number, "keep": kept.path, "why": keep.value, "files": files})
    return {
        "version": PLAN_VERSION,
        "keep": keep.value,
        "protect": roots,
        "clusters": planned,
    }
