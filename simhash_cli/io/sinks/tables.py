"""Results -> the table a person reads at a terminal, or the records of the asked format.

Each ``emit_*`` writes one command's output: Rich tables for ``table``, the records of
:mod:`.records` for json, jsonl and csv.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from rich import box
from rich.table import Table
from rich.text import Text

from ...core.calibrate import Calibration
from ...core.corpus import Corpus, concatenate
from ...core.matches import Matches
from ...core.result import DedupeResult
from ...core.schemes import Survey
from ...core.search import Comparison
from .atomic import write_bytes
from .console import cosine_text, data_console, pair_numbers
from .formats import Format, Listing, Record, RecordWriter, counted, json_text, write_records
from .paths import Elided, shared_directory
from .records import (
    PAIR_CHUNK,
    budget_advice,
    calibration_record,
    comparison_record,
    fingerprint_lines,
    fingerprint_records,
    iter_cluster_records,
    iter_member_rows,
    iter_pair_records,
    match_records,
    pair_records,
    survey_record,
    write_dedupe_document,
)
from .visible import visible

__all__ = [
    "emit_apply",
    "emit_calibration",
    "emit_comparison",
    "emit_dedupe",
    "emit_fingerprints",
    "emit_index_stats",
    "emit_matches",
    "emit_records",
    "emit_survey",
]


def emit_fingerprints(docs: Corpus | Iterable[Corpus], fmt: Format, out: IO[str]) -> None:
    """Write ``simhash fingerprint`` output, batch by batch as batches arrive (a table waits
    for all of them)."""
    batches = [docs] if isinstance(docs, Corpus) else docs
    if fmt is not Format.TABLE:
        writer = RecordWriter(fmt, out)
        for batch in batches:
            if fmt is Format.JSONL:
                writer.write_lines(
                    fingerprint_lines(batch, ascii_only=writer.ascii_only), len(batch)
                )
            else:
                writer.write(fingerprint_records(batch))
        writer.close()
        return
    docs = docs if isinstance(docs, Corpus) else concatenate(batches)
    records = fingerprint_records(docs)
    s = docs.settings
    table = Table(
        title=f"{counted(len(records), 'fingerprint')} ({s.describe()})", title_justify="left"
    )
    table.add_column("id", overflow="fold")
    table.add_column("fingerprint", no_wrap=True)
    table.add_column("features", justify="right")
    for record in records:
        # An id is a string, or an integer as its record gave it.
        table.add_row(
            Text(visible(str(record["id"]))), record["fingerprint"], str(record["features"])
        )
    data_console(out).print(table)


_SLOTS_PER_ROW = 16


def _bit_strings(value_a: int, value_b: int, start: int, stop: int) -> tuple[Text, Text]:
    """Slots start..stop-1 of both fingerprints, slot 0 first, in groups of 4; agreeing bits
    highlighted."""
    text_a, text_b = Text(), Text()
    for slot in range(start, stop):
        if slot > start and slot % 4 == 0:
            text_a.append(" ")
            text_b.append(" ")
        bit_a, bit_b = (value_a >> slot) & 1, (value_b >> slot) & 1
        style = "bold black on green" if bit_a == bit_b else "bold red"
        text_a.append(str(bit_a), style=style)
        text_b.append(str(bit_b), style=style)
    return text_a, text_b


def emit_comparison(
    comparisons: Sequence[Comparison], threshold: float, fmt: Format, out: IO[str]
) -> None:
    """Write ``simhash compare`` output: for one B, the pair (in a table, both fingerprints
    bit by bit); for several, a record or row for each."""
    records = [comparison_record(c, threshold) for c in comparisons]
    if fmt is Format.JSON and len(records) == 1:
        out.write(json_text(records[0], out, indent=2) + "\n")
        return
    if fmt is not Format.TABLE:
        write_records(records, fmt, out)
        return
    if len(comparisons) > 1:
        data_console(out).print(_comparison_rows(comparisons, threshold))
        return
    (comparison,) = comparisons
    record = records[0]
    bits = comparison.settings.bits
    value_a, value_b = comparison.fingerprint_a, comparison.fingerprint_b
    bit_table = Table(
        title="Fingerprint bits, slot 0 first; agreeing bits highlighted", title_justify="left"
    )
    bit_table.add_column("slots", justify="right", no_wrap=True)
    bit_table.add_column("A", no_wrap=True)
    bit_table.add_column("B", no_wrap=True)
    bit_table.add_column("agree", justify="right", no_wrap=True)
    for start in range(0, bits, _SLOTS_PER_ROW):
        stop = min(start + _SLOTS_PER_ROW, bits)
        width = stop - start
        differ = ((value_a ^ value_b) >> start & ((1 << width) - 1)).bit_count()
        text_a, text_b = _bit_strings(value_a, value_b, start, stop)
        bit_table.add_row(f"{start}-{stop - 1}", text_a, text_b, f"{width - differ}/{width}")
    numbers = pair_numbers(
        (comparison.a, comparison.b),
        (str(record["fingerprint_a"]), str(record["fingerprint_b"])),
        comparison.hamming,
        bits,
        comparison.estimated_cosine,
        comparison.cosine,
    )
    numbers.add_row(
        "near-duplicate",
        f"{'yes' if record['near_duplicate'] else 'no'} (threshold {threshold:g})",
    )
    numbers.add_row("settings", comparison.settings.describe())
    console = data_console(out)
    console.print(bit_table)
    console.print(numbers)


def _comparison_rows(comparisons: Sequence[Comparison], threshold: float) -> Table:
    """A against each B, one row each."""
    first = comparisons[0]
    prefix = shared_directory([c.b for c in comparisons])
    under = f", paths under {visible(prefix)}" if prefix else ""
    table = Table(
        title=f"{visible(first.a)} against {counted(len(comparisons), 'document')} "
        f"({first.settings.describe()}{under})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("B", ratio=1)
    table.add_column("hamming", justify="right", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    table.add_column("cosine", justify="right", no_wrap=True)
    table.add_column(f">= {threshold:g}", no_wrap=True)
    for comparison in comparisons:
        table.add_row(
            Elided(comparison.b[len(prefix) :]),
            str(comparison.hamming),
            cosine_text(comparison.estimated_cosine),
            cosine_text(comparison.cosine),
            Text("near-duplicate", style="bold") if comparison.reaches(threshold) else "",
        )
    return table


def emit_dedupe(
    result: DedupeResult, fmt: Format, out: IO[str], listing: Listing, *, null: bool = False
) -> None:
    """Write ``simhash dedupe`` output: clusters or pairs (``listing``; json holds both). Every
    form but the table is written a chunk at a time, never all pairs as records."""
    if fmt is Format.JSON:
        write_dedupe_document(result, out)
        return
    if fmt is Format.GROUPS:
        _write_groups(_groups(result, listing), out, null=null)
        return
    if fmt is not Format.TABLE:
        writer = RecordWriter(fmt, out)
        if listing is Listing.PAIRS:
            chunks = iter_pair_records(result)
        elif fmt is Format.CSV:
            chunks = iter_member_rows(result)
        else:
            chunks = iter_cluster_records(result)
        for chunk in chunks:
            writer.write(chunk)
        writer.close()
        return
    console = data_console(out)
    prefix = shared_directory(result.corpus.ids)
    under = f" (paths under {visible(prefix)})" if prefix else ""
    if listing is Listing.PAIRS:
        console.print(_pair_table(result, prefix, under))
    else:
        console.print(_cluster_table(result, prefix, under))


def _groups(result: DedupeResult, listing: Listing) -> Iterator[list[str]]:
    """Each cluster's ids, its representative first (or each pair's two ids)."""
    ids = result.corpus.ids
    if listing is Listing.PAIRS:
        for chunk in result.pairs.chunks(PAIR_CHUNK):
            yield from ([ids[i], ids[j]] for i, j in chunk.pairs.tolist())
        return
    for number in range(len(result.clusters)):
        yield [ids[m] for m in result.groups.ordered(number).tolist()]


def _write_groups(groups: Iterable[list[str]], out: IO[str], *, null: bool) -> None:
    """fdupes' and jdupes' form: a name per line, a blank line after each group; with
    ``null``, each name ended by NUL and each group by one more. Names are written as their
    bytes are, except to a terminal (where they are made visible, as ls does)."""
    end = "\0" if null else "\n"
    if out.isatty():
        for names in groups:
            out.write("".join(visible(name) + "\n" for name in names) + "\n")
        return
    for names in groups:
        write_bytes(
            out, ("".join(name + end for name in names) + end).encode("utf-8", "surrogateescape")
        )


def _pair_table(result: DedupeResult, prefix: str, under: str) -> Table:
    """Every flagged pair, cluster by cluster."""
    pairs = sorted(
        pair_records(result),
        key=lambda pair: (pair["cluster"] is None, pair["cluster"] or 0),
    )

    def shown(doc_id: str | int) -> Elided:
        return Elided(str(doc_id)[len(prefix) :])

    table = Table(
        title=counted(len(pairs), "near-duplicate pair") + under,
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("cluster", justify="right", no_wrap=True)
    table.add_column("a", ratio=1)
    table.add_column("b", ratio=1)
    table.add_column("hamming", justify="right", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    table.add_column("cosine", justify="right", no_wrap=True)
    for pair in pairs:
        table.add_row(
            "-" if pair["cluster"] is None else str(pair["cluster"]),
            shown(pair["a"]),
            shown(pair["b"]),
            str(pair["hamming"]),
            cosine_text(pair["estimated_cosine"]),
            cosine_text(pair["cosine"]),
        )
    return table


def _clustered(result: DedupeResult) -> list[int]:
    """Every clustered document, cluster by cluster."""
    return [m for members in result.clusters for m in members.tolist()]


def _cluster_table(result: DedupeResult, prefix: str, under: str) -> Table:
    """Clusters in the order of their first member (their numbers in every format), each with
    its members: the representative first, the others by their cosine to it."""
    ids = result.corpus.ids
    members = result.groups
    documents = sum(int(c.size) for c in result.clusters)
    table = Table(
        title=f"{counted(len(result.clusters), 'cluster')} of {counted(documents, 'document')}"
        + under,
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("cluster", justify="right", no_wrap=True)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("member (the one kept first)", ratio=1)
    table.add_column("cosine" if members.exact else "estimate", justify="right", no_wrap=True)
    for number in range(len(result.clusters)):
        ordered = members.ordered(number).tolist()
        for place, m in enumerate(ordered):
            table.add_row(
                str(number) if place == 0 else "",
                str(len(ordered)) if place == 0 else "",
                Elided(ids[m][len(prefix) :], style="bold" if place == 0 else ""),
                "kept" if place == 0 else cosine_text(float(members.cosine[m])),
                end_section=place == len(ordered) - 1,
            )
    if any(math.isnan(value) for value in members.cosine[_clustered(result)].tolist()):
        table.caption = (
            "-: a member joined through other members (--clustering components), not itself "
            "within the threshold of the one kept"
        )
        table.caption_justify = "left"
    return table


def emit_apply(records: Iterable[Record], action: str, fmt: Format, out: IO[str]) -> Counter[str]:
    """Write ``simhash apply``'s step records as they are taken (the table at the end); returns
    how many steps ended in each status."""
    statuses: Counter[str] = Counter()
    if fmt is not Format.TABLE:
        writer = RecordWriter(fmt, out)
        for record in records:
            statuses[record["status"]] += 1
            writer.write([record])
        writer.close()
        return statuses
    taken = list(records)
    prefix = shared_directory([record["path"] for record in taken])
    table = Table(box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("cluster", justify="right", no_wrap=True)
    table.add_column("file", ratio=1)
    table.add_column("status", no_wrap=True)
    table.add_column("detail", ratio=1)
    styles = {"done": "green", "would_do": "cyan", "refused": "yellow", "failed": "red"}
    for record in taken:
        statuses[record["status"]] += 1
        status = record["status"].replace("_", " ")
        table.add_row(
            str(record["step"]),
            str(record["cluster"]),
            Elided(record["path"][len(prefix) :]),
            Text(status, style=styles.get(record["status"], "")),
            Elided(record["detail"]),
        )
    under = f", paths under {visible(prefix)}" if prefix else ""
    table.title = f"{counted(sum(statuses.values()), 'step')} ({action}{under})"
    data_console(out).print(table)
    return statuses


def emit_records(records: Sequence[Record], fmt: Format, out: IO[str]) -> None:
    """Plain records in any format; as a table, one column per key."""
    if fmt is not Format.TABLE:
        write_records(records, fmt, out)
        return
    table = Table(title=counted(len(records), "row"), title_justify="left", box=box.SIMPLE_HEAD)
    for key in records[0] if records else ():
        table.add_column(key, overflow="fold")
    for record in records:
        table.add_row(*(Text(visible(str(value))) for value in record.values()))
    data_console(out).print(table)


def emit_matches(
    matches: Matches, names: dict[int, str], queries: Sequence[str], bits: int, fmt: Format,
    out: IO[str],
) -> None:  # fmt: skip
    """Write ``simhash index query`` output."""
    records = match_records(matches, names, queries, bits)
    if fmt is not Format.TABLE:
        write_records(list(records), fmt, out)
        return
    table = Table(
        title=counted(len(matches.query), "match", "matches"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("query", overflow="fold", ratio=1)
    table.add_column("stored document", overflow="fold", ratio=1)
    table.add_column("hamming", justify="right", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    for record in records:
        table.add_row(
            Text(visible(str(record["query"]))),
            Text(visible(str(record["match"]))),
            str(record["hamming"]),
            cosine_text(record["estimated_cosine"]),
        )
    data_console(out).print(table)


def emit_index_stats(stats: Record, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash index stats``."""
    if fmt is Format.JSON:
        out.write(json_text(stats, out, indent=2) + "\n")
        return
    if fmt is not Format.TABLE:
        flat = {k: v for k, v in stats.items() if k != "tables"}
        flat["largest_bucket"] = max((t["largest_bucket"] for t in stats["tables"]), default=0)
        write_records([flat], fmt, out)
        return
    numbers = Table(show_header=False, box=None)
    numbers.add_column(style="bold", no_wrap=True)
    numbers.add_column(overflow="fold")
    per_document = stats["bytes_per_document"]
    numbers.add_row("index", Text(visible(stats["index"])))
    numbers.add_row("documents", f"{stats['documents']:,} ({stats['files']:,} files)")
    numbers.add_row(
        "settings",
        f"bits={stats['bits']} seed={stats['seed']} tokenizer={stats['tokenizer']} "
        f"weighting={stats['weighting']}",
    )
    numbers.add_row(
        "size on disk",
        f"{stats['bytes']:,} bytes"
        + ("" if per_document is None else f" ({per_document:,.0f} per document)"),
    )
    tables = Table(title="Tables (one per block of the fingerprint)", box=box.SIMPLE_HEAD)
    for column in ("table", "bits", "keys", "largest bucket", "mean bucket"):
        tables.add_column(column, justify="right")
    for row in stats["tables"]:
        tables.add_row(
            str(row["table"]),
            row["bits"],
            f"{row['keys']:,}",
            f"{row['largest_bucket']:,}",
            f"{row['mean_bucket']:.1f}",
        )
    console = data_console(out)
    console.print(numbers)
    console.print(tables)


