"""The ``simhash`` group: where errors become one line and an exit code, for every command.

A :class:`~simhash_cli.errors.UsageError` is shown as click shows misuse (the usage line, then
the error; exit 2), a :class:`~simhash_cli.errors.SimhashError` as ``Error: ...`` with its exit
code; either names parameters by this command's flags. ``--traceback`` shows the real
exception instead.
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

import click

from .. import __version__
from ..errors import BadValueError, ExitCode, SimhashError, UsageError

__all__ = ["Command", "Group", "exit_with", "main", "spell"]


@dataclass(frozen=True)
class Face:
    """What the group's own options say to every command."""

    traceback: bool = False


def spell(command: click.Command, name: str) -> str:
    """A parameter as this command spells it: its flag (``-o``, ``--max-bytes``) or its
    argument's name (``DIR``); a parameter it does not have, as every command would."""
    for param in command.params:
        if param.name != name:
            continue
        if isinstance(param, click.Option):
            return param.opts[0]
        return (param.metavar or name.upper()).strip("[]").removesuffix("...")
    return "--" + name.replace("_", "-")


def _fail(ctx: click.Context, message: str, code: ExitCode) -> NoReturn:
    """One ``Error: ...`` line on stderr, then exit with ``code``."""
    click.echo(f"Error: {message}", err=True)
    ctx.exit(code)


def exit_with(code: ExitCode) -> NoReturn:
    """End the command with ``code`` once its data is out (a status, not an error)."""
    sys.stdout.flush()
    click.get_current_context().exit(code)


class Command(click.Command):
    """A command whose errors are shown the one way (see the module's docstring)."""

    def invoke(self, ctx: click.Context) -> Any:
        def named(name: str) -> str:
            return spell(self, name)

        try:
            return super().invoke(ctx)
        except SimhashError as exc:
            face = ctx.find_object(Face)
            if face is not None and face.traceback:
                raise
            if isinstance(exc, BadValueError):
                hint = named(exc.parameter)
                raise click.BadParameter(exc.render(named), ctx=ctx, param_hint=hint) from None
            if isinstance(exc, UsageError):
                raise click.UsageError(exc.render(named), ctx=ctx) from None
            _fail(ctx, exc.render(named), exc.exit_code)
        except KeyboardInterrupt:
            face = ctx.find_object(Face)
            if face is not None and face.traceback:
                raise
            _fail(ctx, "interrupted", ExitCode.INTERRUPTED)
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, and keep Python's own flush at
            # exit from failing again on the closed pipe.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(ExitCode.BROKEN_PIPE)


class Group(click.Group):
    """A group whose commands (and groups) are :class:`Command` (and :class:`Group`)."""

    command_class = Command
    group_class = type


def _buffered(stream: TextIO) -> TextIO:
    """Standard output over a buffered writer, even under PYTHONUNBUFFERED=1 (or ``-u``).

    Unbuffered, the text layer hands each write to the file descriptor once and drops what a
    short write left over: a record cut in half, and a reader that went away (``| head``)
    never noticed. A buffered writer writes until all is written or fails loudly.
    """
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(stream.buffer, io.RawIOBase):
        return stream
    stream.flush()
    raw = io.FileIO(stream.fileno(), "w", closefd=False)
    return io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=True,
    )


@click.group(
    cls=Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="simhash")
@click.option("--traceback", is_flag=True, help="Show the full Python traceback on errors.")
@click.pass_context
def main(ctx: click.Context, traceback: bool) -> None:
    """Find near-duplicate documents with SimHash fingerprints.

    Documents become weighted term vectors, vectors become b-bit fingerprints whose Hamming
    distance estimates their angle (cosine ~ cos(pi * hamming / b)), and fingerprints that agree
    on a whole block become candidates, verified before they are reported.

    \b
    Examples:
      simhash dedupe sample_corpus/
      simhash compare --bits 32 a.txt b.txt
      simhash fingerprint docs/ > fps.jsonl && simhash dedupe --fingerprints fps.jsonl
    """
    ctx.obj = Face(traceback=traceback)
    sys.stdout = _buffered(sys.stdout)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            # A character the locale cannot encode (or a lone surrogate from a JSON id, or a
            # file name that is not UTF-8) is written as a backslash escape, never a traceback.
            stream.reconfigure(errors="backslashreplace")
