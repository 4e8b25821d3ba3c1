"""The one dispatch between JSON Lines records (:mod:`.records`) and Parquet tables
(:mod:`.parquet`), shard by shard: :func:`read_records`, :func:`iter_records`,
:func:`records_and_rows`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import MalformedLineError
from . import parquet
from .fields import DEFAULT_FIELDS, Fields
from .files import DEFAULT_MAX_BYTES, STDIN
from .records import (
    OnBadLine,
    Record,
    RecordKind,
    UniqueIds,
    json_lines,
    parse_value,
    read_texts,
    read_vectors,
)
from .shards import shards_of

__all__ = ["iter_records", "read_records", "records_and_rows"]


def read_records(
    source: str,
    kind: RecordKind,
    on_bad_line: OnBadLine = None,
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
) -> list[Record]:
    """The ``texts`` or ``vectors`` records of ``source``: JSON Lines (a path or ``-``, no
    line over ``max_line`` characters), or Parquet for a ``.parquet`` name; their text (or
    features) and id where ``fields`` says."""
    return list(iter_records(source, kind, on_bad_line, max_line, fields))


def iter_records(
    source: str,
    kind: RecordKind,
    on_bad_line: OnBadLine = None,
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
) -> Iterator[Record]:
    """:func:`read_records` one record at a time, read as they are consumed (Parquet a batch
    of rows at a time), shard by shard (:mod:`.shards`), ids unique across them."""
    unique = UniqueIds()
    for shard in shards_of(source):
        if parquet.is_parquet(shard):
            records: Iterator[Record] = parquet.iter_records(
                shard, kind, on_bad_line=on_bad_line, fields=fields, unique=unique,
                max_line=max_line,
            )  # fmt: skip
        else:
            reader = read_texts if kind == "texts" else read_vectors
            records = reader(shard, on_bad_line, max_line, fields, unique=unique)
        yield from records


def records_and_rows(
    source: str,
    kind: RecordKind,
    fields: Fields = DEFAULT_FIELDS,
    *,
    also: tuple[str, ...] = (),
    max_line: int | None = DEFAULT_MAX_BYTES,
) -> Iterator[tuple[Record, dict[str, Any]]]:
    """Each well-formed record of ``source`` with the object it was read from, a line's JSON
    object or a Parquet row (with the columns ``also`` names), for the value of a field no
    record keeps. Malformed ones are passed over: the run that read them reported them."""
    for shard in shards_of(source):
        if parquet.is_parquet(shard):
            first = 1
            for batch in parquet.batches(shard, kind, fields, also=also):
                rows = parquet.rows_of(batch, kind, fields)
                # Too long: refused by the reading (--max-bytes).
                long = parquet.long_rows(batch, rows, kind, fields, max_line)
                kept = ((first + n, row) for n, row in enumerate(rows) if n not in long)
                yield from _well_formed(shard, kind, fields, kept)
                first += len(rows)
        else:
            lines = json_lines(shard, lambda error: None, max_line)
            yield from _well_formed(shard, kind, fields, ((n, v) for _, n, v in lines))


def _well_formed(
    source: str, kind: RecordKind, fields: Fields, rows: Iterator[tuple[int, Any]]
) -> Iterator[tuple[Record, dict[str, Any]]]:
    name = "<stdin>" if source == STDIN else source
    for number, row in rows:
        try:
            yield parse_value(kind, name, number, row, fields), row
        except MalformedLineError:
            continue
