"""The keep rule: which member of a cluster stays, as every command that keeps one names it
(dedupe and index dedupe choose by it, apply acts on the plan it made). Declarations only,
so that a command's help reads them without the arrays that apply them
(:mod:`~simhash_cli.app.keep.rule`)."""

from __future__ import annotations

from enum import Enum

__all__ = ["DEFAULT_KEEP", "FILE_RULES", "Keep"]


class Keep(str, Enum):
    """Which member of a cluster is kept, everywhere it shows (the table, the groups, the
    plan, the report, a dataset's records); the path breaks every tie."""

    CENTRAL = "central"
    """The member the most of its cluster are near-duplicates of (the search's own choice)."""
    OLDEST = "oldest"
    """Earliest modification time."""
    NEWEST = "newest"
    """Latest modification time."""
    LONGEST = "longest"
    """Most bytes."""
    SHORTEST_PATH = "shortest-path"
    """Fewest characters in the path."""
    FIRST = "first"
    """First in the order read (files: sorted paths, in the order given; records: input
    order)."""


DEFAULT_KEEP = Keep.CENTRAL
"""The keep rule unless one is asked: the default's one place, for every command."""

FILE_RULES = (Keep.OLDEST, Keep.NEWEST, Keep.SHORTEST_PATH)
"""Rules that compare files as this run read them (their times, their paths)."""
