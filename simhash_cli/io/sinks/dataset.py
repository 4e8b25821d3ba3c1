"""A dataset deduplicated: its records read again and copied, the kept ones unchanged.

``dedupe --texts FILE --kept OUT`` decides on the documents first; then the input is read a
second time and each record is copied where its fate says: JSON Lines line for line (each kept
line the very text it was, line end included), Parquet row group by row group with its schema
(each kept row equal field for field). The second reading parses exactly as the first did (the
same readers, the same line numbers, an id given twice kept at its first place), so a record's
id finds its fate. Every output is written beside its destination and renamed over it when
complete: a run that fails leaves nothing under the final name.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError, MalformedLineError, OutputError
from ..sources import parquet
from ..sources.files import STDIN
from ..sources.pieces import Placed
from ..sources.records import RecordKind, _open_text, bounded_lines, parse_lines
from .atomic import AtomicFile

__all__ = ["Copied", "Fate", "Tally", "Targets", "copy_records", "sidecar_of"]

ANNOTATION = "simhash"
"""The key (JSON Lines) or the prefix of the columns (Parquet) that --dropped adds."""

LINES_PER_BLOCK = 2_000


@dataclass(frozen=True)
class Fate:
    """A dropped record's near-duplicate: the kept record's id, their cosine, the cluster."""

    duplicate_of: str | int
    cosine: float | None
    cluster: int


@dataclass(frozen=True)
class Targets:
    """Where records go: the kept ones to ``kept``, the dropped ones (with their fate) to
    ``dropped``; ``metadata`` is stored with each (Parquet key-value metadata, else a sidecar
    JSON file beside it)."""

    kept: str | None
    dropped: str | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tally:
    """The records of a deduplicated dataset: ``read`` = ``kept`` + ``dropped`` + ``skipped``
    (``malformed`` among the skipped)."""

    read: int
    kept: int
    dropped: int
    skipped: int
    malformed: int

    def record(self) -> dict[str, int]:
        return {
            "read": self.read,
            "kept": self.kept,
            "dropped": self.dropped,
            "skipped": self.skipped,
            "malformed": self.malformed,
        }


@dataclass
class Copied:
    """How many records went where."""

    kept: int = 0
    dropped: int = 0


def sidecar_of(path: str) -> str:
    """The JSON file beside a JSON Lines output that holds its metadata."""
    return path + ".simhash.json"


def _ignore(error: MalformedLineError) -> None:
    """A malformed line: the first reading counted it (or stopped); it is copied nowhere."""


def copy_records(
    source: str,
    kind: RecordKind,
    kept: set[str],
    dropped: dict[str, Fate],
    targets: Targets,
    max_line: int | None,
) -> Copied:
    """Copy the records of ``source`` whose id is in ``kept`` to ``targets.kept`` and those in
    ``dropped`` to ``targets.dropped``, in input order.

    Raises:
        OutputError: an output cannot be written (what was written of it is removed).
        InputError: the input changed since it was first read (a record of the first reading
            is not there): nothing is written.
    """
    if parquet.is_parquet(source):
        return _copy_parquet(source, kind, kept, dropped, targets)
    copied = Copied()
    places = Placed()
    name = "<stdin>" if source == STDIN else source
    with ExitStack() as stack:
        kept_out = stack.enter_context(_atomic(targets.kept))
        dropped_out = stack.enter_context(_atomic(targets.dropped))
        with _open_text(source, newline="") as handle:
            block: list[str | None] = []
            first = 1
            for line in bounded_lines(handle, max_line):
                block.append(line)
                if len(block) == LINES_PER_BLOCK:
                    _copy_lines(block, first, name, kind, places, kept, dropped, kept_out,
                                dropped_out, copied)  # fmt: skip
                    first, block = first + len(block), []
            _copy_lines(block, first, name, kind, places, kept, dropped, kept_out, dropped_out,
                        copied)  # fmt: skip
        _check(copied, kept, dropped, source)
        for path in (targets.kept, targets.dropped):
            if path is not None:
                _write_sidecar(sidecar_of(path), targets.metadata)
    return copied


def _copy_lines(
    block: list[str | None],
    first: int,
    name: str,
    kind: RecordKind,
    places: Placed,
    kept: set[str],
    dropped: dict[str, Fate],
    kept_out: AtomicFile | None,
    dropped_out: AtomicFile | None,
    copied: Copied,
) -> None:
    start = len(places.lines)
    records = parse_lines(block, name, first, kind, _ignore, unique=places)
    for record, line in zip(records, places.lines[start:], strict=True):
        text = block[line - first]
        assert text is not None
        if record.id in kept:
            if kept_out is not None:
                kept_out.write_bytes(text.encode("utf-8"))
            copied.kept += 1
        elif (fate := dropped.get(record.id)) is not None:
            if dropped_out is not None:
                value = json.loads(text)
                value[ANNOTATION] = {
                    "duplicate_of": fate.duplicate_of,
                    "cosine": fate.cosine,
                    "cluster": fate.cluster,
                }
                ending = text[len(text.rstrip("\r\n")) :] or "\n"
                dropped_out.write_bytes((json.dumps(value, ensure_ascii=False) + ending).encode())
            copied.dropped += 1
    del places.lines[:]


@contextmanager
def _atomic(path: str | None) -> Iterator[AtomicFile | None]:
    if path is None:
        yield None
        return
    target = AtomicFile(path)
    try:
        yield target
    except BaseException:
        target.discard()
        raise
    target.commit()


def _write_sidecar(path: str, metadata: dict[str, Any]) -> None:
    with _atomic(path) as out:
        assert out is not None
        out.write(json.dumps(metadata, indent=2, ensure_ascii=False) + "\n")


@contextmanager
def _temporary_beside(path: str) -> Iterator[str]:
    """A temporary path beside ``path``, renamed over it when the block completes and removed
    when it fails."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory
        )
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    os.close(descriptor)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _copy_parquet(
    source: str, kind: RecordKind, kept: set[str], dropped: dict[str, Fate], targets: Targets
) -> Copied:
    """Row group by row group: each group's rows parsed as the first reading parsed them, the
    kept rows written with the input's schema (and the dropped ones with three more columns)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    copied = Copied()
    places = Placed()
    meta = {ANNOTATION.encode(): json.dumps(targets.metadata).encode()}
    with ExitStack() as stack:
        file = pq.ParquetFile(source)
        schema = file.schema_arrow.with_metadata({**(file.schema_arrow.metadata or {}), **meta})
        extra = [
            pa.field(f"{ANNOTATION}_duplicate_of", pa.string()),
            pa.field(f"{ANNOTATION}_cosine", pa.float64()),
            pa.field(f"{ANNOTATION}_cluster", pa.int64()),
        ]
        writers: dict[str, Any] = {}
        for role, path, shape in (
            ("kept", targets.kept, schema),
            ("dropped", targets.dropped, pa.schema([*schema, *extra], metadata=schema.metadata)),
        ):
            if path is not None:
                temporary = stack.enter_context(_temporary_beside(path))
                writers[role] = stack.enter_context(pq.ParquetWriter(temporary, shape))
        first = 1
        for group in range(file.num_row_groups):
            rows = file.metadata.row_group(group).num_rows
            start = len(places.lines)
            records = parquet.read_records(
                source, kind, row_group=group, first_row=first, on_bad_line=_ignore,
                unique=places,
            )  # fmt: skip
            lines = places.lines[start:]
            keep_rows = [line - first for r, line in zip(records, lines, strict=True)
                         if r.id in kept]  # fmt: skip
            drop = [(line - first, dropped[r.id]) for r, line in zip(records, lines, strict=True)
                    if r.id in dropped]  # fmt: skip
            del places.lines[:]
            copied.kept += len(keep_rows)
            copied.dropped += len(drop)
            if not writers or not (keep_rows or drop):
                first += rows
                continue
            table = file.read_row_group(group)
            if "kept" in writers and keep_rows:
                writers["kept"].write_table(
                    table.take(keep_rows).replace_schema_metadata(schema.metadata)
                )
            if "dropped" in writers and drop:
                taken = table.take([row for row, _ in drop])
                columns = [
                    pa.array([str(f.duplicate_of) for _, f in drop], pa.string()),
                    pa.array([f.cosine for _, f in drop], pa.float64()),
                    pa.array([f.cluster for _, f in drop], pa.int64()),
                ]
                for spec, column in zip(extra, columns, strict=True):
                    taken = taken.append_column(spec, column)
                writers["dropped"].write_table(taken.replace_schema_metadata(schema.metadata))
            first += rows
        _check(copied, kept, dropped, source)
    return copied


def _check(copied: Copied, kept: set[str], dropped: dict[str, Fate], source: str) -> None:
    """Every record decided on was found again (else the outputs are not made)."""
    if (copied.kept, copied.dropped) != (len(kept), len(dropped)):
        raise InputError(
            f"{source} changed while it was read: {copied.kept + copied.dropped:,} of the "
            f"{len(kept) + len(dropped):,} records decided on were found again, so nothing "
            "was written"
        )
