"""``simhash dedupe``: near-duplicate pairs and their clusters."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..app.choices import Input, Memory
from ..app.keep import DEFAULT_KEEP, Keep
from ..core.config import AUDIT_MAX_DOCS, DEFAULT_GROUP_PAIRS, Clustering, Verify
from ..errors import ExitCode
from .main import SUMMARIES, Command, exit_with
from .options import (
    ENGINE,
    as_enum,
    collapse,
    later,
    max_candidates_option,
    max_pairs_option,
    own,
    protect_option,
    reading_group,
    source_group,
    threshold_option,
)
from .outputs import REPORT_OUTPUT, dataset_output, quiet_option, side_file
from .types import BANDS, BLOCKS

if TYPE_CHECKING:
    from ..app.dedupe.outputs import AfterRun
    from ..app.dedupe.request import DedupeRequest
    from ..core.result import DedupeResult
    from ..io.sinks.formats import Output
    from ..io.sinks.messages import Messages

__all__ = ["dedupe_command"]


# Options that dedupe and index dedupe share.
SCHEME_OPTIONS = [
    click.option(
        "--blocks",
        type=BLOCKS,
        default=None,
        metavar="auto|every|N",
        help="auto: the cheapest scheme that finds 0.95 of the near-duplicates; N: N equal "
        "blocks, a shared one makes a candidate; every: every pair [default: auto].",
    ),
    click.option(
        "--max-distance",
        type=click.IntRange(0),
        default=None,
        metavar="K",
        help="Instead of --blocks: candidates are exactly the pairs of fingerprints within "
        "K bits (Manku's permuted tables), whatever the seed.",
    ),
]
CLUSTER_OPTIONS = [
    click.option(
        "--clustering",
        type=click.Choice([c.value for c in Clustering]),
        default=Clustering.REPRESENTATIVE.value,
        show_default=True,
        callback=as_enum(Clustering),
        help="representative: every member of a cluster is a flagged near-duplicate of the "
        "one kept (the most central, or --keep's choice), so removing the rest removes only "
        "near-duplicates of what stays; components: connected components, chains of "
        "near-duplicates whose ends may be far apart.",
    ),
    click.option(
        "--group-pairs",
        type=click.IntRange(0),
        default=DEFAULT_GROUP_PAIRS,
        show_default=True,
        metavar="N",
        help="Also check the pairs inside each group the candidates found (pairs a seed "
        "missed), smallest groups first, up to N pairs; 0: only candidates.",
    ),
]
CHECK_OPTION = click.option(
    "--check",
    "check_pairs",
    is_flag=True,
    help=f"Exit {int(ExitCode.DUPLICATES_FOUND)} when any pair is flagged (for CI pipelines).",
)
PLAN_OPTIONS = [
    click.option(
        "--plan",
        metavar="FILE",
        default=None,
        callback=side_file,
        help="Write what would be done to FILE, for `simhash apply FILE`; nothing is changed.",
    ),
    click.option(
        "--keep",
        type=click.Choice([k.value for k in Keep]),
        default=None,
        callback=as_enum(Keep),
        metavar="RULE",
        help="The member each cluster keeps, in every output: "
        + ", ".join(k.value for k in Keep)
        + f" [default: {DEFAULT_KEEP.value}, the one the others are near-duplicates of].",
    ),
    protect_option(
        "With --plan: PATH (a file, or the files under a directory) is never marked for "
        "removal, and a cluster holding one keeps it (the tagged original)."
    ),
]


@click.command("dedupe", cls=Command, short_help=SUMMARIES["dedupe"])
@collapse(
    source_group(Input.VECTORS, Input.TEXTS, Input.FINGERPRINTS),
    reading_group(empty=True),
    own(
        *SCHEME_OPTIONS,
        click.option(
            "--minhash",
            type=BANDS,
            default=None,
            metavar="BANDSxROWS",
            help="Candidates share one of BANDS bands of ROWS bins of a MinHash of each "
            "document's set of words (files and --texts; auto picks it when it is cheaper), "
            "for example 16x8; with --blocks N or --max-distance K, their candidates too.",
        ),
        click.option(
            "--pilot/--no-pilot",
            default=True,
            show_default=True,
            help="With --blocks auto: find the corpus's own near-duplicates first (every pair "
            "of a random sample of documents, by exact products), price each scheme on them "
            "and measure the run's recall; --no-pilot prices the schemes at the threshold.",
        ),
        threshold_option,
        click.option(
            "--verify",
            type=click.Choice([v.value for v in Verify]),
            default=None,
            callback=as_enum(Verify),
            help="exact: true cosine of the vectors; estimate: cos(pi*hamming/bits) "
            "[default: exact; estimate with --fingerprints].",
        ),
        max_candidates_option,
        max_pairs_option,
        *CLUSTER_OPTIONS,
        click.option(
            "--audit",
            is_flag=True,
            help="Also compute every pair's true cosine and report the blocks' recall and "
            f"false candidates (up to {AUDIT_MAX_DOCS:,} documents).",
        ),
        CHECK_OPTION,
        *PLAN_OPTIONS,
        click.option(
            "--kept",
            metavar="FILE",
            default=None,
            callback=dataset_output,
            help="Write the records kept to FILE, unchanged, in the input's order and format.",
        ),
        click.option(
            "--dropped",
            metavar="FILE",
            default=None,
            callback=dataset_output,
            help="Write the records dropped to FILE, each with what it duplicates.",
        ),
        click.option(
            "--annotated",
            metavar="FILE",
            default=None,
            callback=dataset_output,
            help="With --texts or --vectors FILE: write every record to FILE with its fate "
            "added (kept, duplicate_of, cosine, cluster), for those who filter later.",
        ),
        click.option(
            "--annotation-field",
            metavar="NAME",
            default=None,
            help="With --dropped or --annotated: the key each record's fate is added under "
            "(Parquet: the prefix of its columns) [default: simhash]; a record that already "
            "has it is refused, never overwritten.",
        ),
        click.option(
            "--keep-by",
            metavar="FIELD:max|min",
            default=None,
            help="Instead of --keep, for records: each cluster keeps the record whose FIELD is "
            "largest (or smallest), e.g. quality:max; records without one come last.",
        ),
        click.option(
            "--report",
            metavar="FILE",
            default=None,
            callback=side_file,
            help="Also write a self-contained HTML page to browse the run: its summary, the "
            "cosines against the threshold, the scheme's S-curve, and the clusters, each "
            "member explained and diffed against the one kept (and the plan, with --plan).",
        ),
        click.option(
            "--memory",
            type=click.Choice([m.value for m in Memory]),
            default=Memory.AUTO.value,
            show_default=True,
            callback=as_enum(Memory),
            help="What --texts or --vectors FILE hold of each document: vectors (one reading), "
            "or fingerprints (and MinHash signatures), the records read again for the "
            "planner's sample and for the documents of candidate pairs: the same answer in the "
            "memory of the fingerprints; auto: fingerprints when the vectors could fill half "
            "of this machine's memory.",
        ),
        click.option(
            "--against",
            metavar="REF",
            default=None,
            help="Flag the documents near one of REF (an evaluation set, or an index) instead "
            "of each other; --kept drops them.",
        ),
        click.option(
            "--against-text-field",
            metavar="PATH",
            multiple=True,
            help="Where REF's records keep their text, as --text-field [default: as the "
            "input's]. (repeatable)",
        ),
        click.option(
            "--against-id-field",
            metavar="PATH",
            default=None,
            help="Where REF's records keep their id, as --id-field [default: as the input's].",
        ),
        click.option(
            "--index",
            metavar="DB",
            default=None,
            help="Keep the fingerprints in the index DB (made if missing), a cache that never "
            "changes the answer: read the files that are new or changed since, and for exact "
            "verification those the planner samples and those of candidate pairs (every file "
            "when the planner chooses MinHash).",
        ),
    ),
    ENGINE,
    REPORT_OUTPUT,
    into=later("..app.dedupe.request:dedupe_request"),
)
@quiet_option
def dedupe_command(request: DedupeRequest, messages: Messages) -> None:
    """Find near-duplicate documents and group them into clusters, each pair verified against
    --threshold; the summary on stderr says how much of them it found (-v: how).

    \b
    Examples:
      simhash dedupe sample_corpus/
      simhash dedupe --blocks 8 --threshold 0.8 -f json crawl/ | jq '.summary'
      simhash fingerprint crawl/ > fps.jsonl
      simhash dedupe --fingerprints fps.jsonl
    """
    from ..app.dedupe.run import before_run, dedupe_documents  # (the help imports no run)
    from ..engines import open_engine
    from ..io.sources.snapshot import watching

    request.check()
    messages.passing = request.dataset is not None  # (records without a word are kept)
    if request.against is not None:
        against(request, messages)
        return
    before = before_run(request.dataset, messages)
    with (
        open_engine(
            request.engine, messages, needs=request.needs(), source=request.source
        ) as chosen,
        watching(before),
    ):
        result = dedupe_documents(request, chosen, messages)
        # While a cluster is up: its pairs may be there.
        report(
            result,
            messages,
            output=request.output,
            verb="deduplicated" if request.index else "read",
            after=request.after(before),
            check=request.check_pairs,
        )


def against(request: DedupeRequest, messages: Messages) -> None:
    """``dedupe --against REF``: the reference read here, the documents by the engine; the
    pairs where the output says, the summary, the dataset asked for, exit 3 with --check."""
    from ..app.dedupe.against import decontaminate, reference_for, write_against
    from ..app.dedupe.run import before_run
    from ..engines import open_engine
    from ..engines.local import LocalEngine
    from ..io.sinks.against import emit_against
    from ..io.sinks.atomic import opened
    from ..io.sources.snapshot import watching

    request, reference = reference_for(request, LocalEngine(), messages)
    before = before_run(request.dataset, messages)
    with (
        open_engine(
            request.engine, messages, needs=request.needs(), source=request.source
        ) as chosen,
        watching(before),
    ):
        result = decontaminate(request, chosen, reference, messages)
    with opened(request.output.path) as out:
        emit_against(result, request.output.resolve(sys.stdout), out)
    messages.against_summary(result)
    tally = write_against(result, request, before, messages)
    if tally is not None and request.dataset is not None:
        messages.dataset_summary(tally, request.dataset.targets, "as near a reference document")
    if request.check_pairs and result.flagged.size:
        exit_with(ExitCode.DUPLICATES_FOUND)


def report(
    result: DedupeResult,
    messages: Messages,
    *,
    output: Output,
    verb: str,
    after: AfterRun,
    check: bool,
) -> None:
    """What dedupe and index dedupe end with: the clusters or pairs where ``output`` says, the
    summary (``verb``: what was done with the documents), what the run writes besides
    (:func:`~simhash_cli.app.dedupe.run.after_run`), and exit 3 with ``check`` when a pair is
    flagged."""
    from ..app.dedupe.run import after_run
    from ..io.sinks.atomic import opened
    from ..io.sinks.dedupe import emit_dedupe

    fmt = output.resolve(sys.stdout)
    with opened(output.path) as out:
        emit_dedupe(result, fmt, out, output.lists(fmt), null=output.null)
    messages.dedupe_summary(result, verb)
    tally = after_run(result, after, messages)
    if tally is not None and after.dataset is not None:
        messages.dataset_summary(tally, after.dataset[0].targets)
    if check and len(result.pairs):
        exit_with(ExitCode.DUPLICATES_FOUND)
