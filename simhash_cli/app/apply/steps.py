"""The steps of a plan: what is done to each file marked ``remove`` (:class:`Action`), how each
step ended (:class:`Status`), and a plan as loaded and checked (:class:`LoadedPlan`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...io.places import identity, inside
from ..plans.document import FileState
from .actions import Action, Status

__all__ = ["TEMP_SUFFIX", "Action", "LoadedPlan", "Outcome", "Status", "Step"]


TEMP_SUFFIX = ".simhash-apply"


@dataclass(frozen=True)
class Step:
    """One file to act on, and the kept file of its cluster (``number`` counts from 1)."""

    number: int
    cluster: int
    target: FileState
    kept: FileState


@dataclass(frozen=True)
class Outcome:
    step: Step
    status: Status
    detail: str
    destination: str | None = None


@dataclass(frozen=True)
class LoadedPlan:
    """A plan file read and checked: its steps, the paths it scanned (``roots``), its protected
    roots, and its digest (which ties a journal to it).

    ``sealed``: this user's ``dedupe --plan`` wrote it and nobody changed it since (its seal
    checks out, :mod:`.seal`), else ``unsealed`` says why not. ``bounds``: the roots no step
    acts outside: the plan's own when it is sealed, narrowed to the roots given to apply
    (``--root``); only those when it is not (:meth:`bounded_by`).
    """

    path: str
    sha256: str
    protect: list[str]
    steps: list[Step]
    roots: list[str]
    sealed: bool = False
    unsealed: str = ""
    bounds: tuple[str, ...] = ()
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    """What the plan says it was made with (bits, seed, tokenizer, weighting, threshold):
    trusted for nothing but the check of an unsealed plan's pairs (:mod:`.near`)."""

    def bounded_by(self, given: Sequence[str]) -> LoadedPlan:
        """This plan bound to what a run may touch, with ``given`` the roots named on apply's
        command line (see the class)."""
        given = [os.path.realpath(root) for root in given]
        if not self.sealed:
            return dataclasses.replace(self, bounds=tuple(given))
        if not given:
            return dataclasses.replace(self, bounds=tuple(self.roots))
        # Inside a given root and inside a plan's root: the deeper of the two, for each pair.
        mine = [place for root in self.roots if (place := identity(root)) is not None]
        theirs = [place for root in given if (place := identity(root)) is not None]
        deeper = [root for root in given if inside(root, mine)]
        deeper += [root for root in self.roots if inside(root, theirs) and root not in deeper]
        return dataclasses.replace(self, bounds=tuple(deeper))

    def members(self) -> list[str]:
        """Every file a step acts on or keeps."""
        named = {step.target.path for step in self.steps}
        named.update(step.kept.path for step in self.steps)
        return sorted(named)
