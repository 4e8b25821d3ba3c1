"""Paths in a table cell: whole when there is room, else shortened in the middle, never folded.

A table at 80 columns that folds ``shipping-policy-copy.txt`` into ``shipping-policy-c`` and
``opy.txt`` leaves two half names on two lines. Here a path too long for its cell keeps its
start and its end (the file name, whole while it fits) with ``…`` between them, as a file
manager shortens a name; the directory every row shares is dropped first (see
:func:`shared_directory`), by the caller.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text

from .visible import visible

__all__ = ["ELLIPSIS", "Elided", "elide", "shared_directory"]

ELLIPSIS = "…"

# A cell narrower than this shows too little of a name to tell it from its neighbours: the
# table squeezes other columns first.
_FEWEST_CELLS = 12


def _head(text: str, cells: int) -> str:
    """The longest start of ``text`` that fits ``cells`` terminal cells."""
    used = 0
    for end, char in enumerate(text):
        used += cell_len(char)
        if used > cells:
            return text[:end]
    return text


def _tail(text: str, cells: int) -> str:
    """The longest end of ``text`` that fits ``cells`` terminal cells."""
    return _head(text[::-1], cells)[::-1]


def elide(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` terminal cells: itself when it fits, else its start and
    its end around ``…``, the end holding the whole last path component when it fits and
    about two thirds of what is left. A bare name too long for the cell is shortened in its
    own middle (``shipping…icy-revised.txt``: its start tells it from its neighbours, its end
    says what it is); a path whose last component does not fit alone keeps the end of it
    after ``…`` (what comes before is cut, directories first)."""
    if cell_len(text) <= cells:
        return text
    if cells <= 1:
        return ELLIPSIS[:cells]
    room = cells - 1  # one cell for the ellipsis
    if "/" not in text:
        tail = _tail(text, (2 * room) // 3)
        return _head(text, room - cell_len(tail)) + ELLIPSIS + tail
    name = text[text.rstrip("/").rfind("/") :] if "/" in text.rstrip("/") else text
    if cell_len(name) >= room:
        return ELLIPSIS + _tail(name, room)
    tail_cells = max(cell_len(name), (2 * room) // 3)
    tail = _tail(text, tail_cells)
    return _head(text, room - cell_len(tail)) + ELLIPSIS + tail


class Elided:
    """Lines of user text (paths, ids) for a table cell: each made visible (no terminal
    control), shortened by :func:`elide` to the width the table gives the cell."""

    def __init__(self, lines: str | Sequence[str], style: str = "") -> None:
        self.lines = [visible(line) for line in ([lines] if isinstance(lines, str) else lines)]
        self.style = style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((cell_len(line) for line in self.lines), default=0)
        return Measurement(min(widest, _FEWEST_CELLS), widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        for line in self.lines:
            yield Text(elide(line, options.max_width), style=self.style, no_wrap=True)


def shared_directory(ids: Sequence[str]) -> str:
    """The directory every id lies under (``sample_corpus/``), or "" when there is none."""
    if not ids or any(not doc_id or doc_id == "-" for doc_id in ids):
        return ""
    # Character-wise on purpose: cut back to the last "/" it reaches, which is the directory.
    prefix = os.path.commonprefix(list(ids))  # noqa: RUF071
    cut = prefix.rfind("/")
    return prefix[: cut + 1] if cut >= 0 else ""
