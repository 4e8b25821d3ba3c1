"""Option groups: each declares its options once and becomes ONE typed value.

:func:`reading_group` is ``reading: Reading``, :func:`source_group` ``source: Source``,
:data:`ENGINE` ``engine: EngineChoice``, :data:`OUTPUT` ``output: Output``, and a command's
:func:`own` options map one to one to the fields of its request or of the request's parts
(``--max-distance`` -> ``SearchRequest.max_distance``). ``@collapse(..., into=dedupe_request)``
hands the command one ``request``;
``@quiet_option`` gives it ``messages: Messages``. A default lives in the typed value; an option
left unset (None) is not given. Only the face knows click.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import click
from click.core import ParameterSource

from ..app.choices import FINGERPRINT_SETTINGS, EngineName, Input
from ..core.config import (
    DEFAULT_BITS,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_PAIRS,
    DEFAULT_SEED,
    DEFAULT_THRESHOLD,
    MAX_BITS,
    MAX_NGRAM,
    Weighting,
)
from ..errors import UsageError
from .main import named
from .types import COSINE, ByteSize

if TYPE_CHECKING:
    from ..app.settings import EngineChoice, Reading, Source
    from ..core.text.tokenizer import TokenizerConfig
    from ..io.sources.files import ReadPolicy

__all__ = [
    "ENGINE",
    "RECORDS_BY_ID",
    "OptionGroup",
    "as_enum",
    "collapse",
    "fingerprints_option",
    "jobs_option",
    "later",
    "max_candidates_option",
    "max_pairs_option",
    "own",
    "protect_option",
    "reading_group",
    "source_group",
    "threshold_option",
]

F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E", bound=Enum)


class Decorator(Protocol):
    """A decorator that hands back the command it was given, with options declared on it."""

    def __call__(self, command: F, /) -> F: ...


@dataclass(frozen=True)
class OptionGroup:
    """Options declared together that become one typed value: ``build(**their values)``
    under ``name``; or, without a name, each option's value under its own name (a request's
    own options, which map one to one to its fields)."""

    name: str | None
    options: Sequence[Callable[[Any], Any]]
    build: Callable[..., Any] | None = None


def collapse(*groups: OptionGroup, into: Callable[..., Any] | None = None) -> Decorator:
    """Declare the groups' options on a command (in this order) and hand it their typed values
    instead: each group's under its name, or with ``into`` all of them as ``request=into(...)``."""

    def decorate(command: F) -> F:
        spans: list[tuple[OptionGroup, list[str]]] = []

        @functools.wraps(command)
        def collapsed(*args: Any, **kwargs: Any) -> Any:
            fields: dict[str, Any] = {}
            for group, names in spans:
                values = {key: kwargs.pop(key) for key in names}
                if group.name is None:
                    # Unset: the request's own default.
                    fields.update(
                        (key, value) for key, value in values.items() if value is not None
                    )
                else:
                    assert group.build is not None
                    fields[group.name] = group.build(**values)
            if into is None:
                kwargs.update(fields)
            else:
                kwargs["request"] = into(**fields)
            return command(*args, **kwargs)

        wrapped: Any = collapsed
        for group in reversed(groups):
            before = len(getattr(wrapped, "__click_params__", []))
            for option in reversed(group.options):
                wrapped = option(wrapped)
            # click appends a parameter as each decorator applies: last declared, first added.
            added = reversed(wrapped.__click_params__[before:])
            spans.insert(0, (group, [param.name for param in added if param.name]))
        return cast(F, wrapped)

    return decorate


def later(name: str) -> Callable[..., Any]:
    """What ``module:attribute`` (relative to this package) names, called with the arguments
    given, imported only then: a command's request is made by the run, and its help imports
    none of what runs it."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return named(name)(*args, **kwargs)

    return call


def own(*options: Callable[[Any], Any]) -> OptionGroup:
    """A request's own options, each under its own name."""
    return OptionGroup(None, options)


def as_enum(kind: type[E]) -> Callable[[click.Context, click.Parameter, Any], E | None]:
    """A click callback that makes a Choice's text the enum member it names."""

    def convert(ctx: click.Context, param: click.Parameter, value: Any) -> E | None:
        return None if value is None else kind(value)

    return convert


def _given(names: Sequence[str]) -> frozenset[str]:
    """Which of ``names`` the user gave on the command line (not defaults)."""
    context = click.get_current_context()
    return frozenset(
        name for name in names if context.get_parameter_source(name) is ParameterSource.COMMANDLINE
    )


