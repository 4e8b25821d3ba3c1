"""Nothing a command writes may be something it reads: every output is checked, by identity,
against every input before any work is done.

A command declares what it will write (``-o``, ``--plan``, ``--script``, the journal, the
index) and what it reads (files named, directories scanned, records, the index and its
``-wal``/``-shm``, the plan, the journal, the files a plan names). An output that is one of
the inputs under any spelling (``./a``, ``d/../a``, a symbolic or hard link), an existing file
inside a scanned directory (it would be read as a document, then replaced), or two outputs that
are one file, are refused in one line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import UsageError
from ..io.places import identity, inside, spot
from ..io.sources.files import STDIN
from .settings import Source

__all__ = ["Reads", "refuse_output_over_input", "refuse_overwrites", "sidecars"]


@dataclass(frozen=True)
class Reads:
    """What a command reads.

    Attributes:
        files: files read (records, the plan, the journal, an index and its sidecars, the
            files a plan names), by path; those that do not exist are ignored.
        trees: paths scanned (directories walked, files named): an existing output anywhere
            inside one would be read as a document.
    """

    files: tuple[str, ...] = ()
    trees: tuple[str, ...] = ()


def sidecars(db: str) -> tuple[str, ...]:
    """An SQLite database and the files it keeps beside itself."""
    return (db, f"{db}-wal", f"{db}-shm", f"{db}-journal")


def _written(writes: Mapping[str, str | None]) -> list[tuple[str, str, str]]:
    """Each output: its name, its path as given, and as it will be written (absolute and
    normalised as the writers normalise it: ``d/missing/../f`` is ``d/f``)."""
    return [
        (name, path, os.path.abspath(path))
        for name, path in writes.items()
        if path is not None and path != STDIN
    ]


def _one_file(path: str, other: str) -> bool:
    """True when writing ``path`` would replace ``other`` (or the file ``other`` names)."""
    mine_spot = spot(path)
    if mine_spot.directory is not None and mine_spot == spot(other):
        return True
    mine = identity(path)
    return mine is not None and mine == identity(other)


def refuse_overwrites(writes: Mapping[str, str | None], reads: Reads) -> None:
    """Refuse any output that would replace an input, or another output.

    Args:
        writes: each output's parameter name -> its path (None or ``-``: not a file).
        reads: what the command reads.

    Raises:
        UsageError: naming the output's parameter and what it would replace.
    """
    outputs = _written(writes)
    trees = [(tree, identity(tree)) for tree in reads.trees if tree != STDIN]
    for position, (name, path, written) in enumerate(outputs):
        for other_name, other, other_written in outputs[position + 1 :]:
            if _one_file(written, other_written):
                raise UsageError(
                    f"{{{name}}} {path} and {{{other_name}}} {other} are one file: give each "
                    "its own",
                    parameters=(name, other_name),
                )
        for read in reads.files:
            if read != STDIN and _one_file(written, read):
                shown = "" if read == path else f" ({read})"
                raise UsageError(
                    f"{{{name}}} {path} is also an input{shown}: it would be replaced",
                    parameters=(name,),
                )
        if identity(written) is None:
            continue  # a new file: made after the inputs were listed, so never read
        for tree, place in trees:
            if place is not None and _inside_tree(written, tree, place):
                raise UsageError(
                    f"{{{name}}} {path} is also an input (it lies in {tree}, which is read): it "
                    "would be read as a document and then replaced; write it elsewhere",
                    parameters=(name,),
                )


def _inside_tree(path: str, tree: str, place: tuple[int, int]) -> bool:
    if os.path.isdir(tree):
        return inside(os.path.dirname(os.path.abspath(path)), [place])
    return _one_file(path, tree)


def refuse_output_over_input(
    source: Source, outputs: dict[str, str | None], *, also: tuple[str, ...] = ()
) -> None:
    """An output (``-o FILE``, ``--plan FILE``) that is, under any spelling, a file the command
    reads (named, inside a scanned directory, or ``also``: an index and its sidecars) or
    another output would replace it: refused before any work.

    Raises:
        UsageError: ``output FILE is also an input: it would be replaced``.
    """
    named = tuple(source.input_paths())
    refuse_overwrites(outputs, Reads(files=named + also, trees=tuple(source.input_trees())))
