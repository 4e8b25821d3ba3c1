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
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError, MalformedLineError, OutputError, ParameterError
from ..opening import open_file
from ..sources import parquet
from ..sources.fields import DEFAULT_FIELDS, Fields
from ..sources.files import STDIN
from ..sources.pieces import Placed
from ..sources.records import RecordKind, bounded_lines, open_text, parse_lines
from ..sources.shards import (
    MISSING_ZSTANDARD,
    compression_of,
    holds_parquet,
    is_sharded,
    root_of_shards,
    shards_of,
)
from .atomic import AtomicFile, new_file_mode, written_into

__all__ = ["Copied", "Fate", "Tally", "Targets", "copy_records", "sidecar_of"]

ANNOTATION = "simhash"
"""The key (JSON Lines) or the prefix of the columns (Parquet) that --dropped and --annotated
add, unless ``--annotation-field`` names another."""

FATE_COLUMNS = ("kept", "duplicate_of", "cosine", "cluster", "skipped")
"""What a fate holds (a Parquet column each, after the annotation's prefix)."""

LINES_PER_BLOCK = 2_000

COPY_ROWS = 65_536
"""Parquet rows copied at a time: each is a row group of the outputs (memory holds one, not a
row group of the input, which may hold millions)."""


@dataclass(frozen=True)
class Fate:
    """A dropped record's near-duplicate: the kept record's id, their cosine, the cluster."""

    duplicate_of: str | int
    cosine: float | None
    cluster: int | None


@dataclass(frozen=True)
class Targets:
    """Where records go: the kept ones to ``kept``, the dropped ones (with their fate) to
    ``dropped``, every one with its fate to ``annotated``; ``metadata`` is stored with each
    (Parquet key-value metadata, else a sidecar JSON file beside it)."""

    kept: str | None
    dropped: str | None
    annotated: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    annotation: str = ANNOTATION
    """The key (JSON Lines) or the prefix of the columns (Parquet) of a record's fate."""

    @property
    def paths(self) -> tuple[str | None, str | None, str | None]:
        """The kept, dropped and annotated outputs (None: not written)."""
        return self.kept, self.dropped, self.annotated