# ---------------------------------------------------------------------------- reading


def _check_bits(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None and not ctx.resilient_parsing:  # (a Tab's parse checks nothing)
        from ..core.sketch.fingerprint import validate_bits  # (the face imports no array library)
        from ..errors import SimhashError

        try:
            validate_bits(value)
        except SimhashError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


_SETTINGS = [
    click.option(
        "--bits",
        type=int,
        default=None,
        callback=_check_bits,
        help=f"Fingerprint width, a multiple of 8 from 8 to {MAX_BITS} [default: {DEFAULT_BITS}].",
    ),
    click.option(
        "--seed",
        type=click.IntRange(0, 2**32 - 1),
        default=None,
        help=f"Hash seed, 0 to 2^32-1 [default: {DEFAULT_SEED}].",
    ),
]
_TEXT = [
    click.option(
        "--ngram",
        type=click.IntRange(1, MAX_NGRAM),
        default=1,
        show_default=True,
        metavar="N",
        help="Word shingles of N words (1 = single words).",
    ),
    click.option(
        "--char-ngrams",
        type=click.IntRange(1, MAX_NGRAM),
        default=None,
        metavar="N",
        help="Use character N-grams instead of words.",
    ),
]
_FILES = [
    click.option(
        "--strict-encoding",
        is_flag=True,
        help="A file whose bytes are not valid text is an error (exit 1), not a warning "
        "with the bytes replaced.",
    ),
    click.option(
        "--max-bytes",
        type=ByteSize(),
        default=DEFAULT_MAX_BYTES,
        show_default="64M",
        metavar="SIZE",
        help="Skip larger files (a warning each): a document is read whole. Bytes, or with K, "
        "M or G; 0 for no limit.",
    ),
    click.option(
        "--follow-symlinks",
        is_flag=True,
        help="Descend into symbolic links to directories (each directory once; a link loop "
        "is reported, not followed). A link to a file is read, unless the walk meets the file "
        "itself.",
    ),
    click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="Leave out what a walk finds that matches GLOB ('*.log', 'build/'), in "
        ".gitignore's syntax. (repeatable)",
    ),
    click.option(
        "--include",
        multiple=True,
        metavar="GLOB",
        help="Read only the files a walk finds that match one GLOB ('*.txt', 'src/**/*.md'). "
        "(repeatable)",
    ),
    click.option(
        "--hidden",
        is_flag=True,
        help="Also walk hidden files and directories (names starting with '.', .git among "
        "them), which are left out by default.",
    ),
    click.option(
        "--no-ignore",
        is_flag=True,
        help="Do not honour .gitignore, .ignore, .git/info/exclude and git's excludes file "
        "(read as git reads them, up to the top of a work tree).",
    ),
]
_WEIGHTING = [
    click.option(
        "--weighting",
        type=click.Choice([w.value for w in Weighting]),
        default=Weighting.TF.value,
        show_default=True,
        help="Feature weight: term count, 1, 1+ln(count), or count x idf over these documents.",
    ),
]
_EMPTY = click.option(
    "--include-empty",
    is_flag=True,
    help="Keep documents without a token (empty, blank or punctuation only) instead of "
    "skipping them: fingerprint 0 with 0 features, and in dedupe one cluster of their own, "
    "never with a real document.",
)
_MIN_LENGTH = click.option(
    "--min-length",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Leave out texts of fewer than N words (characters, with --char-ngrams): counted in "
    "the summary, never compared; with --kept, passed through as they are.",
)


def _cap_jobs(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """``--jobs`` above the cores: capped, and the person told (on stderr, always)."""
    if value is None or ctx.resilient_parsing:  # (a Tab's parse caps nothing)
        return value
    from ..app.settings import capped_jobs  # (imported when --jobs is given)

    jobs, note = capped_jobs(value)
    if note is not None:
        click.echo(f"note: {note}", err=True)
    return jobs


_JOBS = click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 512),
    default=None,
    callback=_cap_jobs,
    show_default="all cores",
    help="Processes that read and tokenize (the results are the same for any number).",
)


def _tokenizer(ngram: int, char_ngrams: int | None) -> TokenizerConfig:
    from ..core.text.tokenizer import TokenizerConfig

    if char_ngrams is not None and ngram != 1:
        raise UsageError(
            "{ngram} and {char_ngrams} cannot be used together", parameters=("ngram", "char_ngrams")
        )
    return TokenizerConfig(ngram=ngram, char_ngrams=char_ngrams)


