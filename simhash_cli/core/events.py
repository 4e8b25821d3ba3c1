"""What happens to a document on its way in: skipped (and why) or warned about, and the file
as it was read (its stamp), so that later steps can tell whether it is still that file.

Readers report events through an ``on_event`` callback; nothing below the command line prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "NO_STAMP",
    "Event",
    "Excluded",
    "OnEvent",
    "Progress",
    "Skipped",
    "Stamp",
    "Warned",
    "stamp_of",
]


Stamp = tuple[int, int, int, int, int]
"""A file as it was read: (device, inode, size, mtime_ns, ctime_ns)."""


NO_STAMP: Stamp = (0, 0, -1, 0, 0)
"""Standard input or a pipe: nothing on disk that could be acted on later."""


def stamp_of(info: os.stat_result) -> Stamp:
    """The fields of a stat result that change whenever a file is replaced or written: the
    inode's ctime changes on every write, even one that sets mtime back."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


# The kinds of reasons a document is skipped for, the words each reason starts with; what
# follows is about the one document ("same file as a/b.txt", "unreadable: Permission denied").
SKIP_KINDS = (
    "binary",
    "dangling symbolic link",
    "empty",
    "malformed",
    "not a regular file",
    "same file",
    "symlink loop",
    "this command's own output",
    "too large",
    "unreadable directory",
    "unreadable",
)


BINARY = "binary (NUL bytes, no byte-order mark)"
"""Why a file that is not text is skipped, when nothing more is to be said of it (a file
that looks like UTF-16 without its byte-order mark is told how to be read)."""


@dataclass(frozen=True)
class Skipped:
    """A document left out of the run, and why (``binary``, ``empty``, ``unreadable: ...``)."""

    id: str
    reason: str

    @property
    def kind(self) -> str:
        """The kind of the reason, without what is particular to this document (``same
        file``, not ``same file as a/b.txt``): what skips are counted by."""
        for kind in SKIP_KINDS:
            if self.reason.startswith(kind):
                return kind
        return self.reason.split(" (")[0].split(":")[0]


@dataclass(frozen=True)
class Warned:
    """A document that was used, with something the user should know about it."""

    id: str
    message: str


@dataclass(frozen=True)
class Excluded:
    """A path a directory walk left out by a rule (``hidden``, ``excluded``, ``ignored`` by an
    ignore file, ``not included``): not a document the user asked for, so counted, not warned
    about one by one."""

    id: str
    rule: str


Event = Skipped | Warned | Excluded


OnEvent = Callable[[Event], None]


@dataclass
class Progress:
    """Callbacks a reader calls as it lists and reads files, or takes steps, or reads records
    a piece at a time (None: nothing is shown, so nothing need be counted)."""

    on_listed: Callable[[int], None] | None = None
    on_read: Callable[[], None] | None = None
    on_advance: Callable[[int], None] | None = None
    """``n`` more done at once (the records of a piece), where the whole is not counted."""
