"""Records from JSON Lines: ``--texts`` ({id, text}), ``--vectors`` ({id, features}) and the
fingerprint records of ``simhash fingerprint`` read back, checked line by line (a fingerprint
file in its other formats is :mod:`.fingerprints`').

A malformed line stops the run with ``FILE:LINE: what is wrong``, or, given an ``on_bad_line``
callback, is handed to it and left out. Weights must be finite numbers; ids are strings or
numbers (a missing id is the line's ``FILE:LINE``).
"""

from __future__ import annotations

import collections
import functools
import io
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, AnyStr, TypeVar

from ...core.corpus import NumberId, Settings
from ...core.sketch.fingerprint import from_hex
from ...errors import InputError, MalformedLineError, PathNotFoundError, SimhashError
from ..opening import open_file
from .fields import DEFAULT_FIELDS, MISSING, Fields
from .files import DEFAULT_MAX_BYTES, STDIN, os_reason
from .reads import opened
from .shards import compression_of, open_binary

__all__ = [
    "FingerprintRecord",
    "IdPlaces",
    "OnBadLine",
    "Record",
    "RecordKind",
    "TextRecord",
    "UniqueIds",
    "VectorRecord",
    "block_lines",
    "bounded_lines",
    "duplicate_ids",
    "fingerprint_record",
    "json_lines",
    "json_records",
    "open_text",
    "parse_lines",
    "parse_value",
    "parsed_values",
    "read_texts",
    "read_vectors",
    "record_parser",
    "reject_constant",
    "repeated_id",
    "too_long",
]

R = TypeVar("R")


@dataclass(frozen=True)
class VectorRecord:
    """One ``--vectors`` line: a document id and its weighted features, in the given order."""

    id: str
    features: dict[str, float]


@dataclass(frozen=True)
class FingerprintRecord:
    """One record of ``simhash fingerprint`` output, read back for ``dedupe --fingerprints``."""

    id: str
    fingerprint: int
    settings: Settings
    features: int


@dataclass(frozen=True)
class TextRecord:
    """One ``--texts`` line: a document id and its text."""

    id: str
    text: str


Record = VectorRecord | FingerprintRecord | TextRecord


RecordKind = str
"""``vectors``, ``fingerprints`` or ``texts``: which records a JSON Lines input holds."""


@contextmanager
def open_text(source: str, newline: str | None = None, errors: str = "strict") -> Iterator[IO[str]]:
    """A UTF-8 text stream (a leading BOM dropped) over a file (decompressed if its name ends
    in ``.gz`` or ``.zst``) or stdin; stdin stays open. ``newline`` and ``errors`` as for
    :func:`open` (``""`` for CSV, whose fields may hold line ends)."""
    if compression_of(source) is not None:
        with open_binary(source) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors=errors, newline=newline)
            try:
                yield text
            finally:
                text.detach()
        return
    if source == STDIN:
        buffer = sys.stdin.buffer
        wrapper = io.TextIOWrapper(buffer, encoding="utf-8-sig", errors=errors, newline=newline)
        try:
            yield wrapper
        finally:
            # Detached, so that stdin stays open; a reading left unfinished and closed later
            # may find stdin closed already, with nothing left to keep open.
            if not buffer.closed:
                wrapper.detach()
        return
    try:
        # Opened outside the with-block so that only opening errors are reported as such.
        raw = open_file(source, stream=True)
    except FileNotFoundError:
        raise PathNotFoundError(f"no such file or directory: {source}") from None
    except OSError as exc:
        raise InputError(f"cannot read {source}: {os_reason(exc)}") from None
    opened(source, os.fstat(raw.fileno()))  # what was read, for a dataset's check
    with io.TextIOWrapper(raw, encoding="utf-8-sig", errors=errors, newline=newline) as handle:
        yield handle


def reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number (weights must be finite)")


# What to do with a malformed line of JSON input: None stops the run (the error names the file
# and the line); a function is given the error and the run goes on without that line.
OnBadLine = Callable[[MalformedLineError], None] | None


def json_lines(
    source: str, on_bad_line: OnBadLine = None, max_line: int | None = DEFAULT_MAX_BYTES
) -> Iterator[tuple[str, int, Any]]:
    """(where, line number, parsed value) for each non-blank line; errors name file:line. A
    line longer than ``max_line`` characters is a malformed line, passed over without ever
    being held whole: memory stays bounded whatever the input."""
    name = "<stdin>" if source == STDIN else source
    with open_text(source) as handle:
        lineno = 0
        try:
            for lineno, line in enumerate(bounded_lines(handle, max_line), start=1):
                if line is None:
                    too_long(f"{name}:{lineno}", max_line, on_bad_line)
                    continue
                value = _json_value(name, lineno, line, on_bad_line)
                if value is not _NOTHING:
                    yield name, lineno, value
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}:{lineno + 1}: not UTF-8 ({exc.reason})") from None


