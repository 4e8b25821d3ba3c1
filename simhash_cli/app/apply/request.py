"""``simhash apply``'s typed, frozen request: the plan, the action and the consent it needs,
every rule between its options checked once before any step (the apply slice's own request,
as each command's is beside its slice)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ...errors import BadValueError, UsageError
from ...io.places import root_of
from ...io.sinks.formats import Output
from ..guard import Reads, refuse_overwrites
from .steps import Action, LoadedPlan

__all__ = ["ApplyRequest"]


@dataclass(frozen=True)
class ApplyRequest:
    """``simhash apply PLAN``: act on an action plan, or (``--undo JOURNAL``) take back what
    a run of one did.

    Attributes:
        plan: the plan's path (with ``undo``, None for the one the journal names).
        action: what is done to each file marked ``remove`` (None with ``undo``: the
            journal's).
        undo: take back the steps this journal records.
        directory: for ``move-to``, where the files go (made if missing).
        execute: act (``--yes``); otherwise a dry run.
        delete_near_duplicates: the consent ``delete`` needs to act or to write a script.
        journal: where steps are recorded (default: beside the plan).
        script: instead of acting, write a shell script of the steps here (``-`` for stdout).
        protect: roots whose files are never touched, besides the plan's own.
        roots: the roots the run may act in (``--root``): a plan this user's simhash sealed
            is narrowed to them; any other plan acts only inside them.
    """

    plan: str | None = None
    action: Action | None = None
    directory: str | None = None
    execute: bool = False
    delete_near_duplicates: bool = False
    journal: str | None = None
    script: str | None = None
    protect: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    undo: str | None = None
    output: Output = field(default_factory=Output)

    @property
    def act(self) -> Action:
        """The action of a request that acts (checked: not an undo)."""
        assert self.action is not None
        return self.action

    @property
    def plan_path(self) -> str:
        """The plan of a request that acts (checked: not an undo)."""
        assert self.plan is not None
        return self.plan

    @property
    def destination(self) -> str | None:
        """For ``move-to``, the directory the files go to, as an absolute path."""
        return None if self.directory is None else os.path.abspath(self.directory)

    @property
    def journal_path(self) -> str:
        """Where the steps are recorded."""
        return self.undo or self.journal or f"{self.plan}.journal"

    def check(self) -> None:
        """Raises: UsageError, BadValueError: options that do not go together."""
        if self.undo is not None:
            self._check_undo()
            return
        if self.plan is None:
            raise UsageError("Missing argument 'PLAN' (or --undo JOURNAL).")
        if self.action is None:
            raise UsageError(
                "Missing option '--action'. Choose move-to, hardlink, symlink or delete."
            )
        self._check_directory()
        if self.execute and self.script is not None:
            raise UsageError(
                "{script} writes what {execute} would do: choose one",
                parameters=("script", "execute"),
            )
        # Asked of a dry run too: it takes every check a run would, so that what it says
        # would be taken is what --yes takes.
        if self.action is Action.DELETE and not self.delete_near_duplicates:
            raise UsageError(
                "{action} delete deletes files that are near, not exact, duplicates of the kept "
                "ones: add {delete_near_duplicates} to say so",
                parameters=("action", "delete_near_duplicates"),
            )
        if self.journal is not None and not self.execute:
            raise UsageError(
                "{journal} goes with {execute} (a dry run records nothing)",
                parameters=("journal", "execute"),
            )
        refuse_overwrites(self._writes(), Reads(files=(self.plan,)))

    def _check_undo(self) -> None:
        """What goes with ``--undo``: the journal says what was done and where."""
        given = {
            "action": self.action is not None,
            "directory": self.directory is not None,
            "script": self.script is not None,
            "journal": self.journal is not None,
            "delete_near_duplicates": self.delete_near_duplicates,
        }
        for name, present in given.items():
            if present:
                raise UsageError(
                    f"{{undo}} takes back what its journal says a run did: leave out {{{name}}}",
                    parameters=("undo", name),
                )
        refuse_overwrites({"output": self.output.path}, Reads(files=(self.undo or "",)))

    def _writes(self) -> dict[str, str | None]:
        return {
            "script": self.script,
            "output": self.output.path,
            "journal": self.journal_path if self.execute else None,
        }

    def check_plan(self, plan: LoadedPlan) -> LoadedPlan:
        """The rules that need the plan read: a plan not sealed by this user acts only inside
        roots given here, no output onto a file it names, no destination under one of its
        protected roots. Returns the plan bound to the roots the run may act in.

        Raises:
            UsageError, BadValueError: before any step.
        """
        if not plan.sealed and not self.roots:
            raise UsageError(
                f"{plan.path} is not a plan your simhash dedupe --plan wrote, unchanged "
                f"({plan.unsealed}): its roots are not taken on its word; name the directories "
                "it may act in with {root} DIR",
                parameters=("root",),
            )
        plan = plan.bounded_by(self.roots)
        refuse_overwrites(self._writes(), Reads(files=(plan.path, *plan.members())))
        if self.directory is not None:
            root = root_of(self.directory, [*plan.protect, *self.protect])
            if root is not None:
                raise BadValueError(
                    f"{self.directory} is under the protected root {root}", parameter="directory"
                )
        return plan

    def bounds_text(self, plan: LoadedPlan) -> str:
        """Which roots bound the run, and why those."""
        roots = ", ".join(plan.bounds) or "none"
        if not plan.sealed:
            why = f"--root (the plan's own roots are not trusted: {plan.unsealed})"
        elif self.roots:
            why = (
                "the folders the plan was made from, narrowed to --root (the plan is sealed: "
                "unchanged since your simhash wrote it)"
            )
        else:
            why = (
                "the folders the plan was made from (the plan is sealed: unchanged since your "
                "simhash wrote it)"
            )
        return f"acting only inside {roots}: {why}"

    def _check_directory(self) -> None:
        if self.action is not Action.MOVE_TO:
            if self.directory is not None:
                raise UsageError(
                    f"{{action}} {self.act.value} takes no DIR (only move-to does)",
                    parameters=("action",),
                )
            return
        if self.directory is None:
            raise UsageError(
                "{action} move-to needs a DIR: simhash apply PLAN {action} move-to DIR",
                parameters=("action",),
            )
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise BadValueError(f"{self.directory} is not a directory", parameter="directory")
        # Under a protected root (the plan's or --protect): check_plan, once the plan is read.
