"""A plan (``dedupe --plan``) -> steps that act on files, each checked again just before it
runs, and a journal of every step and its outcome.

A step acts on one file marked ``remove`` in favour of its cluster's kept file:

* ``move-to DIR``: the file moves to ``DIR`` + its absolute path (so no two land on one name);
* ``hardlink``: the file is replaced by a hard link to the kept file (same filesystem only);
* ``symlink``: the file is replaced by a symbolic link to the kept file's absolute path;
* ``delete``: the file is deleted.

Before each step both files must be the very files the plan recorded: a regular file (not a
link) with the same device, inode, size and mtime and the same SHA-256 of its bytes, hence the
same fingerprint. A step is refused when the kept file is not there as planned (a cluster never
loses its last copy), when the file lies under a protected root, or when both paths are the same
file. Files are replaced atomically (a link made under a temporary name, then renamed over the
file), and a move links the new name before it unlinks the old one, so an interruption at any
moment leaves every file either as it was or as the step makes it, never missing.

The journal (JSON Lines) records each step as ``started`` before it acts and with its outcome
after, each line on disk (fsync) before the next action. Run again with the same journal, the
steps it records as done are skipped and a step that was started is finished or checked again,
so an interrupted run resumes and ends as an uninterrupted one would.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ...core.events import stamp_of
from ...errors import InputError, PathNotFoundError
from .journal import Journal
from .plans import PLAN_VERSION, FileState, sha256_of
from .steps import TEMP_SUFFIX, Action, LoadedPlan, Outcome, Status, Step

__all__ = [
    "apply",
    "apply_records",
    "destination_of",
    "load_plan",
    "static_refusal",
    "temp_name",
    "under_root",
]


# ---------------------------------------------------------------------------- the plan


def _field(entry: dict[str, Any], name: str, kind: type, where: str) -> Any:
    value = entry.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"{where}: '{name}' must be {kind.__name__}, not {value!r}")
    return value


def _planned(entry: dict[str, Any], where: str) -> FileState:
    digest = _field(entry, "sha256", str, where)
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise InputError(f"{where}: 'sha256' is not a SHA-256 hex digest")
    return FileState(
        _field(entry, "path", str, where),
        _field(entry, "device", int, where),
        _field(entry, "inode", int, where),
        _field(entry, "size", int, where),
        _field(entry, "mtime_ns", int, where),
        digest,
    )


def load_plan(path: str) -> LoadedPlan:
    """Read a plan written by ``dedupe --plan`` and check that it is whole and consistent:
    each cluster keeps exactly the file it names, and no file appears twice.

    Raises:
        InputError: unreadable, not a plan, another version, or inconsistent.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise PathNotFoundError(f"no such plan: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read the plan {path}: {exc.strerror}") from None
    try:
        plan = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}: not a plan written by simhash dedupe --plan ({exc})") from None
    if not isinstance(plan, dict) or "clusters" not in plan:
        raise InputError(f"{path}: not a plan written by simhash dedupe --plan")
    if plan.get("version") != PLAN_VERSION:
        raise InputError(
            f"{path}: plan version {plan.get('version')!r}, this simhash reads version "
            f"{PLAN_VERSION}: make the plan again with simhash dedupe --plan"
        )
    protect = plan.get("protect", [])
    if not isinstance(protect, list) or not all(isinstance(p, str) for p in protect):
        raise InputError(f"{path}: 'protect' must be a list of directories")
    steps: list[Step] = []
    seen: dict[str, str] = {}
    clusters = plan["clusters"]
    if not isinstance(clusters, list):
        raise InputError(f"{path}: 'clusters' must be a list")
    for position, cluster in enumerate(clusters):
        where = f"{path}: cluster {position}"
        if not isinstance(cluster, dict) or not isinstance(cluster.get("files"), list):
            raise InputError(f"{where}: must be an object with a list of 'files'")
        files = cluster["files"]
        for entry in files:
            if not isinstance(entry, dict) or entry.get("action") not in _ACTIONS:
                raise InputError(f"{where}: each file needs an action, one of {_ACTIONS}")
            name = _field(entry, "path", str, where)
            if name in seen:
                raise InputError(f"{where}: {name!r} is also in {seen[name]}")
            seen[name] = f"cluster {position}"
        kept = [entry for entry in files if entry["action"] == "keep"]
        removed = [entry for entry in files if entry["action"] == "remove"]
        if (
            len(kept) > 1
            or (removed and not kept)
            or cluster.get("keep") != (kept[0]["path"] if kept else None)
        ):
            raise InputError(f"{where}: must keep exactly the one file its 'keep' names")
        if not removed:
            continue
        kept_file = _planned(kept[0], where)
        for entry in removed:
            steps.append(Step(len(steps) + 1, position, _planned(entry, where), kept_file))
    digest = hashlib.sha256(data).hexdigest()
    return LoadedPlan(os.path.abspath(path), digest, protect, steps)


