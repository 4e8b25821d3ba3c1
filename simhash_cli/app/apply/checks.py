"""What must hold before a step of a plan may act, checked by identity, never by spelling.

A step is refused when the file or its cluster's kept file lies outside the paths the plan
scanned or is reached through a symbolic link, when the file is under a protected root, when
both are one file, when a hard link would cross filesystems, when a link would replace a file
whose bytes differ from the kept file's without consent, when a move's destination is the file
itself or another file of the plan, and when either file is not, now, the very file the plan
recorded (device, inode, size, mtime, SHA-256).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from ...core.events import stamp_of
from ...errors import PlaceRefused
from ...io.places import Identity, identity, inside, root_of, spot
from ..plans.document import FileState
from . import tree
from .steps import TEMP_SUFFIX, Action, LoadedPlan, Step
from .tree import Spot

__all__ = [
    "Bounds",
    "Digests",
    "Spots",
    "destination_of",
    "finished",
    "open_spots",
    "refusal",
    "static_refusal",
    "temp_name",
]

CONSENT = "--delete-near-duplicates"
"""The words that consent to losing a near-duplicate's own bytes (delete, or a link over it)."""


def destination_of(directory: str, path: str) -> str:
    """Where ``move-to DIR`` puts a file: DIR followed by the file's absolute path, so that two
    files of one name in different directories never meet."""
    return os.path.join(os.path.abspath(directory), os.path.abspath(path).lstrip(os.sep))


_NAME_MAX = 255
"""The bytes a name may have (NAME_MAX on Linux and the BSDs)."""


def temp_name(path: str) -> str:
    """The name a link is made under beside ``path`` before it is renamed over it: the name
    with a dot before and :data:`TEMP_SUFFIX` after, or, where that would be longer than a
    name may be, its SHA-256 in their place (names of 242-255 bytes could never be linked)."""
    head, name = os.path.split(path)
    temp = f".{name}{TEMP_SUFFIX}"
    if len(os.fsencode(temp)) > _NAME_MAX:
        temp = f".{hashlib.sha256(os.fsencode(name)).hexdigest()[:32]}{TEMP_SUFFIX}"
    return os.path.join(head, temp)


@dataclass(frozen=True)
class Bounds:
    """What a run of a plan may touch: inside the scanned roots, outside the protected ones.

    Attributes:
        scanned: the identities of the paths the plan scanned.
        protected: each protected root (the plan's and the run's) by path.
        members: the recorded identity of every file the plan acts on or keeps.
        consent: a file whose bytes differ from the kept file's may be replaced by a link.
    """

    scanned: tuple[Identity, ...]
    protected: tuple[str, ...]
    members: frozenset[Identity]
    consent: bool = False
    roots: tuple[tuple[str, Identity], ...] = ()
    """The scanned paths with their identities when the run began: where each file's
    directory is opened from (:func:`~.tree.spot_in`)."""

    @classmethod
    def of(cls, plan: LoadedPlan, protect: Sequence[str] = (), consent: bool = False) -> Bounds:
        roots = tuple(
            (os.path.abspath(root), place)
            for root in plan.bounds
            if (place := identity(root)) is not None
        )
        members = {(s.target.device, s.target.inode) for s in plan.steps}
        members.update((s.kept.device, s.kept.inode) for s in plan.steps)
        scanned = tuple(place for _, place in roots)
        return cls(scanned, (*plan.protect, *protect), frozenset(members), consent, roots)


def _placement(path: str, bounds: Bounds) -> str | None:
    """Why ``path`` may not be acted on (or kept) where it is, or None. (Spelled out for the
    messages and the script: a run acts through the directories it opens, :mod:`.tree`.)"""
    try:
        if not inside(path, bounds.scanned):
            return "outside the roots this run may act in"
        real = os.path.realpath(path)
    except OSError as exc:  # a link that vanished as it was resolved
        return f"not checkable where it is ({exc.strerror or exc})"
    if real != path:
        return f"reached through a symbolic link (it resolves to {real})"
    return None


def _destination_refusal(step: Step, destination: str, bounds: Bounds) -> str | None:
    if spot(destination) == spot(step.target.path):
        return f"the destination {destination} is the file itself: nothing would move"
    place = identity(destination)
    if place is not None and place in bounds.members - {(step.target.device, step.target.inode)}:
        return f"the destination {destination} is a file of the plan"
    root = root_of(os.path.dirname(destination), bounds.protected)
    if root is not None:
        return f"the destination {destination} is under the protected root {root}"
    return None


def static_refusal(
    step: Step, action: Action, bounds: Bounds, destination: str | None = None
) -> str | None:
    """Why the step must not run, whatever its files' bytes are now (the plan, the roots and
    the consent given say so), or None. A path that changes as it is resolved (a directory
    swapped for a link meanwhile) cannot be checked, so the step is refused."""
    try:
        return _static_refusal(step, action, bounds, destination)
    except OSError as exc:
        return f"not checkable where it is ({exc.strerror or exc}): its folders changed meanwhile"


def _static_refusal(
    step: Step, action: Action, bounds: Bounds, destination: str | None
) -> str | None:
    target, kept = step.target, step.kept
    for what, path in (("the file", target.path), ("the kept file", kept.path)):
        placement = _placement(path, bounds)
        if placement is not None:
            return f"{what} {path} is {placement}"
    root = root_of(target.path, bounds.protected)
    if root is not None:
        return f"under the protected root {root}"
    if (target.device, target.inode) == (kept.device, kept.inode):
        return "the same file as the kept one (a hard link or the same path)"
    if action is Action.HARDLINK and target.device != kept.device:
        return "on another filesystem than the kept file: a hard link cannot cross"
    linked = action in (Action.HARDLINK, Action.SYMLINK)
    if linked and target.sha256 != kept.sha256 and not bounds.consent:
        return (
            "its bytes differ from the kept file's: a link over it would lose them "
            f"(add {CONSENT} to replace it all the same)"
        )
    if action is Action.MOVE_TO:
        assert destination is not None
        return _destination_refusal(step, destination, bounds)
    return None


