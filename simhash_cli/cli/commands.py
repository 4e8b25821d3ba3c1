"""The ``simhash`` command line: parse options, call the library, hand results to output.

The only module that imports click.  Errors are turned into exit codes in one place,
:meth:`_Group.invoke`: a :class:`~simhash_cli.errors.SimhashError` becomes one ``Error: ...``
line and its exit code; ``--traceback`` shows the real exception instead.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from typing import IO, Any, ClassVar, Literal, NoReturn, TextIO, TypeVar, cast

import click
from click.core import ParameterSource

from .. import __version__
from ..app.actions.apply import apply, apply_records, load_plan, under_root
from ..app.actions.journal import JOURNAL_VERSION, Journal
from ..app.actions.plans import Keep, make_plan
from ..app.actions.script import write_script
from ..app.actions.steps import Action, LoadedPlan, Status
from ..app.batches import Mapper, iter_fingerprints
from ..app.records import corpus_from_fingerprints, corpus_from_text_records, corpus_from_vectors
from ..core.blocking import DEFAULT_MAX_CANDIDATES
from ..core.calibrate import DEFAULT_MAX_DOCS, calibrate
from ..core.corpus import VECTORS_TOKENIZER, VECTORS_WEIGHTING, Corpus, Settings, concatenate
from ..core.events import Skipped
from ..core.fingerprint import DEFAULT_BITS, DEFAULT_SEED, MAX_BITS, validate_bits
from ..core.schemes import Background
from ..core.schemes import plan as planner
from ..core.search import (
    AUDIT_MAX_DOCS,
    AUTO,
    DEFAULT_MAX_PAIRS,
    DedupeConfig,
    DedupeResult,
    check_config,
    compare,
    dedupe,
    plan_for,
)
from ..core.tokenizer import MAX_NGRAM, TokenizerConfig
from ..core.vectorize import Weighting
from ..core.verify import Verify, estimate_limit
from ..engines.dask import engine as dask_engine
from ..engines.local import corpus_from_paths, ordered_map
from ..errors import ExitCode, InputError, SimhashError
from ..index import adding
from ..index.store import Store
from ..io.sinks.atomic import AtomicFile, atomic_output
from ..io.sinks.formats import Format, default_format
from ..io.sinks.messages import Messages, ProgressHooks
from ..io.sinks.tables import (
    emit_apply,
    emit_calibration,
    emit_comparison,
    emit_dedupe,
    emit_fingerprints,
    emit_index_stats,
    emit_matches,
    emit_plan,
    emit_records,
)
from ..io.sources.files import DEFAULT_MAX_BYTES, ReadPolicy

F = TypeVar("F", bound=Callable[..., Any])


def _fail(ctx: click.Context, message: str, code: ExitCode) -> NoReturn:
    """One ``Error: ...`` line on stderr, then exit with ``code``."""
    click.echo(f"Error: {message}", err=True)
    ctx.exit(code)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SimhashError as exc:
            if ctx.params.get("traceback"):
                raise
            _fail(ctx, str(exc), exc.exit_code)
        except KeyboardInterrupt:
            if ctx.params.get("traceback"):
                raise
            _fail(ctx, "interrupted", ExitCode.INTERRUPTED)
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, and keep Python's own flush at
            # exit from failing again on the closed pipe.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(ExitCode.BROKEN_PIPE)


# ---------------------------------------------------------------------------- shared options


def _check_bits(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None:
        try:
            validate_bits(value)
        except SimhashError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def settings_options(command: F) -> F:
    """``--bits`` and ``--seed``, spelled the same for every command."""
    command = click.option(
        "--seed",
        type=click.IntRange(0, 2**32 - 1),
        default=None,
        help=f"Hash seed, 0 to 2^32-1 [default: {DEFAULT_SEED}].",
    )(command)
    command = click.option(
        "--bits",
        type=int,
        default=None,
        callback=_check_bits,
        help=f"Fingerprint width, a multiple of 8 from 8 to {MAX_BITS} [default: {DEFAULT_BITS}].",
    )(command)
    return command


class _ByteSize(click.ParamType):  # type: ignore[type-arg]
    """A number of bytes: 1000000, 500K, 64M, 2G (powers of 1024); 0 for no limit."""

    name = "size"
    _UNITS: ClassVar[dict[str, int]] = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().upper().removesuffix("B")
        unit = text[-1:] if text[-1:] in self._UNITS else ""
        number = text[: len(text) - len(unit)]
        if not number.isdigit():
            self.fail(f"{value!r} is not a size like 1000000, 500K, 64M or 2G", param, ctx)
        return int(number) * self._UNITS[unit]


def tokenizer_options(command: F) -> F:
    """How text becomes a weighted vector: ``--ngram``, ``--char-ngrams``, ``--weighting``,
    and how files are read: ``--strict-encoding``, ``--max-bytes``, ``--follow-symlinks``."""
    command = click.option(
        "--weighting",
        type=click.Choice([w.value for w in Weighting]),
        default=Weighting.TF.value,
        show_default=True,
        help="Feature weight: term count, 1, 1+ln(count), or count x idf over these documents.",
    )(command)
    command = click.option(
        "--follow-symlinks",
        is_flag=True,
        help="Descend into symbolic links to directories (each directory once; a link loop "
        "is reported, not followed). Links to files are always read.",
    )(command)
    command = click.option(
        "--max-bytes",
        type=_ByteSize(),
        default=DEFAULT_MAX_BYTES,
        show_default="64M",
        metavar="SIZE",
        help="Skip larger files (a warning each): a document is read whole. Bytes, or with K, "
        "M or G; 0 for no limit.",
    )(command)
    command = click.option(
        "--strict-encoding",
        is_flag=True,
        help="A file whose bytes are not valid text is an error (exit 1), not a warning "
        "with the bytes replaced.",
    )(command)
    command = click.option(
        "--char-ngrams",
        type=click.IntRange(1, MAX_NGRAM),
        default=None,
        metavar="N",
        help="Use character N-grams instead of words.",
    )(command)
    command = click.option(
        "--ngram",
        type=click.IntRange(1, MAX_NGRAM),
        default=1,
        show_default=True,
        metavar="N",
        help="Word shingles of N words (1 = single words).",
    )(command)
    return command


def threshold_option(command: F) -> F:
    """``--threshold``: the cosine that makes a pair a near-duplicate."""
    return click.option(
        "--threshold",
        type=click.FloatRange(-1.0, 1.0),
        default=0.9,
        show_default=True,
        help="Pairs whose cosine is at least this are near-duplicates.",
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


def jobs_option(command: F) -> F:
    """``-j/--jobs``: processes that read and tokenize files."""
    return click.option(
        "-j",
        "--jobs",
        type=click.IntRange(1, 512),
        default=os.cpu_count() or 1,
        show_default="all cores",
        help="Processes that read and tokenize files (results are the same for any number).",
    )(command)


ENGINES = ("local", "dask")
_NOT_STREAMED = "--vectors, --texts, tfidf or standard input (it fingerprints files batch by batch)"


def engine_options(command: F) -> F:
    """``--engine``, ``--scheduler``, ``--workers``: where the work runs."""
    options = [
        click.option(
            "--engine",
            type=click.Choice(ENGINES),
            default="local",
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
    for option in reversed(options):
        command = option(command)
    return command


@contextmanager
def _on_dask(messages: Messages, options: dict[str, Any]) -> Iterator[dask_engine.Cluster]:
    """The cluster the options name (``--engine dask``), said on stderr, closed on exit."""
    with dask_engine.connect(options["scheduler"], options["workers"]) as cluster:
        where = "local cluster" if cluster.owned else f"cluster at {options['scheduler']}"
        dashboard = f", dashboard {cluster.dashboard}" if cluster.dashboard else ""
        messages.info(f"dask: {where} of {_plural(cluster.workers, 'worker')}{dashboard}")
        yield cluster


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _engine(options: dict[str, Any], refused: dict[str, bool]) -> bool:
    """Whether the options ask for the dask engine; ``refused``: options (by name) that
    the dask engine does not take, and whether each was given."""
    dask = options["engine"] == "dask"
    if not dask:
        for name in ("scheduler", "workers"):
            if options[name] is not None:
                raise click.UsageError(f"--{name} goes with --engine dask")
        return False
    for name, given in refused.items():
        if given:
            raise click.UsageError(f"--engine dask does not take {name}")
    return True


def _check_output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A report's directory must exist and be writable: found out before any work, not after."""
    if value is None or value == "-":
        return value
    directory = os.path.dirname(os.path.abspath(value))
    if not os.path.isdir(directory):
        raise click.BadParameter(f"no such directory: {directory}")
    if not os.access(directory, os.W_OK):
        raise click.BadParameter(f"cannot write in {directory}")
    if os.path.isdir(value):
        raise click.BadParameter(f"{value} is a directory")
    return value


