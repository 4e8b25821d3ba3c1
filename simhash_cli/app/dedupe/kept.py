"""The keep rule: which member of each cluster is kept, and the clusters made around it. A plan
keeps files by its rule (:class:`~simhash_cli.app.apply.plans.Keep`, protected files first), a
dataset keeps records by theirs (first in input order, the longest text, or a field's
extreme); without either the clusters stay as the search made them, around the most central
member."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.typing import NDArray

from ...core.result import DedupeResult
from ...core.search import group_pairs_of
from ...errors import InputError
from ...io.sources import records_and_rows
from ..apply.plans import Keep, keep_rank
from ..settings import Source
from .datasets import KeepBy
from .request import DatasetRequest, PlanRequest


def kept(
    result: DedupeResult, plan: PlanRequest | None, dataset: DatasetRequest | None
) -> DedupeResult:
    """The clusters made around what is kept: the plan's files, or the dataset's records, by
    their rule; otherwise as the search made them (around the most central member)."""
    if plan is not None:
        return kept_by_rule(result, plan)
    if dataset is not None:
        return kept_by(result, dataset.source, dataset.keep, dataset.by)
    return result


def kept_by_rule(result: DedupeResult, plan: PlanRequest) -> DedupeResult:
    """The clusters made around the files ``plan`` keeps (its keep rule, protected files
    first) instead of the most central ones, so that what is shown is what the plan does."""
    docs = result.corpus
    if docs.stamps is None:  # refused before reading (DedupeRequest.check)
        raise InputError("{plan} needs the files read in this run", parameters=("plan",))
    rank = keep_rank(docs.ids, docs.stamps, plan.keep, plan.protect)
    groups = group_pairs_of(
        result.pairs, len(docs), result.config, rank=rank, components=result.clusters
    )
    return dataclasses.replace(result, groups=groups)


def kept_by(result: DedupeResult, source: Source, keep: Keep, by: KeepBy | None) -> DedupeResult:
    """The clusters made around the record each keeps by the rule (first in input order, the
    longest text, or the ``by`` field's extreme)."""
    docs = result.corpus
    n = len(docs)
    if by is None and keep is Keep.FIRST:
        key: NDArray[np.float64] = np.zeros(n)
    else:
        values = _values(source, docs.ids, by)
        key = -values if by is None or by.largest else values
        key = np.where(np.isnan(key), np.inf, key)  # no value: last
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), key))] = np.arange(n, dtype=np.int64)
    groups = group_pairs_of(result.pairs, n, result.config, rank=rank, components=result.clusters)
    return dataclasses.replace(result, groups=groups)


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
