"""Where a command's data meets Rich: the console it is written with (a reader gone is a
broken pipe, a file or a pipe is never folded) and the pieces that several tables share."""

from __future__ import annotations

import errno
import math
import os
import re
from typing import IO, Any, Literal

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .visible import visible

__all__ = [
    "PLAIN",
    "colours",
    "cosine_text",
    "data_console",
    "pair_numbers",
    "print_table",
    "wrapped_at_spaces",
]

PLAIN = "SIMHASH_PLAIN"
"""Set by ``--color never`` (for this process and its workers): no escape at all, where
NO_COLOR alone drops the colours and keeps bold and italic."""


def colours() -> Literal["auto"] | None:
    """The colour system a console is made with: none under ``--color never``."""
    return None if os.environ.get(PLAIN) else "auto"


class _DataConsole(Console):
    """A console for a command's data: a reader gone (``| head``) is a BrokenPipeError for the
    command to end with 141, as every other format does (Rich's own handler exits 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


class _Trimmed:
    """A file or a pipe that a table is written to: each line without the spaces Rich pads
    it with to the table's width (a diff or a grep of the file would meet them), written
    whole lines at a time."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.pending = ""

    def write(self, text: str) -> int:
        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        if lines:
            self.out.write("".join(_unpadded(line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.out.write(self.pending)
            self.pending = ""
        self.out.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.out.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.out, "encoding", None) or "utf-8"


_STYLE = re.compile(r"\x1b\[[0-9;]*m")
_PADDING = re.compile(r"(?: |\x1b\[[0-9;]*m)+$")


def _unpadded(line: str) -> str:
    """``line`` without the spaces at its end, those among the style codes that end it too
    (``--color always``: a padded cell is styled), the codes kept."""
    end = _PADDING.search(line)
    if end is None:
        return line
    return line[: end.start()] + "".join(_STYLE.findall(end.group(0)))


def data_console(out: IO[str]) -> Console:
    """A console that writes a command's data to ``out`` (a terminal, a file or a pipe)."""
    if out.isatty():  # the stream's own word: colours forced (--color always) make none
        return _DataConsole(file=out, highlight=False, soft_wrap=False, color_system=colours())
    # Written to a file or a pipe: no terminal to fit, so never fold a path in a cell, and no
    # padding at the end of a line.
    trimmed: Any = _Trimmed(out)
    console = _DataConsole(file=trimmed, highlight=False, soft_wrap=False, color_system=colours())
    console.width = 4096
    return console


def print_table(console: Console, table: Table) -> None:
    """``table`` with its title and its caption as lines of their own, wrapped at the
    console's width: Rich wraps them at the table's, and a narrow table folded its title after
    a few words (``1 near-duplicate pair (paths`` / ``under sp/)``), even into a file."""
    title, caption = table.title, table.caption
    table.title = table.caption = None
    if title:
        console.print(title if isinstance(title, Text) else Text(str(title)))
    console.print(table)
    if caption:
        console.print(caption if isinstance(caption, Text) else Text(str(caption)))


def wrapped_at_spaces(line: str, width: int) -> str:
    """``line`` broken into lines of at most ``width`` terminal cells (wide characters count
    two), each break one space made a newline and nothing else changed: a word wider than a
    line stays whole on a line of its own (the terminal folds it, and a path copied from it
    still works)."""
    if cell_len(line) <= width:
        return line
    done: list[str] = []
    current = ""
    for word in line.split(" "):
        candidate = f"{current} {word}" if current else word
        if current and cell_len(candidate) > width:
            done.append(current)
            current = word
        else:
            current = candidate
    done.append(current)
    return "\n".join(done)


def cosine_text(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.3f}"


def pair_numbers(
    ids: tuple[str, str],
    fingerprints: tuple[str, str],
    hamming: int,
    bits: int,
    estimate: float,
    cosine: float | None,
) -> Table:
    """Two documents' ids and fingerprints, their Hamming distance and both cosines, a row
    each (for compare and explain, which add rows of their own)."""
    numbers = Table(show_header=False, box=None)
    numbers.add_column(style="bold", no_wrap=True)
    numbers.add_column(overflow="fold")
    for name, doc_id, fingerprint in zip("AB", ids, fingerprints, strict=True):
        numbers.add_row(name, Text(f"{visible(doc_id)}  {fingerprint}"))
    numbers.add_row("hamming distance", f"{hamming} of {bits} bits")
    numbers.add_row(
        "estimated cosine", f"{estimate:.3f}  = cos(pi * {hamming} / {bits}), from the distance"
    )
    numbers.add_row("true cosine", cosine_text(cosine))
    return numbers
