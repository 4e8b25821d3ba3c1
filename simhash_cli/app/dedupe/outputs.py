"""What a dedupe writes besides its pairs, as its request names them: the dataset's records
(:class:`DatasetRequest`), and with the action plan (a
:class:`~simhash_cli.app.plans.request.PlanRequest`) and the report page, :class:`AfterRun`,
each written after the run by :func:`~.run.after_run`."""

from __future__ import annotations

from dataclasses import dataclass

from ...io.sinks.dataset import Targets
from ...io.sources.snapshot import Snapshot
from ..keep import DEFAULT_KEEP
from ..plans.request import PlanRequest
from ..settings import Source


@dataclass(frozen=True)
class DatasetRequest:
    """``dedupe --kept FILE`` / ``--dropped FILE``: where the records go, and the name of the
    rule that kept them."""

    source: Source
    targets: Targets
    rule: str = DEFAULT_KEEP.value
    max_line: int | None = None


@dataclass(frozen=True)
class AfterRun:
    """What a dedupe writes besides its pairs, each when asked: the action plan, the report
    page (its file, and what the run read) and the dataset's records (with the input as it was
    before the run, to copy them from)."""

    plan: PlanRequest | None = None
    page: tuple[str, Source] | None = None
    dataset: tuple[DatasetRequest, Snapshot] | None = None
