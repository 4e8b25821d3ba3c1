"""What ``simhash fingerprint`` wrote, read back in any of its data formats: JSON Lines, a
JSON array (``-f json``) or CSV (``-f csv``), told apart by their first characters; each record
checked as :func:`.records.fingerprint_record` checks it. A table, which is for reading, is
refused with the way to write a file that reads back.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from typing import Any

from ...errors import InputError
from ..opening import open_file
from .files import DEFAULT_MAX_BYTES, STDIN
from .records import (
    FingerprintRecord,
    OnBadLine,
    fingerprint_record,
    json_records,
    open_text,
    parsed_values,
    reject_constant,
)

__all__ = ["read_fingerprints"]


def read_fingerprints(
    source: str, on_bad_line: OnBadLine = None, max_line: int | None = DEFAULT_MAX_BYTES
) -> Iterator[FingerprintRecord]:
    """Read back what ``simhash fingerprint`` writes, in any of its data formats: JSON Lines,
    a JSON array (``-f json``) or CSV (``-f csv``), told apart by their first characters.

    ``on_bad_line``: as for :func:`read_vectors`.

    Raises:
        InputError: a malformed record, naming file and line (or item); a table, which is for
            reading and cannot be read back.
    """
    kind = _fingerprint_format(source)
    if kind == "jsonl":
        return json_records(source, fingerprint_record, on_bad_line, max_line)
    values = _json_array(source) if kind == "json" else _csv_rows(source)
    return parsed_values(values, fingerprint_record, on_bad_line)


def _head(source: str) -> str:
    """The first few KB of ``source`` as text, without consuming standard input."""
    try:
        if source == STDIN:
            peek = getattr(sys.stdin.buffer, "peek", None)
            head = peek(_SNIFF)[:_SNIFF] if peek is not None else b""
        else:
            with open_file(source, stream=True) as handle:
                head = handle.read(_SNIFF)
    except OSError:
        return ""  # reported as it is opened to be read
    return head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")


_SNIFF = 4096


def _fingerprint_format(source: str) -> str:
    """``jsonl``, ``json`` (an array) or ``csv``, from the first characters of ``source``."""
    head = _head(source)
    first = head.split("\n", 1)[0]
    if head.startswith("["):
        return "json"
    if not head.startswith("{") and first.split(",")[:2] == ["id", "fingerprint"]:
        return "csv"
    if head and not head.startswith("{") and "fingerprint" in first:
        name = "<stdin>" if source == STDIN else source
        raise InputError(
            f"{name} looks like the table of 'simhash fingerprint', which is for reading: "
            "write it with -f jsonl (or json, or csv) to read it back"
        )
    return "jsonl"


def _json_array(source: str) -> Iterator[tuple[str, int, Any]]:
    """(where, item number, value) for each item of a JSON array (``fingerprint -f json``)."""
    name = "<stdin>" if source == STDIN else source
    with open_text(source) as handle:
        try:
            items = json.load(handle, parse_constant=reject_constant)
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}: not UTF-8 ({exc.reason})") from None
        except (ValueError, RecursionError) as exc:
            raise InputError(f"{name}: invalid JSON: {exc}") from None
    if not isinstance(items, list):
        raise InputError(f"{name}: a JSON array of fingerprint records was expected")
    for number, item in enumerate(items, start=1):
        yield f"{name} item", number, item


def _csv_rows(source: str) -> Iterator[tuple[str, int, Any]]:
    """(where, line number, record) for each row of ``fingerprint -f csv``, numbers as
    numbers."""
    name = "<stdin>" if source == STDIN else source
    # Names that are not UTF-8 are written as their bytes: read back as the same names.
    with open_text(source, newline="", errors="surrogateescape") as handle:
        reader = csv.DictReader(handle)
        try:
            for row in reader:
                yield (
                    name,
                    reader.line_num,
                    {
                        key: int(value) if key in _CSV_NUMBERS and value.isdigit() else value
                        for key, value in row.items()
                        if key is not None
                    },
                )
        except csv.Error as exc:
            raise InputError(f"{name}:{reader.line_num}: not CSV ({exc})") from None


_CSV_NUMBERS = ("bits", "seed", "features")
