"""``dedupe --texts FILE --kept OUT``: the dataset without its near-duplicates.

Each cluster keeps one record, the one its rule prefers (``--keep first``, the default, keeps
the earliest in input order; ``--keep longest`` the longest text; ``--keep-by FIELD:max`` the
largest value of a field), and every other member is dropped as a near-duplicate of it. The
input is then read again and copied (:mod:`simhash_cli.io.sinks.dataset`): the kept records
whole and unchanged, the dropped ones, if asked, with what each duplicated.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
from typing import Any

import numpy as np

from ...core.against import Decontamination
from ...core.corpus import Corpus, given_ids
from ...core.result import DedupeResult
from ...errors import BadValueError, InputError, UsageError
from ...io.places import root_of
from ...io.sinks.dataset import (
    ANNOTATION,
    Copied,
    Fate,
    Tally,
    Targets,
    annotation_clash,
    copy_records,
)
from ...io.sinks.formats import counted
from ...io.sources import parquet
from ...io.sources.dispatch import records_and_rows
from ...io.sources.shards import (
    RECORD_SUFFIXES,
    glob_matches,
    is_glob,
    is_sharded,
    root_of_shards,
    shards_of,
)
from ...io.sources.snapshot import Snapshot, snapshot
from ..hooks import Hooks
from ..settings import Input, Source

__all__ = [
    "check_dataset",
    "first_reading",
    "write_dataset",
    "write_decontaminated",
]


def check_dataset(
    source: Source, outputs: dict[str, str | None], annotation: str = ANNOTATION
) -> None:
    """Raises: UsageError: records that cannot be read again and copied, a rule for files, or
    an output in another format than the input's. BadValueError: records that already have the
    ``annotation`` where ``--dropped`` or ``--annotated`` would add their fate (the columns of a
    Parquet file, the first record of JSON Lines: the others are checked as they are copied)."""
    if source.kind not in (Input.TEXTS, Input.VECTORS) or source.location in (None, "-"):
        raise UsageError(
            "{kept} and {dropped} copy records: give {texts} or {vectors} FILE (a file: it is "
            "read again to copy them)",
            parameters=("kept", "dropped", "texts", "vectors"),
        )
    sharded = is_sharded(source.location)
    if not sharded and not os.path.isfile(source.location):
        raise UsageError(
            f"{{kept}} and {{dropped}} copy the records of a file, or of the shards of a "
            f"directory or glob, read again; {source.location} is none of them",
            parameters=("kept", "dropped"),
        )
    if outputs.get("dropped") is not None or outputs.get("annotated") is not None:
        _check_annotation(source, annotation)
    if sharded:
        for name, path in outputs.items():
            if path is not None:
                _check_directory(name, path, source.location)
        return
    parquet_in = parquet.is_parquet(source.location)
    for name, path in outputs.items():
        if path is not None and os.path.isdir(path):
            raise BadValueError(
                f"{path} is a directory: one input file is written to one file", parameter=name
            )
        if path is not None and parquet.is_parquet(path) != parquet_in:
            form = "Parquet (.parquet)" if parquet_in else "JSON Lines (not .parquet)"
            raise BadValueError(
                f"{path}: the records are written as they came, in {form}", parameter=name
            )


def _check_annotation(source: Source, annotation: str) -> None:
    """Raises: BadValueError: the input's records already have ``annotation``."""
    location = source.location
    assert location is not None
    for shard in shards_of(location):
        if parquet.is_parquet(shard):
            clash = annotation_clash(parquet.column_names(shard), annotation, shard)
        else:
            first = next(records_and_rows(shard, source.kind.value, source.fields), None)
            clash = "" if first is None else annotation_clash(first[1], annotation, shard)
        if clash:
            raise BadValueError(clash, parameter="annotation_field")


def _check_directory(name: str, path: str, location: str) -> None:
    """Raises: BadValueError: ``path`` cannot become the directory of a copy of the shards
    of ``location``: it holds files, it is a file, or the copy would be read as shards of
    the input by a later run (inside its directory, or matched by its glob)."""
    if os.path.islink(path):  # the copy is renamed into place: a link cannot be replaced
        raise BadValueError(
            f"{path} is a symbolic link: name the directory itself "
            f"({os.path.realpath(path)}), or a new one",
            parameter=name,
        )
    root = root_of_shards(location)
    written = [os.path.join(path, os.path.relpath(s, root)) for s in shards_of(location)]
    within = root_of(path, [location]) if not is_glob(location) else None
    if within is not None or any(glob_matches(w, location) for w in written):
        raise BadValueError(
            f"{path} lies among the shards of {location}: a later run would read the copy as "
            "input; write it elsewhere",
            parameter=name,
        )
    if os.path.isdir(path):
        if os.listdir(path):
            raise BadValueError(
                f"{path} is a directory that holds files: the shards are written to a new (or "
                "empty) directory, never among others",
                parameter=name,
            )
        return
    if os.path.lexists(path):
        raise BadValueError(f"{path} is a file: shards are written to a directory", parameter=name)
    if path.lower().endswith(RECORD_SUFFIXES):
        raise BadValueError(
            f"{path}: the input is shards, written back as shards under a directory; name a "
            "directory (or give one input file to have one output file)",
            parameter=name,
        )


