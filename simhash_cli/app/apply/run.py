"""``simhash apply``'s run: the steps of a plan taken (or checked, in a dry run) under its lock
and journal, or written as a shell script for review, or (``--undo``) taken back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from ...core.events import Progress
from .apply import apply, apply_records
from .journal import JOURNAL_VERSION, Journal, exclusive
from .loading import load_plan
from .request import ApplyRequest
from .script import write_script
from .steps import LoadedPlan
from .undo import Undo, undo_of, undo_steps


def loaded_plan(request: ApplyRequest) -> LoadedPlan:
    """The plan, read as hostile input, and checked against the request (its roots and the
    action's bounds)."""
    return request.check_plan(load_plan(request.plan_path))


def script_of(request: ApplyRequest, plan: LoadedPlan) -> bytes:
    """``apply --script``: the steps as a POSIX shell script, for review."""
    return write_script(
        plan,
        request.act,
        destination=request.destination,
        protect=request.protect,
        consent=request.delete_near_duplicates,
    )


def journal_header(request: ApplyRequest, plan: LoadedPlan) -> dict[str, Any]:
    """The first line of a journal: the plan (by its SHA-256), action and destination it is
    the journal of."""
    return {
        "journal": JOURNAL_VERSION,
        "plan": plan.path,
        "plan_sha256": plan.sha256,
        "action": request.act.value,
        "destination": request.destination,
    }


def undo_plan(request: ApplyRequest) -> tuple[Undo, LoadedPlan]:
    """``apply --undo JOURNAL``: the run the journal records, and its plan checked against
    the request (its roots) as a run's is."""
    undo, plan = undo_of(request.journal_path, request.plan)
    return undo, request.check_plan(plan)


@contextmanager
def taking_back(
    request: ApplyRequest, undo: Undo, plan: LoadedPlan, progress: Progress
) -> Iterator[Iterator[dict[str, Any]]]:
    """``simhash apply --undo``: the record of each step taken back (or checked), under the
    plan's lock and the journal's, as a run holds them."""
    with ExitStack() as held:
        journal = None
        if request.execute:
            held.enter_context(exclusive(plan.path))
            journal = Journal(undo.journal, undo.header, len(undo.plan.steps))
            journal.open()
            held.callback(journal.close)
        if progress.on_listed is not None:
            progress.on_listed(len(undo.steps))
        outcomes = undo_steps(undo, plan, execute=request.execute, journal=journal)
        yield apply_records(outcomes, undo.action, undo=True)


@contextmanager
def taking_steps(
    request: ApplyRequest, plan: LoadedPlan, progress: Progress
) -> Iterator[Iterator[dict[str, Any]]]:
    """``simhash apply``: the record of each step as it is taken (or, in a dry run, checked).
    When it acts, the run holds the plan's lock and its journal for its whole length."""
    with ExitStack() as held:
        journal = None
        if request.execute:
            held.enter_context(exclusive(plan.path))
            journal = Journal(request.journal_path, journal_header(request, plan), len(plan.steps))
            journal.open()
            held.callback(journal.close)
        if progress.on_listed is not None:
            progress.on_listed(len(plan.steps))
        outcomes = apply(
            plan,
            request.act,
            destination=request.destination,
            execute=request.execute,
            journal=journal,
            protect=request.protect,
            consent=request.delete_near_duplicates,
            on_step=progress.on_read,
        )
        yield apply_records(outcomes, request.act)
