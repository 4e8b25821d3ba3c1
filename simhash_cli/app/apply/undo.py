"""``simhash apply --undo JOURNAL``: the steps a run took, taken back.

The journal says which steps a run took (and the plan, by its SHA-256, the action and the
destination); the files say whether each can be put back, checked just before it is:

* a file moved by ``move-to`` goes back to where the plan found it, when nothing has taken
  that place since and the file at the destination is still the one moved (its identity, or
  its size and SHA-256 after a move across filesystems). It gets its old name before it drops
  the new one, as a move does, so an interruption never leaves it missing;
* a file replaced by a hard or symbolic link to the kept file becomes a file of its own again,
  a copy of the kept file's bytes, when those were its bytes too (the plan recorded both
  SHA-256s) and the link is still the one the run made. A near-duplicate replaced with
  ``--delete-near-duplicates`` had other bytes, which are gone: it is refused, and left;
* a deleted file has nothing left to put back: refused.

A dry run unless ``--yes``. With ``--yes`` each step taken back is recorded in the same
journal (``undoing``, then ``undone``), so a second ``--undo`` finds them put back.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from . import tree
from .apply import copy_file, move_file
from .checks import (
    Bounds,
    Digests,
    Spots,
    destination_of,
    finished,
    holds_copy,
    open_spots,
    temp_name,
)
from .holds import held
from .journal import Journal, read_journal
from .loading import load_plan
from .steps import Action, LoadedPlan, Outcome, Status, Step

__all__ = ["Undo", "undo_of", "undo_steps"]

# The journal's words for a step that may have acted on its files (a run cut short included).
_TAKEN = {"done", "already_done", "started", "undoing", "undone"}


@dataclass(frozen=True)
class Undo:
    """A run to take back: the plan it acted on, and what its journal says it did."""

    journal: str
    header: dict[str, Any]
    plan: LoadedPlan
    action: Action
    destination: str | None
    last: dict[int, str]
    """Each step's last word in the journal."""

    @property
    def steps(self) -> list[Step]:
        """The steps the run may have taken, in the plan's order."""
        return [step for step in self.plan.steps if self.last.get(step.number) in _TAKEN]


def undo_of(journal: str, plan_path: str | None) -> tuple[Undo, LoadedPlan]:
    """The run ``journal`` records, with its plan (``plan_path``, or the one the journal names)
    read as hostile input and checked to be the very plan the run took.

    Raises:
        InputError: not a journal, or a plan other than the journal's (or changed since).
    """
    header, last = read_journal(journal)
    plan = load_plan(plan_path or str(header["plan"]))
    if plan.sha256 != header.get("plan_sha256"):
        raise InputError(
            f"{plan.path} is not the plan {journal} is the journal of (or it changed since "
            "the run): nothing is taken back"
        )
    destination = header.get("destination")
    undo = Undo(
        journal,
        header,
        plan,
        Action(header["action"]),
        None if destination is None else str(destination),
        last,
    )
    return undo, plan


def undo_steps(
    undo: Undo, plan: LoadedPlan, *, execute: bool, journal: Journal | None = None
) -> Iterator[Outcome]:
    """Each step the run took, checked and (with ``execute``, recorded in ``journal``) put
    back; ``plan`` is the run's plan bound to the roots this one may touch. Every file is
    looked at and acted on through its directory, opened from those roots (or DIR) down
    without following a link (:mod:`.tree`), as ``apply`` does."""
    digests = Digests()
    bounds = Bounds.of(plan)
    bounded = {step.number for step in plan.steps}
    for step in undo.steps:
        moved = None
        if undo.destination is not None:
            moved = destination_of(undo.destination, step.target.path)
        if step.number not in bounded:
            yield Outcome(step, Status.REFUSED, "outside the roots this run may act in", moved)
            continue
        if not execute:
            yield _checked(step, undo, moved, bounds, digests, execute=False)
            continue
        with held((step.kept.path, step.target.path)) as busy:
            if busy is not None:
                outcome = Outcome(step, Status.REFUSED, f"not checked: {busy}", moved)
            else:
                outcome = _checked(
                    step, undo, moved, bounds, digests, execute=True, journal=journal
                )
        if journal is not None and outcome.status is Status.DONE:
            # Only what was put back is recorded: a step refused now may be put back by a
            # later --undo, once its place is free again.
            journal.record(step, "undone", outcome.detail)
        yield outcome


