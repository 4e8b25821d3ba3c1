"""Parquet inputs: ``--texts`` and ``--vectors`` given as ``.parquet`` files.

A table with a ``text`` column (``--texts``) or a ``features`` column (``--vectors``: a map
of feature to weight, or a list of ``{key, value}`` structs), and an optional ``id`` column
(string or integer; a row without one is named ``FILE:ROW``, counting from 1), or the
columns ``--text-field`` and ``--id-field`` name (:mod:`.fields`; a struct column is a nested
object). Each row is
checked as a JSON Lines record would be (:func:`.records.parse_value`), so both formats give the
same documents. Read a row group at a time, so the dask engine can hand row groups out.

Needs pyarrow (``pip install 'simhash-cli[parquet]'``, or the ``distributed`` extra), and
fsspec for URLs (it comes with dask).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import InputError, ParameterError, PathNotFoundError
from ..opening import open_file
from .fields import DEFAULT_FIELDS, Fields
from .records import OnBadLine, Record, RecordKind, UniqueIds, parsed_values, record_parser

__all__ = ["MISSING_PYARROW", "is_parquet", "read_records", "read_rows", "row_groups"]

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


def read_records(
    source: str,
    kind: RecordKind,
    *,
    name: str | None = None,
    row_group: int | None = None,
    first_row: int = 1,
    on_bad_line: OnBadLine = None,
    unique: UniqueIds | None = None,
    fields: Fields = DEFAULT_FIELDS,
) -> list[Record]:
    """The records of one row group (or of the whole file), rows numbered from ``first_row``;
    ``unique`` is shown every record with its place (a fresh :class:`UniqueIds` by default);
    ``fields`` names the columns of the text (or features) and the id.

    Raises:
        InputError: not a Parquet file, or without a column ``kind`` and ``fields`` need; a
            bad row (naming file and row) unless ``on_bad_line`` takes it.
    """
    where = name or source
    rows = read_rows(source, kind, fields, name=where, row_group=row_group)
    values = ((where, row, record) for row, record in enumerate(rows, start=first_row))
    return list(parsed_values(values, record_parser(kind, fields), on_bad_line, unique))


def read_rows(
    source: str,
    kind: RecordKind,
    fields: Fields = DEFAULT_FIELDS,
    *,
    name: str | None = None,
    row_group: int | None = None,
    also: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """The rows of one row group (or of the whole file), each as the object a JSON Lines
    record would be: the columns ``fields`` need for ``kind`` (a row's null ``id`` left out, so
    that it is named by its place), and those of ``also`` that the file has.

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
        wanted = _columns(where, kind, fields, present)
        wanted += [column for column in also if column in present and column not in wanted]
        try:
            table = (
                file.read(wanted) if row_group is None else file.read_row_group(row_group, wanted)
            )
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {where} as Parquet: {exc}") from None
    columns = {column: table.column(column).to_pylist() for column in wanted}
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


_ABSENT = object()


def _columns(where: str, kind: RecordKind, fields: Fields, present: list[str]) -> list[str]:
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
