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
    """``simhash apply PLAN``: act on an action plan.

    Attributes:
        plan: the plan's path.
        action: what is done to each file marked ``remove``.
        directory: for ``move-to``, where the files go (made if missing).
        execute: act (``--yes``); otherwise a dry run.
        delete_near_duplicates: the consent ``delete`` needs to act or to write a script.
        journal: where steps are recorded (default: beside the plan).
        script: instead of acting, write a shell script of the steps here (``-`` for stdout).
        protect: roots whose files are never touched, besides the plan's own.
    """

    plan: str
    action: Action
    directory: str | None = None
    execute: bool = False
    delete_near_duplicates: bool = False
    journal: str | None = None
    script: str | None = None
    protect: tuple[str, ...] = ()
    output: Output = field(default_factory=Output)

    @property
    def destination(self) -> str | None:
        """For ``move-to``, the directory the files go to, as an absolute path."""
        return None if self.directory is None else os.path.abspath(self.directory)

    @property
    def journal_path(self) -> str:
        """Where the steps are recorded."""
        return self.journal or self.plan + ".journal"

    def check(self) -> None:
        """Raises: UsageError, BadValueError: options that do not go together."""
        self._check_directory()
        if self.execute and self.script is not None:
            raise UsageError(
                "{script} writes what {execute} would do: choose one",
                parameters=("script", "execute"),
            )
        acts = self.execute or self.script is not None
        if self.action is Action.DELETE and acts and not self.delete_near_duplicates:
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

    def _writes(self) -> dict[str, str | None]:
        return {
            "script": self.script,
            "output": self.output.path,
            "journal": self.journal_path if self.execute else None,
        }

    def check_plan(self, plan: LoadedPlan) -> None:
        """The rules that need the plan read: no output onto a file it names, no destination
        under one of its protected roots.

        Raises:
            UsageError, BadValueError: before any step.
        """
        refuse_overwrites(self._writes(), Reads(files=(plan.path, *plan.members())))
        if self.directory is not None:
            root = root_of(self.directory, [*plan.protect, *self.protect])
            if root is not None:
                raise BadValueError(
                    f"{self.directory} is under the protected root {root}", parameter="directory"
                )

    def _check_directory(self) -> None:
        if self.action is not Action.MOVE_TO:
            if self.directory is not None:
                raise UsageError(
                    f"{{action}} {self.action.value} takes no DIR (only move-to does)",
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
