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
from ..sources.fields import DEFAULT_FIELDS, Fields
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
    ``dropped``, every one with its fate to ``annotated``; ``metadata`` is stored with each
    (Parquet key-value metadata, else a sidecar JSON file beside it)."""

    kept: str | None
    dropped: str | None
    annotated: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def paths(self) -> tuple[str | None, str | None, str | None]:
        """The kept, dropped and annotated outputs (None: not written)."""
        return self.kept, self.dropped, self.annotated


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
    kept: dict[str, int | None],
    dropped: dict[str, Fate],
    targets: Targets,
    max_line: int | None,
    fields: Fields = DEFAULT_FIELDS,
) -> Copied:
    """Copy the records of ``source`` whose id is in ``kept`` to ``targets.kept``, those in
    ``dropped`` to ``targets.dropped``, and every one of them, its fate added, to
    ``targets.annotated``, in input order. ``kept`` maps each kept id to its cluster (None: in
    none); ``fields`` says where the records' ids are, as for the first reading.

    Raises:
        OutputError: an output cannot be written (what was written of it is removed).
        InputError: the input changed since it was first read (a record of the first reading
            is not there): nothing is written.
    """
    if parquet.is_parquet(source):
        return _copy_parquet(source, kind, kept, dropped, targets, fields)
    name = "<stdin>" if source == STDIN else source
    with ExitStack() as stack:
        copier = _LineCopier(
            kind,
            fields,
            kept,
            dropped,
            *(stack.enter_context(_atomic(p)) for p in targets.paths),
        )
        with _open_text(source, newline="") as handle:
            block: list[str | None] = []
            first = 1
            for line in bounded_lines(handle, max_line):
                block.append(line)
                if len(block) == LINES_PER_BLOCK:
                    copier.copy(block, first, name)
                    first, block = first + len(block), []
            copier.copy(block, first, name)
        _check(copier.copied, kept, dropped, source)
        for path in targets.paths:
            if path is not None:
                _write_sidecar(sidecar_of(path), targets.metadata)
    return copier.copied


def fate_record(kept: bool, fate: Fate | None, cluster: int | None) -> dict[str, Any]:
    """What ``--annotated`` adds to a record (``--dropped`` too, without ``kept``)."""
    return {
        "kept": kept,
        "duplicate_of": None if fate is None else fate.duplicate_of,
        "cosine": None if fate is None else fate.cosine,
        "cluster": cluster if fate is None else fate.cluster,
    }


class _LineCopier:
    """JSON Lines records, a block of lines at a time, each to the outputs its fate names."""

    def __init__(
        self,
        kind: RecordKind,
        fields: Fields,
        kept: dict[str, int | None],
        dropped: dict[str, Fate],
        kept_out: AtomicFile | None,
        dropped_out: AtomicFile | None,
        annotated_out: AtomicFile | None,
    ) -> None:
        self.kind, self.fields, self.kept, self.dropped = kind, fields, kept, dropped
        self.kept_out, self.dropped_out, self.annotated_out = kept_out, dropped_out, annotated_out
        self.places = Placed()
        self.copied = Copied()

    def copy(self, block: list[str | None], first: int, name: str) -> None:
        records = parse_lines(
            block, name, first, self.kind, _ignore, unique=self.places, fields=self.fields
        )
        for record, line in zip(records, self.places.lines, strict=True):
            text = block[line - first]
            assert text is not None
            if record.id in self.kept:
                if self.kept_out is not None:
                    self.kept_out.write_bytes(text.encode("utf-8"))
                self.copied.kept += 1
                annotation = fate_record(True, None, self.kept[record.id])
            elif (fate := self.dropped.get(record.id)) is not None:
                if self.dropped_out is not None:
                    added = fate_record(False, fate, None)
                    del added["kept"]
                    self.dropped_out.write_bytes(_annotated(text, added))
                self.copied.dropped += 1
                annotation = fate_record(False, fate, None)
            else:
                continue
            if self.annotated_out is not None:
                self.annotated_out.write_bytes(_annotated(text, annotation))
        del self.places.lines[:]


def _annotated(text: str, annotation: dict[str, Any]) -> bytes:
    """The record of the JSON line ``text`` with the ``simhash`` key added (its line end kept)."""
    value = json.loads(text)
    value[ANNOTATION] = annotation
    ending = text[len(text.rstrip("\r\n")) :] or "\n"
    return (json.dumps(value, ensure_ascii=False) + ending).encode("utf-8")


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
    source: str,
    kind: RecordKind,
    kept: dict[str, int | None],
    dropped: dict[str, Fate],
    targets: Targets,
    fields: Fields,
) -> Copied:
    """Row group by row group: each group's rows parsed as the first reading parsed them, the
    kept rows written with the input's schema, the dropped (and the annotated) ones with the
    ``simhash_*`` columns of their fate after the input's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    copied = Copied()
    places = Placed()
    meta = {ANNOTATION.encode(): json.dumps(targets.metadata).encode()}
    with ExitStack() as stack:
        file = pq.ParquetFile(source)
        schema = file.schema_arrow.with_metadata({**(file.schema_arrow.metadata or {}), **meta})
        columns = {
            "kept": pa.bool_(),
            "duplicate_of": pa.string(),
            "cosine": pa.float64(),
            "cluster": pa.int64(),
        }
        shapes = {
            "kept": (schema, ()),
            "dropped": (schema, ("duplicate_of", "cosine", "cluster")),
            "annotated": (schema, tuple(columns)),
        }
        writers: dict[str, tuple[Any, tuple[str, ...]]] = {}
        for role, path in zip(shapes, targets.paths, strict=True):
            if path is not None:
                base, added = shapes[role]
                made = [*base, *(pa.field(f"{ANNOTATION}_{c}", columns[c]) for c in added)]
                temporary = stack.enter_context(_temporary_beside(path))
                shape = pa.schema(made, metadata=schema.metadata)
                writers[role] = (stack.enter_context(pq.ParquetWriter(temporary, shape)), added)
        first = 1
        for group in range(file.num_row_groups):
            rows = file.metadata.row_group(group).num_rows
            records = parquet.read_records(
                source, kind, row_group=group, first_row=first, on_bad_line=_ignore,
                unique=places, fields=fields,
            )  # fmt: skip
            fates: dict[str, list[tuple[int, dict[str, Any]]]] = {"kept": [], "dropped": []}
            for record, line in zip(records, places.lines, strict=True):
                if record.id in kept:
                    fates["kept"].append((line - first, fate_record(True, None, kept[record.id])))
                elif (fate := dropped.get(record.id)) is not None:
                    fates["dropped"].append((line - first, fate_record(False, fate, None)))
            del places.lines[:]
            copied.kept += len(fates["kept"])
            copied.dropped += len(fates["dropped"])
            if writers and (fates["kept"] or fates["dropped"]):
                table = file.read_row_group(group)
                chosen = {
                    "kept": fates["kept"],
                    "dropped": fates["dropped"],
                    "annotated": sorted(fates["kept"] + fates["dropped"], key=lambda f: f[0]),
                }
                for role, (writer, added) in writers.items():
                    if chosen[role]:
                        taken = table.take([row for row, _ in chosen[role]])
                        for name in added:
                            values = [fate[name] for _, fate in chosen[role]]
                            if name == "duplicate_of":
                                values = [None if v is None else str(v) for v in values]
                            field_ = pa.field(f"{ANNOTATION}_{name}", columns[name])
                            taken = taken.append_column(field_, pa.array(values, columns[name]))
                        writer.write_table(taken.replace_schema_metadata(schema.metadata))
            first += rows
        _check(copied, kept, dropped, source)
    return copied


def _check(
    copied: Copied, kept: dict[str, int | None], dropped: dict[str, Fate], source: str
) -> None:
    """Every record decided on was found again (else the outputs are not made)."""
    if (copied.kept, copied.dropped) != (len(kept), len(dropped)):
        raise InputError(
            f"{source} changed while it was read: {copied.kept + copied.dropped:,} of the "
            f"{len(kept) + len(dropped):,} records decided on were found again, so nothing "
            "was written"
        )
