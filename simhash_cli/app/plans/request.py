"""What a dedupe is asked to write as its action plan (``--plan FILE``), whichever command
ran the search (``dedupe``, ``index dedupe``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..keep.rule import KeepRule

__all__ = ["PlanRequest"]


@dataclass(frozen=True)
class PlanRequest:
    """``dedupe --plan FILE``: what would be done with each cluster, written to ``path``."""

    path: str
    rule: KeepRule = field(default_factory=KeepRule)
    roots: tuple[str, ...] = ()
    """The paths scanned: no step of the plan may act outside them."""
