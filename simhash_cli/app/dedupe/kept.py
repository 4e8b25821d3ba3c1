"""The keep rule: which member of each cluster is kept, and the clusters made around it. One
rule for everything a run shows and writes (the table, the groups, the plan, the report, a
dataset's records): ``central`` (the default) leaves the clusters as the search made them,
around their most central member; the others rank every document (files under a protected
root first) and the clusters are made again around the best of each."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...core.groups import rank_of
from ...core.result import DedupeResult
from ...core.search import centrality_of, group_pairs_of
from ...errors import InputError
from ...io.sources.dispatch import records_and_rows
from ..apply.plans import keep_rank
from ..keep import DEFAULT_KEEP, FILE_RULES, Keep
from ..settings import Source
from .datasets import KeepBy

__all__ = ["KeepRule", "kept", "preference"]


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