def _policy(
    strict_encoding: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    follow_symlinks: bool = False,
    exclude: tuple[str, ...] = (),
    include: tuple[str, ...] = (),
    hidden: bool = False,
    no_ignore: bool = False,
) -> ReadPolicy:
    from ..io.sources.files import ReadPolicy
    from ..io.sources.selection import Selection

    return ReadPolicy(
        strict_encoding=strict_encoding,
        max_bytes=max_bytes or None,
        follow_symlinks=follow_symlinks,
        selection=Selection(
            include=include, exclude=exclude, hidden=hidden, ignore_files=not no_ignore
        ),
    )


def _reading(
    bits: int | None = None,
    seed: int | None = None,
    ngram: int = 1,
    char_ngrams: int | None = None,
    weighting: str = Weighting.TF.value,
    include_empty: bool = False,
    min_length: int = 0,
    jobs: int | None = None,
    **files: Any,
) -> Reading:
    from ..app.settings import Reading
    from ..core.corpus import Admission, Settings

    # Only what was given: a setting not given takes Reading's own default, its one place.
    named = {"bits": bits, "seed": seed}
    settings = Settings(
        **{name: value for name, value in named.items() if value is not None},
        tokenizer=_tokenizer(ngram, char_ngrams),
        weighting=Weighting(weighting),
    )
    return Reading(
        settings,
        **({} if jobs is None else {"jobs": jobs}),
        policy=_policy(**files),
        admission=Admission(include_empty=include_empty, min_length=min_length),
        given=_given(FINGERPRINT_SETTINGS),
    )


def reading_group(*, text: bool = True, empty: bool = False, jobs: bool = True) -> OptionGroup:
    """``reading: Reading``: ``--bits``, ``--seed``; with ``text`` the tokenizer and how files
    are read and which a walk lists (``--ngram``, ``--char-ngrams``, ``--strict-encoding``,
    ``--max-bytes``, ``--follow-symlinks``, ``--exclude``, ``--include``, ``--hidden``,
    ``--no-ignore``, ``--weighting``); which documents are compared, ``--include-empty``
    and ``--min-length``, with ``empty``; ``-j`` with ``jobs``."""
    options = _SETTINGS + (_TEXT + _FILES + _WEIGHTING if text else [])
    options += ([_EMPTY, _MIN_LENGTH] if empty else []) + ([_JOBS] if jobs else [])
    return OptionGroup("reading", options, _reading)


def files_group() -> OptionGroup:
    """``policy: ReadPolicy``: how files are read and which a walk lists, for a command whose
    settings come from elsewhere (``index query``: the index's): the file options of
    :func:`reading_group`."""
    return OptionGroup("policy", _FILES, _policy)


def jobs_option(command: F) -> F:
    """``-j/--jobs`` alone, for a command that reads only what an index holds."""
    return _JOBS(command)


# ---------------------------------------------------------------------------- sources

_RECORD_HELP = {
    Input.VECTORS: 'Records {"id": ..., "features": {feature: weight}}: JSON Lines or Parquet, '
    "a file or shards.",
    Input.TEXTS: 'Records {"id": ..., "text": "..."}: JSON Lines (.gz, .zst) or Parquet, a file '
    "or shards (a directory, a quoted glob).",
    Input.FINGERPRINTS: "What 'simhash fingerprint' wrote; cosines are then estimated.",
}


def fingerprints_option(help_text: str) -> dict[Input, str]:
    """The help of ``--fingerprints`` for a command whose use of them differs."""
    return {Input.FINGERPRINTS: help_text}


def source_group(
    *kinds: Input, metavar: str = "[PATH|-]...", helps: dict[Input, str] | None = None
) -> OptionGroup:
    """``source: Source``: the PATHs argument and, for each of ``kinds``, ``--vectors``,
    ``--texts`` or ``--fingerprints FILE|-``, with ``--on-error`` for malformed records; one
    input at most."""
    texts = {**_RECORD_HELP, **(helps or {})}
    options: list[Callable[[Any], Any]] = [click.argument("paths", nargs=-1, metavar=metavar)]
    options += [
        click.option(f"--{kind.value}", metavar="FILE|-", default=None, help=texts[kind])
        for kind in kinds
    ]
    if Input.TEXTS in kinds:
        options.append(TEXT_FIELD)
    if Input.TEXTS in kinds or Input.VECTORS in kinds:
        options.append(ID_FIELD)
    options.append(
        click.option(
            "--on-error",
            type=click.Choice(["stop", "skip"]),
            default="stop",
            show_default=True,
            help="A malformed record of --texts, --vectors or --fingerprints: stop with "
            "FILE:LINE and nothing written, or skip it with a warning and count it.",
        )
    )
    return OptionGroup("source", options, _source)


