"""Clusters of near-duplicate files -> a plan of what would be done with each: which file is
kept and why, and what would happen to the others. Nothing here touches a file.

The choice of the kept file follows a total order (``--keep``), the path breaking every tie,
so the same input always gives the same plan. A file under a protected root (``--protect``, a
directory or a file) is never to be touched, and a cluster that holds one keeps it (the keep
rule choosing among several). Each member is first checked to be the very file the scan read
(same device, inode, size, mtime and ctime); its state and the SHA-256 of its bytes go into
the plan, so that whatever acts on it later (:mod:`.apply`) can refuse a file that changed
since.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from ...core.events import Stamp, stamp_of
from ...core.sketch.fingerprint import to_hex, to_int
from ...errors import FileChanged, InputError
from ...io.opening import open_file
from ...io.places import root_of
from ...io.sources.files import STDIN
from ..keep import DEFAULT_KEEP, FILE_RULES, Keep
from ..keep.rule import file_key

__all__ = [
    "DEFAULT_KEEP",
    "FILE_RULES",
    "PLAN_VERSION",
    "FileState",
    "Keep",
    "digest_of",
    "inspect",
    "make_plan",
    "sha256_of",
]

PLAN_VERSION = 3


@dataclass(frozen=True)
class FileState:
    """A file as it was when the plan was made: what acting on it later must find again."""

    path: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    sha256: str


def _unchanged(path: str, stamp: Stamp) -> os.stat_result:
    """The file at ``path`` if it is still the regular file the scan read, else FileChanged."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise FileChanged("gone since the scan") from None
    except OSError as exc:
        raise FileChanged(f"cannot be checked: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise FileChanged("a symbolic link: the file it leads to is not acted on through it")
    if not stat.S_ISREG(info.st_mode):
        raise FileChanged("not a regular file")
    if stamp_of(info) != stamp:
        raise FileChanged("changed since the scan")
    return info


def sha256_of(path: str, expected: os.stat_result | None = None) -> str:
    """The SHA-256 of a file's bytes, read in blocks. With ``expected``, OSError (ESTALE)
    when the open file is not that file or changes while it is read."""
    with open_file(path, follow=False) as handle:
        return digest_of(handle, path, expected)


def digest_of(handle: BinaryIO, path: str, expected: os.stat_result | None = None) -> str:
    """:func:`sha256_of` of a file already open (``path`` names it in an error)."""
    before = os.fstat(handle.fileno())
    digest = hashlib.sha256()
    while block := handle.read(1 << 20):
        digest.update(block)
    after = os.fstat(handle.fileno())
    if expected is not None and not stamp_of(expected) == stamp_of(before) == stamp_of(after):
        raise OSError(errno.ESTALE, "changed while it was read", path)
    return digest.hexdigest()


def inspect(path: str, stamp: Stamp) -> FileState:
    """The state of a file that must still be the one the scan read (device, inode, size and
    both times equal: any write changes the ctime), with the SHA-256 of its bytes.

    Raises:
        FileChanged: gone, replaced, written to, or not a regular file.
    """
    info = _unchanged(path, stamp)
    try:
        digest = sha256_of(path, info)
    except OSError as exc:
        raise FileChanged(f"cannot be read again: {exc.strerror}") from None
    return FileState(path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, digest)


def _order(keep: Keep) -> Callable[[tuple[int, FileState]], tuple[Any, ...]]:
    """Sort key of (input position, state): the kept file sorts first."""
    return lambda item: file_key(keep, item[0], item[1].path, item[1].size, item[1].mtime_ns)


def _resolved(path: str, roots: Sequence[str]) -> str:
    """``path`` as plans record it: absolute, its directory resolved. Raises FileChanged when
    it was reached through a symbolic link to a directory below the path given (followed with
    ``--follow-symlinks``): such a file lies outside what was scanned, and is not acted on. A
    file that is itself a link is for ``check`` to refuse."""
    head, name = os.path.split(path)
    real = os.path.realpath(head)
    for root in roots:
        if path == root:
            return os.path.join(real, name)
        if path.startswith(root.rstrip(os.sep) + os.sep):
            below = os.path.relpath(head, root)
            if os.path.normpath(os.path.join(os.path.realpath(root), below)) == real:
                return os.path.join(real, name)
            raise FileChanged(f"reached through a symbolic link (its directory is {real})")
    raise FileChanged("outside the paths given")


_KEPT_CHANGED = (
    "not removed: the file its cluster keeps (each member a near-duplicate of it) changed "
    "since the scan"
)


def make_plan(
    ids: Sequence[str],
    fingerprints: NDArray[np.uint64],
    stamps: Sequence[Stamp],
    bits: int,
    clusters: Sequence[NDArray[np.int64]],
    *,
    keep: Keep,
    roots: Sequence[str],
    protect: Sequence[str] = (),
    settings: dict[str, Any] | None = None,
    check: Callable[[str, Stamp], FileState] = inspect,
    representatives: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The plan for these clusters: per cluster, the file kept and why, and the others.

    Each member is first checked to be the very file the scan read (``check``): one that is
    gone, written to or replaced since is marked ``skip`` with the reason, and neither kept nor
    removed. Of the others exactly one is kept (``keep``), and a file under a ``protect`` root
    is never marked for removal (``protected``), so no plan can leave a cluster without a copy
    or touch a protected file.

    Args:
        ids: document ids (file paths) of the corpus.
        fingerprints: (n, n_words) uint64.
        stamps: each document's file as the scan read it.
        bits: fingerprint width.
        clusters: member indices of each cluster (as
        :func:`~simhash_cli.core.clusters.cluster.clusters`).
        keep: which member is kept.
        roots: the paths scanned (files and directories as given): every member lies in one,
            and no step of the plan may act outside them.
        protect: roots whose files are never touched.
        settings: what the fingerprints were made with, recorded in the plan.
        check: a file's state now, or FileChanged (a parameter for tests).
        representatives: the member each cluster keeps, when the clusters were made around
            it (every other member a near-duplicate of that one): it is kept, and when it
            changed since the scan nothing of its cluster is removed. None: the keep rule
            chooses among the members that are still as the scan read them.

    Raises:
        InputError: a member that is not a file on disk (standard input, a pipe).
    """
    protected = [os.path.realpath(root) for root in protect]
    given = [os.path.abspath(root) for root in roots if root != STDIN]
    planned = []
    for number, members in enumerate(clusters):
        states: list[tuple[int, FileState, int]] = []
        files: list[dict[str, Any]] = []
        skipped: list[dict[str, Any]] = []
        for position, member in enumerate(members.tolist()):
            if ids[member] == STDIN or stamps[member][1] == 0:
                raise InputError(
                    f"{{plan}} needs files: {ids[member]} (a stream) cannot be kept or removed",
                    parameters=("plan",),
                )
            path = os.path.abspath(ids[member])  # the plan may be applied from elsewhere
            try:
                path = _resolved(path, given)
                states.append((position, check(path, tuple(stamps[member])), member))
            except FileChanged as exc:
                skipped.append({"path": path, "action": "skip", "why": str(exc)})
        guarded = {position for position, state, _ in states if root_of(state.path, protected)}
        # A protected file is the one kept when the cluster has one (the tagged original, as
        # rmlint keeps it); among several, the keep rule chooses.
        ranked = sorted(states, key=lambda item: (item[0] not in guarded, *_order(keep)(item[:2])))
        if representatives is not None:
            chosen = int(representatives[number])
            if all(member != chosen for _, _, member in ranked):
                # The one the others are near-duplicates of is not there to keep.
                skipped += [
                    {"path": state.path, "action": "skip", "why": _KEPT_CHANGED}
                    for _, state, _ in ranked
                ]
                ranked = []
            else:
                ranked.sort(key=lambda item: item[2] != chosen)
        kept = ranked[0][1] if ranked else None
        kept_guarded = bool(ranked) and ranked[0][0] in guarded
        for position, state, member in ranked:
            if state is kept:
                action = "keep"
            elif position in guarded:
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
                    "sha256": state.sha256,
                }
            )
        planned.append(
            {
                "cluster": number,
                "keep": None if kept is None else kept.path,
                "why": f"protected ({keep.value} of the protected)" if kept_guarded else keep.value,
                "files": files + skipped,
            }
        )
    return {
        "version": PLAN_VERSION,
        "settings": settings or {},
        "keep": keep.value,
        "roots": [os.path.realpath(root) for root in given],
        "protect": protected,
        "clusters": planned,
    }
