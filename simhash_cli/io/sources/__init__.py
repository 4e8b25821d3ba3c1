"""Where documents come from: files (:mod:`.files`), JSON Lines records (:mod:`.records`) and
Parquet tables (:mod:`.parquet`); :func:`read_records` is the one dispatch between the last two.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import parquet
from .files import DEFAULT_MAX_BYTES
from .records import OnBadLine, Record, RecordKind, read_texts, read_vectors

__all__ = ["iter_records", "read_records"]


def read_records(
    source: str,
    kind: RecordKind,
    on_bad_line: OnBadLine = None,
    max_line: int | None = DEFAULT_MAX_BYTES,
) -> list[Record]:
    """The ``texts`` or ``vectors`` records of ``source``: JSON Lines (a path or ``-``, no
    line over ``max_line`` characters), or Parquet for a ``.parquet`` name."""
    return list(iter_records(source, kind, on_bad_line, max_line))


def iter_records(
    source: str,
    kind: RecordKind,
    on_bad_line: OnBadLine = None,
    max_line: int | None = DEFAULT_MAX_BYTES,
) -> Iterator[Record]:
    """:func:`read_records` one record at a time (JSON Lines are read as they are consumed;
    a Parquet file is read whole)."""
    if parquet.is_parquet(source):
        yield from parquet.read_records(source, kind, on_bad_line=on_bad_line)
        return
    reader = read_texts if kind == "texts" else read_vectors
    yield from reader(source, on_bad_line, max_line)
