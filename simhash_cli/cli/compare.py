"""``simhash compare``: a document side by side with others, by Hamming distance and cosine."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..errors import ExitCode
from .main import SUMMARIES, Command, exit_with
from .options import RECORDS_BY_ID, collapse, later, own, reading_group, threshold_option
from .outputs import OUTPUT, quiet_option

if TYPE_CHECKING:
    from ..app.compare import CompareRequest
    from ..io.sinks.messages import Messages

__all__ = ["compare_command"]


@click.command("compare", cls=Command, short_help=SUMMARIES["compare"])
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
        *RECORDS_BY_ID,
    ),
    reading_group(jobs=False),
    OUTPUT,
    into=later("..app.compare:CompareRequest"),
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
      simhash compare --bits 32 sample_corpus/volcano-report*.txt
    """
    from ..app.compare import compare_documents  # (the help imports no run)
    from ..engines.local import LocalEngine
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_comparison

    request.check()
    comparisons = compare_documents(request, LocalEngine(), messages)
    with opened(request.output.path) as out:
        fmt = request.output.resolve(sys.stdout)
        emit_comparison(comparisons, request.threshold, fmt, out)
    if request.check_pairs and any(c.reaches(request.threshold) for c in comparisons):
        exit_with(ExitCode.DUPLICATES_FOUND)