def bounded_lines(handle: IO[AnyStr], limit: int | None) -> Iterator[AnyStr | None]:
    """The lines of ``handle`` (text or bytes); None for each line over ``limit`` characters
    (or bytes), read past a chunk at a time and dropped."""
    if limit is None:
        yield from handle
        return
    while line := handle.readline(limit + 1):
        newline = "\n" if isinstance(line, str) else b"\n"
        if line.endswith(newline) or len(line) <= limit:  # (a newline is not counted)
            yield line
            continue
        while not line.endswith(newline):  # the rest of the long line, never kept
            line = handle.readline(1 << 20)
            if not line:
                break
        yield None


_NOTHING = object()

_DECODER = json.JSONDecoder(parse_constant=reject_constant)
"""The one decoder of every line (``json.loads`` with a keyword makes a decoder for each
call: a third of the time of parsing a line of 2 KB)."""


def _json_value(name: str, lineno: int, line: str, on_bad_line: OnBadLine) -> Any:
    """One line's JSON value; _NOTHING for a blank line, or a malformed one that is skipped."""
    if not line.strip():
        return _NOTHING
    try:
        if line.startswith("\ufeff"):  # (json.loads names the byte-order mark)
            return json.loads(line, parse_constant=reject_constant)
        return _DECODER.decode(line)
    except (ValueError, RecursionError) as exc:
        error = MalformedLineError(f"{name}:{lineno}", f"invalid JSON: {exc}")
        if on_bad_line is None:
            raise error from None
        on_bad_line(error)
        return _NOTHING


def parse_value(
    kind: RecordKind, name: str, lineno: int, value: Any, fields: Fields = DEFAULT_FIELDS
) -> Record:
    """One parsed JSON value (or a row of another format, as a dict) as a ``kind`` record, its
    text (or features) and id where ``fields`` says.

    Raises:
        MalformedLineError: not such a record, naming ``name:lineno``.
    """
    return _PARSERS[kind](name, lineno, value, fields)


def block_lines(
    raw: Sequence[bytes | None], name: str, first_line: int, *, first_block: bool
) -> list[str | None]:
    """A block of a JSON Lines file, read as its lines of bytes (each ending in LF, None for
    one too long to read), decoded and split as :func:`open` splits a text file (universal
    newlines; a BOM dropped from the file's first line).

    Raises:
        InputError: bytes that are not UTF-8, naming the line.
    """
    lines: list[str | None] = []
    for k, line in enumerate(raw):
        if line is None:
            lines.append(None)
            continue
        try:
            text = line.decode("utf-8-sig" if first_block and k == 0 else "utf-8")
        except UnicodeDecodeError as exc:
            before = line[: exc.start]
            at = first_line + len(lines) + before.count(b"\r") - before.count(b"\r\n")
            raise InputError(f"{name}:{at}: not UTF-8 ({exc.reason})") from None
        lines.extend(io.StringIO(text, newline=None) if "\r" in text else (text,))
    return lines


def too_long(where: str, limit: int | None, on_bad_line: OnBadLine) -> None:
    error = MalformedLineError(where, f"longer than {limit:,} characters (--max-bytes)")
    if on_bad_line is None:
        raise error
    on_bad_line(error)


def parse_lines(
    lines: Sequence[str | None],
    name: str,
    first_line: int,
    kind: RecordKind,
    on_bad_line: OnBadLine = None,
    *,
    max_line: int | None = None,
    unique: UniqueIds | None = None,
    fields: Fields = DEFAULT_FIELDS,
) -> list[Record]:
    """The records of ``lines`` (line ``first_line`` onwards of ``name``), as the file's reader
    (:func:`read_vectors`, :func:`read_fingerprints`, :func:`read_texts`) would give them. A
    line that is None, or longer than ``max_line`` characters, was too long to be read.
    ``unique`` is shown every record with its place (a fresh :class:`UniqueIds` by default);
    ``fields`` says where the text (or features) and the id are."""

    def values() -> Iterator[tuple[str, int, Any]]:
        for lineno, line in enumerate(lines, start=first_line):
            if line is None or (max_line is not None and len(line.rstrip("\r\n")) > max_line):
                too_long(f"{name}:{lineno}", max_line, on_bad_line)
                continue
            value = _json_value(name, lineno, line, on_bad_line)
            if value is not _NOTHING:
                yield name, lineno, value

    return list(parsed_values(values(), record_parser(kind, fields), on_bad_line, unique))


def record_parser(kind: RecordKind, fields: Fields) -> Callable[[str, int, Any], Record]:
    """:func:`parse_value` of ``kind`` with ``fields``, as :func:`parsed_values` calls it."""
    return lambda where, lineno, value: parse_value(kind, where, lineno, value, fields)