def first_reading(source: Source, hooks: Hooks) -> Snapshot:
    """The input of ``--kept``/``--dropped``/``--annotated`` as it is before its first
    reading: every file's bytes digested, to be checked when the records are copied.

    Raises:
        InputError: the input cannot be read, or changed while it was digested.
    """
    assert source.location is not None
    with hooks.status(f"taking a digest of {source.location}, to copy its records from"):
        return snapshot(source.location)


def _version() -> str:
    try:
        return importlib.metadata.version("simhash-cli")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "unknown"


def write_dataset(
    result: DedupeResult,
    source: Source,
    targets: Targets,
    hooks: Hooks,
    *,
    rule: str,
    max_line: int | None,
    before: Snapshot,
) -> Tally:
    """Copy the kept records (and the dropped ones) of ``source`` where ``targets`` say, with
    the run's counts and settings in each output's metadata; ``before``: the input before
    its first reading.

    Raises:
        InputError: the input cannot be read again (standard input), or changed since.
    """
    docs, groups = result.corpus, result.groups
    ids = given_ids(docs.ids)
    dropped: dict[str, Fate] = {}
    for number, members in enumerate(groups.clusters):
        kept_row = int(groups.representative[number])
        for m in members.tolist():
            if m != kept_row:
                cosine = float(groups.cosine[m])
                dropped[docs.ids[m]] = Fate(ids[kept_row], _rounded(cosine), number)
    clustered = {
        docs.ids[int(kept_row)]: number for number, kept_row in enumerate(groups.representative)
    }
    kept = {doc_id: clustered.get(doc_id) for doc_id in docs.ids if doc_id not in dropped}
    run = {
        "threshold": result.config.threshold,
        "scheme": result.scheme.label(docs.settings.bits),
        "verify": result.config.verify.value,
        "clustering": groups.kind.value,
        "keep": rule,
    }
    return _copied(docs, source, kept, dropped, targets, run, hooks, max_line, before)


def write_decontaminated(
    result: Decontamination,
    source: Source,
    against: str,
    targets: Targets,
    hooks: Hooks,
    *,
    max_line: int | None,
    before: Snapshot,
) -> Tally:
    """:func:`write_dataset` for ``--against REF``: every record within the threshold of a
    reference record is dropped, as a near-duplicate of the one it matches best (``cluster``
    null); the others are kept.

    Raises:
        InputError: the input cannot be read again (standard input), or changed since.
    """
    docs, refs = result.corpus, given_ids(result.reference.ids)
    dropped = {
        docs.ids[row]: Fate(refs[int(result.matched[row])], _rounded(result.cosine[row]), None)
        for row in result.flagged.tolist()
    }
    kept: dict[str, int | None] = {d: None for d in docs.ids if d not in dropped}
    run = {
        "against": against,
        "reference_documents": len(result.reference),
        "threshold": result.config.threshold,
        "scheme": result.scheme.label(docs.settings.bits),
        "verify": result.config.verify.value,
    }
    return _copied(docs, source, kept, dropped, targets, run, hooks, max_line, before)


def _rounded(cosine: float) -> float | None:
    return None if np.isnan(cosine) else round(float(cosine), 12)


def _copied(
    docs: Corpus,
    source: Source,
    kept: dict[str, int | None],
    dropped: dict[str, Fate],
    targets: Targets,
    run: dict[str, Any],
    hooks: Hooks,
    max_line: int | None,
    before: Snapshot,
) -> Tally:
    """The records of ``source`` copied by their fates, with the counts, the settings and
    ``run`` (what decided) in each output's metadata. A record that was not fingerprinted (no
    word) is kept: a dedupe pass never filters. Nothing is renamed into place unless the input
    is, byte for byte, what ``before`` saw."""
    location = source.location
    if location in (None, "-"):
        raise InputError("{kept} and {dropped} read the records again: give them in a file",
                         parameters=("kept", "dropped"))  # fmt: skip
    malformed = sum(1 for s in docs.skipped if s.kind == "malformed")
    passed = {s.id: s.reason for s in docs.skipped if s.kind != "malformed"}
    kept = {**kept, **dict.fromkeys(passed)}
    tally = Tally(len(docs) + len(docs.skipped), len(kept), len(dropped),
                  len(docs.skipped) - len(passed), malformed, len(passed))  # fmt: skip
    metadata = {
        "tool": f"simhash-cli {_version()}",
        "input": location,
        "counts": tally.record(),
        **source.fields.names(source.kind.value),
        **docs.settings.names(),
        **run,
    }
    kind = source.kind.value
    with hooks.status(f"writing {counted(len(kept), 'kept record')}"):
        copied: Copied = copy_records(
            location,
            kind,
            kept,
            dropped,
            dataclasses.replace(targets, metadata=metadata),
            max_line,
            source.fields,
            passed=passed,
            unchanged=before.check_all,
        )
    assert (copied.kept, copied.dropped) == (tally.kept, tally.dropped)
    return tally
