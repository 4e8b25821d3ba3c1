"""Parquet inputs: ``--texts`` and ``--vectors`` given as ``.parquet`` files.

A table with a ``text`` column (``--texts``) or a ``features`` column (``--vectors``: a map
of feature to weight, or a list of ``{key, value}`` structs), and an optional ``id`` column
(string or integer; a row without one is named ``FILE:ROW``, counting from 1). Each row is
checked as a JSON Lines record would be (:func:`.records.parse_value`), so both formats give the
same documents. Read a row group at a time, so the dask engine can hand row groups out.

Needs pyarrow (``pip install 'simhash-cli[parquet]'``, or the ``distributed`` extra), and
fsspec for URLs (it comes with dask).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import InputError, MalformedLineError, ParameterError, PathNotFoundError
from .records import OnBadLine, Record, RecordKind, UniqueIds, parse_value

__all__ = ["MISSING_PYARROW", "is_parquet", "read_records", "row_groups"]

MISSING_PYARROW = "reading Parquet needs pyarrow: pip install 'simhash-cli[parquet]'"
_SUFFIXES = (".parquet", ".pq")
_COLUMN = {"texts": "text", "vectors": "features"}


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
            with open(source, "rb") as handle:
                yield parquet.ParquetFile(handle)
    except FileNotFoundError:
        raise PathNotFoundError(f"no such file or directory: {source}") from None
    except (OSError, ValueError) as exc:
        # pyarrow's errors (ArrowInvalid, ArrowIOError) derive from these.
        raise InputError(f"cannot read {source} as Parquet: {exc}") from None


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
) -> list[Record]:
    """The records of one row group (or of the whole file), rows numbered from ``first_row``;
    ``unique`` is shown every record with its place (a fresh :class:`UniqueIds` by default).

    Raises:
        InputError: not a Parquet file, or without the column ``kind`` needs; a bad row
            (naming file and row) unless ``on_bad_line`` takes it.
    """
    column = _COLUMN.get(kind)
    if column is None:
        raise ParameterError(
            f"Parquet holds {{texts}} or {{vectors}}, not {kind}", parameters=("texts", "vectors")
        )
    where = name or source
    with _opened(source) as file:
        present = file.schema_arrow.names
        if column not in present:
            raise InputError(
                f"{where}: a Parquet input of --{kind} needs a {column!r} column "
                f"(it has: {', '.join(present) or 'none'})"
            )
        wanted = [column] + (["id"] if "id" in present else [])
        try:
            table = (
                file.read(wanted) if row_group is None else file.read_row_group(row_group, wanted)
            )
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {where} as Parquet: {exc}") from None
    values = table.column(column).to_pylist()
    ids = table.column("id").to_pylist() if "id" in wanted else [None] * len(values)
    records: list[Record] = []
    unique = unique or UniqueIds()
    for row, (doc_id, value) in enumerate(zip(ids, values, strict=True), start=first_row):
        record: dict[str, Any] = {column: _features(value) if kind == "vectors" else value}
        if doc_id is not None:
            record["id"] = doc_id
        try:
            parsed = parse_value(kind, where, row, record)
            unique.check(parsed, f"{where}:{row}")
            records.append(parsed)
        except MalformedLineError as error:
            if on_bad_line is None:
                raise
            on_bad_line(error)
    return records


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
