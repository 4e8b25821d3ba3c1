"""The keep rule: which member of each cluster is kept, and the clusters made around it. One
rule for everything a run shows and writes (the table, the groups, the plan, the report, a
dataset's records): ``central`` (the default) leaves the clusters as the search made them,
around their most central member; the others rank every document (files under a protected
root first) and the clusters are made again around the best of each."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.clusters.groups import rank_of
from ...core.pipeline import centrality_of, group_pairs_of
from ...core.result import DedupeResult
from ...errors import BadValueError, InputError
from ...io.places import root_of
from ...io.sources.dispatch import records_and_rows
from ...io.sources.fields import FieldPath
from ..settings import Source
from . import DEFAULT_KEEP, FILE_RULES, Keep

__all__ = ["KeepBy", "KeepRule", "file_key", "keep_rank", "kept", "preference"]


@dataclass(frozen=True)
class KeepBy:
    """``--keep-by FIELD:max|min``: the record whose ``field`` (a path, as ``--text-field``
    takes) is largest (smallest) is kept; records without a number there come last, input
    order breaks ties."""

    field: FieldPath
    largest: bool = True

    @classmethod
    def parse(cls, text: str) -> KeepBy:
        """Raises: BadValueError: not FIELD:max or FIELD:min."""
        name, _, way = text.rpartition(":")
        if not name or way not in ("max", "min"):
            raise BadValueError(
                f"{text!r}: expected FIELD:max or FIELD:min, e.g. quality:max", parameter="keep_by"
            )
        return cls(FieldPath.parse(name, "keep_by"), way == "max")

    def __str__(self) -> str:
        return f"{self.field}:{'max' if self.largest else 'min'}"


@dataclass(frozen=True)
class KeepRule:
    """Which member of each cluster is kept: one rule for everything a run shows and writes
    (the table, the groups, the plan, the report, a dataset's records), the clusters made
    around that member (:func:`~.kept.kept`)."""

    keep: Keep = DEFAULT_KEEP
    by: KeepBy | None = None
    """Records: the one whose field is largest (smallest) instead, ``--keep-by``."""
    protect: tuple[str, ...] = ()
    """Files under these roots before all others (a plan's ``--protect``)."""
    source: Source | None = None
    """Where records are read again for the length of their text or a field."""

    @property
    def name(self) -> str:
        """The rule as a dataset's metadata records it."""
        return self.keep.value if self.by is None else str(self.by)


def kept(result: DedupeResult, rule: KeepRule) -> DedupeResult:
    """The clusters made around the member each keeps by ``rule``."""
    rank = preference(result, rule)
    if rank is None:
        return result
    groups = group_pairs_of(
        result.pairs, len(result.corpus), result.config, rank=rank, components=result.clusters
    )
    return dataclasses.replace(result, groups=groups)


def preference(result: DedupeResult, rule: KeepRule) -> NDArray[np.int64] | None:
    """Every document's place in the order ``rule`` prefers them (0 = kept first), or None
    when it is the search's own (central, nothing protected).

    Raises:
        InputError: a rule for files, and the files were not read in this run.
    """
    docs = result.corpus
    if rule.by is not None or (docs.stamps is None and rule.keep is Keep.LONGEST):
        assert rule.source is not None  # DedupeRequest.check: records read again
        return _by_values(_values(rule.source, docs.ids, rule.by), rule.by)
    if rule.keep is Keep.CENTRAL and not rule.protect:
        return None
    central = centrality_of(result) if rule.keep is Keep.CENTRAL else None
    if docs.stamps is None:
        if rule.keep in FILE_RULES or rule.protect:  # refused before reading
            raise InputError(f"--keep {rule.keep.value} needs the files read in this run")
        return np.arange(len(docs), dtype=np.int64) if central is None else central
    return keep_rank(docs.ids, docs.stamps, rule.keep, rule.protect, central)


def _by_values(values: NDArray[np.float64], by: KeepBy | None) -> NDArray[np.int64]:
    """The order of records by their text's length (longest first) or ``by``'s field; no
    value comes last, input order breaks ties."""
    key = -values if by is None or by.largest else values
    key = np.where(np.isnan(key), np.inf, key)
    return rank_of(np.lexsort((np.arange(values.size), key)))


def _values(source: Source, ids: list[str], by: KeepBy | None) -> NDArray[np.float64]:
    """Each document's text length (``by`` None) or its record's ``by`` field (NaN: none)."""
    kind = source.kind.value
    wanted = {doc_id: row for row, doc_id in enumerate(ids)}
    values = np.full(len(ids), np.nan)
    also = () if by is None else (by.field.column,)
    seen: set[str] = set()
    for record, fields in records_and_rows(source.location or "-", kind, source.fields, also=also):
        row = wanted.get(record.id)
        if row is None or record.id in seen:  # a later record of one id was left out
            continue
        seen.add(record.id)
        if by is None:
            values[row] = len(getattr(record, "text", ""))
            continue
        got = by.field.get(fields)
        if isinstance(got, (int, float)) and not isinstance(got, bool):
            try:
                values[row] = float(got)
            except OverflowError:  # an integer beyond any float: it sorts beyond them all
                values[row] = math.inf if got > 0 else -math.inf
    return values


def file_key(keep: Keep, position: int, path: str, size: int, mtime_ns: int) -> tuple[Any, ...]:
    """Sort key of a file by ``keep`` (its position in the input, or for ``central`` in the
    order of centrality; path, size, modification time): the kept file sorts first, the path
    breaking every tie."""
    keys: dict[Keep, tuple[Any, ...]] = {
        Keep.CENTRAL: (position, path),
        Keep.OLDEST: (mtime_ns, path),
        Keep.NEWEST: (-mtime_ns, path),
        Keep.LONGEST: (-size, path),
        Keep.SHORTEST_PATH: (len(path), path),
        Keep.FIRST: (position, path),
    }
    return keys[keep]


def keep_rank(
    ids: Sequence[str],
    stamps: NDArray[np.void],
    keep: Keep,
    protect: Sequence[str] = (),
    central: NDArray[np.int64] | None = None,
) -> NDArray[np.int64]:
    """Every document's place in the order ``keep`` prefers them (0 = kept first), files under
    a ``protect`` root before all others, as :func:`make_plan` ranks a cluster's files (the
    file's state as the scan read it: its size and modification time in ``stamps``). For
    ``central``, ``central`` is each document's place in the order of centrality."""
    protected = [os.path.realpath(root) for root in protect]
    paths = [os.path.abspath(doc_id) for doc_id in ids]
    guarded = [
        bool(protected) and root_of(os.path.realpath(path), protected) is not None for path in paths
    ]
    size, mtime = stamps["size"].tolist(), stamps["mtime_ns"].tolist()
    assert keep is not Keep.CENTRAL or central is not None, "central ranks by centrality"
    position = list(range(len(paths))) if central is None else central.tolist()
    order = sorted(
        range(len(paths)),
        key=lambda i: (not guarded[i], *file_key(keep, position[i], paths[i], size[i], mtime[i])),
    )
    rank = np.empty(len(paths), dtype=np.int64)
    rank[order] = np.arange(len(paths), dtype=np.int64)
    return rank
