"""Record inputs in pieces that are parsed on their own, in a worker process or here: blocks of
lines of a JSON Lines file (or of standard input), batches of rows of a Parquet file.

Reading a piece's lines is the only work left to the process that lists them; parsing the JSON,
tokenizing and fingerprinting happen wherever the piece goes. A piece parses exactly as the
whole input's reader would (:func:`~simhash_cli.io.sources.records.parse_lines`, the same line
numbers and errors) and says where each of its records was, so that an id given in two pieces
is still refused naming both places.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from . import parquet
from .fields import DEFAULT_FIELDS, Fields
from .files import STDIN
from .records import (
    OnBadLine,
    Record,
    RecordKind,
    UniqueIds,
    bounded_lines,
    open_text,
    parse_lines,
)
from .shards import shards_of

__all__ = ["BatchPiece", "LinePiece", "Piece", "Placed", "pieces"]

LINES_PER_PIECE = 2_000
"""Lines (records) a piece holds: a few megabytes of text, about 0.2 s of work and 100 MB of
working memory (larger pieces are barely faster: each resolves its words once)."""


class Placed(UniqueIds):
    """:class:`UniqueIds` for one piece, which also keeps each record's line (or row)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[int] = []

    def check(self, record: Record, where: str) -> None:
        super().check(record, where)
        self.lines.append(int(where.rpartition(":")[2]))


@dataclass(frozen=True)
class LinePiece:
    """Lines ``first_line`` onwards of the JSON Lines input ``name``, as read (None for a
    line longer than the limit, passed over unread)."""

    name: str
    first_line: int
    lines: list[str | None]

    def parse(
        self,
        kind: RecordKind,
        max_line: int | None,
        on_bad_line: OnBadLine,
        placed: Placed,
        fields: Fields,
    ) -> list[Record]:
        """The piece's records, as the file's reader gives them."""
        return parse_lines(
            self.lines,
            self.name,
            self.first_line,
            kind,
            on_bad_line,
            max_line=max_line,
            unique=placed,
            fields=fields,
        )


@dataclass(frozen=True)
class BatchPiece:
    """Rows ``first_row`` onwards of the Parquet input ``name``: a batch of them as Arrow
    decoded them (:func:`.parquet.batches`, the columns ``kind`` and the fields need)."""

    name: str
    first_row: int
    batch: Any

    def parse(
        self,
        kind: RecordKind,
        max_line: int | None,
        on_bad_line: OnBadLine,
        placed: Placed,
        fields: Fields,
    ) -> list[Record]:
        """The batch's records, as the file's reader gives them (rows numbered)."""
        return list(
            parquet.records_of(
                self.name, self.batch, self.first_row, kind, fields=fields,
                on_bad_line=on_bad_line, unique=placed, max_line=max_line,
            )
        )  # fmt: skip


Piece = LinePiece | BatchPiece


def pieces(
    source: str,
    max_line: int | None,
    lines_per_piece: int | None = None,
    *,
    kind: RecordKind = "texts",
    fields: Fields = DEFAULT_FIELDS,
) -> Iterator[Piece]:
    """The pieces of ``source`` (a file, ``-``, or shards: :mod:`.shards`) in order: batches
    of rows for Parquet (the columns ``kind`` and ``fields`` need, decoded here, a batch at a
    time however large a row group is), else blocks of ``lines_per_piece`` lines
    (LINES_PER_PIECE by default), read as they are asked for (memory holds a piece or a few).

    Raises:
        PathNotFoundError, InputError: the input cannot be opened, or is not UTF-8 (naming
            the line).
    """
    for shard in shards_of(source):
        if parquet.is_parquet(shard):
            first = 1
            for batch in parquet.batches(
                shard, kind, fields, rows=lines_per_piece or parquet.ROWS_PER_BATCH
            ):
                yield BatchPiece(shard, first, batch)
                first += batch.num_rows
        else:
            yield from _line_pieces(shard, max_line, lines_per_piece or LINES_PER_PIECE)


def _line_pieces(source: str, max_line: int | None, lines_per_piece: int) -> Iterator[LinePiece]:
    name = "<stdin>" if source == STDIN else source
    with open_text(source) as handle:
        first, lines = 1, []
        try:
            for line in bounded_lines(handle, max_line):
                lines.append(line)
                if len(lines) == lines_per_piece:
                    yield LinePiece(name, first, lines)
                    first, lines = first + len(lines), []
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}:{first + len(lines)}: not UTF-8 ({exc.reason})") from None
        if lines:
            yield LinePiece(name, first, lines)
