"""``simhash fingerprint``: documents in, one fingerprint record each out."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..app.choices import Input
from ..io.sinks.formats import Format
from .main import SUMMARIES, Command
from .options import ENGINE, collapse, later, reading_group, source_group
from .outputs import OUTPUT, quiet_option

if TYPE_CHECKING:
    from ..app.engine import Engine
    from ..app.fingerprint import FingerprintRequest
    from ..io.sinks.messages import Messages

__all__ = ["fingerprint_command"]


@click.command("fingerprint", cls=Command, short_help=SUMMARIES["fingerprint"])
@collapse(
    source_group(Input.VECTORS, Input.TEXTS),
    reading_group(empty=True),
    ENGINE,
    OUTPUT,
    into=later("..app.fingerprint:FingerprintRequest"),
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
      echo '{"id":"u1","features":{"jazz":3}}' | simhash fingerprint --vectors -
    """
    from ..app.fingerprint import fingerprint_corpus  # (the help imports no run)
    from ..engines import open_engine
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_fingerprints

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
    from ..app.fingerprint import Tally, fingerprint_batches, fingerprint_records
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_fingerprints

    output = request.output
    fmt = output.resolve(sys.stdout)
    # Records go to stdout while the bar redraws stderr: on one terminal they would mix.
    same_terminal = fmt is not Format.TABLE and sys.stdout.isatty() and not output.to_file
    tally = Tally()
    # Files have their bar; records count themselves as they are read (an empty bar of
    # files stood above the count).
    shown = request.streamed and not same_terminal
    progress_shown = messages.progress("reading files", shown=shown)
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