def format_option(command: F) -> F:
    """``-f/--format``: table on a terminal, jsonl when piped; ``-o/--output FILE``."""
    command = click.option(
        "-o",
        "--output",
        "output_path",
        metavar="FILE",
        default=None,
        callback=_check_output,
        help="Write the report to FILE instead of standard output, whole or not at all (a "
        "temporary file renamed over FILE when complete). Its format follows the extension "
        "(.json, .csv, else JSON Lines) unless -f says otherwise.",
    )(command)
    return click.option(
        "-f",
        "--format",
        "fmt",
        type=click.Choice([f.value for f in Format]),
        default=None,
        help="Output format [default: table on a terminal, jsonl when piped].",
    )(command)


def protect_option(help_text: str) -> Callable[[F], F]:
    """``--protect DIR`` (repeatable): roots whose files are never touched."""
    return click.option(
        "--protect",
        type=click.Path(exists=True, file_okay=False),
        multiple=True,
        metavar="DIR",
        help=f"{help_text} (repeatable)",
    )


def empty_option(command: F) -> F:
    """``--include-empty``: documents without a token kept, and grouped with each other only."""
    return click.option(
        "--include-empty",
        is_flag=True,
        help="Keep documents without a token (empty, blank or punctuation only) instead of "
        "skipping them: fingerprint 0 with 0 features, and in dedupe one cluster of their own, "
        "never with a real document.",
    )(command)


def quiet_option(command: F) -> F:
    """``-q/--quiet``: no warnings, progress or summary on stderr (errors still shown)."""
    return click.option(
        "-q", "--quiet", is_flag=True, help="No warnings, progress or summary on stderr."
    )(command)


def vectors_option(command: F) -> F:
    """``--vectors FILE|-``: JSON Lines of given weighted vectors instead of text files, and
    ``--on-error stop|skip`` for their malformed lines (and those of ``--fingerprints``)."""
    command = click.option(
        "--on-error",
        type=click.Choice(["stop", "skip"]),
        default="stop",
        show_default=True,
        help="A malformed line of --vectors or --fingerprints input: stop with FILE:LINE "
        "and nothing written, or skip it with a warning and count it.",
    )(command)
    return click.option(
        "--vectors",
        metavar="FILE|-",
        default=None,
        help='JSON Lines of {"id": ..., "features": {feature: weight}}, used exactly as given.',
    )(command)


def texts_option(command: F) -> F:
    """``--texts FILE|-``: JSON Lines of ``{"id": ..., "text": ...}`` instead of text files."""
    return click.option(
        "--texts",
        metavar="FILE|-",
        default=None,
        help='JSON Lines of {"id": ..., "text": "..."}, each text read as a file holding it '
        "would be (with --engine dask also a glob or a URL the workers can open).",
    )(command)


class _BlocksType(click.ParamType):  # type: ignore[type-arg]
    """``auto`` or a whole number of blocks."""

    name = "auto|N"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | str:
        if value == AUTO:
            return AUTO
        if isinstance(value, int):
            return value
        try:
            number = int(value)
        except ValueError:
            self.fail(f"{value!r} is neither 'auto' nor a whole number", param, ctx)
        if not 1 <= number <= MAX_BITS:
            self.fail(f"{number} is not from 1 to {MAX_BITS}", param, ctx)
        return number


def _format(fmt: str | None) -> Format:
    if fmt:
        return Format(fmt)
    return default_format(sys.stdout, click.get_current_context().params.get("output_path"))


@contextmanager
def _report() -> Iterator[IO[str]]:
    """Where the command's data goes: standard output, or ``-o FILE`` written atomically."""
    path = click.get_current_context().params.get("output_path")
    if path is None or path == "-":
        yield sys.stdout
        return
    with atomic_output(path) as out:
        yield out


def _tokenizer(ngram: int, char_ngrams: int | None) -> TokenizerConfig:
    if char_ngrams is not None and ngram != 1:
        raise click.UsageError("--ngram and --char-ngrams cannot be used together")
    return TokenizerConfig(ngram=ngram, char_ngrams=char_ngrams)


def _refuse_output_over_input(options: dict[str, Any]) -> None:
    """``-o FILE`` (or ``--plan FILE``) naming a file that is also an input would replace
    the very file being read: almost always a slip, so it is refused before any work."""
    inputs = [p for p in options.get("paths", ()) if p != "-" and os.path.isfile(p)]
    inputs += [options[key] for key in ("vectors", "fingerprints", "texts") if options.get(key)]
    for option, target in (
        ("-o", options.get("output_path")),
        ("--plan", options.get("plan_path")),
    ):
        if target in (None, "-") or not os.path.exists(target):
            continue
        for source in inputs:
            if source != "-" and os.path.exists(source) and os.path.samefile(source, target):
                raise click.UsageError(f"{option} {target} is also an input: it would be replaced")


@dataclass(frozen=True)
class _Reading:
    """The shared settings and tokenizer options as click parsed them, with defaults filled."""

    bits: int
    seed: int
    tokenizer: TokenizerConfig
    weighting: Weighting
    jobs: int
    policy: ReadPolicy
    include_empty: bool

    @classmethod
    def parse(cls, options: dict[str, Any]) -> _Reading:
        _refuse_output_over_input(options)
        return cls(
            bits=options["bits"] or DEFAULT_BITS,
            seed=DEFAULT_SEED if options["seed"] is None else options["seed"],
            tokenizer=_tokenizer(options["ngram"], options["char_ngrams"]),
            weighting=Weighting(options["weighting"]),
            jobs=int(options.get("jobs") or 1),
            policy=ReadPolicy(
                strict_encoding=bool(options.get("strict_encoding")),
                max_bytes=options.get("max_bytes") or None,
                follow_symlinks=bool(options.get("follow_symlinks")),
            ),
            include_empty=bool(options.get("include_empty")),
        )

    def streamable(self, paths: tuple[str, ...], vectors: str | None) -> bool:
        """Whether fingerprints can be made batch by batch (tfidf needs the whole corpus)."""
        return vectors is None and bool(paths) and self.weighting is not Weighting.TFIDF