# ---------------------------------------------------------------------------- stderr


# ---------------------------------------------------------------------------- plan

_BARS = "▁▂▃▄▅▆▇█"


def emit_survey(plan: Survey, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash plan``: the schemes worth considering with their S-curves."""
    document = survey_record(plan)
    if fmt in (Format.JSON, Format.JSONL):
        out.write(json_text(document, out, indent=2 if fmt is Format.JSON else None) + "\n")
        return
    if fmt is Format.CSV:
        rows = [{k: v for k, v in r.items() if k != "curve"} for r in document["schemes"]]
        write_records(rows, fmt, out)
        return
    distinct = (
        f" ({counted(plan.n_docs, 'distinct fingerprint')})"
        if plan.n_docs != plan.all_documents
        else ""
    )
    all_pairs = plan.n_docs * (plan.n_docs - 1) // 2
    table = Table(
        title=(
            f"Schemes for cosine >= {plan.threshold:g} at {plan.bits} bits among "
            f"{counted(plan.all_documents, 'document')}{distinct} (target recall "
            f"{plan.target:g})"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        caption=(
            f"unrelated pairs: of the {all_pairs:,} pairs of distinct fingerprints, those a "
            "scheme would compare by chance; comparisons: counted once per block or table "
            "(what the candidate budget, --max-candidates, bounds)"
        ),
        caption_justify="left",
    )
    table.add_column("")
    table.add_column("scheme", no_wrap=True)
    table.add_column(f"recall at {plan.threshold:g}", justify="right")
    table.add_column("unrelated pairs", justify="right")
    table.add_column("comparisons", justify="right")
    table.add_column("P(candidate) at cosine 0.5..1", no_wrap=True)
    chosen = document["chosen"]
    for entry in document["schemes"]:
        bars = "".join(_BARS[min(int(p * len(_BARS)), len(_BARS) - 1)] for _, p in entry["curve"])
        table.add_row(
            "*" if chosen is not None and entry["scheme"] == chosen["scheme"] else "",
            entry["scheme"],
            f"{entry['recall']:.2f}",
            f"{entry['expected_pairs']:,.0f}",
            f"{entry['expected_candidates']:,.0f}"
            + ("" if entry["in_budget"] else " (over budget)"),
            bars,
        )
    console = data_console(out)
    console.print(table)
    if chosen is None:
        console.print(
            f"No scheme at {plan.bits} bits reaches recall {plan.target:g} at cosine "
            f"{plan.threshold:g} within the candidate budget{budget_advice(plan)}; or more "
            f"--bits, or a higher --threshold. dedupe would use "
            f"{plan.best_effort().scheme.label(plan.bits)}."
        )
    else:
        console.print(f"* chosen: {chosen['scheme']} (the least expected work)")


# ---------------------------------------------------------------------------- calibrate


def emit_calibration(result: Calibration, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash calibrate``: three tables a person can read, or one JSON to keep."""
    document = calibration_record(result)
    if fmt in (Format.JSON, Format.JSONL):
        out.write(json_text(document, out, indent=2 if fmt is Format.JSON else None) + "\n")
        return
    if fmt is Format.CSV:
        write_records(document["error_by_bits"], fmt, out)
        return
    console = data_console(out)
    sweep = Table(
        title=(
            f"Estimated against true cosine: {result.pairs:,} pairs of {result.documents:,} "
            f"documents, {result.seeds} seeds"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        min_width=80,
    )
    sweep.add_column("bits", justify="right")
    sweep.add_column("mean absolute error", justify="right")
    sweep.add_column("x previous (1/sqrt(2) = 0.71)", justify="right")
    previous = None
    for entry in document["error_by_bits"]:
        error = entry["mean_absolute_error"]
        ratio = "" if previous in (None, 0) else f"{error / previous:.2f}"
        sweep.add_row(str(entry["bits"]), f"{error:.3f}", ratio)
        previous = error
    console.print(sweep)
    if result.weighted_error is None or result.unweighted_error is None:
        console.print(f"No pair reaches cosine {result.threshold:g}: nothing to compare below.")
        return
    weights = Table(
        title=(
            f"Weights matter: the {result.similar_pairs:,} pairs with true cosine >= "
            f"{result.threshold:g}, {result.bits} bits"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        min_width=80,
    )
    weights.add_column("fingerprint")
    weights.add_column("mean absolute error", justify="right")
    weights.add_row("weighted", f"{result.weighted_error:.3f}")
    weights.add_row("unweighted (a set)", f"{result.unweighted_error:.3f}")
    console.print(weights)
    schemes = Table(
        title=f"Blocking at {result.bits} bits against true cosine >= {result.threshold:g}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        min_width=80,
    )
    for name in ("scheme", "measured recall", "expected recall", "false-candidate rate"):
        schemes.add_column(name, justify="left" if name == "scheme" else "right")
    for entry in document["schemes"]:
        width = result.bits // entry["blocks"]
        schemes.add_row(
            counted(entry["blocks"], "block") + f" of {width} bits",
            f"{entry['recall']:.3f}",
            f"{entry['expected_recall']:.3f}",
            f"{entry['false_candidate_rate']:.4f}",
        )
    console.print(schemes)