def _source(
    paths: tuple[str, ...],
    on_error: str,
    text_field: tuple[str, ...] = (),
    id_field: str | None = None,
    **records: str | None,
) -> Source:
    from ..app.settings import Source
    from ..io.sources.fields import Fields

    given = {Input(kind): where for kind, where in records.items()}
    fields = Fields.of(text_field, id_field)
    return Source.of(paths, given, skip_bad_lines=on_error == "skip", fields=fields)


ID_FIELD = click.option(
    "--id-field",
    metavar="PATH",
    default=None,
    help="The field of each record that holds its id, a path as jq writes it "
    "(meta.doc_id, .ids[0]); a record without it is malformed [default: id, or FILE:LINE "
    "where a record has none].",
)
TEXT_FIELD = click.option(
    "--text-field",
    metavar="PATH",
    multiple=True,
    help="The field of --texts holding the text (.meta.body) [default: text]. (repeatable)",
)


# compare and explain: A and B named by id in a file of records instead of as files.
RECORDS_BY_ID = (
    click.option(
        "--texts",
        metavar="FILE|-",
        default=None,
        help='A and B are ids of the {"id": ..., "text": ...} records of FILE (JSON Lines '
        "or Parquet).",
    ),
    click.option(
        "--vectors",
        metavar="FILE|-",
        default=None,
        help='A and B are ids of the {"id": ..., "features": {...}} records of FILE (no text '
        "to diff).",
    ),
    TEXT_FIELD,
    ID_FIELD,
)


# ---------------------------------------------------------------------------- engine

_ENGINE = [
    click.option(
        "--engine",
        type=click.Choice([e.value for e in EngineName]),
        default=EngineName.LOCAL.value,
        show_default=True,
        help="local: this machine's processes (--jobs); dask: a Dask cluster (the "
        "distributed extra), of local workers on 127.0.0.1 or --scheduler's.",
    ),
    click.option(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        default=None,
        help="With --engine dask: the scheduler of an existing cluster, whose workers can "
        "open the same paths.",
    ),
    click.option(
        "--workers",
        type=click.IntRange(1, 512),
        default=None,
        help="With --engine dask and no --scheduler: worker processes of the local "
        "cluster [default: one per core].",
    ),
]


def _engine(engine: str, scheduler: str | None, workers: int | None) -> EngineChoice:
    from ..app.settings import EngineChoice

    return EngineChoice(EngineName(engine), scheduler, workers)


ENGINE = OptionGroup("engine", _ENGINE, _engine)
"""``engine: EngineChoice``: ``--engine``, ``--scheduler``, ``--workers``."""


# ---------------------------------------------------------------------------- plain options


def threshold_option(command: F) -> F:
    """``--threshold``: the cosine that makes a pair a near-duplicate."""
    return click.option(
        "--threshold",
        type=COSINE,
        default=DEFAULT_THRESHOLD,
        show_default=True,
        help="A pair is a near-duplicate when its cosine is at least this.",
    )(command)


def max_candidates_option(command: F) -> F:
    """``--max-candidates``: the budget of candidate pairs a scheme may compare."""
    return click.option(
        "--max-candidates",
        type=click.IntRange(0),
        default=DEFAULT_MAX_CANDIDATES,
        show_default=True,
        help="Candidate pairs a scheme may compare; more are refused before they are built.",
    )(command)


def max_pairs_option(command: F) -> F:
    """``--max-pairs``: the most pairs a run may report."""
    return click.option(
        "--max-pairs",
        type=click.IntRange(0),
        default=DEFAULT_MAX_PAIRS,
        show_default=True,
        help="Stop with an error when more pairs than this reach the threshold (the documents "
        "are then alike as a whole, and the pairs would fill memory).",
    )(command)


def protect_option(help_text: str) -> Callable[[Any], Any]:
    """``--protect PATH`` (repeatable): files, or roots whose files, are never touched."""
    return click.option(
        "--protect",
        type=click.Path(exists=True),
        multiple=True,
        metavar="PATH",
        help=f"{help_text} (repeatable)",
    )
