"""The options of what a command writes: its data (``-f``, ``-o``, and for a dedupe report
``--list`` and ``-0``) and its messages (``-q``, ``-v``)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import click

from ..app.memory import keep_freed_memory
from ..errors import UsageError
from ..io.sinks.atomic import in_place
from ..io.sinks.formats import Format, Listing, Output
from ..io.sinks.visible import visible
from .options import F, OptionGroup, collapse

if TYPE_CHECKING:
    from ..io.sinks.messages import Messages

__all__ = [
    "OUTPUT",
    "REPORT_OUTPUT",
    "dataset_output",
    "quiet_option",
    "side_file",
    "writable_file",
]


def writable_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A report's directory must exist and be writable: found out before any work, not after."""
    if value is None or value == "-":
        return value
    if in_place(value):  # a pipe or a device (-o /dev/null, -o >(cmd)): written into
        return value
    directory = os.path.dirname(os.path.abspath(value))
    if not os.path.isdir(directory):
        raise click.BadParameter(f"no such directory: {directory}")
    if not os.access(directory, os.W_OK):
        raise click.BadParameter(f"cannot write in {directory}")
    if os.path.isdir(value):
        raise click.BadParameter(f"{value} is a directory")
    return value


def side_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file written beside the command's data (``--plan``, ``--report``): never standard
    output, which carries that data; its directory writable, as for :func:`writable_file`."""
    if value == "-":
        raise click.BadParameter("needs a file: standard output carries the command's data")
    return writable_file(ctx, param, value)


def dataset_output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--kept``, ``--dropped``, ``--annotated``: a file as for :func:`side_file`, or a
    directory (the copy of shards, whose emptiness is the dataset's check)."""
    if value is not None and os.path.isdir(value):
        return value
    return side_file(ctx, param, value)


def _format_option(formats: Sequence[Format]) -> Callable[[Any], Any]:
    return click.option(
        "-f",
        "--format",
        "format",
        type=click.Choice([f.value for f in formats]),
        default=None,
        metavar="FORMAT",
        help=", ".join(f.value for f in formats[:-1])
        + f" or {formats[-1].value} [default: table on a terminal, else jsonl].",
    )


_OUTPUT_FILE = click.option(
    "-o",
    "--output",
    "output",
    metavar="FILE",
    default=None,
    callback=writable_file,
    help="Write to FILE, whole or not at all; .json and .csv name its format unless -f does.",
)


def _named_by_extension(format: str | None, output: str | None) -> None:
    """Refuse ``-o report.html`` without ``-f``: it wrote JSON Lines into a page's name; an
    HTML page is ``--report``'s (the data's formats are named by .json and .csv)."""
    page = output is not None and os.path.splitext(output)[1].lower() in (".html", ".htm")
    if format is None and page:
        raise UsageError(
            f"-o {visible(str(output))} would hold JSON Lines, not a page: write the HTML "
            "report with --report FILE (dedupe), or name the data's format with -f"
        )


def _output(format: str | None, output: str | None) -> Output:
    _named_by_extension(format, output)
    return Output(None if format is None else Format(format), output)


OUTPUT = OptionGroup(
    "output", [_format_option([f for f in Format if f is not Format.GROUPS]), _OUTPUT_FILE], _output
)
"""``output: Output``: ``-f/--format [table|json|jsonl|csv]`` and ``-o/--output FILE``."""


def _report_output(
    format: str | None, output: str | None, listing: str | None, null: bool
) -> Output:
    if null and format not in (None, Format.GROUPS.value):
        raise UsageError(f"-0/--null ends the names of the groups format, not of {format}")
    if null:
        format = Format.GROUPS.value  # -0 alone: the groups format, for xargs -0
    _named_by_extension(format, output)
    return Output(
        None if format is None else Format(format),
        output,
        None if listing is None else Listing(listing),
        null,
    )


REPORT_OUTPUT = OptionGroup(
    "output",
    [
        _format_option(list(Format)),
        _OUTPUT_FILE,
        click.option(
            "--list",
            "listing",
            type=click.Choice([listing.value for listing in Listing]),
            default=None,
            help="Each cluster, the member kept first, or each flagged pair [default: clusters].",
        ),
        click.option(
            "-0",
            "--null",
            is_flag=True,
            help="-f groups ended by NUL, for xargs -0.",
        ),
    ],
    _report_output,
)
"""A dedupe report's ``output: Output``: :data:`OUTPUT`, the groups format (each cluster's
names, blank-line separated, as fdupes and jdupes print them), ``--list`` and ``-0``."""


_MESSAGES = OptionGroup(
    "messages",
    [
        click.option(
            "-q",
            "--quiet",
            count=True,
            help="Nothing on stderr but errors.",
        ),
        click.option(
            "-v",
            "--verbose",
            is_flag=True,
            help="The whole account on stderr: the scheme, every hint, each file skipped.",
        ),
    ],
    lambda quiet, verbose: _messages(quiet, verbose),
)


def _messages(quiet: int, verbose: bool) -> Messages:
    from ..io.sinks.messages import Messages  # (imported by the run, never by the help)

    return Messages(sys.stderr, quiet=quiet, verbose=verbose)


def quiet_option(command: F) -> F:
    """``messages: Messages`` on stderr: ``-q/--quiet`` (errors only) and ``-v/--verbose``
    (a line for every file skipped, warned about or left out, and the whole account of a
    dedupe). What was skipped and not listed is summed up when the command ends, whichever way
    it ends but an interruption."""

    @functools.wraps(command)
    def summed_up(*args: Any, messages: Messages, **kwargs: Any) -> Any:
        from ..app.settings import Source

        source = getattr(kwargs.get("request"), "source", None)
        if isinstance(source, Source) and source.reads_stdin and sys.stdin.isatty():
            # A person at a terminal, not a pipe: say why nothing seems to happen, and draw
            # nothing over what they type.
            messages.info("reading standard input (type or paste the text, then Ctrl-D)")
            messages.typing = True
        keep_freed_memory()  # (a command's work, never its help: see app/memory)
        try:
            result = command(*args, messages=messages, **kwargs)
        except KeyboardInterrupt:
            raise  # stopped: what it had skipped so far is no news ("Error: interrupted")
        except BaseException:
            messages.event_summary()
            raise
        messages.event_summary()
        return result

    return collapse(_MESSAGES)(cast(F, summed_up))