def _checked(
    step: Step,
    undo: Undo,
    moved: str | None,
    bounds: Bounds,
    digests: Digests,
    *,
    execute: bool,
    journal: Journal | None = None,
) -> Outcome:
    """One step checked on its files and, with ``execute``, put back."""

    def outcome(status: Status, detail: str) -> Outcome:
        return Outcome(step, status, detail, moved)

    if undo.action is Action.DELETE:
        return outcome(Status.REFUSED, "deleted: there is nothing to put back")
    spots = open_spots(step, bounds, undo.destination, moved)
    if isinstance(spots, str):
        return outcome(Status.REFUSED, spots)
    with tree.holding(spots.target, spots.kept, spots.moved):
        try:
            refused = _refusal(step, undo, spots, digests)
        except OSError as exc:
            refused = Status.REFUSED, f"cannot be checked: {exc.strerror or exc}"
        if refused is not None:
            return outcome(*refused)
        if undo.action is Action.MOVE_TO:
            done = f"moved back from {moved}"
        else:
            done = f"a file of its own again, a copy of {step.kept.path}"
        if not execute:
            return outcome(Status.WOULD_DO, done)
        if journal is not None:
            journal.record(step, "undoing")
        try:
            if undo.action is Action.MOVE_TO:
                assert spots.moved is not None
                move_file(spots.moved, spots.target)
            else:
                _copy_over(spots)
        except OSError as exc:
            return outcome(Status.FAILED, f"{exc.strerror or exc} (the file is as it was)")
    return outcome(Status.DONE, done)


def _refusal(step: Step, undo: Undo, spots: Spots, digests: Digests) -> tuple[Status, str] | None:
    """Why the step cannot be put back now (or is already), or None when it can."""
    if undo.action is Action.MOVE_TO:
        assert spots.moved is not None
        back, away = spots.target.lstat(), spots.moved.lstat()
        if back is not None:
            if holds_copy(spots.target, step.target) and away is None:
                return Status.ALREADY_DONE, "already where the plan found it"
            same = away is not None and (back.st_dev, back.st_ino) == (away.st_dev, away.st_ino)
            if same and stat.S_ISREG(back.st_mode) and holds_copy(spots.target, step.target):
                # An --undo killed between the move's two halves: the file has both names,
                # and dropping the one under DIR finishes it (move_file links nothing).
                return None
            return Status.REFUSED, "its place is taken again: nothing is moved over it"
        if not holds_copy(spots.moved, step.target):
            return (
                Status.REFUSED,
                f"{spots.moved.path} is not the file that was moved (changed or gone since)",
            )
        return None
    refused = _link_refusal(step, undo.action, spots, digests)
    if refused is not None:
        return refused
    temp = spots.target.beside(os.path.basename(temp_name(step.target.path)))
    if temp.lstat() is not None:
        return Status.REFUSED, f"the temporary name {temp.path} is in use: left as it is"
    return None


def _link_refusal(
    step: Step, action: Action, spots: Spots, digests: Digests
) -> tuple[Status, str] | None:
    """Why a link the run made cannot become the file it replaced, or None when it can."""
    if step.target.sha256 != step.kept.sha256:
        return (
            Status.REFUSED,
            "its own bytes are gone (a near-duplicate, linked with --delete-near-duplicates)",
        )
    kept = spots.kept.lstat()
    if not finished(step, action, spots):
        target = spots.target.lstat()
        if target is not None and stat.S_ISREG(target.st_mode):
            same = kept is not None and (kept.st_dev, kept.st_ino) == (
                target.st_dev,
                target.st_ino,
            )
            if not same and holds_copy(spots.target, step.kept):
                return Status.ALREADY_DONE, "already a file of its own"
        return Status.REFUSED, "no longer the link the run made: left as it is"
    same = False
    if kept is not None and stat.S_ISREG(kept.st_mode):
        same = digests.of(spots.kept, kept) == step.target.sha256
    if not same:
        return Status.REFUSED, "the kept file changed since: its bytes are not the ones to put back"
    return None


def _copy_over(spots: Spots) -> None:
    """The file (a link to the kept file) replaced by a synced copy of the kept file's bytes,
    made under a temporary name beside it (created there, never through a link) and renamed
    over it: never a moment without a file there."""
    target = spots.target
    temp = target.beside(os.path.basename(temp_name(target.path)))
    copy_file(spots.kept, temp)
    try:
        tree.replace(temp, target)
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    target.sync()