_ACTIONS = ("keep", "remove", "protected", "skip")


# ---------------------------------------------------------------------------- checks


def under_root(path: str, roots: Sequence[str]) -> str | None:
    """The protected root ``path`` lies under (after resolving links), or None."""
    real = os.path.realpath(path)
    for root in roots:
        base = os.path.realpath(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return root
    return None


def destination_of(directory: str, path: str) -> str:
    """Where ``move-to DIR`` puts a file: DIR followed by the file's absolute path, so that two
    files of one name in different directories never meet."""
    return os.path.join(os.path.abspath(directory), os.path.abspath(path).lstrip(os.sep))


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


class _Digests:
    """SHA-256 of files by their stamp: a kept file shared by many steps is read once, and
    read again as soon as anything about it changes (its ctime included)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, tuple[int, ...]], str] = {}

    def of(self, path: str, info: os.stat_result) -> str:
        key = (path, stamp_of(info))
        if key not in self._known:
            self._known[key] = sha256_of(path, info)
        return self._known[key]


def _difference(planned: FileState, digests: _Digests) -> str | None:
    """How the file at ``planned.path`` differs from the plan, or None when it is the same."""
    try:
        info = _lstat(planned.path)
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
        if digests.of(planned.path, info) != planned.sha256:
            return "has other bytes than when it was planned (another SHA-256)"
    except OSError as exc:
        return f"cannot be checked: {exc.strerror}"
    return None


def _holds_copy(path: str, planned: FileState) -> bool:
    """True when ``path`` is the planned file under another name, or a copy of its bytes."""
    info = _lstat(path)
    if info is None or not stat.S_ISREG(info.st_mode):
        return False
    if (info.st_dev, info.st_ino) == (planned.device, planned.inode):
        return True
    return info.st_size == planned.size and sha256_of(path, info) == planned.sha256


def _finished(step: Step, action: Action, destination: str | None) -> bool:
    """True when the file already is as the step leaves it (a run stopped after acting and
    before its journal said so, or a second run)."""
    target = step.target.path
    info = _lstat(target)
    if action is Action.DELETE:
        return info is None
    if action is Action.MOVE_TO:
        assert destination is not None
        return info is None and _holds_copy(destination, step.target)
    if info is None:
        return False
    if action is Action.HARDLINK:
        kept = step.kept
        return stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) == (
            kept.device,
            kept.inode,
        )
    return stat.S_ISLNK(info.st_mode) and os.readlink(target) == os.path.abspath(step.kept.path)


def static_refusal(step: Step, action: Action, roots: Sequence[str]) -> str | None:
    """Why the step must not run whatever the files are like now (the plan and the roots say
    so), or None."""
    target, kept = step.target, step.kept
    root = under_root(target.path, roots)
    if root is not None:
        return f"under the protected root {root}"
    if (target.device, target.inode) == (kept.device, kept.inode):
        return "the same file as the kept one (a hard link or the same path)"
    if action is Action.HARDLINK and target.device != kept.device:
        return "on another filesystem than the kept file: a hard link cannot cross"
    return None


def _refusal(
    step: Step,
    action: Action,
    destination: str | None,
    roots: Sequence[str],
    digests: _Digests,
) -> str | None:
    """Why the step must not run, or None."""
    target, kept = step.target, step.kept
    refusal = static_refusal(step, action, roots)
    if refusal is not None:
        return refusal
    difference = _difference(kept, digests)
    if difference is not None:
        return f"the kept file {kept.path} {difference}"
    difference = _difference(target, digests)
    if difference is not None:
        return f"the file {difference}"
    if action is Action.MOVE_TO:
        assert destination is not None
        if os.path.lexists(destination) and not _holds_copy(destination, target):
            return f"the destination {destination} already exists"
    if action in (Action.HARDLINK, Action.SYMLINK):
        temp = temp_name(target.path)
        if os.path.lexists(temp) and not _ours(temp, step):
            return f"the temporary name {temp} is in use"
    return None


def temp_name(path: str) -> str:
    """The name a link is made under beside ``path`` before it is renamed over it."""
    head, name = os.path.split(path)
    return os.path.join(head, f".{name}{TEMP_SUFFIX}")


def _ours(temp: str, step: Step) -> bool:
    """A temporary link left by an interrupted step: a link to the kept file, nothing else."""
    info = os.lstat(temp)
    if stat.S_ISLNK(info.st_mode):
        return os.readlink(temp) == os.path.abspath(step.kept.path)
    return (info.st_dev, info.st_ino) == (step.kept.device, step.kept.inode)


# ---------------------------------------------------------------------------- acting


def _sync_directory(path: str) -> None:
    """Make a rename or unlink in this directory durable before the journal says it is done."""
    descriptor = os.open(path or ".", os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP}


def _move(step: Step, destination: str) -> None:
    """Give the file its new name, then drop the old one: never a moment with neither."""
    source = step.target.path
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    made = not os.path.lexists(destination)  # else a copy an interrupted run made (checked)
    if made:
        try:
            os.link(source, destination)
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            _copy(source, destination)
    _sync_directory(os.path.dirname(destination))
    try:
        os.unlink(source)
    except OSError:
        if made:  # the file stays where it was, and only there
            os.unlink(destination)
        raise


def _copy(source: str, destination: str) -> None:
    """Across filesystems: a complete, synced copy under a temporary name, then renamed."""
    temp = destination + TEMP_SUFFIX
    shutil.copy2(source, temp)
    with open(temp, "rb") as handle:
        os.fsync(handle.fileno())
    if os.path.lexists(destination):
        os.unlink(temp)
        raise FileExistsError(errno.EEXIST, "the destination appeared meanwhile", destination)
    os.rename(temp, destination)


def _perform(step: Step, action: Action, destination: str | None) -> None:
    target = step.target.path
    if action is Action.DELETE:
        os.unlink(target)
    elif action is Action.MOVE_TO:
        assert destination is not None
        _move(step, destination)
    else:
        temp = temp_name(target)
        if os.path.lexists(temp):  # checked to be a link to the kept file (_refusal)
            os.unlink(temp)
        if action is Action.HARDLINK:
            os.link(step.kept.path, temp)
        else:
            os.symlink(os.path.abspath(step.kept.path), temp)
        try:
            os.replace(temp, target)
        except OSError:
            os.unlink(temp)
            raise
    _sync_directory(os.path.dirname(target))


_DONE_TEXT = {
    Action.MOVE_TO: "moved to {destination}",
    Action.HARDLINK: "replaced by a hard link to {kept}",
    Action.SYMLINK: "replaced by a symbolic link to {kept}",
    Action.DELETE: "deleted",
}


def _describe(step: Step, action: Action, destination: str | None) -> str:
    return _DONE_TEXT[action].format(destination=destination, kept=os.path.abspath(step.kept.path))


# ---------------------------------------------------------------------------- journal


# ---------------------------------------------------------------------------- the run


def apply(
    plan: LoadedPlan,
    action: Action,
    *,
    destination: str | None = None,
    execute: bool = False,
    journal: Journal | None = None,
    protect: Sequence[str] = (),
    on_step: Callable[[], None] | None = None,
) -> Iterator[Outcome]:
    """Check, and with ``execute`` take, each step of ``plan``; yield each outcome as it is
    known. Without ``execute`` nothing on disk changes (a dry run). With a ``journal``, steps
    it records as done are skipped, and each step is recorded before and after it acts.

    Args:
        plan: from :func:`load_plan`.
        action: what to do with each file marked ``remove``.
        destination: the directory of ``move-to``.
        execute: act; otherwise only check.
        journal: opened :class:`Journal` (with ``execute``).
        protect: roots never touched, besides the plan's own.
        on_step: called after each step (for progress).
    """
    roots = [*plan.protect, *protect]
    digests = _Digests()
    for step in plan.steps:
        moved_to = None if destination is None else destination_of(destination, step.target.path)
        outcome = _run_step(step, action, moved_to, roots, digests, execute, journal)
        if on_step is not None:
            on_step()
        yield outcome


def _run_step(
    step: Step,
    action: Action,
    destination: str | None,
    roots: Sequence[str],
    digests: _Digests,
    execute: bool,
    journal: Journal | None,
) -> Outcome:
    def outcome(status: Status, detail: str) -> Outcome:
        if journal is not None and execute:
            journal.record(step, status.value, detail)
        return Outcome(step, status, detail, destination)

    if journal is not None and step.number in journal.done:
        return Outcome(step, Status.ALREADY_DONE, "done by an earlier run (journal)", destination)
    try:
        if _finished(step, action, destination):
            return outcome(Status.ALREADY_DONE, f"already {_describe(step, action, destination)}")
    except OSError:
        pass  # not as the step leaves it: the checks below say what it is
    refusal = _refusal(step, action, destination, roots, digests)
    if refusal is not None:
        return outcome(Status.REFUSED, refusal)
    if not execute:
        return Outcome(step, Status.WOULD_DO, _describe(step, action, destination), destination)
    if journal is not None:
        journal.record(step, "started")
    try:
        _perform(step, action, destination)
    except OSError as exc:
        return outcome(Status.FAILED, f"{exc.strerror or exc} (the file is as it was)")
    return outcome(Status.DONE, _describe(step, action, destination))


def apply_records(outcomes: Iterable[Outcome], action: Action) -> Iterator[dict[str, Any]]:
    """``simhash apply``: one record per step, as it is taken."""
    for outcome in outcomes:
        step = outcome.step
        yield {
            "step": step.number,
            "cluster": step.cluster,
            "action": action.value,
            "path": step.target.path,
            "kept": step.kept.path,
            "destination": outcome.destination,
            "status": outcome.status.value,
            "detail": outcome.detail,
        }