class UniqueIds:
    """The ids given so far, each with where it was first given: an id given twice (``dup``
    twice, or ``1`` and ``"1"``, which are one id) is refused naming both places, since its
    pairs could not be told apart, nor a document from itself."""

    def __init__(self) -> None:
        self._first: dict[object, str] = {}

    def check(self, record: Record, where: str) -> None:
        """Raises: MalformedLineError: the id was given before, at the place it names.
        (Fingerprints of one id made with other settings are left for the check of settings,
        which says more.)"""
        key = (record.id, record.settings) if isinstance(record, FingerprintRecord) else record.id
        first = self._first.setdefault(key, where)
        if first != where:
            raise repeated_id(record.id, where, first)


def repeated_id(doc_id: str, where: str, first: str) -> MalformedLineError:
    """The error for ``doc_id`` given at ``where`` after ``first``."""
    return MalformedLineError(
        where,
        f"the id {doc_id!r} was already given at {first} (ids must be unique; leave "
        '"id" out to have FILE:LINE as the id)',
    )


class IdPlaces(UniqueIds):
    """Shown records as :class:`UniqueIds` is, it collects the places of one id instead of
    refusing repeats: where an id given twice across parts of an input read in parallel was
    given (each part could check only its own records)."""

    def __init__(self, wanted: str) -> None:
        super().__init__()
        self.wanted = wanted
        self.places: list[str] = []

    def check(self, record: Record, where: str) -> None:
        if record.id == self.wanted:
            self.places.append(where)


def duplicate_ids(ids: Sequence[str]) -> str | None:
    """The first id that appears twice in ``ids``, or None (for input read in parts, whose
    readers could each only check their own)."""
    if len(set(ids)) == len(ids):  # the usual answer, found without a Python step per id
        return None
    counts = collections.Counter(ids)
    return next(doc_id for doc_id in ids if counts[doc_id] > 1)


def _record_id(where: str, lineno: int, value: Any, fields: Fields) -> str:
    """The record's id: its ``id`` (or ``--id-field``), else where it is (``FILE:LINE``)."""
    if fields.id is None:
        if "id" not in value:
            return f"{where}:{lineno}"
        raw, named = value["id"], '"id"'
    else:
        raw, named = fields.id.get(value), f"{fields.id} (--id-field)"
        if raw is MISSING or raw is None:
            raise MalformedLineError(f"{where}:{lineno}", f"no id at {named}")
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise MalformedLineError(f"{where}:{lineno}", f"{named} must be a string or an integer")
    return NumberId(raw) if isinstance(raw, int) else raw


