"""``simhash index ...``: a persistent index of fingerprints in one SQLite file."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..app.choices import Input
from ..core.config import DEFAULT_THRESHOLD, Verify
from ..errors import ExitCode
from .dedupe import CHECK_OPTION, CLUSTER_OPTIONS, PLAN_OPTIONS, SCHEME_OPTIONS, report
from .main import SUMMARIES, Group, exit_with
from .options import (
    ENGINE,
    as_enum,
    collapse,
    files_group,
    fingerprints_option,
    jobs_option,
    later,
    max_candidates_option,
    max_pairs_option,
    own,
    reading_group,
    source_group,
    threshold_option,
)
from .outputs import OUTPUT, REPORT_OUTPUT, quiet_option
from .types import COSINE

if TYPE_CHECKING:
    from ..app.index.request import (
        IndexAddRequest,
        IndexDedupeRequest,
        IndexQueryRequest,
        StoreRequest,
    )
    from ..io.sinks.messages import Messages

__all__ = ["index_group"]

DB = click.argument("db", metavar="DB")


@click.group("index", cls=Group, short_help=SUMMARIES["index"])
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
@collapse(
    own(DB),
    source_group(
        Input.VECTORS,
        Input.TEXTS,
        Input.FINGERPRINTS,
        metavar="[PATH]...",
        helps=fingerprints_option(
            "Store what 'simhash fingerprint' wrote (JSON Lines, JSON or CSV) as it is."
        ),
    ),
    reading_group(),
    ENGINE,
    into=later("..app.index.request:IndexAddRequest"),
)
@quiet_option
def index_add_command(request: IndexAddRequest, messages: Messages) -> None:
    """Fingerprint documents and store them in DB (made if missing).

    Files are stored by absolute path with their size and mtime; one the index holds unchanged
    is not read again, a changed one is updated. Settings (--bits, --seed, --ngram, ...) are
    those of the index; given for an existing index, they must be its own. Documents are stored
    a batch per transaction: an interrupted add keeps what it finished, and the same command
    goes on from there.
    """
    from ..app.index import run as index_run  # (the help imports no run)
    from ..engines import open_engine

    request.check()
    with open_engine(request.engine, messages, needs=request.needs()) as engine:
        index_run.add(request, engine, messages)


@index_group.command("query", short_help="Stored documents near each given document.")
@collapse(
    own(DB),
    source_group(
        Input.VECTORS,
        Input.TEXTS,
        Input.FINGERPRINTS,
        helps=fingerprints_option("Query with the JSON Lines output of 'simhash fingerprint'."),
    ),
    files_group(),
    own(
        click.option(
            "--threshold",
            type=COSINE,
            default=DEFAULT_THRESHOLD,
            show_default=True,
            help="Stored documents whose estimated cosine, cos(pi*hamming/bits), is at least "
            "this (the index keeps fingerprints, not vectors).",
        ),
        click.option(
            "--max-distance",
            type=click.IntRange(0),
            default=None,
            metavar="K",
            help="Instead of --threshold: stored documents within K bits.",
        ),
        click.option(
            "--limit",
            type=click.IntRange(1),
            default=None,
            metavar="N",
            help="At most N matches per document, the nearest [default: all].",
        ),
        click.option(
            "--check",
            "check_matches",
            is_flag=True,
            help=f"Exit {int(ExitCode.DUPLICATES_FOUND)} when any document has a match.",
        ),
    ),
    OUTPUT,
    into=later("..app.index.request:IndexQueryRequest"),
)
@quiet_option
def index_query_command(request: IndexQueryRequest, messages: Messages) -> None:
    """For each document, the stored documents within the threshold, nearest first.

    Documents are fingerprinted with the index's settings; each is looked up in the index's
    tables (one B-tree look-up per table at small distances), not compared with every stored
    fingerprint. A stored file is not reported as its own match.
    """
    from ..app.index import run as index_run  # (the help imports no run)
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_matches

    request.check()
    found = index_run.query(request, messages)
    with opened(request.output.path) as out:
        fmt = request.output.resolve(sys.stdout)
        emit_matches(found.matches, found.names, found.queries, found.bits, fmt, out)
    messages.info(found.summary())
    if request.check_matches and len(found.matches.query):
        exit_with(ExitCode.DUPLICATES_FOUND)


@index_group.command("dedupe", short_help="Near-duplicates among the stored documents.")
@collapse(
    own(
        DB,
        *SCHEME_OPTIONS,
        threshold_option,
        click.option(
            "--verify",
            type=click.Choice([v.value for v in Verify]),
            default=Verify.ESTIMATE.value,
            show_default=True,
            callback=as_enum(Verify),
            help="estimate: from the stored fingerprints, nothing read; exact: the stored "
            "files are read again and their true cosine computed.",
        ),
        max_candidates_option,
        max_pairs_option,
        *CLUSTER_OPTIONS,
        CHECK_OPTION,
        *PLAN_OPTIONS,
        click.option(
            "--root",
            "roots",
            multiple=True,
            metavar="DIR",
            type=click.Path(exists=True, file_okay=False),
            help="With --plan: a directory the plan may act in (the tree the stored files "
            "came from; repeat for more). Stored files outside every --root are left out: a "
            "stored path is never trusted as a root.",
        ),
        jobs_option,
    ),
    REPORT_OUTPUT,
    into=later("..app.index.request:index_dedupe_request"),
)
@quiet_option
def index_dedupe_command(request: IndexDedupeRequest, messages: Messages) -> None:
    """All near-duplicate pairs and clusters among the stored documents, as `simhash dedupe`
    reports them (a plan of them with --verify exact, which reads the files as they are)."""
    from ..app.dedupe.outputs import AfterRun  # (the help imports no run)
    from ..app.index import run as index_run

    request.check()
    result = index_run.dedupe_stored(request, messages)
    report(
        result,
        messages,
        output=request.output,
        verb="read" if request.exact else "stored:",
        after=AfterRun(request.plan_request()),
        check=request.check_pairs,
    )


@index_group.command("stats", short_help="Documents, settings, tables and size of an index.")
@collapse(own(DB), OUTPUT, into=later("..app.index.request:StoreRequest"))
def index_stats_command(request: StoreRequest) -> None:
    """Documents, the settings they were made with, the tables (how evenly their keys spread:
    the largest bucket is what one look-up can cost) and the size on disk."""
    from ..app.index import run as index_run  # (the help imports no run)
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_index_stats

    request.check()
    stats = index_run.stats(request.db)
    with opened(request.output.path) as out:
        emit_index_stats(stats, request.output.resolve(sys.stdout), out)


@index_group.command("prune", short_help="Forget stored files that no longer exist.")
@collapse(own(DB), OUTPUT, into=later("..app.index.request:StoreRequest"))
@quiet_option
def index_prune_command(request: StoreRequest, messages: Messages) -> None:
    """Forget the stored files that no longer exist (records from --vectors and
    --fingerprints stay); report each as {"removed": path}."""
    from ..app.index import run as index_run  # (the help imports no run)
    from ..io.sinks.atomic import opened
    from ..io.sinks.tables import emit_records

    request.check()
    pruned = index_run.prune(request.db)
    with opened(request.output.path) as out:
        records = [{"removed": path} for path in pruned.removed]
        emit_records(records, request.output.resolve(sys.stdout), out)
    messages.info(pruned.summary())
