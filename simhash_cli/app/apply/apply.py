"""A plan (``dedupe --plan``) -> steps that act on files, each checked again just before it
runs, and a journal of every step and its outcome.

A step acts on one file marked ``remove`` in favour of its cluster's kept file:

* ``move-to DIR``: the file moves to ``DIR`` + its absolute path (so no two land on one name);
* ``hardlink``: the file is replaced by a hard link to the kept file (same filesystem only);
* ``symlink``: the file is replaced by a symbolic link to the kept file's absolute path;
* ``delete``: the file is deleted.

Before each step both files must be the very files the plan recorded, and the step must stay
inside the plan's bounds (:mod:`.checks`). Files are replaced atomically (a link made under a
temporary name, then renamed over the file), and a move links the new name before it unlinks
the old one, so an interruption at any moment leaves every file either as it was or as the
step makes it, never missing. A name is only ever removed again by the step that made it, so
two runs racing on one file cannot lose it (a run also holds the plan's lock: :mod:`.journal`).

The journal (JSON Lines) records each step as ``started`` before it acts and with its outcome
after, each line on disk (fsync) before the next action. Run again, each step is checked on
the files: one already done is reported so, one cut short is finished or checked again, so an
interrupted run resumes and ends as an uninterrupted one would.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ...errors import Moved, PlaceRefused
from . import tree
from .checks import (
    Bounds,
    Digests,
    Spots,
    destination_of,
    finished,
    open_spots,
    refusal,
    static_refusal,
    temp_name,
)
from .holds import held
from .journal import Journal
from .loading import load_plan
from .near import Nearness
from .steps import Action, LoadedPlan, Outcome, Status, Step
from .tree import Spot

__all__ = ["apply", "apply_records", "copy_file", "load_plan", "move_file", "sync_directory"]


# ---------------------------------------------------------------------------- acting


def sync_directory(path: str) -> None:
    """Make a rename or unlink in this directory durable before the journal says it is done."""
    descriptor = os.open(path or ".", os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP}


def _identity(at: Spot) -> tuple[int, int] | None:
    info = at.lstat()
    return None if info is None else (info.st_dev, info.st_ino)


def move_file(source: Spot, destination: Spot) -> None:
    """Give the file its new name, then drop the old one: never a moment with neither. Both
    names are reached through their directories held open (:mod:`.tree`).

    Only a name this call made is ever removed again, and only while the file is still at
    its old name: a run that loses a race to another never deletes what the other made.
    """
    made = None  # the identity of the name made here, if one was
    if destination.lstat() is None:  # else a copy an interrupted run made (checked)
        try:
            tree.link(source, destination)
        except FileExistsError:
            pass  # another run made it meanwhile: the unlink below decides who moved it
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            _copy(source, destination)
            made = _identity(destination)
        else:
            made = _identity(destination)
    destination.sync()
    try:
        source.unlink()
    except FileNotFoundError:
        raise Moved from None  # another run dropped the old name: the new one holds the file
    except OSError:
        if made is not None and _identity(destination) == made:
            destination.unlink()  # the file stays where it was, and only there
        raise


def copy_file(source: Spot, temp: Spot) -> None:
    """A synced copy of the regular file at ``source`` (bytes, mode and times) made at
    ``temp``, which must not exist (never through a link planted there); a copy that fails
    leaves nothing there."""
    reading = source.open_read()
    try:
        info = os.fstat(reading)
        writing = temp.create(stat.S_IMODE(info.st_mode) & 0o7777)
        try:
            with open(reading, "rb", closefd=False) as src, open(writing, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
                dst.flush()
                os.utime(writing, ns=(info.st_atime_ns, info.st_mtime_ns))
                os.fsync(writing)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
    finally:
        os.close(reading)


def _copy(source: Spot, destination: Spot) -> None:
    """Across filesystems: a complete, synced copy under a temporary name, then linked to its
    name (which fails rather than replace anything), then the temporary name dropped. A copy
    that fails (a full disk) leaves nothing behind."""
    temp = destination.beside(os.path.basename(temp_name(destination.path)))
    _drop_leftover(temp, destination)
    copy_file(source, temp)
    try:
        try:
            tree.link(temp, destination)
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            # A filesystem without hard links: renamed, after one last look.
            if destination.lstat() is not None:
                raise FileExistsError(
                    errno.EEXIST, "appeared meanwhile", destination.path
                ) from None
            tree.replace(temp, destination)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def _drop_leftover(temp: Spot, destination: Spot) -> None:
    """A copy a killed move left at its temporary name under DIR, dropped so that the move can
    be made again: a regular file of one name only (a partial copy), or another name of the
    file at the destination (linked, then killed before its temporary name was dropped).
    Anything else there is not ours: the move fails rather than touch it."""
    info = temp.lstat()
    if info is None:
        return
    there = destination.lstat()
    linked = there is not None and (there.st_dev, there.st_ino) == (info.st_dev, info.st_ino)
    if not stat.S_ISREG(info.st_mode) or (info.st_nlink != 1 and not linked):
        raise FileExistsError(errno.EEXIST, "its temporary name is in use", temp.path)
    temp.unlink()


def _perform(step: Step, spots: Spots, action: Action, destination: str | None) -> None:
    target = spots.target
    if action is Action.DELETE:
        target.unlink()
    elif action is Action.MOVE_TO:
        assert destination is not None and spots.moved is not None
        # Its directories under DIR made now, each entered without following a link.
        moved = tree.spot_under(_directory_of(destination, step), destination, make=True)
        with tree.holding(moved):
            move_file(target, moved)
            # A copy linked into place by a move killed before it dropped its temporary name.
            with contextlib.suppress(OSError):
                _drop_leftover(moved.beside(os.path.basename(temp_name(moved.path))), moved)
    else:
        temp = target.beside(os.path.basename(temp_name(target.path)))
        if temp.lstat() is not None:  # checked to be a link to the kept file (refusal)
            temp.unlink()
        if action is Action.HARDLINK:
            tree.link(spots.kept, temp)
        else:
            assert temp.directory is not None
            os.symlink(os.path.abspath(step.kept.path), temp.name, dir_fd=temp.directory)
        try:
            tree.replace(temp, target)
        except OSError:
            temp.unlink()
            raise
    target.sync()


def _directory_of(destination: str, step: Step) -> str:
    """DIR of ``move-to DIR``, from where the step's file goes (DIR + its absolute path)."""
    tail = os.path.abspath(step.target.path)
    assert destination.endswith(tail)
    return destination[: len(destination) - len(tail)] or os.sep


