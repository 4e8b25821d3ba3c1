"""``simhash fingerprint``, ``simhash compare`` and ``simhash explain``: documents in,
fingerprints and what makes two of them alike out."""

from __future__ import annotations

import sys

import click

from ..app.compare import CompareRequest, compare_documents
from ..app.engine import Engine
from ..app.explain import ExplainRequest, explain_documents
from ..app.fingerprint import (
    FingerprintRequest,
    Tally,
    fingerprint_batches,
    fingerprint_corpus,
    fingerprint_records,
)
from ..app.settings import Input
from ..engines import open_engine
from ..engines.local import LocalEngine
from ..errors import ExitCode
from ..io.sinks.atomic import opened
from ..io.sinks.explain import emit_explanation
from ..io.sinks.formats import Format
from ..io.sinks.messages import Messages
from ..io.sinks.tables import emit_comparison, emit_fingerprints
from .main import Command, exit_with
from .options import (
    ENGINE,
    ID_FIELD,
    TEXT_FIELD,
    collapse,
    own,
    reading_group,
    source_group,
    threshold_option,
)
from .outputs import OUTPUT, quiet_option

__all__ = ["compare_command", "explain_command", "fingerprint_command"]


@click.command("fingerprint", cls=Command)
@collapse(
    source_group(Input.VECTORS, Input.TEXTS),
    reading_group(empty=True),
    ENGINE,
    OUTPUT,
    into=FingerprintRequest,
)
@quiet_option
def fingerprint_command(request: FingerprintRequest, messages: Messages) -> None:
    """Print one fingerprint record per document.

    PATHs are files, directories (read recursively, in sorted order) or - for standard input.
    Each record carries the settings it was made with, so that fingerprints made differently
    are never compared by mistake.

    \b
    Examples:
      simhash fingerprint sample_corpus/
      echo '{"id": "u1", "features": {"jazz": 3, "vinyl": 1.5}}' | simhash fingerprint --vectors -
    """
    request.check()
    with open_engine(
        request.engine, messages, needs=request.needs(), source=request.source
    ) as chosen:
        if request.streamed or request.records_streamed:
            _stream(request, chosen, messages)
            return
        docs = fingerprint_corpus(request, chosen, messages)
    with opened(request.output.path) as out:
        emit_fingerprints(docs, request.output.resolve(sys.stdout), out)
    messages.corpus_summary(docs, "fingerprinted")


def _stream(request: FingerprintRequest, engine: Engine, messages: Messages) -> None:
    """Batches written as they are made: only a batch is ever in memory."""
    output = request.output
    fmt = output.resolve(sys.stdout)
    # Records go to stdout while the bar redraws stderr: on one terminal they would mix.
    same_terminal = fmt is not Format.TABLE and sys.stdout.isatty() and not output.to_file
    tally = Tally()
    progress_shown = messages.progress("reading files", shown=not same_terminal)
    with opened(output.path) as out:
        with progress_shown as progress:
            batches = (
                fingerprint_batches(request, engine, messages, progress, tally)
                if request.streamed
                else fingerprint_records(request, messages, tally)
            )
            if fmt is not Format.TABLE:
                emit_fingerprints(batches, fmt, out)
            else:  # a table waits for every batch, and for the bar to leave the terminal
                made = list(batches)
        if fmt is Format.TABLE:
            emit_fingerprints(made, fmt, out)
    messages.counts_summary(tally.documents, tally.skipped, "fingerprinted")


# compare and explain: A and B named by id in a file of records instead of as files.
_RECORDS_BY_ID = (
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


@click.command(
    "compare", cls=Command, short_help="Compare a document with others: Hamming and cosines."
)
@collapse(
    own(
        click.argument("a", metavar="A"),
        click.argument("b", metavar="B...", nargs=-1, required=True),
        threshold_option,
        click.option(
            "--check",
            "check_pairs",
            is_flag=True,
            help=f"Exit {int(ExitCode.DUPLICATES_FOUND)} when A is a near-duplicate of any B.",
        ),
        *_RECORDS_BY_ID,
    ),
    reading_group(jobs=False),
    OUTPUT,
    into=CompareRequest,
)
@quiet_option
def compare_command(request: CompareRequest, messages: Messages) -> None:
    """Compare A with each B: Hamming distance, estimated and true cosine, and whether they
    are near-duplicates at --threshold.

    With one B, a terminal shows both fingerprints bit by bit, agreeing bits highlighted; with
    several, the most similar come first, and A itself among them (a glob that matches it) is
    left out. With --texts or --vectors FILE, A and the Bs are ids of its records.
    With --weighting tfidf, idf is taken over A and the Bs only (dedupe takes it over all it
    reads): their cosines differ from dedupe's.

    \b
    Example:
      cd sample_corpus && simhash compare --bits 32 volcano-report.txt volcano-report-wire.txt
    """
    request.check()
    comparisons = compare_documents(request, LocalEngine(), messages)
    with opened(request.output.path) as out:
        fmt = request.output.resolve(sys.stdout)
        emit_comparison(comparisons, request.threshold, fmt, out)
    if request.check_pairs and any(c.reaches(request.threshold) for c in comparisons):
        exit_with(ExitCode.DUPLICATES_FOUND)


@click.command(
    "explain", cls=Command, short_help="Why two documents match: features, blocks and a diff."
)
@collapse(
    own(
        click.argument("a", metavar="A"),
        click.argument("b", metavar="B"),
        *_RECORDS_BY_ID,
        click.option(
            "--blocks",
            type=click.IntRange(1),
            default=None,
            metavar="N",
            help="Show the blocks shared under N equal blocks [default: the 1, 4 and 8 "
            "blocks of the page's schemes].",
        ),
        click.option(
            "--top",
            type=click.IntRange(1),
            default=12,
            show_default=True,
            help="Features listed in each part.",
        ),
    ),
    reading_group(jobs=False),
    OUTPUT,
    into=ExplainRequest,
)
@quiet_option
def explain_command(request: ExplainRequest, messages: Messages) -> None:
    """Explain why A and B match, or do not.

    The features that carry their cosine (each shared feature's a*b/(|a||b|), which add up to
    the cosine), the features only one has with their share of its squared length (what they
    cost), the Hamming distance and the blocks the fingerprints share (a shared block makes a
    candidate), and a word-level diff of the texts: on a terminal, A's words struck through
    in red and B's underlined in green.

    \b
    Examples:
      cd sample_corpus && simhash explain volcano-report.txt volcano-report-wire.txt
      simhash explain --texts tickets.jsonl t-101 t-207 -f json | jq '.carrying'
    """
    request.check()
    explained = explain_documents(request, messages)
    with opened(request.output.path) as out:
        emit_explanation(explained, request.output.resolve(sys.stdout), out)
