"""Records -> json, jsonl or csv, written as they arrive; the choice of format.

Records are plain dicts with the documented, stable snake_case keys; fingerprints travel as hex
strings (JSON numbers lose precision past 2**53) and a value that was not computed is ``null``
(an empty CSV cell).
"""

from __future__ import annotations

import codecs
import csv
import functools
import io
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import IO, Any

from .atomic import write_bytes
from .visible import visible

__all__ = [
    "COSINE_DECIMALS",
    "Format",
    "Listing",
    "Output",
    "Record",
    "RecordWriter",
    "counted",
    "default_format",
    "indented",
    "json_number",
    "json_text",
    "member_item",
    "name_bytes",
    "to_json",
    "unicode_capable",
    "write_records",
]


Record = dict[str, Any]


class Format(str, Enum):
    """Output formats of every command."""

    TABLE = "table"
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"
    GROUPS = "groups"


class Listing(str, Enum):
    """What a dedupe report lists, one row or record each: clusters or pairs."""

    CLUSTERS = "clusters"
    PAIRS = "pairs"


@dataclass(frozen=True)
class Output:
    """Where a command's data goes and in which format (``-f`` and ``-o`` as one value).

    Attributes:
        format: as asked, or None for the default (:meth:`resolve`).
        path: a file written whole, or None (or ``-``) for standard output.
        listing: what a dedupe report lists, or None for the default (:meth:`lists`).
        null: names in the groups format end with NUL, not a newline (``-0``, for xargs).
    """

    format: Format | None = None
    path: str | None = None
    listing: Listing | None = None
    null: bool = False

    def lists(self, fmt: Format) -> Listing:
        """What a dedupe report in ``fmt`` lists: as asked, else clusters, in every format
        (``json`` holds both): a pipe gets what the screen shows, only its form changes."""
        return Listing.CLUSTERS if self.listing is None else self.listing

    @property
    def to_file(self) -> bool:
        """Whether the data goes to a file rather than standard output."""
        return self.path not in (None, "-")

    def resolve(self, stream: IO[str]) -> Format:
        """The format asked for, or the default for where the data goes (``stream``: standard
        output, whose being a terminal decides)."""
        return self.format or default_format(stream, self.path)


def default_format(stream: IO[str], path: str | None = None) -> Format:
    """Table for a person at a terminal, JSON Lines for a pipe or a file; for ``-o FILE``,
    what the file's extension says (.json, .csv, else JSON Lines)."""
    if path is not None:
        extension = os.path.splitext(path)[1].lower()
        return {".json": Format.JSON, ".csv": Format.CSV}.get(extension, Format.JSONL)
    return Format.TABLE if stream.isatty() else Format.JSONL


# Cosines are written to 12 decimals: two copies of a document score 1.0, not
# 0.9999999999999998, and nothing a threshold can tell apart is lost.
COSINE_DECIMALS = 12


def json_number(value: float) -> float | None:
    return None if math.isnan(value) else round(value, COSINE_DECIMALS)


ESTIMATE_DIGITS = 10
"""Significant digits of an estimate in machine output (an expected count, a recall): its last
bits depend on the order of a sum, which the machine's numpy may choose."""


def estimate_number(value: float) -> float | None:
    """An estimate for JSON or CSV, to :data:`ESTIMATE_DIGITS` significant digits (None: NaN)."""
    return None if math.isnan(value) else float(f"{value:.{ESTIMATE_DIGITS}g}")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 cluster``, ``2 clusters`` (``plural`` when adding an s will not do)."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {plural or noun + 's'}"


def _csv_cell(value: Any) -> Any:
    """A CSV cell: empty for null, ``true``/``false`` as JSON writes them (Python wrote
    ``True``), else the value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


# Characters that some line readers (Python's str.splitlines, editors) take as line breaks.
# JSON allows them raw inside strings; escaped, every JSON Lines record stays on one line.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})
_BREAKS = ("\x85", "\u2028", "\u2029")


def unicode_capable(out: IO[str]) -> bool:
    """True when ``out`` can carry any character (UTF-8, or a str buffer with no encoding)."""
    encoding = getattr(out, "encoding", None)
    return encoding is None or codecs.lookup(encoding).name.startswith("utf-")


def json_text(value: Any, out: IO[str], *, indent: int | None = None) -> str:
    return to_json(value, ascii_only=not unicode_capable(out), indent=indent)


def to_json(value: Any, *, ascii_only: bool, indent: int | None = None) -> str:
    # Under a locale that cannot encode every character (LANG=en_US.ISO-8859-1), escape
    # non-ASCII as JSON \u escapes rather than fail or write text that is not JSON.
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=False, indent=indent)
    return text.translate(_LINE_BREAKS)


def member_item(record: Record, *, ascii_only: bool) -> str:
    """``record`` as an item of an array that is a member of the top-level object, as
    ``json.dumps(indent=2)`` writes it there. A record of scalars (a pair) goes through the
    json module's C encoder, its item separator carrying the newline and the indentation;
    json's own indentation is pure Python, about ten times slower."""
    if record and not any(isinstance(value, (dict, list, tuple)) for value in record.values()):
        flat = _item_encoder(ascii_only).encode(record)
        if not ascii_only and any(brk in flat for brk in _BREAKS):
            flat = flat.translate(_LINE_BREAKS)
        return "    {\n      " + flat[1:-1] + "\n    }"
    return indented(to_json(record, ascii_only=ascii_only, indent=2), "    ")