_DONE_TEXT = {
    Action.MOVE_TO: "moved to {destination}",
    Action.HARDLINK: "replaced by a hard link to {kept}",
    Action.SYMLINK: "replaced by a symbolic link to {kept}",
    Action.DELETE: "deleted",
}


def _describe(step_kept: str, action: Action, destination: str | None) -> str:
    return _DONE_TEXT[action].format(destination=destination, kept=os.path.abspath(step_kept))


# ---------------------------------------------------------------------------- the run


def apply(
    plan: LoadedPlan,
    action: Action,
    *,
    destination: str | None = None,
    execute: bool = False,
    journal: Journal | None = None,
    protect: Sequence[str] = (),
    consent: bool = False,
    on_step: Callable[[], None] | None = None,
) -> Iterator[Outcome]:
    """Check, and with ``execute`` take, each step of ``plan``; yield each outcome as it is
    known. Without ``execute`` nothing on disk changes (a dry run). With a ``journal``, each
    step is recorded before and after it acts; what a journal says was done is checked on
    the files, never taken on its word.

    Args:
        plan: from :func:`load_plan`.
        action: what to do with each file marked ``remove``.
        destination: the directory of ``move-to``.
        execute: act; otherwise only check.
        journal: opened :class:`Journal` (with ``execute``).
        protect: roots never touched, besides the plan's own.
        consent: a file whose bytes differ from the kept file's may be replaced by a link
            (``delete`` is consented to before a run starts).
        on_step: called after each step (for progress).
    """
    bounds = Bounds.of(plan, protect, consent)
    digests = Digests()
    near = None if plan.sealed else Nearness(plan.settings)
    for step in plan.steps:
        moved_to = None if destination is None else destination_of(destination, step.target.path)
        outcome = _run_step(step, action, moved_to, bounds, digests, execute, journal, near)
        if on_step is not None:
            on_step()
        yield outcome


