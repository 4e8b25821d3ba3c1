"""``simhash explain``: why two documents match, or do not."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .main import SUMMARIES, Command
from .options import RECORDS_BY_ID, collapse, later, own, reading_group
from .outputs import OUTPUT, quiet_option

if TYPE_CHECKING:
    from ..app.explain import ExplainRequest
    from ..io.sinks.messages import Messages

__all__ = ["explain_command"]


@click.command("explain", cls=Command, short_help=SUMMARIES["explain"])
@collapse(
    own(
        click.argument("a", metavar="A"),
        click.argument("b", metavar="B"),
        *RECORDS_BY_ID,
        click.option(
            "--blocks",
            type=click.IntRange(1),
            default=None,
            metavar="N",
            help="Show the blocks shared under N equal blocks [default: under 1, 4 and 8 blocks].",
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
    into=later("..app.explain:ExplainRequest"),
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
      simhash explain sample_corpus/volcano-report*.txt
      simhash explain --texts tickets.jsonl t-101 t-207 -f json | jq '.carrying'
    """
    from ..app.explain import explain_documents  # (the help imports no run)
    from ..io.sinks.atomic import opened
    from ..io.sinks.explain import emit_explanation

    request.check()
    explained = explain_documents(request, messages)
    with opened(request.output.path) as out:
        emit_explanation(explained, request.output.resolve(sys.stdout), out)