@dataclass(frozen=True)
class Tally:
    """The records of a deduplicated dataset: ``read`` = ``kept`` + ``dropped`` + ``skipped``
    (``malformed`` among the skipped, which are copied nowhere); ``unfingerprinted`` among the
    kept: records without a word, passed through (a dedupe pass never filters)."""

    read: int
    kept: int
    dropped: int
    skipped: int
    malformed: int
    unfingerprinted: int = 0

    def record(self) -> dict[str, int]:
        return {
            "read": self.read,
            "kept": self.kept,
            "dropped": self.dropped,
            "skipped": self.skipped,
            "malformed": self.malformed,
            "unfingerprinted": self.unfingerprinted,
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


@dataclass
class _Copying:
    """What the copy of every file of an input shares: how its records are read, their fates,
    the places of the ids seen (an id given twice keeps its first place, across shards too)
    and the counts so far."""

    kind: RecordKind
    fields: Fields
    max_line: int | None
    kept: dict[str, int | None]
    dropped: dict[str, Fate]
    annotation: str = ANNOTATION
    passed: dict[str, str] = field(default_factory=dict)
    places: Placed = field(default_factory=Placed)
    copied: Copied = field(default_factory=Copied)


def copy_records(
    source: str,
    kind: RecordKind,
    kept: dict[str, int | None],
    dropped: dict[str, Fate],
    targets: Targets,
    max_line: int | None,
    fields: Fields = DEFAULT_FIELDS,
    *,
    passed: dict[str, str] | None = None,
    unchanged: Callable[[], None] = lambda: None,
) -> Copied:
    """Copy the records of ``source`` whose id is in ``kept`` to ``targets.kept``, those in
    ``dropped`` to ``targets.dropped``, and every one of them, its fate added, to
    ``targets.annotated``, in input order. ``kept`` maps each kept id to its cluster (None: in
    none); ``passed`` names those of them that were not fingerprinted, and why; ``fields`` says
    where the records' ids are, as for the first reading. ``unchanged`` is called when every
    record is written, before any output is renamed into place (it raises if the input is
    not the one decided on).

    Shards (a directory or a glob) are copied shard for shard: each target is then a directory
    that gets every shard under its path relative to the input's (compressed as it was), made
    beside it and renamed into place when all are written; the metadata of JSON Lines goes
    beside the directory (``DIR.simhash.json``).

    Raises:
        OutputError: an output cannot be written (what was written of it is removed).
        InputError: the input changed since it was first read (a record of the first reading
            is not there, or ``unchanged`` says so), or a record already has the annotation's
            key: nothing is written.
    """
    copying = _Copying(kind, fields, max_line, kept, dropped, targets.annotation, passed or {})
    with ExitStack() as stack:
        if not is_sharded(source):
            _copy_file(source, targets, copying, stack)
        else:
            places = [
                None if path is None else stack.enter_context(_directory_beside(path))
                for path in targets.paths
            ]
            root = root_of_shards(source)
            for shard in shards_of(source):
                relative = os.path.relpath(shard, root)
                in_place = [None if p is None else os.path.join(p, relative) for p in places]
                for path in in_place:
                    if path is not None:
                        os.makedirs(os.path.dirname(path), exist_ok=True)
                with ExitStack() as shard_stack:
                    kept_at, dropped_at, annotated_at = in_place
                    shard_targets = Targets(kept_at, dropped_at, annotated_at, targets.metadata)
                    _copy_file(shard, shard_targets, copying, shard_stack)
        _check(copying, source)
        unchanged()
        if not holds_parquet(source):
            for path in targets.paths:
                if path is not None:
                    _write_sidecar(sidecar_of(path), targets.metadata)
    return copying.copied


def _copy_file(source: str, targets: Targets, copying: _Copying, stack: ExitStack) -> None:
    """One file's records copied to ``targets``, each output completed when ``stack`` closes
    (and removed if it closes on an error)."""
    if parquet.is_parquet(source):
        _copy_parquet(source, targets, copying, stack)
        return
    name = "<stdin>" if source == STDIN else source
    copier = _LineCopier(copying, *(stack.enter_context(_atomic(p)) for p in targets.paths))
    with open_text(source, newline="") as handle:
        block: list[str | None] = []
        first = 1
        for line in bounded_lines(handle, copying.max_line):
            block.append(line)
            if len(block) == LINES_PER_BLOCK:
                copier.copy(block, first, name)
                first, block = first + len(block), []
        copier.copy(block, first, name)


def fate_record(
    kept: bool, fate: Fate | None, cluster: int | None, skipped: str | None = None
) -> dict[str, Any]:
    """What ``--annotated`` adds to a record (``--dropped`` too, without ``kept`` and
    ``skipped``): ``skipped`` says why a kept record was not fingerprinted."""
    return {
        "kept": kept,
        "duplicate_of": None if fate is None else fate.duplicate_of,
        "cosine": None if fate is None else fate.cosine,
        "cluster": cluster if fate is None else fate.cluster,
        "skipped": skipped,
    }


def _dropped_fate(fate: Fate) -> dict[str, Any]:
    """What ``--dropped`` adds to a record."""
    return {"duplicate_of": fate.duplicate_of, "cosine": fate.cosine, "cluster": fate.cluster}


class _LineCopier:
    """JSON Lines records, a block of lines at a time, each to the outputs its fate names."""

    def __init__(
        self,
        copying: _Copying,
        kept_out: _Writer | None,
        dropped_out: _Writer | None,
        annotated_out: _Writer | None,
    ) -> None:
        self.copying = copying
        self.kept_out, self.dropped_out, self.annotated_out = kept_out, dropped_out, annotated_out

    def copy(self, block: list[str | None], first: int, name: str) -> None:
        copying = self.copying
        places = copying.places
        records = parse_lines(
            block, name, first, copying.kind, _ignore, unique=places, fields=copying.fields
        )
        key = copying.annotation
        for record, line in zip(records, places.lines, strict=True):
            text = block[line - first]
            assert text is not None
            where = f"{name}:{line}"
            if record.id in copying.kept:
                if self.kept_out is not None:
                    self.kept_out.write_bytes(text.encode("utf-8"))
                copying.copied.kept += 1
                passed = copying.passed.get(record.id)
                annotation = fate_record(True, None, copying.kept[record.id], passed)
            elif (fate := copying.dropped.get(record.id)) is not None:
                if self.dropped_out is not None:
                    self.dropped_out.write_bytes(_annotated(text, key, _dropped_fate(fate), where))
                copying.copied.dropped += 1
                annotation = fate_record(False, fate, None)
            else:
                continue
            if self.annotated_out is not None:
                self.annotated_out.write_bytes(_annotated(text, key, annotation, where))
        del places.lines[:]


def _annotated(text: str, key: str, annotation: dict[str, Any], where: str) -> bytes:
    """The JSON line ``text`` with ``"key": annotation`` added as its object's last member,
    and nothing else changed: every byte of the record as it was (its numbers as written, its
    spacing, a key given twice), its line end kept. The annotation is ASCII (an id with a lone
    surrogate is escaped, as JSON allows), so the line stays valid UTF-8.

    Raises:
        InputError: the record already has ``key`` (the user's own data is never replaced).
    """
    value = json.loads(text)
    if key in value:
        raise InputError(_clash(where, f"a key {key!r}"))
    line = text.rstrip("\r\n")
    body = line.rstrip()
    after = line[len(body) :] + (text[len(line) :] or "\n")  # spaces, the line end
    assert body.endswith("}"), where  # a record is an object (the first reading said so)
    inner = body[:-1]
    separator = "" if inner.strip() == "{" else ", "
    added = json.dumps(key) + ": " + json.dumps(annotation, ensure_ascii=True)
    return (inner + separator + added + "}" + after).encode("utf-8")


def _clash(where: str, what: str) -> str:
    return (
        f"{where}: the records already have {what}, where their fate would go: name another "
        "with --annotation-field"
    )


def annotation_clash(record: Any, name: str, where: str) -> str:
    """Why a record (its parsed object) or a Parquet schema (a list of its column names)
    cannot take the fate ``name``, or ''."""
    if isinstance(record, dict):
        return _clash(where, f"a key {name!r}") if name in record else ""
    taken = [column for column in record if column in fate_columns(name)]
    return _clash(where, f"a column {taken[0]!r}") if taken else ""


def fate_columns(name: str) -> list[str]:
    """The Parquet columns of a fate, ``name`` their prefix, in :data:`FATE_COLUMNS`' order."""
    return [f"{name}_{column}" for column in FATE_COLUMNS]


class _Writer:
    """An output written whole or not at all (:class:`AtomicFile`), compressed when its name
    ends in ``.gz`` or ``.zst`` (gzip without a time or a name in its header: the same
    records make the same bytes)."""

    def __init__(self, path: str) -> None:
        self.target = AtomicFile(path)
        compression = compression_of(path)
        self._compressor: Any = None
        if compression == "gzip":
            self._compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        elif compression == "zstd":
            try:
                import zstandard
            except ImportError as exc:
                raise ParameterError(MISSING_ZSTANDARD) from exc
            self._compressor = zstandard.ZstdCompressor(level=3).compressobj()

    def write_bytes(self, data: bytes) -> None:
        if self._compressor is not None:
            data = self._compressor.compress(data)
        if data:
            self.target.write_bytes(data)

    def write(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))

    def commit(self) -> None:
        if self._compressor is not None:
            self.target.write_bytes(self._compressor.flush())
        self.target.commit()


