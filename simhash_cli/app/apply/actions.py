"""What a step of ``apply`` does with a file, and how it ended: declarations only, which the
command's help reads (:mod:`.steps` holds the steps themselves)."""

from __future__ import annotations

from enum import Enum

__all__ = ["Action", "Status"]


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
