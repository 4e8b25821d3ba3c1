"""The ``simhash`` group: where errors become one line and an exit code, for every command.

A :class:`~simhash_cli.errors.UsageError` is shown as click shows misuse (the usage line, then
the error; exit 2), a :class:`~simhash_cli.errors.SimhashError` as ``Error: ...`` with its exit
code; either names parameters by this command's flags. ``--traceback`` shows the real
exception instead.
"""

from __future__ import annotations

import difflib
import errno
import importlib
import io
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

import click
from click.shell_completion import CompletionItem

from .. import __version__
from ..errors import BadValueError, ExitCode, SimhashError, UsageError
from ..io.sinks.console import PLAIN, wrapped_at_spaces
from ..io.sinks.steps import step_of
from ..io.sinks.visible import visible
from .help import format_sections, with_short_help

__all__ = ["Command", "Group", "exit_with", "main", "named", "spell"]


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
    """One ``Error: ...`` line on stderr (on a terminal, wrapped at a space), then exit with
    ``code``."""
    click.echo(on_the_terminal(f"Error: {message}", sys.stderr), err=True)
    ctx.exit(code)


def on_the_terminal(text: str, stream: TextIO) -> str:
    """``text`` as it is to be written to ``stream``: on a terminal, each ``Error:`` line wider
    than the terminal wrapped at a space (:func:`wrapped_at_spaces`), as the terminal would
    otherwise cut it mid-word; any other line (click's usage line, a help) and, to a log or a
    pipe, everything unchanged (one line a message, whatever its length)."""
    try:
        if not stream.isatty():
            return text
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):  # no descriptor, or no size to read
        return text
    if width < 20:
        return text
    lines = text.split("\n")
    return "\n".join(
        wrapped_at_spaces(line, width) if line.startswith("Error:") else line for line in lines
    )


_HELP_SHOWN = getattr(click.exceptions, "NoArgsIsHelpError", ())
"""What click raises to show a help (a command given no argument): laid out by click itself."""


def _wrapped_on_show(exc: click.ClickException) -> None:
    """``exc``, shown as click shows it but wrapped for the terminal (:func:`on_the_terminal`):
    click writes its usage line and its ``Error: ...`` line itself, unwrapped."""
    if getattr(exc, "_wrapped", False) or isinstance(exc, _HELP_SHOWN):
        return
    show: Callable[..., None] = exc.show

    def shown(file: Any = None) -> None:
        stream = file if file is not None else sys.stderr
        written = io.StringIO()
        show(file=written)
        stream.write(on_the_terminal(written.getvalue().rstrip("\n"), stream) + "\n")
        stream.flush()

    exc.show = shown  # type: ignore[method-assign]
    exc._wrapped = True  # type: ignore[attr-defined]


def exit_with(code: ExitCode) -> NoReturn:
    """End the command with ``code`` once its data is out (a status, not an error)."""
    sys.stdout.flush()
    click.get_current_context().exit(code)


class Command(click.Command):
    """A command whose errors are shown the one way (see the module's docstring), and whose
    help is in sections, ``-h`` the short one (:mod:`.help`)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        if not any(p.name == "color" for p in params):
            params = [*params, colour_option()]
        return with_short_help(params, ctx)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        format_sections(self, ctx, formatter)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # here, where a full disk is an error of its own, not at exit
            return result
        except SimhashError as exc:
            self._refuse(ctx, exc)
        except (KeyboardInterrupt, MemoryError) as exc:
            face = ctx.find_object(Face)
            if face is not None and face.traceback:
                raise
            if isinstance(exc, MemoryError):
                _fail(ctx, _out_of_memory(exc), ExitCode.ERROR)
            _fail(ctx, "interrupted", ExitCode.INTERRUPTED)
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, and keep Python's own flush at
            # exit from failing again on the closed pipe.
            _drop_stdout()
            ctx.exit(ExitCode.BROKEN_PIPE)
        except OSError as exc:
            if exc.errno not in _CANNOT_WRITE:
                raise
            # Standard output on a full disk (``> /dev/full``), over a quota or a size limit.
            _drop_stdout()
            _fail(
                ctx,
                f"cannot write {exc.filename or 'standard output'}: {exc.strerror}",
                ExitCode.ERROR,
            )

    def _refuse(self, ctx: click.Context, exc: SimhashError) -> NoReturn:
        """A user's error: misuse as click shows it, anything else as one ``Error:`` line."""
        face = ctx.find_object(Face)
        if face is not None and face.traceback:
            raise exc

        def named(name: str) -> str:
            return spell(self, name)

        message = visible(exc.render(named))  # names in it are the user's: escaped
        if isinstance(exc, BadValueError):
            hint = named(exc.parameter)
            raise click.BadParameter(message, ctx=ctx, param_hint=hint) from None
        if isinstance(exc, UsageError):
            raise click.UsageError(message, ctx=ctx) from None
        _fail(ctx, message, exc.exit_code)


def _out_of_memory(exc: MemoryError) -> str:
    """What ran out, and where: numpy names the array it could not make, the step names the
    work (the innermost progress or status the run was in)."""
    what = str(exc).strip()
    what = what[:1].lower() + what[1:] if what else "Python could not allocate memory"
    step = step_of(exc)
    where = f" while {step}" if step else ""
    return (
        f"out of memory{where} ({what}): this run needs more memory than this process may "
        "use (ulimit -v, a container's limit); give it more, or fewer documents per run"
    )


_CANNOT_WRITE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}