@contextmanager
def _atomic(path: str | None) -> Iterator[_Writer | None]:
    if path is None:
        yield None
        return
    writer = _Writer(path)
    try:
        yield writer
    except BaseException:
        writer.target.discard()
        raise
    writer.commit()


@contextmanager
def _directory_beside(path: str) -> Iterator[str]:
    """A temporary directory beside ``path``, renamed to it when the block completes (over
    an empty directory, the only kind there may be) and removed when it fails."""
    parent = os.path.dirname(os.path.abspath(path))
    try:
        temporary = tempfile.mkdtemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=parent
        )
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    try:
        yield temporary
        os.chmod(temporary, _directory_mode())
        os.replace(temporary, path)
    except OSError as exc:
        shutil.rmtree(temporary, ignore_errors=True)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def _directory_mode() -> int:
    """The mode a new directory gets (mkdtemp's is 0700)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def _write_sidecar(path: str, metadata: dict[str, Any]) -> None:
    with _atomic(path) as out:
        assert out is not None
        out.write(json.dumps(metadata, indent=2, ensure_ascii=False) + "\n")


@contextmanager
def _parquet_writer(path: str, schema: Any) -> Iterator[Callable[[Any], None]]:
    """A Parquet file of ``schema`` written beside ``path`` (with the mode a new file gets),
    renamed over it when the block completes, removed when it fails; what the block gets
    writes a table to it. A write that fails (a full disk) names ``path``.

    Raises:
        OutputError: ``path`` cannot be written.
    """
    import pyarrow.parquet as pq

    into = written_into(path)
    if into is not None:  # a pipe or a device: written into, as the shell's > does
        try:
            with open(into, "wb") as sink, pq.ParquetWriter(sink, schema) as writer:
                yield writer.write_table
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory
        )
        os.fchmod(descriptor, new_file_mode(path))
        os.close(descriptor)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    try:
        try:
            with pq.ParquetWriter(temporary, schema) as writer:
                yield writer.write_table
            os.replace(temporary, path)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _copy_parquet(source: str, targets: Targets, copying: _Copying, stack: ExitStack) -> None:
    """Batch by batch (:data:`COPY_ROWS` rows, however large the row groups): each batch's rows
    parsed as the first reading parsed them, the kept rows written with the input's schema,
    the dropped (and the annotated) ones with the columns of their fate after the input's
    (``simhash_*``, or the prefix asked for).

    Raises:
        InputError: the input already has a column of that name.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    copied, places, kept, dropped = copying.copied, copying.places, copying.kept, copying.dropped
    meta = {ANNOTATION.encode(): json.dumps(targets.metadata).encode()}
    file = pq.ParquetFile(stack.enter_context(open_file(source)))
    clash = annotation_clash(file.schema_arrow.names, copying.annotation, source)
    if clash:
        raise InputError(clash)
    schema = file.schema_arrow.with_metadata({**(file.schema_arrow.metadata or {}), **meta})
    # What a record duplicates is named as the id column names it, in its very type (uint64
    # ids of 2**63 and more do not fit an int64).
    id_column = copying.fields.columns(copying.kind)[-1]
    names = file.schema_arrow.names
    id_type = file.schema_arrow.field(id_column).type if id_column in names else pa.string()
    integer_ids = pa.types.is_integer(id_type)
    types = {
        "kept": pa.bool_(),
        "duplicate_of": id_type if integer_ids else pa.string(),
        "cosine": pa.float64(),
        "cluster": pa.int64(),
        "skipped": pa.string(),
    }
    shapes = {
        "kept": (),
        "dropped": ("duplicate_of", "cosine", "cluster"),
        "annotated": FATE_COLUMNS,
    }
    prefix = copying.annotation
    writers: dict[str, tuple[Callable[[Any], None], tuple[str, ...]]] = {}
    for role, path in zip(shapes, targets.paths, strict=True):
        if path is not None:
            added = shapes[role]
            made = [*schema, *(pa.field(f"{prefix}_{c}", types[c]) for c in added)]
            shape = pa.schema(made, metadata=schema.metadata)
            writers[role] = (stack.enter_context(_parquet_writer(path, shape)), added)
    first = 1
    wanted = parquet.needed_columns(source, copying.kind, copying.fields, file.schema_arrow.names)
    for batch in file.iter_batches(batch_size=COPY_ROWS, use_threads=False):
        records = parquet.records_of(
            source, batch.select(wanted), first, copying.kind, fields=copying.fields,
            on_bad_line=_ignore, unique=places, max_line=copying.max_line,
        )  # fmt: skip
        fates: dict[str, list[tuple[int, dict[str, Any]]]] = {"kept": [], "dropped": []}
        for record, line in zip(records, places.lines, strict=True):
            if record.id in kept:
                passed = copying.passed.get(record.id)
                fate = fate_record(True, None, kept[record.id], passed)
                fates["kept"].append((line - first, fate))
            elif (dropped_fate := dropped.get(record.id)) is not None:
                fates["dropped"].append((line - first, fate_record(False, dropped_fate, None)))
        del places.lines[:]
        copied.kept += len(fates["kept"])
        copied.dropped += len(fates["dropped"])
        if writers and (fates["kept"] or fates["dropped"]):
            table = pa.Table.from_batches([batch])
            chosen = {
                "kept": fates["kept"],
                "dropped": fates["dropped"],
                "annotated": sorted(fates["kept"] + fates["dropped"], key=lambda f: f[0]),
            }
            for role, (write, added) in writers.items():
                if chosen[role]:
                    taken = table.take([row for row, _ in chosen[role]])
                    for name in added:
                        values = [fate[name] for _, fate in chosen[role]]
                        if name == "duplicate_of":
                            named = int if integer_ids else str
                            values = [None if v is None else named(v) for v in values]
                        field_ = pa.field(f"{prefix}_{name}", types[name])
                        taken = taken.append_column(field_, pa.array(values, types[name]))
                    write(taken.replace_schema_metadata(schema.metadata))
        first += batch.num_rows


def _check(copying: _Copying, source: str) -> None:
    """Every record decided on was found again (else the outputs are not made)."""
    copied, decided = copying.copied, len(copying.kept) + len(copying.dropped)
    if (copied.kept, copied.dropped) != (len(copying.kept), len(copying.dropped)):
        raise InputError(
            f"{source} changed while it was read: {copied.kept + copied.dropped:,} of the "
            f"{decided:,} records decided on were found again, so nothing was written"
        )
