"""The small commands' results -> the table a person reads at a terminal, or the records of
the asked format: fingerprints, comparisons, apply's steps, the index's matches and stats.

Each ``emit_*`` writes one command's output: Rich tables for ``table``, the records of
:mod:`.records` for json, jsonl and csv. A dedupe's output is :mod:`.dedupe`'s, the planner's
:mod:`.schemes`'.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import IO

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from ...core.comparison import Comparison
from ...core.corpus import Corpus, concatenate
from ...core.matches import Matches
from .console import cosine_text, data_console, pair_numbers, print_table
from .formats import Format, Record, RecordWriter, counted, json_text, write_records
from .paths import Elided, shared_directory
from .records import comparison_record, fingerprint_lines, fingerprint_records, match_records
from .visible import visible

__all__ = [
    "emit_apply",
    "emit_comparison",
    "emit_fingerprints",
    "emit_index_stats",
    "emit_matches",
    "emit_records",
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
    prefix = shared_directory([str(record["id"]) for record in records])
    under = f", paths under {visible(prefix)}" if prefix else ""
    table = Table(
        title=Text(f"{counted(len(records), 'fingerprint')} ({s.describe()}{under})"),
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("id")
    table.add_column("fingerprint", no_wrap=True)
    table.add_column("features", justify="right", no_wrap=True)
    for record in records:
        # An id is a string, or an integer as its record gave it; shortened, never folded.
        table.add_row(
            Elided(str(record["id"])[len(prefix) :]), record["fingerprint"], str(record["features"])
        )
    print_table(data_console(out), table)


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
    links = action in ("hardlink", "symlink")  # an undo says where each went back from
    # What every step does is said once, in the title (a move's destination is its directory
    # and the file's absolute path); a row says only what is its own: the kept file a link
    # names, and why a step was refused or failed, wrapped whole.
    table = Table(box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("cluster", justify="right", no_wrap=True)
    table.add_column("file", ratio=1)
    table.add_column("status", no_wrap=True)
    if links:
        table.add_column("link to", ratio=1)
    reasons = any(record["status"] in ("refused", "failed") for record in taken)
    if reasons:
        table.add_column("why", ratio=1)
    styles = {"done": "green", "would_do": "cyan", "refused": "yellow", "failed": "red"}
    for record in taken:
        statuses[record["status"]] += 1
        status = record["status"].replace("_", " ")
        why = record["detail"] if record["status"] in ("refused", "failed") else ""
        cells: list[RenderableType] = [
            str(record["step"]),
            str(record["cluster"]),
            Elided(record["path"][len(prefix) :]),
            Text(status, style=styles.get(record["status"], "")),
        ]
        if links:
            cells.append(Elided(str(record["kept"] or "")[len(prefix) :]))
        if reasons:
            cells.append(Text(visible(why)))
        table.add_row(*cells)
    under = f"; paths under {visible(prefix)}" if prefix else ""
    steps = counted(sum(statuses.values()), "step")
    table.title = Text(f"{steps}: {_apply_rule(action, taken)}{under}")
    print_table(data_console(out), table)
    return statuses


def _apply_rule(action: str, steps: Sequence[Record]) -> str:
    """What each step does, in the table's title: where a move puts a file, whole."""
    if action == "move-to":
        for step in steps:
            destination, path = str(step.get("destination") or ""), str(step["path"])
            if destination.endswith(path):
                return (
                    f"move each file to {visible(destination[: len(destination) - len(path)])}"
                    " followed by its absolute path"
                )
        return "move each file"
    if action.startswith("undo "):
        return f"put back each file the run's {action[5:]} acted on"
    if action == "delete":
        return "delete each file"
    kind = "a hard link" if action == "hardlink" else "a symbolic link"
    return f"replace each file by {kind} to its cluster's kept file"


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
    print_table(data_console(out), table)


def emit_matches(
    matches: Matches, names: dict[int, str], queries: Sequence[str], bits: int, fmt: Format,
    out: IO[str],
) -> None:  # fmt: skip
    """Write ``simhash index query`` output."""
    records = list(match_records(matches, names, queries, bits))
    if fmt is not Format.TABLE:
        write_records(records, fmt, out)
        return
    prefix = shared_directory([str(r[key]) for r in records for key in ("query", "match")])
    under = f" (paths under {visible(prefix)})" if prefix else ""
    table = Table(
        title=counted(len(matches.query), "match", "matches") + under,
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("query")
    table.add_column("stored document")
    table.add_column("dist", justify="right", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    for record in records:
        table.add_row(
            Elided(str(record["query"])[len(prefix) :]),
            Elided(str(record["match"])[len(prefix) :]),
            str(record["hamming"]),
            cosine_text(record["estimated_cosine"]),
        )
    print_table(data_console(out), table)


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
        counted(stats["bytes"], "byte")
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