def _load(
    messages: Messages,
    paths: tuple[str, ...],
    vectors: str | None,
    options: dict[str, Any],
    *,
    distinct: bool = True,
    vectors_needed: bool = True,
) -> Corpus:
    """Read the input the options name (``options``: the command's parameters as click parsed
    them). Without ``vectors_needed`` the fingerprints are streamed and no vectors kept."""
    reading = _Reading.parse(options)
    texts = options.get("texts")
    if texts is not None:
        if paths or vectors is not None:
            raise click.UsageError("give PATHs, --vectors or --texts, only one of them")
        return corpus_from_text_records(
            texts,
            bits=reading.bits,
            seed=reading.seed,
            tokenizer=reading.tokenizer,
            weighting=reading.weighting,
            on_event=messages.event,
            skip_bad_lines=options.get("on_error") == "skip",
            include_empty=reading.include_empty,
        )
    if vectors is not None:
        _check_vectors_options(paths, reading)
        return corpus_from_vectors(
            vectors,
            bits=reading.bits,
            seed=reading.seed,
            on_event=messages.event,
            skip_bad_lines=options.get("on_error") == "skip",
            include_empty=reading.include_empty,
        )
    if not paths:
        raise click.UsageError("no input: give PATH... (- for standard input) or --vectors FILE")
    with messages.progress("reading") as hooks:
        if not vectors_needed and reading.streamable(paths, vectors):
            return concatenate(_stream(messages, paths, reading, hooks))
        return corpus_from_paths(
            paths,
            bits=reading.bits,
            seed=reading.seed,
            tokenizer=reading.tokenizer,
            weighting=reading.weighting,
            on_event=messages.event,
            on_listed=hooks.on_listed,
            on_read=hooks.on_read,
            distinct=distinct,
            jobs=reading.jobs,
            policy=reading.policy,
            include_empty=reading.include_empty,
        )


def _check_vectors_options(paths: tuple[str, ...], reading: _Reading) -> None:
    if paths:
        raise click.UsageError("give PATHs or --vectors, not both")
    if reading.weighting is not Weighting.TF or reading.tokenizer != TokenizerConfig():
        raise click.UsageError(
            "--vectors are fingerprinted exactly as given; "
            "--ngram, --char-ngrams and --weighting apply to text"
        )


def _stream(
    messages: Messages,
    paths: tuple[str, ...],
    reading: _Reading,
    hooks: ProgressHooks,
    mapper: Mapper | None = None,
) -> Iterator[Corpus]:
    """Fingerprints only, batch by batch (:func:`~simhash_cli.iter_fingerprints`),
    computed by ``mapper`` when given (a cluster)."""
    return iter_fingerprints(
        paths,
        bits=reading.bits,
        seed=reading.seed,
        tokenizer=reading.tokenizer,
        weighting=reading.weighting,
        on_event=messages.event,
        on_listed=hooks.on_listed,
        on_read=hooks.on_read,
        jobs=reading.jobs,
        policy=reading.policy,
        include_empty=reading.include_empty,
        mapper=mapper or ordered_map,
    )


# ---------------------------------------------------------------------------- commands


@click.group(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="simhash")
@click.option("--traceback", is_flag=True, help="Show the full Python traceback on errors.")
def main(traceback: bool) -> None:
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
    sys.stdout = _buffered(sys.stdout)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            # A character the locale cannot encode (or a lone surrogate from a JSON id, or a
            # file name that is not UTF-8) is written as a backslash escape, never a traceback.
            stream.reconfigure(errors="backslashreplace")


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