def _run_step(
    step: Step,
    action: Action,
    destination: str | None,
    bounds: Bounds,
    digests: Digests,
    execute: bool,
    journal: Journal | None,
    near: Nearness | None = None,
) -> Outcome:
    def outcome(status: Status, detail: str) -> Outcome:
        if journal is not None and execute:
            journal.record(step, status.value, detail)
        return Outcome(step, status, detail, destination)

    if not execute:
        return _checked(step, action, destination, bounds, digests, outcome, near=near)
    with held((step.kept.path, step.target.path)) as busy:
        if busy is not None:
            return outcome(Status.REFUSED, f"not checked: {busy}")
        return _checked(
            step, action, destination, bounds, digests, outcome, journal, True, near=near
        )


def _checked(
    step: Step,
    action: Action,
    destination: str | None,
    bounds: Bounds,
    digests: Digests,
    outcome: Callable[[Status, str], Outcome],
    journal: Journal | None = None,
    execute: bool = False,
    *,
    near: Nearness | None = None,
) -> Outcome:
    """The step checked on its files and, held (:mod:`.holds`) and with ``execute``, taken:
    each file looked at and acted on through its directory held open (:mod:`.tree`); with
    ``near`` (an unsealed plan), only when the two files are near-duplicates now."""
    done = _describe(step.kept.path, action, destination)
    directory = None if destination is None else _directory_of(destination, step)
    spots = open_spots(step, bounds, directory, destination)
    if isinstance(spots, str):
        return outcome(Status.REFUSED, spots)
    with tree.holding(spots.target, spots.kept, spots.moved):
        try:
            if finished(step, action, spots):
                return outcome(Status.ALREADY_DONE, f"already {done}")
        except OSError:
            pass  # not as the step leaves it: the checks below say what it is
        refused = static_refusal(step, action, bounds, destination) or refusal(
            step, spots, action, digests
        )
        if refused is None and near is not None:
            try:
                refused = near.refusal(step, spots)
            except OSError as exc:
                refused = f"cannot be checked: {exc.strerror or exc}"
        if refused is not None:
            return outcome(Status.REFUSED, refused)
        if not execute:
            return Outcome(step, Status.WOULD_DO, done, destination)
        if journal is not None:
            journal.record(step, "started")
        try:
            _perform(step, spots, action, destination)
        except Moved:
            return outcome(Status.ALREADY_DONE, f"already {done} (by another run, meanwhile)")
        except PlaceRefused as exc:
            return outcome(Status.REFUSED, f"the destination is {exc.reason}")
        except OSError as exc:
            return outcome(Status.FAILED, f"{exc.strerror or exc} (the file is as it was)")
    return outcome(Status.DONE, done)


def apply_records(
    outcomes: Iterable[Outcome], action: Action, *, undo: bool = False
) -> Iterator[dict[str, Any]]:
    """``simhash apply``: one record per step, as it is taken (``undo``: taken back, its
    action ``undo move-to``, ``undo hardlink``...)."""
    for outcome in outcomes:
        step = outcome.step
        yield {
            "step": step.number,
            "cluster": step.cluster,
            "action": f"undo {action.value}" if undo else action.value,
            "path": step.target.path,
            "kept": step.kept.path,
            "destination": outcome.destination,
            "status": outcome.status.value,
            "detail": outcome.detail,
        }
