"""A dedupe's output: its clusters or pairs as a table a person reads, as groups of names
(fdupes' form, ``-0`` for NUL), or as records of the asked format, written a chunk at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import IO

from rich import box
from rich.table import Table

from ...core.result import DedupeResult
from .atomic import write_bytes
from .console import cosine_text, data_console, print_table
from .formats import Format, Listing, RecordWriter, counted
from .paths import Elided, shared_directory
from .records import (
    PAIR_CHUNK,
    iter_cluster_records,
    iter_member_rows,
    iter_pair_records,
    pair_records,
    write_dedupe_document,
)
from .visible import visible

__all__ = ["emit_dedupe"]


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
        print_table(console, _pair_table(result, prefix, under))
    else:
        print_table(console, _cluster_table(result, prefix, under))


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

    # The names take what the numbers leave: short headings, one space between columns.
    table = Table(
        title=counted(len(pairs), "near-duplicate pair") + under,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=0,
        show_edge=False,
        caption="dist: bits that differ; est.: the cosine they estimate",
        caption_justify="left",
    )
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("a")
    table.add_column("b")
    table.add_column("dist", justify="right", no_wrap=True)
    table.add_column("est.", justify="right", no_wrap=True)
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