@functools.cache
def _item_encoder(ascii_only: bool) -> json.JSONEncoder:
    """One encoder for every item: json.dumps with arguments makes one per call, which took
    most of an item's time."""
    return json.JSONEncoder(
        ensure_ascii=ascii_only, allow_nan=False, separators=(",\n      ", ": ")
    )


def indented(text: str, prefix: str) -> str:
    """``prefix`` before every line of JSON text (which has no blank line: a newline inside a
    string is escaped), as textwrap.indent would put it, faster."""
    return prefix + text.replace("\n", "\n" + prefix)


def _as_their_bytes(exc: UnicodeError) -> tuple[bytes, int]:
    """The error handler of :func:`name_bytes`: a surrogate U+DC80..U+DCFF is the byte Python
    read a name that is not UTF-8 with (``surrogateescape``), any other surrogate (a lone one
    from a JSON id) is encoded as itself (``surrogatepass``)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = bytearray()
    for char in exc.object[exc.start : exc.end]:
        code = ord(char)
        escaped = 0xDC80 <= code <= 0xDCFF
        out += bytes([code - 0xDC00]) if escaped else char.encode("utf-8", "surrogatepass")
    return bytes(out), exc.end


codecs.register_error("simhash-names", _as_their_bytes)


def name_bytes(text: str) -> bytes:
    """``text`` as UTF-8, with each name that is not UTF-8 its own bytes again: exact, as
    ``-0`` writes names, where an escape such as ``\\udcff`` would read the same as a file
    really named with those six characters."""
    return text.encode("utf-8", "simhash-names")


class RecordWriter:
    """json / jsonl / csv, written as records arrive: a million fingerprints never wait in a
    list. The json form is the same bytes as ``json.dumps(all_records, indent=2)``."""

    def __init__(self, fmt: Format, out: IO[str]) -> None:
        self.fmt, self.out = fmt, out
        self.count = 0
        self.csv: csv.DictWriter[str] | None = None
        self._rows = io.StringIO()  # CSV rows, until written as bytes
        self.ascii_only = not unicode_capable(out)
        self.on_terminal = out.isatty()

    def write_lines(self, lines: str, count: int) -> None:
        """``count`` JSON Lines made elsewhere (as :meth:`write` would make them), at once."""
        self.out.write(lines)
        self.out.flush()
        self.count += count

    def write(self, records: Iterable[Record]) -> None:
        if self.fmt is Format.JSONL:
            # One write per batch of records: a write per line costs more than the JSON.
            lines = [to_json(record, ascii_only=self.ascii_only) + "\n" for record in records]
            self.out.write("".join(lines))
            # Now, not at exit: a reader gone (``| head``) must surface while the command can
            # still report it.
            self.out.flush()
            self.count += len(lines)
            return
        for record in records:
            if self.fmt is Format.JSON:
                item = indented(to_json(record, ascii_only=self.ascii_only, indent=2), "  ")
                self.out.write(("[\n" if self.count == 0 else ",\n") + item)
            elif self.fmt is Format.CSV:
                if self.csv is None:
                    # RFC 4180 line ends: the csv module then quotes fields holding \r or \n.
                    self.csv = csv.DictWriter(
                        self._rows, fieldnames=list(record), lineterminator="\r\n"
                    )
                    self.csv.writeheader()
                row = {k: _csv_cell(v) for k, v in record.items()}
                if self.on_terminal:  # for a person: no name is terminal control
                    row = {k: visible(v) if isinstance(v, str) else v for k, v in row.items()}
                self.csv.writerow(row)
            self.count += 1
        if self.fmt is Format.CSV:
            self._write_rows()

    def _write_rows(self) -> None:
        """The CSV rows made so far: as bytes in which every name is exact (:func:`name_bytes`)
        where the output is UTF-8 and not a terminal, else as text (a terminal, a str buffer,
        or a locale that cannot carry every character, whose stream escapes what it cannot
        encode)."""
        rows = self._rows.getvalue()
        self._rows.seek(0)
        self._rows.truncate()
        takes_bytes = hasattr(self.out, "write_bytes") or hasattr(self.out, "buffer")
        if self.out.isatty() or not takes_bytes or self.ascii_only:
            self.out.write(rows)
        else:
            write_bytes(self.out, name_bytes(rows))

    def close(self) -> None:
        if self.fmt is Format.JSON:
            self.out.write("[]\n" if self.count == 0 else "\n]\n")


def write_records(records: Sequence[Record], fmt: Format, out: IO[str]) -> None:
    """json / jsonl / csv writer shared by every command."""
    writer = RecordWriter(fmt, out)
    writer.write(records)
    writer.close()
