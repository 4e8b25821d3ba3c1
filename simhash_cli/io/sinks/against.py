"""``dedupe --against REF``: the documents within the threshold of a reference document.

jsonl and csv: a record per flagged pair, ``a`` the document and ``b`` the reference document
(the keys of dedupe's pairs, without ``cluster``). json: ``{"summary", "pairs", "matched"}``,
where ``matched`` has each flagged document once with its nearest reference document. The
table: the flagged documents, each with that match.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from rich import box
from rich.table import Table

from ...core.against import Decontamination
from ...core.corpus import given_ids
from .console import cosine_text, data_console
from .formats import Format, Record, RecordWriter, counted, json_number, json_text
from .paths import Elided, shared_directory
from .records import PAIR_CHUNK, settings_record, skip_counts
from .visible import visible

__all__ = ["against_summary_record", "emit_against", "iter_against_pairs", "matched_records"]


def iter_against_pairs(result: Decontamination) -> Iterator[list[Record]]:
    """The flagged pairs, a chunk of records at a time."""
    ids, refs = given_ids(result.corpus.ids), given_ids(result.reference.ids)
    for chunk in result.pairs.chunks(PAIR_CHUNK):
        yield [
            {
                "a": ids[i],
                "b": refs[j],
                "hamming": hamming,
                "estimated_cosine": json_number(estimate),
                "cosine": json_number(cosine),
            }
            for (i, j), hamming, estimate, cosine in zip(
                chunk.pairs.tolist(),
                chunk.hamming.tolist(),
                chunk.estimated_cosine.tolist(),
                chunk.cosine.tolist(),
                strict=True,
            )
        ]


def matched_records(result: Decontamination) -> list[Record]:
    """Each flagged document with its nearest reference document, in input order."""
    ids, refs = given_ids(result.corpus.ids), given_ids(result.reference.ids)
    rows = result.flagged
    return [
        {"id": ids[row], "reference": refs[match], "cosine": json_number(cosine)}
        for row, match, cosine in zip(
            rows.tolist(),
            result.matched[rows].tolist(),
            result.cosine[rows].tolist(),
            strict=True,
        )
    ]


def against_summary_record(result: Decontamination) -> Record:
    """The run in numbers: what was read, how candidates were found, what was flagged."""
    bits = result.corpus.settings.bits
    return {
        "documents": len(result.corpus),
        "reference_documents": len(result.reference),
        "skipped": skip_counts(result.corpus.skipped),
        "threshold": result.config.threshold,
        "verify": result.config.verify.value,
        "scheme": {
            "kind": result.scheme.kind,
            "blocks": result.scheme.blocks or None,
            "label": result.scheme.label(bits),
        },
        "expected_recall": result.scheme.expected_recall,
        "candidates": result.candidates,
        "flagged_pairs": len(result.pairs),
        "flagged_documents": int(result.flagged.size),
        "settings": settings_record(result.corpus.settings),
    }


def emit_against(result: Decontamination, fmt: Format, out: IO[str]) -> None:
    """Write the result in ``fmt`` (table, json, jsonl or csv)."""
    if fmt is Format.JSON:
        document: dict[str, Any] = {
            "summary": against_summary_record(result),
            "pairs": [record for chunk in iter_against_pairs(result) for record in chunk],
            "matched": matched_records(result),
        }
        out.write(json_text(document, out, indent=2) + "\n")
        return
    if fmt is not Format.TABLE:
        writer = RecordWriter(fmt, out)
        for chunk in iter_against_pairs(result):
            writer.write(chunk)
        writer.close()
        return
    matched = matched_records(result)
    prefix = shared_directory([str(record["id"]) for record in matched])
    under = f" (paths under {visible(prefix)})" if prefix else ""
    table = Table(
        title=f"{counted(len(matched), 'document')} within cosine {result.config.threshold:g} "
        f"of a reference document{under}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("document", ratio=1)
    table.add_column("nearest reference document", ratio=1)
    table.add_column(result.config.verify.value, justify="right", no_wrap=True)
    for record in matched:
        table.add_row(
            Elided(str(record["id"])[len(prefix) :]),
            Elided(str(record["reference"])),
            cosine_text(record["cosine"]),
        )
    data_console(out).print(table)
