"""The steps of a plan: what is done to each file marked ``remove`` (:class:`Action`), how each
step ended (:class:`Status`), and a plan as loaded and checked (:class:`LoadedPlan`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .plans import FileState

__all__ = ["TEMP_SUFFIX", "Action", "LoadedPlan", "Outcome", "Status", "Step"]


TEMP_SUFFIX = ".simhash-apply"


class Action(str, Enum):
    """What a step does with a file marked ``remove``."""

    MOVE_TO = "move-to"
    HARDLINK = "hardlink"
    SYMLINK = "symlink"
    DELETE = "delete"


class Status(str, Enum):
    """A step's outcome."""

    DONE = "done"
    WOULD_DO = "would_do"
    """Dry run: every check passed, nothing was changed."""
    ALREADY_DONE = "already_done"
    """Done by an earlier run (its journal says so, or the file already is as the step makes it)."""
    REFUSED = "refused"
    """A check failed: nothing was changed."""
    FAILED = "failed"
    """The operating system refused the change: the file is as it was."""


@dataclass(frozen=True)
class Step:
    """One file to act on, and the kept file of its cluster (``number`` counts from 1)."""

    number: int
    cluster: int
    target: FileState
    kept: FileState


@dataclass(frozen=True)
class Outcome:
    step: Step
    status: Status
    detail: str
    destination: str | None = None


@dataclass(frozen=True)
class LoadedPlan:
    """A plan file read and checked: its steps, the paths it scanned (``roots``: no step acts
    outside them), its protected roots, and its digest (which ties a journal to it)."""

    path: str
    sha256: str
    protect: list[str]
    steps: list[Step]
    roots: list[str]

    def members(self) -> list[str]:
        """Every file a step acts on or keeps."""
        named = {step.target.path for step in self.steps}
        named.update(step.kept.path for step in self.steps)
        return sorted(named)
