"""Parquet inputs: ``--texts`` and ``--vectors`` given as ``.parquet`` files.

A table with a ``text`` column (``--texts``) or a ``features`` column (``--vectors``: a map
of feature to weight, or a list of ``{key, value}`` structs), and an optional ``id`` column
(string or integer; a row without one is named ``FILE:ROW``, counting from 1), or the
columns ``--text-field`` and ``--id-field`` name (:mod:`.fields`; a struct column is a nested
object). Each row is
checked as a JSON Lines record would be (:func:`.records.parse_value`), so both formats give the
same documents. Read a batch of rows at a time (a row group may hold millions); the dask
engine hands row groups out.

Needs pyarrow (``pip install 'simhash-cli[parquet]'``, or the ``distributed`` extra), and
fsspec for URLs (it comes with dask).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...errors import InputError, ParameterError, PathNotFoundError
from ..opening import open_file
from .fields import DEFAULT_FIELDS, Fields
from .reads import opened
from .records import (
    OnBadLine,
    Record,
    RecordKind,
    UniqueIds,
    parsed_values,
    record_parser,
    too_long,
)

__all__ = [
    "MISSING_PYARROW",
    "ROWS_PER_BATCH",
    "batches",
    "is_parquet",
    "iter_records",
    "long_rows",
    "needed_columns",
    "read_records",
    "records_of",
    "row_groups",
    "rows_of",
]

MISSING_PYARROW = "reading Parquet needs pyarrow: pip install 'simhash-cli[parquet]'"
_SUFFIXES = (".parquet", ".pq")
_KINDS = ("texts", "vectors")


def is_parquet(source: str) -> bool:
    """Whether ``source`` (a path, glob or URL) names Parquet files."""
    return source.lower().endswith(_SUFFIXES)


def _parquet() -> Any:
    try:
        import pyarrow.parquet
    except ImportError as exc:
        raise ParameterError(MISSING_PYARROW) from exc
    return pyarrow.parquet


@contextmanager
def _opened(source: str) -> Iterator[Any]:
    """The Parquet file at ``source`` (a path, or a URL fsspec opens)."""
    parquet = _parquet()
    try:
        if "://" in source:
            import fsspec

            with fsspec.open(source, "rb") as handle:
                yield parquet.ParquetFile(handle)
        else:
            with open_file(source) as handle:
                opened(source, os.fstat(handle.fileno()))  # for a dataset's check
                yield parquet.ParquetFile(handle)
    except FileNotFoundError:
        raise PathNotFoundError(f"no such file or directory: {source}") from None
    except (OSError, ValueError) as exc:
        # pyarrow's errors (ArrowInvalid, ArrowIOError) derive from these.
        raise InputError(f"cannot read {source} as Parquet: {exc}") from None


def column_names(source: str) -> list[str]:
    """The columns of the file (from its footer)."""
    with _opened(source) as file:
        return list(file.schema_arrow.names)


def row_groups(source: str) -> list[int]:
    """The number of rows in each row group of the file (from its footer)."""
    with _opened(source) as file:
        metadata = file.metadata
        return [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]


ROWS_PER_BATCH = 16_384
"""Rows decoded at a time (a batch of a row group, however large the group), and the rows of
a piece: more than a JSON Lines piece's 2,000 lines, since each piece sorts its words once (at
2,000 rows a piece, one group of 1,000,000 rows took 16 s to fingerprint; at 16,384, 10 s, as
in row groups of 50,000)."""


def batches(
    source: str,
    kind: RecordKind,
    fields: Fields = DEFAULT_FIELDS,
    *,
    name: str | None = None,
    row_group: int | None = None,
    also: tuple[str, ...] = (),
    rows: int = ROWS_PER_BATCH,
) -> Iterator[Any]:
    """The file's rows (or those of one row group) as Arrow record batches of at most
    ``rows`` rows, decoded as they are asked for: memory holds a batch, not a row group (a
    group of 3,000,000 rows held whole took 2.6 GB). The columns those of :func:`rows_of`.

    Raises:
        InputError: not a Parquet file, or without a column ``kind`` and ``fields`` need.
    """
    if kind not in _KINDS:
        raise ParameterError(
            f"Parquet holds {{texts}} or {{vectors}}, not {kind}", parameters=("texts", "vectors")
        )
    where = name or source
    with _opened(source) as file:
        present = file.schema_arrow.names
        wanted = needed_columns(where, kind, fields, present)
        wanted += [column for column in also if column in present and column not in wanted]
        groups = None if row_group is None else [row_group]
        try:
            yield from file.iter_batches(
                batch_size=rows, row_groups=groups, columns=wanted, use_threads=False
            )
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {where} as Parquet: {exc}") from None


def rows_of(batch: Any, kind: RecordKind, fields: Fields = DEFAULT_FIELDS) -> list[dict[str, Any]]:
    """A batch's rows, each as the object a JSON Lines record would be: the columns ``fields``
    need for ``kind`` (a row's null ``id`` left out, so that it is named by its place), and
    the others the batch has."""
    columns = {column: batch.column(column).to_pylist() for column in batch.schema.names}
    if kind == "vectors" and "features" in columns:
        columns["features"] = [_features(value) for value in columns["features"]]
    if fields.id is None and "id" in columns:
        columns["id"] = [_ABSENT if doc_id is None else doc_id for doc_id in columns["id"]]
    return [
        {
            column: value
            for column, value in zip(columns, values, strict=True)
            if value is not _ABSENT
        }
        for values in zip(*columns.values(), strict=True)
    ]


def records_of(
    where: str,
    batch: Any,
    first_row: int,
    kind: RecordKind,
    *,
    fields: Fields = DEFAULT_FIELDS,
    on_bad_line: OnBadLine = None,
    unique: UniqueIds | None = None,
    max_line: int | None = None,
) -> Iterator[Record]:
    """The records of ``batch`` (row ``first_row`` onwards of ``where``), checked as JSON Lines
    records are; a text longer than ``max_line`` characters is refused as a line that long is
    (``--max-bytes``)."""
    rows = rows_of(batch, kind, fields)
    long = long_rows(batch, rows, kind, fields, max_line)

    def values() -> Iterator[tuple[str, int, Any]]:
        for number, row in enumerate(rows, start=first_row):
            if number - first_row in long:
                too_long(f"{where}:{number}", max_line, on_bad_line)
                continue
            yield where, number, row

    return parsed_values(values(), record_parser(kind, fields), on_bad_line, unique)


def long_rows(
    batch: Any, rows: list[dict[str, Any]], kind: RecordKind, fields: Fields, max_line: int | None
) -> set[int]:
    """The rows of a batch of texts (``rows``, as :func:`rows_of` made them) whose text cells
    hold more than ``max_line`` characters, counted by Arrow where each text is a column of
    strings (a text inside a struct, by the rows); none for vectors."""
    if max_line is None or not rows or kind != "texts":
        return set()
    import pyarrow.compute as pc

    total = np.zeros(len(rows), np.int64)
    for path in fields.text:
        column = batch.column(path.column)
        if len(path.steps) == 1 and _is_string(column.type):
            counted = pc.fill_null(pc.utf8_length(column), 0)
            total += counted.to_numpy(zero_copy_only=False)
        else:
            cells = (path.get(row) for row in rows)
            total += np.fromiter((len(c) if isinstance(c, str) else 0 for c in cells), np.int64)
    return set(np.flatnonzero(total > max_line).tolist())


def _is_string(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def iter_records(
    source: str,
    kind: RecordKind,
    *,
    name: str | None = None,
    row_group: int | None = None,
    first_row: int = 1,
    on_bad_line: OnBadLine = None,
    unique: UniqueIds | None = None,
    fields: Fields = DEFAULT_FIELDS,
    max_line: int | None = None,
) -> Iterator[Record]:
    """The records of the file (or of one row group), a batch at a time, rows numbered from
    ``first_row``; ``unique`` is shown every record with its place (a fresh
    :class:`UniqueIds` by default); ``fields`` names the columns of the text (or features)
    and the id; ``max_line`` bounds a text as :func:`records_of` says.

    Raises:
        InputError: not a Parquet file, or without a column ``kind`` and ``fields`` need; a
            bad row (naming file and row) unless ``on_bad_line`` takes it.
    """
    where = name or source
    unique = unique or UniqueIds()
    for batch in batches(source, kind, fields, name=where, row_group=row_group):
        yield from records_of(
            where, batch, first_row, kind, fields=fields, on_bad_line=on_bad_line,
            unique=unique, max_line=max_line,
        )  # fmt: skip
        first_row += batch.num_rows


def read_records(source: str, kind: RecordKind, **given: Any) -> list[Record]:
    """:func:`iter_records` as a list (one row group's, or a small file's)."""
    return list(iter_records(source, kind, **given))


_ABSENT = object()


def needed_columns(where: str, kind: RecordKind, fields: Fields, present: list[str]) -> list[str]:
    """The columns to read: those ``fields`` needs for ``kind``, and the id's if present.

    Raises:
        InputError: a column that is needed and missing.
    """
    wanted = fields.columns(kind)
    optional = wanted[-1] if fields.id is None else None
    missing = [column for column in wanted if column not in present and column != optional]
    if missing:
        raise InputError(
            f"{where}: a Parquet input of --{kind} needs a {missing[0]!r} column "
            f"(it has: {', '.join(present) or 'none'})"
        )
    return [column for column in wanted if column in present]


def _features(value: Any) -> Any:
    """A map column's (key, value) pairs, or a list of {key, value} structs, as a dict (any
    other value is left for the record's check to refuse)."""
    if isinstance(value, list) and all(
        isinstance(item, tuple) and len(item) == 2 for item in value
    ):
        return dict(value)
    if isinstance(value, list) and all(
        isinstance(item, dict) and set(item) == {"key", "value"} for item in value
    ):
        return {item["key"]: item["value"] for item in value}
    return value
