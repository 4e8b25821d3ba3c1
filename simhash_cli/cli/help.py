"""The help a person reads: every command's options in sections, the first hour's first, and
``-h``, the short help (those options alone), beside ``--help``, the whole.

The sections are one table for every command: a shared option is spelled the same everywhere,
so it sits in the same section everywhere. Click writes each section (its own
``HelpFormatter.section`` and ``write_dl``): nothing here formats text by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import click

__all__ = ["SECTIONS", "format_sections", "short_help_option"]


# (title, the parameters it holds by name). In this order, after the ones of the first hour.
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Input",
        ("vectors", "texts", "fingerprints", "text_field", "id_field", "on_error"),
    ),
    (
        "Search",
        (
            "threshold",
            "blocks",
            "max_distance",
            "minhash",
            "verify",
            "limit",
            "top",
            "pilot",
            "max_candidates",
            "max_pairs",
            "clustering",
            "group_pairs",
            "audit",
            "docs",
            "background",
            "seeds",
            "max_docs",
        ),
    ),
    (
        "Output",
        (
            "format",
            "output",
            "listing",
            "null",
            "check_pairs",
            "report",
            "quiet",
            "verbose",
            "color",
        ),
    ),
    (
        "Plan and apply",
        (
            "plan",
            "keep",
            "protect",
            "action",
            "yes",
            "delete_near_duplicates",
            "journal",
            "script",
            "root",
            "undo",
        ),
    ),
    (
        "Dataset",
        ("kept", "dropped", "annotated", "annotation_field", "keep_by", "memory", "index"),
    ),
    ("Decontamination", ("against", "against_text_field", "against_id_field")),
    (
        "Files",
        (
            "exclude",
            "include",
            "hidden",
            "no_ignore",
            "follow_symlinks",
            "max_bytes",
            "strict_encoding",
            "include_empty",
            "min_length",
        ),
    ),
    ("Fingerprints", ("bits", "seed", "ngram", "char_ngrams", "weighting")),
    ("Engine", ("jobs", "engine", "scheduler", "workers")),
)

FIRST_HOUR = frozenset(
    {
        "texts",
        "vectors",
        "fingerprints",
        "text_field",
        "threshold",
        "blocks",
        "limit",
        "format",
        "output",
        "listing",
        "null",
        "check_pairs",
        "quiet",
        "verbose",
        "plan",
        "report",
        "keep",
        "protect",
        "action",
        "yes",
        "undo",
        "kept",
        "dropped",
        "against",
        "exclude",
        "include",
        "hidden",
        "no_ignore",
        "bits",
        "jobs",
    }
)
"""The options a person reaches for in the first hour: ``-h`` shows these alone, and
``--help`` first."""

_SECTION_OF = {name: title for title, names in SECTIONS for name in names}
_ORDER = {title: place for place, (title, _) in enumerate(SECTIONS)}
OTHER = "Other options"
_HELP = ("help", "h")
_SHORT = "simhash.short-help"


def _sections(
    params: Sequence[click.Parameter], short: bool
) -> Iterator[tuple[str, list[click.Parameter]]]:
    """The options in their sections, in the table's order; with ``short``, only the first
    hour's."""
    placed: dict[str, list[click.Parameter]] = {}
    for param in params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        name = param.name or ""
        if short and name not in FIRST_HOUR:
            continue  # -h and --help among them: the footer names --help
        placed.setdefault(_SECTION_OF.get(name, OTHER), []).append(param)
    for title in sorted(placed, key=lambda title: _ORDER.get(title, len(_ORDER))):
        yield title, placed[title]


def _parts(
    params: Sequence[click.Parameter], short: bool
) -> list[tuple[str, list[click.Parameter]]]:
    """The sections written, with their titles: the first hour's options in theirs, then
    (unless ``short``) the others in theirs, ``More ...`` where a section was begun above."""
    first = list(_sections(params, short=True))
    if short:
        return first
    shown = {id(p) for _, options in first for p in options}
    begun = {title for title, _ in first}
    rest = []
    for title, options in _sections(params, short=False):
        others = [p for p in options if id(p) not in shown]
        if others:
            rest.append(
                (f"More {title[0].lower()}{title[1:]}" if title in begun else title, others)
            )
    return first + rest


def format_sections(
    command: click.Command, ctx: click.Context, formatter: click.HelpFormatter
) -> None:
    """``command``'s options as click writes a definition list, a section each: the first
    hour's first (its first screen), then the others; under ``-h`` the first hour's alone,
    and how many more ``--help`` shows."""
    short = bool(ctx.meta.get(_SHORT))
    params = command.get_params(ctx)
    shown = 0
    for title, options in _parts(params, short):
        records = [record for param in options if (record := param.get_help_record(ctx))]
        shown += len(records)
        with formatter.section(title):
            formatter.write_dl(records)
    everything = sum(len(options) for _, options in _sections(params, short=False))
    left = everything - shown - sum(p.name in _HELP for p in params)
    if short and left:
        formatter.write_paragraph()
        formatter.write_text(
            f"{left} more option{'s' if left != 1 else ''}: {ctx.command_path} --help"
        )


def _short_help(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    ctx.meta[_SHORT] = True
    click.echo(ctx.get_help(), color=ctx.color)
    ctx.exit()


def short_help_option() -> click.Option:
    """``-h``: the usage, the description and the first hour's options."""
    return click.Option(
        ["-h"],
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_short_help,
        help="Show the options of the first hour and exit (--help: all of them).",
    )


def with_short_help(params: list[click.Parameter], ctx: click.Context) -> list[Any]:
    """``params`` with ``-h`` after them, unless the command has an ``-h`` of its own."""
    if any(isinstance(p, click.Option) and "-h" in p.opts for p in params):
        return params
    return [*params, short_help_option()]