def _weight(where: str, lineno: int, key: str, raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise MalformedLineError(
            f"{where}:{lineno}", f"weight of {key!r} must be a number, not {raw!r}"
        )
    try:
        weight = float(raw)
    except OverflowError:
        weight = float("inf")
    if weight != weight or weight in (float("inf"), float("-inf")):
        shown = raw if isinstance(raw, float) else f"{str(raw)[:20]}..."
        raise MalformedLineError(f"{where}:{lineno}", f"weight of {key!r} is not finite: {shown}")
    return weight


def read_vectors(
    source: str,
    on_bad_line: OnBadLine = None,
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
    *,
    unique: UniqueIds | None = None,
) -> Iterator[VectorRecord]:
    """Read ``--vectors`` JSON Lines: ``{"id": ..., "features": {feature: weight}}`` per line.

    A UTF-8 BOM, CRLF line ends and blank lines are accepted.  A missing ``id`` becomes
    ``FILE:LINE``.  NaN, Infinity and numbers too large for float64 are refused by name (NaN
    would silently make every slot 0).

    Args:
        source: a path, or ``-`` for standard input.
        on_bad_line: None to stop at a malformed line; else called with its error, and the
            line is left out.
        fields: where the features and the id are.
        unique: shown every record with its place (for ids unique across files).

    Raises:
        InputError: a malformed line, naming file and line; nothing is yielded past it.
    """
    parse = functools.partial(_vector_record, fields=fields)
    return json_records(source, parse, on_bad_line, max_line, unique)


def json_records(
    source: str,
    parse: Callable[[str, int, Any], R],
    on_bad_line: OnBadLine,
    max_line: int | None = DEFAULT_MAX_BYTES,
    unique: UniqueIds | None = None,
) -> Iterator[R]:
    """``parse`` applied to each JSON line; a malformed one stops, or goes to ``on_bad_line``."""
    return parsed_values(json_lines(source, on_bad_line, max_line), parse, on_bad_line, unique)


def parsed_values(
    values: Iterator[tuple[str, int, Any]],
    parse: Callable[[str, int, Any], R],
    on_bad_line: OnBadLine,
    unique: UniqueIds | None = None,
) -> Iterator[R]:
    """``parse`` applied to each (where, line, value); ids checked unique (by ``unique``, a
    fresh :class:`UniqueIds` by default). A malformed one stops, or goes to ``on_bad_line``."""
    unique = unique or UniqueIds()
    for where, lineno, value in values:
        try:
            record = parse(where, lineno, value)
            unique.check(record, f"{where}:{lineno}")  # type: ignore[arg-type]
            yield record
        except MalformedLineError as error:
            if on_bad_line is None:
                raise
            on_bad_line(error)


def _vector_record(
    where: str, lineno: int, value: Any, fields: Fields = DEFAULT_FIELDS
) -> VectorRecord:
    given = fields.features.get(value) if isinstance(value, dict) else MISSING
    if not isinstance(given, dict):
        raise MalformedLineError(
            f"{where}:{lineno}", 'expected {"id": ..., "features": {feature: weight}}'
        )
    features = {key: _weight(where, lineno, key, raw) for key, raw in given.items()}
    _check_reserved(where, lineno, value, fields)
    return VectorRecord(_record_id(where, lineno, value, fields), features)


def read_texts(
    source: str,
    on_bad_line: OnBadLine = None,
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
    *,
    unique: UniqueIds | None = None,
) -> Iterator[TextRecord]:
    """Read ``--texts`` JSON Lines: ``{"id": ..., "text": "..."}`` per line (a missing ``id``
    becomes ``FILE:LINE``), or the text and id where ``fields`` says. ``on_bad_line``: as for
    :func:`read_vectors`, and ``unique``."""
    parse = functools.partial(_text_record, fields=fields)
    return json_records(source, parse, on_bad_line, max_line, unique)


def _text_record(
    where: str, lineno: int, value: Any, fields: Fields = DEFAULT_FIELDS
) -> TextRecord:
    text = fields.text_of(value) if isinstance(value, dict) else None
    if text is None:
        raise MalformedLineError(
            f"{where}:{lineno}", fields.describe_text() + _instead(value, fields)
        )
    _check_reserved(where, lineno, value, fields)
    return TextRecord(_record_id(where, lineno, value, fields), text)


def _check_reserved(where: str, lineno: int, value: Any, fields: Fields) -> None:
    """Raises: InputError: the record holds the key its fate is to be written under (refused
    as it is read: every record, not only the first, and before any output)."""
    if fields.reserved is not None and isinstance(value, dict) and fields.reserved in value:
        raise InputError(
            f"{where}:{lineno}: the records already have a key {fields.reserved!r}, where "
            "their fate would go: name another with --annotation-field"
        )


def _instead(value: Any, fields: Fields) -> str:
    """What a record without its text holds in its place: a text field of another kind (a
    number, an object: not missing), else the keys it has."""
    if isinstance(value, dict):
        for path in fields.text:
            found = path.get(value)
            if found is not MISSING and found is not None and not isinstance(found, str):
                return f"; its {path} is {_kind_of(found)}, not a string"
    return _keys_of(value)


def _kind_of(value: Any) -> str:
    """A value's kind, as JSON names it."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _keys_of(value: Any) -> str:
    """What a record without its text holds instead, and how to name it: the keys it has."""
    if not isinstance(value, dict) or not value:
        return ""
    keys = [json.dumps(key, ensure_ascii=False) for key in list(value)[:_KEYS_SHOWN]]
    more = ", ..." if len(value) > _KEYS_SHOWN else ""
    return f"; it has the keys {', '.join(keys)}{more} (--text-field names the one to read)"


_KEYS_SHOWN = 8


_FINGERPRINT_KEYS = ("fingerprint", "bits", "seed", "tokenizer", "weighting")


def fingerprint_record(
    where: str, lineno: int, value: Any, fields: Fields = DEFAULT_FIELDS
) -> FingerprintRecord:
    if not isinstance(value, dict) or any(key not in value for key in _FINGERPRINT_KEYS):
        raise MalformedLineError(
            f"{where}:{lineno}",
            "not a fingerprint record (expected the keys id, "
            + ", ".join(_FINGERPRINT_KEYS)
            + " as 'simhash fingerprint' writes them)",
        )
    try:
        settings = Settings.from_names(
            value["bits"], value["seed"], str(value["tokenizer"]), str(value["weighting"])
        )
        fingerprint = from_hex(str(value["fingerprint"]), settings.bits)
    except SimhashError as exc:
        raise MalformedLineError(f"{where}:{lineno}", str(exc)) from None
    return FingerprintRecord(
        id=_record_id(where, lineno, value, DEFAULT_FIELDS),
        fingerprint=fingerprint,
        settings=settings,
        features=int(value.get("features", 0)),
    )


_PARSERS: dict[str, Callable[[str, int, Any, Fields], Record]] = {
    "vectors": _vector_record,
    "fingerprints": fingerprint_record,
    "texts": _text_record,
}