class Digests:
    """SHA-256 of files by their stamp: a kept file shared by many steps is read once, and
    read again as soon as anything about it changes (its ctime included)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, tuple[int, ...]], str] = {}

    def of(self, at: Spot, info: os.stat_result) -> str:
        key = (at.path, stamp_of(info))
        if key not in self._known:
            self._known[key] = at.sha256(info)
        return self._known[key]


def _difference(planned: FileState, at: Spot, digests: Digests) -> str | None:
    """How the file at ``at`` differs from the plan, or None when it is the same."""
    try:
        info = at.lstat()
        if info is None:
            return "is gone"
        if stat.S_ISLNK(info.st_mode):
            return "is now a symbolic link"
        if not stat.S_ISREG(info.st_mode):
            return "is no longer a regular file"
        if (info.st_dev, info.st_ino) != (planned.device, planned.inode):
            return "was replaced since the plan (another inode)"
        if info.st_size != planned.size:
            return f"changed size since the plan ({planned.size:,} -> {info.st_size:,} bytes)"
        if info.st_mtime_ns != planned.mtime_ns:
            return "was modified since the plan (another mtime)"
        if digests.of(at, info) != planned.sha256:
            return "has other bytes than when it was planned (another SHA-256)"
    except OSError as exc:
        return f"cannot be checked: {exc.strerror}"
    return None


def holds_copy(at: Spot, planned: FileState) -> bool:
    """True when the name ``at`` is the planned file under another name, or a copy of its
    bytes."""
    info = at.lstat()
    if info is None or not stat.S_ISREG(info.st_mode):
        return False
    if (info.st_dev, info.st_ino) == (planned.device, planned.inode):
        return True
    return info.st_size == planned.size and at.sha256(info) == planned.sha256


@dataclass(frozen=True)
class Spots:
    """A step's names in their directories held open (:mod:`.tree`): the file, its
    cluster's kept file, and for ``move-to`` where it goes."""

    target: Spot
    kept: Spot
    moved: Spot | None = None


def open_spots(
    step: Step, bounds: Bounds, directory: str | None = None, moved: str | None = None
) -> Spots | str:
    """The step's files in their directories, opened from the roots down (:mod:`.tree`), and
    with ``moved`` where a move puts it (or took it), under ``directory``; or why they cannot
    be reached (outside the roots, through a symbolic link, not to be opened). The caller
    closes them (:func:`~.tree.holding`)."""
    try:
        target = _spot_of("the file", step.target.path, bounds)
        try:
            kept = _spot_of("the kept file", step.kept.path, bounds)
            away = None
            if moved is not None:
                assert directory is not None
                away = tree.spot_under(directory, moved, make=False)
        except BaseException:
            with tree.holding(target):
                raise
    except PlaceRefused as exc:
        return exc.reason
    except OSError as exc:
        return f"cannot be checked: {exc.strerror or exc}"
    return Spots(target, kept, away)


def _spot_of(what: str, path: str, bounds: Bounds) -> Spot:
    try:
        return tree.spot_in(path, bounds.roots)
    except PlaceRefused as exc:
        raise PlaceRefused(f"{what} {path} is {exc.reason}") from None


def finished(step: Step, action: Action, spots: Spots) -> bool:
    """True when the file already is as the step leaves it (a run stopped after acting and
    before its journal said so, or a second run). A journal's word is never taken for it."""
    info = spots.target.lstat()
    if action is Action.DELETE:
        return info is None
    if action is Action.MOVE_TO:
        assert spots.moved is not None
        return info is None and holds_copy(spots.moved, step.target)
    if info is None:
        return False
    if action is Action.HARDLINK:
        kept = step.kept
        return stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) == (
            kept.device,
            kept.inode,
        )
    return stat.S_ISLNK(info.st_mode) and spots.target.readlink() == os.path.abspath(step.kept.path)


def refusal(step: Step, spots: Spots, action: Action, digests: Digests) -> str | None:
    """Why the step must not run now, looked at through its spots, or None (its static
    refusal, :func:`static_refusal`, comes first)."""
    target, kept = step.target, step.kept
    difference = _difference(kept, spots.kept, digests)
    if difference is not None:
        return f"the kept file {kept.path} {difference}"
    difference = _difference(target, spots.target, digests)
    if difference is not None:
        return f"the file {difference}"
    if action is Action.MOVE_TO:
        assert spots.moved is not None
        moved = spots.moved
        if moved.lstat() is not None and not holds_copy(moved, target):
            return f"the destination {moved.path} already exists"
    if action in (Action.HARDLINK, Action.SYMLINK):
        temp = spots.target.beside(os.path.basename(temp_name(target.path)))
        if temp.lstat() is not None and not ours(temp, step):
            return f"the temporary name {temp.path} is in use"
    return None


def ours(temp: Spot, step: Step) -> bool:
    """A temporary link left by an interrupted step: a link to the kept file, nothing else."""
    info = temp.lstat()
    if info is None:
        return True
    if stat.S_ISLNK(info.st_mode):
        return temp.readlink() == os.path.abspath(step.kept.path)
    return (info.st_dev, info.st_ino) == (step.kept.device, step.kept.inode)
