"""``simhash apply PLAN``: act on an action plan, or write the script that would."""

from __future__ import annotations

import sys
from collections import Counter
from typing import TYPE_CHECKING, cast

import click

from ..app.apply.actions import Action, Status
from ..errors import ExitCode
from ..io.sinks.formats import Format
from .main import SUMMARIES, Command, exit_with
from .options import as_enum, collapse, later, own, protect_option
from .outputs import OUTPUT, quiet_option, writable_file
from .types import Choices

if TYPE_CHECKING:
    from ..app.apply.request import ApplyRequest
    from ..app.apply.steps import LoadedPlan
    from ..io.sinks.messages import Messages

__all__ = ["apply_command"]


@click.command("apply", cls=Command, short_help=SUMMARIES["apply"])
@collapse(
    own(
        click.argument("plan", metavar="PLAN", required=False),
        click.argument("directory", metavar="[DIR]", required=False),
        click.option(
            "--action",
            type=Choices([a.value for a in Action]),
            default=None,
            callback=as_enum(Action),
            help="move-to DIR: move each file marked remove to DIR (under its absolute path); "
            "hardlink / symlink: replace it by a link to its cluster's kept file; delete: "
            "delete it.",
        ),
        click.option(
            "--yes",
            "execute",
            is_flag=True,
            help="Act. Without it: a dry run, every check, no change.",
        ),
        click.option(
            "--delete-near-duplicates",
            is_flag=True,
            help="Consent to lose what only a near-duplicate says: required for --action delete "
            "(its dry run too, which takes every check --yes would), and for hardlink / "
            "symlink over a file whose bytes differ from the kept file's (byte-identical files "
            "need none).",
        ),
        click.option(
            "--journal",
            metavar="FILE",
            default=None,
            help="With --yes: where each step and its outcome are recorded [default: "
            "PLAN.journal]. A journal of the same plan is resumed: its done steps are skipped.",
        ),
        click.option(
            "--script",
            metavar="FILE|-",
            default=None,
            callback=writable_file,
            help="Instead of acting: write a POSIX shell script taking the same steps with the "
            "same checks, for review (run it with sh FILE).",
        ),
        protect_option(
            "PATH (a file, or the files under a directory) is never touched, besides the "
            "plan's own protected paths."
        ),
        click.option(
            "--root",
            "roots",
            type=click.Path(exists=True),
            multiple=True,
            metavar="DIR",
            help="Steps act only inside DIR (repeatable). Needed for a plan your own simhash "
            "dedupe --plan did not write or that was changed since (its seal does not check "
            "out); narrows the roots of one that did.",
        ),
        click.option(
            "--undo",
            metavar="JOURNAL",
            default=None,
            help="Take back what the run JOURNAL records did (PLAN: the one it names): each "
            "moved file moved back, each link made a file of its own again where its bytes "
            "were the kept file's. A dry run unless --yes.",
        ),
    ),
    OUTPUT,
    into=later("..app.apply.request:ApplyRequest"),
)
@quiet_option
def apply_command(request: ApplyRequest, messages: Messages) -> None:
    """Act on a plan written by `simhash dedupe --plan PLAN`; `simhash apply --undo JOURNAL`
    takes a run back.

    Each file the plan marks remove is moved to DIR, replaced by a link to its cluster's kept
    file, or deleted. Just before each step, both files are checked to be the ones the plan
    recorded (device, inode, size, mtime and the SHA-256 of their bytes); a step that would
    touch a protected file, act on two names of one file, or leave its cluster without the
    kept file is refused, and the others go on. A dry run unless --yes. Each step and its
    outcome go to a journal, so running the same command again resumes an interrupted run.
    Exit 0 when every step was taken (or would be), 4 when any was refused or failed.

    \b
    Examples:
      simhash dedupe --plan plan.json corpus/
      simhash apply plan.json --action move-to /tmp/near-duplicates  # dry run
      simhash apply plan.json --action move-to /tmp/near-duplicates --yes
      simhash apply plan.json --action delete --delete-near-duplicates \\
        --script review.sh
      simhash apply --undo plan.json.journal --yes  # take it back
    """
    from ..app.apply.run import loaded_plan  # (the help imports no run)

    request.check()
    if request.undo is not None:
        _undo(request, messages)
        return
    plan = loaded_plan(request)
    messages.info(request.bounds_text(plan))
    if request.script is not None:
        _write_script(request, plan, messages)
        return
    statuses = _take_steps(request, plan, messages)
    journal = request.journal_path if request.execute else None
    messages.apply_summary(statuses, executed=request.execute, journal=journal)
    if statuses[Status.REFUSED.value] or statuses[Status.FAILED.value]:
        exit_with(ExitCode.INCOMPLETE)


def _undo(request: ApplyRequest, messages: Messages) -> None:
    """``--undo JOURNAL``: the run's steps taken back (checked, in a dry run)."""
    from ..app.apply.run import taking_back, undo_plan
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_apply

    undo, plan = undo_plan(request)
    messages.info(request.bounds_text(plan))
    fmt = request.output.resolve(sys.stdout)
    label = f"undo {undo.action.value}"
    with opened(request.output.path) as out:
        with (
            messages.progress("steps") as progress,
            taking_back(request, undo, plan, progress) as steps,
        ):
            if fmt is not Format.TABLE:
                statuses = emit_apply(steps, label, fmt, out)
            else:
                taken = list(steps)
        if fmt is Format.TABLE:
            statuses = emit_apply(taken, label, fmt, out)
    journal = request.journal_path if request.execute else None
    messages.apply_summary(statuses, executed=request.execute, journal=journal)
    if statuses[Status.REFUSED.value] or statuses[Status.FAILED.value]:
        exit_with(ExitCode.INCOMPLETE)


def _take_steps(request: ApplyRequest, plan: LoadedPlan, messages: Messages) -> Counter[str]:
    """The steps taken (or checked), their records written as asked; how many ended how."""
    from ..app.apply.run import taking_steps
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_apply

    output = request.output
    fmt = output.resolve(sys.stdout)
    with opened(output.path) as out:
        with (
            messages.progress("steps") as progress,
            taking_steps(request, plan, progress) as steps,
        ):
            if fmt is not Format.TABLE:  # records stream as the steps are taken
                return emit_apply(steps, request.act.value, fmt, out)
            taken = list(steps)
        # A table waits for the bar to leave the terminal: drawn while the bar is live, the
        # two would share a line.
        return emit_apply(taken, request.act.value, fmt, out)


def _write_script(request: ApplyRequest, plan: LoadedPlan, messages: Messages) -> None:
    """``--script FILE|-``: the steps as a shell script, for review; nothing is changed."""
    from ..app.apply.run import script_of
    from ..io.sinks.atomic import AtomicFile, atomic_output
    from ..io.sources.files import STDIN

    script = script_of(request, plan)
    if request.script == STDIN:
        sys.stdout.flush()
        sys.stdout.buffer.write(script)
        sys.stdout.buffer.flush()
        where = "standard output"
    else:
        assert request.script is not None
        with atomic_output(request.script) as out:
            cast(AtomicFile, out).write_bytes(script)
        where = request.script
    messages.info(
        f"script of {len(plan.steps):,} steps written to {where} (nothing was changed): "
        "review it, then run it with sh"
    )