def _drop_stdout() -> None:
    """Standard output to /dev/null: what is still buffered is dropped, and Python's own
    flush at exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class Group(click.Group):
    """A group whose commands (and groups) are :class:`Command` (and :class:`Group`).

    ``lazy`` names commands by where they are declared (``"module:attribute"``) with their
    one-line summaries (:data:`SUMMARIES`), imported when first asked for: ``simhash compare``
    does not import what ``dedupe`` needs, and the group's help, which lists them all, imports
    none of them (each imports numpy and scipy: 0.6 s before the list was printed)."""

    command_class = Command
    group_class = type

    def __init__(self, *args: Any, lazy: Mapping[str, str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The commands that start with ``incomplete`` (those not loaded from
        :data:`SUMMARIES`: completing a command's name imports none), then the options."""
        results = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if not name.startswith(incomplete) or (command is not None and command.hidden):
                continue
            summary = SUMMARIES[name] if command is None else command.get_short_help_str()
            results.append(CompletionItem(name, help=summary))
        return results + click.Command.shell_complete(self, ctx, incomplete)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands with their summaries, those not loaded from :data:`SUMMARIES`."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name)
            if command is None and name in self.lazy:
                rows.append((name, SUMMARIES[name]))
            elif command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        return with_short_help(super().get_params(ctx), ctx)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:  # the group's own options (an unknown one)
            _wrapped_on_show(exc)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # a command's options, or its refusal
            _wrapped_on_show(exc)
            raise

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        known = name.startswith("-") or ctx.resilient_parsing or self.get_command(ctx, name)
        if not known:
            # Click suggests among the commands loaded; these are loaded when first asked for,
            # so the names they are declared by are matched here.
            close = difflib.get_close_matches(name, self.list_commands(ctx))
            hint = ""
            if len(close) == 1:
                hint = f" Did you mean {close[0]!r}?"
            elif close:
                hint = f" (Did you mean one of: {', '.join(map(repr, sorted(close)))}?)"
            raise click.UsageError(f"No such command {visible(name)!r}.{hint}", ctx=ctx)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            self.add_command(named(self.lazy[cmd_name]), cmd_name)
        return super().get_command(ctx, cmd_name)


def named(name: str) -> Any:
    """What ``"module:attribute"`` names, the module relative to this package, imported now:
    a command when the group is asked for it, a request when a command runs."""
    module, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module, __package__), attribute)


def _colour(choice: str) -> None:
    """``--color``: said to Rich as its environment says it (NO_COLOR, FORCE_COLOR), for this
    process and its workers; ``never`` writes no escape at all, bold and italic included
    (:data:`~simhash_cli.io.sinks.console.PLAIN`). Whether a stream is a terminal is read
    from the stream itself, so colours forced into a file never make it one (no bar, no width
    of 80)."""
    if choice == "never":
        os.environ["NO_COLOR"] = "1"
        os.environ[PLAIN] = "1"
        os.environ.pop("FORCE_COLOR", None)
    elif choice == "always":
        os.environ["FORCE_COLOR"] = "1"
        os.environ.pop("NO_COLOR", None)
        os.environ.pop(PLAIN, None)


_COLOR_HELP = (
    "Colours in tables and messages: on a terminal (auto), also into a pipe or a file "
    "(always, for less -R), or never (no colour, bold or italic)."
)


def _colour_given(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None and not ctx.resilient_parsing:
        _colour(value)


def colour_option() -> click.Option:
    """``--color`` after the command too (``simhash dedupe --color never DIR``)."""
    return click.Option(
        ["--color"],
        type=click.Choice(["auto", "always", "never"]),
        default=None,
        expose_value=False,
        is_eager=True,
        callback=_colour_given,
        help=_COLOR_HELP,
    )


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


SUMMARIES = {
    "apply": "Act on a dedupe --plan: move, link or delete its files.",
    "calibrate": "Measure the estimates and the block schemes on your documents.",
    "compare": "Compare a document with others: Hamming and cosines.",
    "dedupe": "Find near-duplicate documents and group them into clusters.",
    "explain": "Why two documents match: features, blocks and a diff.",
    "fingerprint": "Print one fingerprint record per document.",
    "index": "A persistent index: add documents over time, query it.",
    "plan": "Which candidate scheme suits a threshold and corpus.",
}
"""Each command's summary: the group's help lists them without importing the commands, and
each command declares its own as ``short_help=SUMMARIES[name]``."""


@click.group(
    cls=Group,
    context_settings={"help_option_names": ["--help"], "max_content_width": 100},
    lazy={
        "fingerprint": ".fingerprint:fingerprint_command",
        "compare": ".compare:compare_command",
        "explain": ".explain:explain_command",
        "dedupe": ".dedupe:dedupe_command",
        "apply": ".apply:apply_command",
        "plan": ".schemes:plan_command",
        "calibrate": ".schemes:calibrate_command",
        "index": ".index:index_group",
    },
)
@click.version_option(__version__, prog_name="simhash")
@click.option("--traceback", is_flag=True, help="Show the full Python traceback on errors.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help=_COLOR_HELP,
)
@click.pass_context
def main(ctx: click.Context, traceback: bool, color: str) -> None:
    """Find near-duplicate documents with SimHash fingerprints.

    Documents become weighted term vectors, vectors become b-bit fingerprints whose Hamming
    distance estimates their angle (cosine ~ cos(pi * hamming / b)), and fingerprints that agree
    on a whole block become candidates, verified before they are reported.

    \b
    Examples:
      simhash dedupe sample_corpus/
      simhash compare --bits 32 a.txt b.txt
      simhash fingerprint docs/ > fps.jsonl
      simhash dedupe --fingerprints fps.jsonl
    """
    ctx.obj = Face(traceback=traceback)
    _colour(color)
    sys.stdout = _buffered(sys.stdout)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            # A character the locale cannot encode (or a lone surrogate from a JSON id, or a
            # file name that is not UTF-8) is written as a backslash escape, never a traceback.
            stream.reconfigure(errors="backslashreplace")