@main.command("fingerprint")
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@vectors_option
@texts_option
@settings_options
@tokenizer_options
@empty_option
@jobs_option
@engine_options
@format_option
@quiet_option
def fingerprint_command(
    paths: tuple[str, ...],
    vectors: str | None,
    on_error: str,
    texts: str | None,
    bits: int | None,
    seed: int | None,
    ngram: int,
    char_ngrams: int | None,
    weighting: str,
    strict_encoding: bool,
    max_bytes: int,
    follow_symlinks: bool,
    include_empty: bool,
    jobs: int,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """Print one fingerprint record per document.

    PATHs are files, directories (read recursively, in sorted order) or - for standard input.
    Each record carries the settings it was made with, so that fingerprints made differently
    are never compared by mistake.

    \b
    Examples:
      simhash fingerprint sample_corpus/
      echo '{"id": "u1", "features": {"jazz": 3, "vinyl": 1.5}}' | simhash fingerprint --vectors -
    """
    messages = Messages(sys.stderr, quiet=quiet)
    options = click.get_current_context().params
    output = _format(fmt)
    reading = _Reading.parse(options)
    streamable = reading.streamable(paths, vectors) and texts is None
    dask = _engine(options, {_NOT_STREAMED: not streamable or "-" in paths})
    if not streamable:
        docs = _load(messages, paths, vectors, options)
        with _report() as out:
            emit_fingerprints(docs, output, out)
        messages.corpus_summary(docs, "fingerprinted")
        return
    # Streamed: batches are written as they are made, and only a batch is ever in memory.
    skipped: list[Skipped] = []
    documents = 0

    def counted(batches: Iterator[Corpus]) -> Iterator[Corpus]:
        nonlocal documents
        for batch in batches:
            documents += len(batch)
            skipped.extend(batch.skipped)
            yield batch

    # Records go to stdout while the bar redraws stderr: on one terminal they would mix.
    to_file = click.get_current_context().params.get("output_path") not in (None, "-")
    same_terminal = output is not Format.TABLE and sys.stdout.isatty() and not to_file
    with ExitStack() as stack:
        mapper = (
            dask_engine.mapper(stack.enter_context(_on_dask(messages, options))) if dask else None
        )
        hooks = stack.enter_context(messages.progress("reading", shown=not same_terminal))
        out = stack.enter_context(_report())
        emit_fingerprints(counted(_stream(messages, paths, reading, hooks, mapper)), output, out)
    messages.counts_summary(documents, skipped, "fingerprinted")


@main.command("compare", short_help="Compare two documents: Hamming distance and cosines.")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@settings_options
@tokenizer_options
@format_option
@quiet_option
def compare_command(
    a: str,
    b: str,
    bits: int | None,
    seed: int | None,
    ngram: int,
    char_ngrams: int | None,
    weighting: str,
    strict_encoding: bool,
    max_bytes: int,
    follow_symlinks: bool,
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """Compare two documents: Hamming distance, estimated and true cosine.

    In a terminal it shows both fingerprints bit by bit, agreeing bits highlighted.

    \b
    Example:
      cd sample_corpus && simhash compare --bits 32 volcano-report.txt volcano-report-wire.txt
    """
    for path in (a, b):
        if os.path.isdir(path):
            raise click.UsageError(f"compare takes two files; {path} is a directory")
    messages = Messages(sys.stderr, quiet=quiet)
    docs = _load(messages, (a, b), None, click.get_current_context().params, distinct=False)
    with _report() as out:
        emit_comparison(compare(docs), _format(fmt), out)


@main.command("dedupe")
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@vectors_option
@texts_option
@click.option(
    "--fingerprints",
    metavar="FILE|-",
    default=None,
    help="Dedupe the JSON Lines output of 'simhash fingerprint' (estimated cosine only).",
)
@settings_options
@tokenizer_options
@click.option(
    "--blocks",
    type=_BlocksType(),
    default=AUTO,
    show_default=True,
    metavar="auto|N",
    help="Equal blocks per fingerprint; a shared block makes a candidate. 1 strict, 4 "
    "balanced, 8 loose (the page's schemes), any divisor of --bits, or auto: the cheapest "
    "scheme reaching 0.95 expected recall at --threshold on this corpus.",
)
@click.option(
    "--max-distance",
    type=click.IntRange(0),
    default=None,
    metavar="K",
    help="Instead of --blocks: candidates are exactly the pairs of fingerprints within K bits "
    "(Manku's permuted tables), whatever the seed.",
)
@threshold_option
@click.option(
    "--verify",
    "verify_mode",
    type=click.Choice([v.value for v in Verify]),
    default=None,
    help="exact: true cosine of the vectors; estimate: cos(pi*hamming/bits) "
    "[default: exact; estimate with --fingerprints].",
)
@max_candidates_option
@max_pairs_option
@click.option(
    "--audit",
    is_flag=True,
    help="Also compute every pair's true cosine and report the blocks' recall and false "
    f"candidates (up to {AUDIT_MAX_DOCS:,} documents).",
)
@click.option(
    "--check",
    is_flag=True,
    help=f"Exit {int(ExitCode.DUPLICATES_FOUND)} when any pair is flagged (for CI pipelines).",
)
@click.option(
    "--plan",
    "plan_path",
    metavar="FILE",
    default=None,
    callback=_check_output,
    help="Also write what would be done with each cluster to FILE (JSON): the file kept and "
    "why, the others to remove, the protected ones. Nothing is changed.",
)
@click.option(
    "--keep",
    type=click.Choice([k.value for k in Keep]),
    default=Keep.OLDEST.value,
    show_default=True,
    help="With --plan: which file of a cluster is kept (the path breaks ties).",
)
@protect_option("With --plan: files under DIR are never marked for removal.")
@click.option(
    "--index",
    "index_path",
    metavar="DB",
    default=None,
    help="Keep the fingerprints in the index DB (made if missing) and read only the files "
    "that are new or changed since (verification by estimate).",
)
@empty_option
@jobs_option
@engine_options
@format_option
@quiet_option
def dedupe_command(
    paths: tuple[str, ...],
    vectors: str | None,
    on_error: str,
    texts: str | None,
    fingerprints: str | None,
    bits: int | None,
    seed: int | None,
    ngram: int,
    char_ngrams: int | None,
    weighting: str,
    strict_encoding: bool,
    max_bytes: int,
    follow_symlinks: bool,
    blocks: int | Literal["auto"],
    max_distance: int | None,
    threshold: float,
    verify_mode: str | None,
    max_candidates: int,
    max_pairs: int,
    audit: bool,
    check: bool,
    plan_path: str | None,
    keep: str,
    protect: tuple[str, ...],
    index_path: str | None,
    include_empty: bool,
    jobs: int,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """Find near-duplicate pairs and group them into clusters.

    Candidates come from the blocks of the fingerprints (--blocks: auto picks the cheapest
    scheme that reaches 0.95 expected recall at --threshold on this corpus) or from Manku's
    tables (--max-distance). Each candidate is verified against --threshold and pairs that
    pass are grouped into clusters (connected components). The summary on stderr says which
    scheme ran and its expected recall.

    \b
    Examples:
      simhash dedupe sample_corpus/
      simhash dedupe --blocks 8 --threshold 0.8 -f json crawl/ | jq '.summary'
      simhash fingerprint crawl/ > fps.jsonl; simhash dedupe --fingerprints fps.jsonl
    """
    ctx = click.get_current_context()
    if (
        max_distance is not None
        and ctx.get_parameter_source("blocks") is ParameterSource.COMMANDLINE
    ):
        raise click.UsageError("--blocks and --max-distance are two schemes: choose one")
    if max_distance is not None and fingerprints is None and max_distance >= (bits or DEFAULT_BITS):
        raise click.BadParameter(
            f"must be below the fingerprint width ({bits or DEFAULT_BITS})",
            param_hint="--max-distance",
        )
    _refuse_output_over_input(ctx.params)
    plan_options = protect or ctx.get_parameter_source("keep") is ParameterSource.COMMANDLINE
    if plan_path is None and plan_options:
        raise click.UsageError("--keep and --protect go with --plan FILE")
    if plan_path is not None and (vectors or fingerprints or texts or index_path):
        raise click.UsageError(
            "--plan acts on files read in this run, so that each can be checked to be the "
            "file that was compared: give PATHs, without --vectors, --fingerprints, --texts "
            "or --index"
        )
    records = _records_input(paths, fingerprints, vectors, texts)
    width = bits or DEFAULT_BITS
    if isinstance(blocks, int) and fingerprints is None and width % blocks:
        # Checked before reading: a long read must not end in a usage error.
        raise click.BadParameter(
            f"must divide the fingerprint width ({width}) evenly, not {blocks}",
            param_hint="--blocks",
        )
    messages = Messages(sys.stderr, quiet=quiet)
    dask = _engine(
        ctx.params,
        {
            "--index": index_path is not None,
            "--audit": audit,
            "--include-empty": include_empty,
            "standard input (-)": "-" in paths,
            "--weighting tfidf (its weights need the whole corpus)": weighting == "tfidf",
        },
    )
    # Records the workers can open are read there, not here.
    on_cluster = dask and records is not None and records[1] != "-"
    # Options that do not apply to the records are refused now, before a cluster starts.
    made_with = None
    if on_cluster and records is not None:
        dask_engine.check_source(records[1])
        made_with = _records_settings(records[0], ctx.params)
    docs: Corpus | None = None
    if fingerprints is not None and on_cluster:
        verify = Verify(verify_mode or Verify.ESTIMATE.value)
    elif fingerprints is not None:
        docs = _load_fingerprints(
            messages,
            fingerprints,
            paths,
            vectors,
            on_error,
            bits,
            seed,
            ngram,
            char_ngrams,
            weighting,
            include_empty=include_empty,
        )
        verify = Verify(verify_mode or Verify.ESTIMATE.value)
    elif index_path is not None:
        verify = Verify(verify_mode or Verify.ESTIMATE.value)
        if verify is Verify.EXACT or audit or vectors is not None:
            raise click.UsageError(
                "--index keeps fingerprints, not vectors: it goes with files and "
                "--verify estimate (its default), without --audit"
            )
        docs = _load_through_index(messages, index_path, paths, ctx.params)
    else:
        verify = Verify(verify_mode or Verify.EXACT.value)
        options = click.get_current_context().params
        # Verified by estimate, only fingerprints are needed: stream them, keep no vectors.
        vectors_needed = verify is Verify.EXACT or audit
        if not dask or (records is not None and not on_cluster):
            docs = _load(messages, paths, vectors, options, vectors_needed=vectors_needed)
    config = DedupeConfig(
        blocks=blocks,
        max_distance=max_distance,
        threshold=threshold,
        verify=verify,
        max_candidates=max_candidates,
        max_pairs=max_pairs,
        audit=audit,
    )

    def report(result: DedupeResult) -> None:
        with _report() as out:
            emit_dedupe(result, _format(fmt), out)
        messages.dedupe_summary(result)
        if plan_path is not None:
            _write_plan(messages, result, plan_path, Keep(keep), protect)
        if check and len(result.pairs):
            sys.stdout.flush()
            click.get_current_context().exit(ExitCode.DUPLICATES_FOUND)

    if dask:
        with _on_dask(messages, ctx.params) as cluster:
            if made_with is not None and records is not None:
                result = _records_on_dask(messages, cluster, records, made_with, config, ctx.params)
            else:
                result = _dedupe_on_dask(messages, cluster, docs, paths, config, ctx.params)
            report(result)  # while the cluster is up: a large run's pairs are still there
        return
    assert docs is not None
    with messages.status(f"finding and verifying candidates among {len(docs):,} documents"):
        result = dedupe(docs, config)
    report(result)


def _records_input(
    paths: tuple[str, ...], fingerprints: str | None, vectors: str | None, texts: str | None
) -> tuple[str, str] | None:
    """(kind, source) of the JSON Lines input the options name, if any (only one input)."""
    given = [
        (kind, source)
        for kind, source in (("fingerprints", fingerprints), ("vectors", vectors), ("texts", texts))
        if source is not None
    ]
    if len(given) + bool(paths) > 1:
        raise click.UsageError("give PATHs, --vectors, --texts or --fingerprints, one of them")
    return given[0] if given else None


def _records_settings(
    kind: str, options: dict[str, Any]
) -> tuple[Settings, Callable[[Settings], None] | None]:
    """The settings records of ``kind`` are fingerprinted with (fingerprint records carry
    their own: then the check of the options against them); refuses options that do not
    apply, before any work."""
    reading = _Reading.parse(options)
    if kind == "fingerprints":
        check = _fingerprint_options(
            options["bits"],
            options["seed"],
            options["ngram"],
            options["char_ngrams"],
            options["weighting"],
        )
        return Settings(), check
    if kind == "vectors":
        _check_vectors_options((), reading)
        vectors = VECTORS_TOKENIZER, VECTORS_WEIGHTING
        return Settings(reading.bits, reading.seed, *vectors), None
    texts = reading.tokenizer.name, reading.weighting.value
    return Settings(reading.bits, reading.seed, *texts), None


def _records_on_dask(
    messages: Messages,
    cluster: dask_engine.Cluster,
    records: tuple[str, str],
    made_with: tuple[Settings, Callable[[Settings], None] | None],
    config: DedupeConfig,
    options: dict[str, Any],
) -> DedupeResult:
    """``dedupe --engine dask --texts|--vectors|--fingerprints SOURCE``: the records read by
    the workers, a block at a time, fingerprinted with the settings ``made_with`` names (and
    the check of fingerprint records' own, from :func:`_records_settings`)."""
    kind, source = records
    reading = _Reading.parse(options)
    settings, check = made_with
    with messages.status(f"reading {source} on the cluster"):
        fingerprinted = dask_engine.read_records(
            cluster,
            source,
            kind,
            settings=settings,
            keep_vectors=config.verify is Verify.EXACT and kind != "fingerprints",
            tokenizer=reading.tokenizer,
            weighting=reading.weighting,
            on_event=messages.event,
            skip_bad_lines=options["on_error"] == "skip",
            check_settings=check,
        )
    return _search_on_dask(messages, cluster, fingerprinted, config)


def _search_on_dask(
    messages: Messages,
    cluster: dask_engine.Cluster,
    fingerprinted: dask_engine.OnCluster,
    config: DedupeConfig,
) -> DedupeResult:
    n = len(fingerprinted.docs)
    with messages.status(f"finding and verifying candidates among {n:,} documents"):
        return dask_engine.dedupe(cluster, fingerprinted, config)


def _dedupe_on_dask(
    messages: Messages,
    cluster: dask_engine.Cluster,
    docs: Corpus | None,
    paths: tuple[str, ...],
    config: DedupeConfig,
    options: dict[str, Any],
) -> DedupeResult:
    """``dedupe --engine dask``: files read by the workers, or documents read here (``docs``:
    records from standard input) sent to them."""
    keep_vectors = config.verify is Verify.EXACT
    if docs is not None:
        check_config(docs, config, has_vectors=docs.weights is not None)
        fingerprinted = dask_engine.send_corpus(cluster, docs, keep_vectors=keep_vectors)
        return _search_on_dask(messages, cluster, fingerprinted, config)
    if not paths:
        raise click.UsageError("no input: give PATH... or --vectors/--texts/--fingerprints FILE")
    reading = _Reading.parse(options)
    settings = Settings(reading.bits, reading.seed, reading.tokenizer.name, reading.weighting.value)
    with messages.progress("reading") as hooks:
        fingerprinted = dask_engine.read_paths(
            cluster,
            paths,
            settings=settings,
            tokenizer=reading.tokenizer,
            weighting=reading.weighting,
            keep_vectors=keep_vectors,
            policy=reading.policy,
            on_event=messages.event,
            on_listed=hooks.on_listed,
            on_read=hooks.on_read,
        )
    return _search_on_dask(messages, cluster, fingerprinted, config)


def _write_plan(
    messages: Messages,
    result: DedupeResult,
    path: str,
    keep: Keep,
    protect: tuple[str, ...],
) -> None:
    """``dedupe --plan FILE``: the plan, written whole or not at all."""
    docs = result.corpus
    if docs.stamps is None:  # refused before reading (see dedupe_command)
        raise InputError("--plan needs the files read in this run")
    plan = make_plan(
        docs.ids,
        docs.fingerprints,
        docs.stamps.tolist(),
        docs.settings.bits,
        result.clusters,
        keep=keep,
        protect=protect,
        settings=asdict(docs.settings),
    )
    with atomic_output(path) as out:
        # ASCII escapes: a file name that is not UTF-8 survives as \udcXX, as JSON allows.
        out.write(json.dumps(plan, ensure_ascii=True, indent=2) + "\n")
    actions = [f["action"] for c in plan["clusters"] for f in c["files"]]
    messages.info(
        f"plan written to {path}: {len(plan['clusters']):,} clusters, "
        f"{actions.count('remove'):,} files to remove, {actions.count('protected'):,} protected "
        "(nothing was changed)"
    )


@main.command("apply", short_help="Act on a dedupe --plan: move, link or delete its files.")
@click.argument("plan_path", metavar="PLAN")
@click.argument("directory", metavar="[DIR]", required=False)
@click.option(
    "--action",
    type=click.Choice([a.value for a in Action]),
    required=True,
    help="move-to DIR: move each file marked remove to DIR (under its absolute path); "
    "hardlink / symlink: replace it by a link to its cluster's kept file; delete: delete it.",
)
@click.option("--yes", is_flag=True, help="Act. Without it: a dry run, every check, no change.")
@click.option(
    "--delete-near-duplicates",
    is_flag=True,
    help="Required for --action delete with --yes or --script: near-duplicates are different "
    "files, and deleting one loses what only it says.",
)
@click.option(
    "--journal",
    "journal_path",
    metavar="FILE",
    default=None,
    help="With --yes: where each step and its outcome are recorded [default: PLAN.journal]. "
    "A journal of the same plan is resumed: its done steps are skipped.",
)
@click.option(
    "--script",
    "script_path",
    metavar="FILE|-",
    default=None,
    callback=_check_output,
    help="Instead of acting: write a POSIX shell script taking the same steps with the same "
    "checks, for review (run it with sh FILE).",
)
@protect_option("Files under DIR are never touched, besides the plan's own protected roots.")
@format_option
@quiet_option
def apply_command(
    plan_path: str,
    directory: str | None,
    action: str,
    yes: bool,
    delete_near_duplicates: bool,
    journal_path: str | None,
    script_path: str | None,
    protect: tuple[str, ...],
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """Act on a plan written by `simhash dedupe --plan PLAN`.

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
      simhash apply plan.json --action move-to /tmp/near-duplicates        # dry run
      simhash apply plan.json --action move-to /tmp/near-duplicates --yes
      simhash apply plan.json --action delete --delete-near-duplicates --script review.sh
    """
    chosen = Action(action)
    destination = _apply_destination(chosen, directory, protect)
    if yes and script_path is not None:
        raise click.UsageError("--script writes what --yes would do: choose one")
    if chosen is Action.DELETE and (yes or script_path) and not delete_near_duplicates:
        raise click.UsageError(
            "--action delete deletes files that are near, not exact, duplicates of the kept "
            "ones: add --delete-near-duplicates to say so"
        )
    if journal_path is not None and not yes:
        raise click.UsageError("--journal goes with --yes (a dry run records nothing)")
    for option, target in (("--script", script_path), ("-o", output_path)):
        if target not in (None, "-") and os.path.abspath(target) == os.path.abspath(plan_path):
            raise click.UsageError(f"{option} {target} is the plan: it would be replaced")
    messages = Messages(sys.stderr, quiet=quiet)
    plan = load_plan(plan_path)
    if script_path is not None:
        script = write_script(plan, chosen, destination=destination, protect=protect)
        if script_path == "-":
            sys.stdout.flush()
            sys.stdout.buffer.write(script)
            sys.stdout.buffer.flush()
        else:
            with atomic_output(script_path) as out:
                cast(AtomicFile, out).write_bytes(script)
        where = "standard output" if script_path == "-" else script_path
        messages.info(
            f"script of {len(plan.steps):,} steps written to {where} (nothing was changed): "
            "review it, then run it with sh"
        )
        return
    journal = None
    if yes:
        journal = Journal(
            journal_path or plan_path + ".journal", _journal_header(plan, chosen, destination)
        )
        if os.path.abspath(journal.path) == plan.path:
            raise click.UsageError("--journal must not be the plan itself")
        journal.open()
    try:
        with messages.progress("steps") as hooks, _report() as out:
            if hooks.on_listed is not None:
                hooks.on_listed(len(plan.steps))
            outcomes = apply(
                plan,
                chosen,
                destination=destination,
                execute=yes,
                journal=journal,
                protect=protect,
                on_step=hooks.on_read,
            )
            statuses = emit_apply(apply_records(outcomes, chosen), chosen.value, _format(fmt), out)
    finally:
        if journal is not None:
            journal.close()
    messages.apply_summary(
        statuses, executed=yes, journal=None if journal is None else journal.path
    )
    if statuses[Status.REFUSED.value] or statuses[Status.FAILED.value]:
        sys.stdout.flush()
        click.get_current_context().exit(ExitCode.INCOMPLETE)


def _apply_destination(
    action: Action, directory: str | None, protect: tuple[str, ...]
) -> str | None:
    """``move-to DIR`` takes a directory (made if missing) outside the protected roots; the
    other actions take none."""
    if action is not Action.MOVE_TO:
        if directory is not None:
            raise click.UsageError(f"--action {action.value} takes no DIR (only move-to does)")
        return None
    if directory is None:
        raise click.UsageError(
            "--action move-to needs a DIR: simhash apply PLAN --action move-to DIR"
        )
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise click.BadParameter(f"{directory} is not a directory", param_hint="DIR")
    root = under_root(directory, protect)
    if root is not None:
        raise click.BadParameter(
            f"{directory} is under the protected root {root}", param_hint="DIR"
        )
    return os.path.abspath(directory)


def _journal_header(plan: LoadedPlan, action: Action, destination: str | None) -> dict[str, Any]:
    """The first line of a journal: the plan (by its SHA-256), action and destination it is
    the journal of."""
    return {
        "journal": JOURNAL_VERSION,
        "plan": plan.path,
        "plan_sha256": plan.sha256,
        "action": action.value,
        "destination": destination,
    }


@main.command("plan", short_help="Which candidate scheme suits a threshold and corpus.")
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@vectors_option
@settings_options
@tokenizer_options
@threshold_option
@click.option(
    "--docs",
    type=click.IntRange(0),
    help="Documents in the corpus (required without PATHs; with them, their number).",
)
@click.option(
    "--background",
    type=click.FloatRange(-1.0, 1.0),
    help="Cosine of a typical unrelated pair: 0 for random vectors; term counts of natural "
    "text are often 0.5 or more. Without PATHs [default: 0]; with them, measured on their "
    "fingerprints as dedupe does.",
)
@max_candidates_option
@jobs_option
@format_option
@quiet_option
def plan_command(
    paths: tuple[str, ...],
    vectors: str | None,
    on_error: str,
    bits: int | None,
    seed: int | None,
    ngram: int,
    char_ngrams: int | None,
    weighting: str,
    strict_encoding: bool,
    max_bytes: int,
    follow_symlinks: bool,
    threshold: float,
    docs: int | None,
    background: float | None,
    max_candidates: int,
    jobs: int,
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """Compare candidate schemes for a threshold, fingerprint width and corpus.

    For each scheme worth considering: the chance that a pair at the threshold becomes a
    candidate (expected recall), the pairs of unrelated documents it would compare among
    DOCS, and the S-curve of the candidate probability against cosine. The scheme marked *
    is the one `dedupe --blocks auto` would choose. Given PATHs (or --vectors), the corpus is
    read and fingerprinted, and the plan is the one dedupe would make for it.

    \b
    Examples:
      simhash plan --threshold 0.9 --docs 1000000
      simhash plan --threshold 0.8 --bits 128 --docs 50000 --background 0.5 -f json
      simhash plan --threshold 0.9 sample_corpus/
    """
    if paths or vectors is not None:
        if docs is not None or background is not None:
            raise click.UsageError(
                "--docs and --background describe a corpus you do not give; "
                "with PATHs or --vectors they are measured"
            )
        messages = Messages(sys.stderr, quiet=quiet)
        params = click.get_current_context().params
        corpus = _load(messages, paths, vectors, params, vectors_needed=False)
        chosen = plan_for(corpus, threshold=threshold, max_candidates=max_candidates)
    else:
        if docs is None:
            raise click.UsageError("give --docs N (the corpus size), or the corpus: PATH...")
        chosen = planner(
            bits=bits or DEFAULT_BITS,
            threshold=threshold,
            n_docs=docs,
            background=Background(cosine=background or 0.0),
            max_candidates=max_candidates,
        )
    with _report() as out:
        emit_plan(chosen, _format(fmt), out)


@main.command("calibrate")
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@vectors_option
@settings_options
@tokenizer_options
@threshold_option
@click.option(
    "--seeds",
    type=click.IntRange(1, 1000),
    default=20,
    show_default=True,
    help="Seeds (0, 1, ...) every measurement is repeated over.",
)
@click.option(
    "--max-docs",
    type=click.IntRange(2, 20_000),
    default=DEFAULT_MAX_DOCS,
    show_default=True,
    help="Documents evaluated (every pair of them); a larger corpus is sampled.",
)
@jobs_option
@format_option
@quiet_option
def calibrate_command(
    paths: tuple[str, ...],
    vectors: str | None,
    on_error: str,
    bits: int | None,
    seed: int | None,
    ngram: int,
    char_ngrams: int | None,
    weighting: str,
    strict_encoding: bool,
    max_bytes: int,
    follow_symlinks: bool,
    threshold: float,
    seeds: int,
    max_docs: int,
    jobs: int,
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """Run the reference page's experiments on your documents.

    Mean absolute error of the estimated cosine against the true cosine at 8 to 512 bits;
    weighted against unweighted fingerprints on the similar pairs; and the measured recall and
    false-candidate rate of the page's blocking schemes (1, 4 and 8 blocks) at --bits. Use it to
    choose --bits and --blocks for a corpus like this one.

    \b
    Examples:
      simhash calibrate sample_corpus/
      simhash calibrate --threshold 0.8 --seeds 50 -f json docs/ > calibration.json
    """
    messages = Messages(sys.stderr, quiet=quiet)
    docs = _load(messages, paths, vectors, click.get_current_context().params)
    assert docs.weights is not None
    with messages.status(f"calibrating on {min(len(docs), max_docs):,} documents"):
        result = calibrate(
            docs.weights,
            docs.features,
            threshold=threshold,
            bits=docs.settings.bits,
            seeds=seeds,
            max_docs=max_docs,
        )
    with _report() as out:
        emit_calibration(result, _format(fmt), out)


def _load_through_index(
    messages: Messages, db: str, paths: tuple[str, ...], options: dict[str, Any]
) -> Corpus:
    """``dedupe --index DB PATH...``: the files' stored fingerprints, after the index was
    brought up to date (only new and changed files are read)."""
    if not paths:
        raise click.UsageError("--index needs PATHs")
    reading = _Reading.parse(options)
    ctx = click.get_current_context()
    explicit = _settings_given(ctx)
    requested = Settings(
        reading.bits, reading.seed, reading.tokenizer.name, reading.weighting.value
    )
    with adding.open_for_adding(db, requested if explicit else None, requested) as store:
        report = _add_files(messages, store, paths, reading)
        _added(messages, db, report, store)
        return adding.stored_files(store, report)


def _settings_given(ctx: click.Context) -> bool:
    """Whether a fingerprint setting was given on the command line (an index has its own)."""
    return any(
        ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
        for name in ("bits", "seed", "ngram", "char_ngrams", "weighting")
    )


def _add_files(
    messages: Messages,
    store: Store,
    paths: tuple[str, ...],
    reading: _Reading,
    mapper: Mapper | None = None,
) -> adding.AddReport:
    with messages.progress("reading") as hooks:
        return adding.add_files(
            store,
            paths,
            on_event=messages.event,
            on_listed=hooks.on_listed,
            on_read=hooks.on_read,
            jobs=reading.jobs,
            policy=reading.policy,
            mapper=mapper or ordered_map,
        )


def _added(messages: Messages, db: str, report: adding.AddReport, store: Store) -> None:
    messages.info(
        f"{db}: {report.new:,} new, {report.updated:,} updated, "
        f"{report.unchanged:,} unchanged (not read), {len(report.removed):,} removed, "
        f"{len(report.skipped):,} skipped; {store.count():,} documents stored"
    )


def _load_fingerprints(
    messages: Messages,
    source: str,
    paths: tuple[str, ...],
    vectors: str | None,
    on_error: str,
    bits: int | None,
    seed: int | None,
    ngram: int,
    char_ngrams: int | None,
    weighting: str,
    *,
    include_empty: bool,
) -> Corpus:
    if paths or vectors is not None:
        raise click.UsageError("give PATHs, --vectors or --fingerprints, only one of them")
    check = _fingerprint_options(bits, seed, ngram, char_ngrams, weighting)
    docs = corpus_from_fingerprints(
        source,
        on_event=messages.event,
        skip_bad_lines=on_error == "skip",
        include_empty=include_empty,
    )
    check(docs.settings)
    return docs


def _fingerprint_options(
    bits: int | None, seed: int | None, ngram: int, char_ngrams: int | None, weighting: str
) -> Callable[[Settings], None]:
    """Refuse tokenizer options with --fingerprints; the check of --bits and --seed against
    the settings the records turn out to have."""
    if ngram != 1 or char_ngrams is not None or weighting != Weighting.TF.value:
        raise click.UsageError(
            "--ngram, --char-ngrams and --weighting do not apply to --fingerprints "
            "(the records say how they were made)"
        )

    def check(settings: Settings) -> None:
        # Settings are read from the records; options that say otherwise are a mistake.
        asked = {"--bits": (bits, settings.bits), "--seed": (seed, settings.seed)}
        for option, (given, stored) in asked.items():
            if given is not None and given != stored:
                raise click.UsageError(
                    f"{option} {given} does not match the fingerprints' {stored}"
                )

    return check


# ---------------------------------------------------------------------------- index


def fingerprints_option(help_text: str) -> Callable[[F], F]:
    """``--fingerprints FILE|-``: the JSON Lines of ``simhash fingerprint``."""
    return click.option("--fingerprints", metavar="FILE|-", default=None, help=help_text)


def _one_input(paths: tuple[str, ...], vectors: str | None, fingerprints: str | None) -> None:
    given = sum((bool(paths), vectors is not None, fingerprints is not None))
    if given != 1:
        raise click.UsageError("give PATHs, --vectors FILE or --fingerprints FILE (one of them)")


@main.group("index", short_help="A persistent index: add documents over time, query it.")
def index_group() -> None:
    """A persistent index of fingerprints in one SQLite file (DB).

    Add documents over time (files are read again only when they changed), ask which stored
    documents are near new ones in milliseconds, dedupe what is stored without reading it
    again. The file keeps the settings its fingerprints were made with and refuses others.

    \b
    Examples:
      simhash index add crawl.db pages/
      simhash index query crawl.db new-page.html
      simhash index dedupe crawl.db -f json | jq '.summary'
      simhash index stats crawl.db
      simhash index prune crawl.db
    """


@index_group.command("add", short_help="Fingerprint documents and store them.")
@click.argument("db", metavar="DB")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@vectors_option
@fingerprints_option("Store the JSON Lines output of 'simhash fingerprint' as it is.")
@settings_options
@tokenizer_options
@jobs_option
@engine_options
@quiet_option
def index_add_command(
    db: str,
    paths: tuple[str, ...],
    vectors: str | None,
    on_error: str,
    fingerprints: str | None,
    bits: int | None,
    seed: int | None,
    ngram: int,
    char_ngrams: int | None,
    weighting: str,
    strict_encoding: bool,
    max_bytes: int,
    follow_symlinks: bool,
    jobs: int,
    engine: str,
    scheduler: str | None,
    workers: int | None,
    quiet: bool,
) -> None:
    """Fingerprint documents and store them in DB (made if missing).

    Files are stored by absolute path with their size and mtime; one the index holds unchanged
    is not read again, a changed one is updated. Settings (--bits, --seed, --ngram, ...) are
    those of the index; given for an existing index, they must be its own. Documents are stored
    a batch per transaction: an interrupted add keeps what it finished, and the same command
    goes on from there.
    """
    _one_input(paths, vectors, fingerprints)
    if "-" in paths:
        raise click.UsageError(adding.NO_STANDARD_INPUT)
    ctx = click.get_current_context()
    explicit = _settings_given(ctx)
    messages = Messages(sys.stderr, quiet=quiet)
    skip = on_error == "skip"
    dask = _engine(ctx.params, {"--vectors or --fingerprints": not paths})
    if fingerprints is not None:
        if explicit:
            raise click.UsageError(
                "--fingerprints records say how they were made: give no settings"
            )
        docs = corpus_from_fingerprints(fingerprints, on_event=messages.event, skip_bad_lines=skip)
        store = adding.open_for_adding(db, docs.settings, docs.settings)
    elif vectors is not None:
        default = Settings(
            bits or DEFAULT_BITS,
            DEFAULT_SEED if seed is None else seed,
            VECTORS_TOKENIZER,
            VECTORS_WEIGHTING,
        )
        store = adding.open_for_adding(db, default if explicit else None, default)
        docs = corpus_from_vectors(
            vectors,
            bits=store.settings.bits,
            seed=store.settings.seed,
            on_event=messages.event,
            skip_bad_lines=skip,
        )
    else:
        reading = _Reading.parse(ctx.params)
        requested = Settings(
            reading.bits, reading.seed, reading.tokenizer.name, reading.weighting.value
        )
        store = adding.open_for_adding(db, requested if explicit else None, requested)
    with store:
        if fingerprints is not None or vectors is not None:
            report = adding.add_records(store, docs)
        elif dask:
            with _on_dask(messages, ctx.params) as cluster:
                report = _add_files(messages, store, paths, reading, dask_engine.mapper(cluster))
        else:
            report = _add_files(messages, store, paths, reading)
        _added(messages, db, report, store)


@index_group.command("query", short_help="Stored documents near each given document.")
@click.argument("db", metavar="DB")
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@vectors_option
@fingerprints_option("Query with the JSON Lines output of 'simhash fingerprint'.")
@threshold_option
@click.option(
    "--max-distance",
    type=click.IntRange(0),
    default=None,
    metavar="K",
    help="Instead of --threshold: stored documents within K bits.",
)
@click.option(
    "--check",
    is_flag=True,
    help=f"Exit {int(ExitCode.DUPLICATES_FOUND)} when any document has a match.",
)
@format_option
@quiet_option
def index_query_command(
    db: str,
    paths: tuple[str, ...],
    vectors: str | None,
    on_error: str,
    fingerprints: str | None,
    threshold: float,
    max_distance: int | None,
    check: bool,
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """For each document, the stored documents within the threshold, nearest first.

    Documents are fingerprinted with the index's settings; each is looked up in the index's
    tables (one B-tree look-up per table at small distances), not compared with every stored
    fingerprint. A stored file is not reported as its own match.
    """
    _one_input(paths, vectors, fingerprints)
    messages = Messages(sys.stderr, quiet=quiet)
    skip = on_error == "skip"
    with Store.open(db) as store:
        settings = store.settings
        if fingerprints is not None:
            docs = corpus_from_fingerprints(
                fingerprints, on_event=messages.event, skip_bad_lines=skip
            )
        elif vectors is not None:
            docs = corpus_from_vectors(
                vectors,
                bits=settings.bits,
                seed=settings.seed,
                on_event=messages.event,
                skip_bad_lines=skip,
            )
        else:
            docs = corpus_from_paths(
                paths,
                bits=settings.bits,
                seed=settings.seed,
                tokenizer=TokenizerConfig.from_name(settings.tokenizer),
                weighting=Weighting(settings.weighting),
                on_event=messages.event,
            )
        limit = (
            max_distance if max_distance is not None else estimate_limit(threshold, settings.bits)
        )
        if limit < 0:
            raise click.BadParameter(
                f"no Hamming distance at {settings.bits} bits estimates a cosine of {threshold:g}",
                param_hint="--threshold",
            )
        matches, names = adding.search(store, docs, min(limit, settings.bits))
        with _report() as out:
            emit_matches(matches, names, docs.ids, settings.bits, _format(fmt), out)
        how = (
            f"within {limit} bits"
            if max_distance is not None
            else f"at estimated cosine >= {threshold:g} (within {limit} bits)"
        )
        matched = len(set(matches.query.tolist()))
        messages.info(
            f"{matched:,} of {len(docs):,} documents have stored documents {how}; "
            f"{len(matches.query):,} matches among {store.count():,} stored"
        )
    if check and len(matches.query):
        sys.stdout.flush()
        click.get_current_context().exit(ExitCode.DUPLICATES_FOUND)


@index_group.command("dedupe", short_help="Near-duplicates among the stored documents.")
@click.argument("db", metavar="DB")
@threshold_option
@click.option(
    "--verify",
    "verify_mode",
    type=click.Choice([v.value for v in Verify]),
    default=Verify.ESTIMATE.value,
    show_default=True,
    help="estimate: from the stored fingerprints, nothing read; exact: the stored files are "
    "read again and their true cosine computed.",
)
@max_candidates_option
@max_pairs_option
@jobs_option
@format_option
@quiet_option
def index_dedupe_command(
    db: str,
    threshold: float,
    verify_mode: str,
    max_candidates: int,
    max_pairs: int,
    jobs: int,
    fmt: str | None,
    output_path: str | None,
    quiet: bool,
) -> None:
    """All near-duplicate pairs and clusters among the stored documents, as `simhash dedupe`
    reports them."""
    messages = Messages(sys.stderr, quiet=quiet)
    verify = Verify(verify_mode)
    with Store.open(db) as store:
        docs = adding.stored_corpus(store)
    if verify is Verify.EXACT:
        with messages.progress("reading") as hooks:
            docs = adding.read_again(
                docs, messages.event, read=corpus_from_paths, on_read=hooks.on_read, jobs=jobs
            )
    config = DedupeConfig(
        threshold=threshold, verify=verify, max_candidates=max_candidates, max_pairs=max_pairs
    )
    with messages.status(f"finding and verifying candidates among {len(docs):,} documents"):
        result = dedupe(docs, config)
    with _report() as out:
        emit_dedupe(result, _format(fmt), out)
    messages.dedupe_summary(result, "read" if verify is Verify.EXACT else "stored:")


@index_group.command("stats", short_help="Documents, settings, tables and size of an index.")
@click.argument("db", metavar="DB")
@format_option
def index_stats_command(db: str, fmt: str | None, output_path: str | None) -> None:
    """Documents, the settings they were made with, the tables (how evenly their keys spread:
    the largest bucket is what one look-up can cost) and the size on disk."""
    with Store.open(db) as store:
        stats = store.stats()
    with _report() as out:
        emit_index_stats(stats, _format(fmt), out)


@index_group.command("prune", short_help="Forget stored files that no longer exist.")
@click.argument("db", metavar="DB")
@format_option
@quiet_option
def index_prune_command(db: str, fmt: str | None, output_path: str | None, quiet: bool) -> None:
    """Forget the stored files that no longer exist (records from --vectors and
    --fingerprints stay); report each as {"removed": path}."""
    messages = Messages(sys.stderr, quiet=quiet)
    with Store.open(db) as store:
        removed = store.prune(lambda path, size, mtime: os.path.lexists(path))
        remaining = store.count()
    with _report() as out:
        emit_records([{"removed": path} for path in removed], _format(fmt), out)
    messages.info(f"{db}: {len(removed):,} removed; {remaining:,} documents stored")


if __name__ == "__main__":  # pragma: no cover
    main()
