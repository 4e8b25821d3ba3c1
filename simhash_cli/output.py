"""Results -> records -> table | json | jsonl | csv on stdout; messages and progress on stderr.

The only module that knows about Rich tables.  Records are plain dicts with the documented,
stable snake_case keys; fingerprints travel as hex strings (JSON numbers lose precision past
2**53) and a value that was not computed is ``null`` (an empty CSV cell).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import json
import math
import os
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import IO, Any, cast

import numpy as np
from numpy.typing import NDArray
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from .apply import Action, Outcome
from .calibrate import Calibration
from .corpus import Event, Skipped
from .errors import OutputError
from .fingerprint import to_hex, to_int
from .index import Matches
from .pipeline import Comparison, Corpus, DedupeResult, Settings, concatenate
from .plan import PAGE_BLOCKS, Assessment, Plan

__all__ = [
    "Format",
    "Messages",
    "ProgressHooks",
    "apply_records",
    "cluster_records",
    "comparison_record",
    "dedupe_document",
    "default_format",
    "emit_apply",
    "emit_calibration",
    "emit_comparison",
    "emit_dedupe",
    "emit_fingerprints",
    "emit_index_stats",
    "emit_matches",
    "emit_plan",
    "emit_records",
    "fingerprint_records",
    "match_records",
    "pair_records",
]

Record = dict[str, Any]


class Format(str, Enum):
    """Output formats of every command."""

    TABLE = "table"
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"


def default_format(stream: IO[str], path: str | None = None) -> Format:
    """Table for a person at a terminal, JSON Lines for a pipe or a file; for ``-o FILE``,
    what the file's extension says (.json, .csv, else JSON Lines)."""
    if path is not None:
        extension = os.path.splitext(path)[1].lower()
        return {".json": Format.JSON, ".csv": Format.CSV}.get(extension, Format.JSONL)
    return Format.TABLE if stream.isatty() else Format.JSONL


def _new_file_mode(path: str) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class AtomicFile:
    """``-o FILE``: a report written beside its destination and renamed over it when complete.

    An interrupted or failed run leaves the previous file as it was, never half a report. The
    temporary file is created at the first write, after the inputs were listed, so that a
    report written into a directory being read is not read as one of its documents.
    """

    encoding = "utf-8"

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self._handle: IO[bytes] | None = None
        self._temp: str | None = None

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        # backslashreplace, as on standard output: a file name that is not UTF-8 (a lone
        # surrogate) becomes \udcXX, which inside a JSON string is that very escape. No newline
        # translation: CSV's \r\n line ends are written as they are.
        self.write_bytes(text.encode("utf-8", "backslashreplace"))
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        """Bytes as they are (a shell script naming files that are not UTF-8)."""
        if self._handle is None:
            try:
                descriptor, self._temp = tempfile.mkstemp(
                    prefix=f".{os.path.basename(self.path)}.",
                    suffix=".tmp",
                    dir=os.path.dirname(self.path),
                )
                # The mode a new file would get (mkstemp's is 0600), or the replaced file's.
                os.fchmod(descriptor, _new_file_mode(self.path))
            except OSError as exc:
                raise OutputError(f"cannot write {self.path}: {exc.strerror}") from None
            self._handle = open(descriptor, "wb")  # noqa: SIM115
        self._handle.write(data)

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.flush()

    def commit(self) -> None:
        """Make the report the file at ``path`` (an empty one when nothing was written)."""
        if self._handle is None:
            self.write("")
        assert self._handle is not None and self._temp is not None
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.replace(self._temp, self.path)
        self._temp = None

    def discard(self) -> None:
        """Remove the unfinished report; the file at ``path`` stays as it was."""
        if self._handle is not None:
            self._handle.close()
        if self._temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._temp)


@contextmanager
def atomic_output(path: str) -> Iterator[IO[str]]:
    """A stream whose text becomes the file at ``path`` only if the block completes: on any
    exception (Ctrl-C included) the unfinished file is removed and ``path`` left as it was."""
    target = AtomicFile(path)
    try:
        # It writes, flushes and says its encoding, all that the writers and rich ask of it.
        yield cast(IO[str], target)
    except BaseException:
        target.discard()
        raise
    target.commit()


# Cosines are written to 12 decimals: two copies of a document score 1.0, not
# 0.9999999999999998, and nothing a threshold can tell apart is lost.
COSINE_DECIMALS = 12


def _number(value: float) -> float | None:
    return None if math.isnan(value) else round(value, COSINE_DECIMALS)


def _count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 cluster``, ``2 clusters`` (``plural`` when adding an s will not do)."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {plural or noun + 's'}"


def _settings_record(settings: Settings) -> Record:
    return {
        "bits": settings.bits,
        "seed": settings.seed,
        "tokenizer": settings.tokenizer,
        "weighting": settings.weighting,
    }


# ---------------------------------------------------------------------------- records


def fingerprint_records(docs: Corpus) -> list[Record]:
    """One record per document: id, fingerprint, bits, seed, features, tokenizer, weighting."""
    settings = _settings_record(docs.settings)
    bits = docs.settings.bits
    return [
        {
            "id": doc_id,
            "fingerprint": to_hex(to_int(row), bits),
            "features": int(count),
            **settings,
        }
        for doc_id, row, count in zip(
            docs.ids, docs.fingerprints, docs.n_features.tolist(), strict=True
        )
    ]


def comparison_record(comparison: Comparison) -> Record:
    """``simhash compare`` as one record."""
    bits = comparison.settings.bits
    return {
        "a": comparison.a,
        "b": comparison.b,
        "fingerprint_a": to_hex(comparison.fingerprint_a, bits),
        "fingerprint_b": to_hex(comparison.fingerprint_b, bits),
        "hamming": comparison.hamming,
        "estimated_cosine": _number(comparison.estimated_cosine),
        "cosine": None if comparison.cosine is None else _number(comparison.cosine),
        **_settings_record(comparison.settings),
    }


def _cluster_numbers(result: DedupeResult) -> NDArray[np.int64]:
    """Each document's cluster number (-1 outside any cluster)."""
    numbers = np.full(len(result.corpus), -1, dtype=np.int64)
    for number, members in enumerate(result.clusters):
        numbers[members] = number
    return numbers


PAIR_CHUNK = 20_000


def iter_pair_records(result: DedupeResult, *, chunk: int | None = None) -> Iterator[list[Record]]:
    """Flagged pairs, ``chunk`` records at a time: a, b, hamming, estimated_cosine, cosine
    (null if not computed), cluster. Only a chunk of them is ever made into records."""
    ids = result.corpus.ids
    numbers = _cluster_numbers(result)
    for pairs in result.pairs.chunks(chunk or PAIR_CHUNK):
        first = pairs.pairs[:, 0]
        yield [
            {
                "a": ids[i],
                "b": ids[j],
                "hamming": hamming,
                "estimated_cosine": _number(estimate),
                "cosine": _number(cosine),
                "cluster": cluster,
            }
            for i, j, hamming, estimate, cosine, cluster in zip(
                first.tolist(),
                pairs.pairs[:, 1].tolist(),
                pairs.hamming.tolist(),
                pairs.estimated_cosine.tolist(),
                pairs.cosine.tolist(),
                numbers[first].tolist(),
                strict=True,
            )
        ]


def pair_records(result: DedupeResult) -> list[Record]:
    """Every record of :func:`iter_pair_records`, in one list."""
    return [record for chunk in iter_pair_records(result) for record in chunk]


def iter_cluster_records(
    result: DedupeResult, *, chunk: int | None = None
) -> Iterator[list[Record]]:
    """Clusters, ``chunk`` at a time: cluster number, size and member ids (in input order)."""
    ids = result.corpus.ids
    chunk = chunk or PAIR_CHUNK
    for start in range(0, len(result.clusters), chunk):
        yield [
            {"cluster": number, "size": int(members.size), "members": [ids[m] for m in members]}
            for number, members in enumerate(result.clusters[start : start + chunk], start)
        ]


def cluster_records(result: DedupeResult) -> list[Record]:
    """Every record of :func:`iter_cluster_records`, in one list."""
    return [record for chunk in iter_cluster_records(result) for record in chunk]


def _skip_counts(skipped: Sequence[Skipped]) -> dict[str, int]:
    return dict(Counter(skip.reason.split(" (")[0].split(":")[0] for skip in skipped))


def summary_record(result: DedupeResult) -> Record:
    """The numbers behind a dedupe run."""
    docs, config = result.corpus, result.config
    audit = result.audit
    return {
        "documents": len(docs),
        "skipped": len(docs.skipped),
        "skipped_by_reason": _skip_counts(docs.skipped),
        "candidates": result.candidates,
        "gated_out": result.gated_out,
        "pairs": len(result.pairs),
        "empty_pairs": result.empty_pairs,
        "clusters": len(result.clusters),
        "documents_in_clusters": sum(int(members.size) for members in result.clusters),
        **_settings_record(docs.settings),
        "scheme": result.scheme.label(docs.settings.bits),
        "planned": result.plan is not None,
        "blocks": result.scheme.blocks if result.scheme.max_distance is None else None,
        "max_distance": result.scheme.max_distance,
        "threshold": config.threshold,
        "verify": config.verify.value,
        "expected_recall": result.expected_recall,
        "suggested_blocks": result.suggested_blocks,
        "suggested_max_distance": result.suggested_max_distance,
        "audit": None
        if audit is None
        else {
            "similar_pairs": audit.similar_pairs,
            "found": audit.found,
            "recall": audit.recall,
            "false_candidates": audit.false_candidates,
            "missed": [
                {
                    "a": docs.ids[i],
                    "b": docs.ids[j],
                    "hamming": hamming,
                    "cosine": _number(cosine),
                }
                for (i, j), hamming, cosine in zip(
                    audit.missed.pairs.tolist(),
                    audit.missed.hamming.tolist(),
                    audit.missed.cosine.tolist(),
                    strict=True,
                )
            ],
        },
    }


def _write_dedupe_document(result: DedupeResult, out: IO[str]) -> None:
    """:func:`dedupe_document` as ``json.dumps(..., indent=2)`` writes it, byte for byte, its
    pairs and clusters a chunk at a time."""
    ascii_only = not _unicode_capable(out)
    out.write("{\n")
    _write_array_member(out, "pairs", iter_pair_records(result), ascii_only)
    out.write(",\n")
    _write_array_member(out, "clusters", iter_cluster_records(result), ascii_only)
    # The summary as json.dumps writes that member, without the braces around it.
    summary = _to_json({"summary": summary_record(result)}, ascii_only=ascii_only, indent=2)
    out.write(",\n" + summary[2:] + "\n")


def _write_array_member(
    out: IO[str], name: str, chunks: Iterable[list[Record]], ascii_only: bool
) -> None:
    """``  "name": [...]`` of an object at the top level, as ``json.dumps(indent=2)``."""
    out.write(f'  "{name}": ')
    count = 0
    for chunk in chunks:
        items = [
            _indented(_to_json(record, ascii_only=ascii_only, indent=2), "    ") for record in chunk
        ]
        if items:
            out.write(("[\n" if count == 0 else ",\n") + ",\n".join(items))
            count += len(items)
    out.write("[]" if count == 0 else "\n  ]")


def dedupe_document(result: DedupeResult) -> Record:
    """``dedupe -f json``: one object with pairs, clusters and summary."""
    return {
        "pairs": pair_records(result),
        "clusters": cluster_records(result),
        "summary": summary_record(result),
    }


# ---------------------------------------------------------------------------- writers


# Characters that some line readers (Python's str.splitlines, editors) take as line breaks.
# JSON allows them raw inside strings; escaped, every JSON Lines record stays on one line.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _unicode_capable(out: IO[str]) -> bool:
    """True when ``out`` can carry any character (UTF-8, or a str buffer with no encoding)."""
    encoding = getattr(out, "encoding", None)
    return encoding is None or codecs.lookup(encoding).name.startswith("utf-")


def _json(value: Any, out: IO[str], *, indent: int | None = None) -> str:
    return _to_json(value, ascii_only=not _unicode_capable(out), indent=indent)


def _to_json(value: Any, *, ascii_only: bool, indent: int | None = None) -> str:
    # Under a locale that cannot encode every character (LANG=en_US.ISO-8859-1), escape
    # non-ASCII as JSON \u escapes rather than fail or write text that is not JSON.
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=False, indent=indent)
    return text.translate(_LINE_BREAKS)


def _indented(text: str, prefix: str) -> str:
    """``prefix`` before every line of JSON text (which has no blank line: a newline inside a
    string is escaped), as textwrap.indent would put it, faster."""
    return prefix + text.replace("\n", "\n" + prefix)


class _RecordWriter:
    """json / jsonl / csv, written as records arrive: a million fingerprints never wait in a
    list. The json form is the same bytes as ``json.dumps(all_records, indent=2)``."""

    def __init__(self, fmt: Format, out: IO[str]) -> None:
        self.fmt, self.out = fmt, out
        self.count = 0
        self.csv: csv.DictWriter[str] | None = None
        self.ascii_only = not _unicode_capable(out)

    def write(self, records: Iterable[Record]) -> None:
        if self.fmt is Format.JSONL:
            # One write per batch of records: a write per line costs more than the JSON.
            lines = [_to_json(record, ascii_only=self.ascii_only) + "\n" for record in records]
            self.out.write("".join(lines))
            # Now, not at exit: a reader gone (``| head``) must surface while the command can
            # still report it.
            self.out.flush()
            self.count += len(lines)
            return
        for record in records:
            if self.fmt is Format.JSON:
                item = _indented(_to_json(record, ascii_only=self.ascii_only, indent=2), "  ")
                self.out.write(("[\n" if self.count == 0 else ",\n") + item)
            elif self.fmt is Format.CSV:
                if self.csv is None:
                    # RFC 4180 line ends: the csv module then quotes fields holding \r or \n.
                    self.csv = csv.DictWriter(
                        self.out, fieldnames=list(record), lineterminator="\r\n"
                    )
                    self.csv.writeheader()
                self.csv.writerow({k: "" if v is None else v for k, v in record.items()})
            self.count += 1

    def close(self) -> None:
        if self.fmt is Format.JSON:
            self.out.write("[]\n" if self.count == 0 else "\n]\n")


def _write_records(records: Sequence[Record], fmt: Format, out: IO[str]) -> None:
    """json / jsonl / csv writer shared by every command."""
    writer = _RecordWriter(fmt, out)
    writer.write(records)
    writer.close()


def _console(out: IO[str]) -> Console:
    console = Console(file=out, highlight=False, soft_wrap=False)
    if not console.is_terminal:
        # Written to a file or a pipe: no terminal to fit, so never fold a path in a cell.
        console.width = 4096
    return console


def _cosine_text(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.3f}"


def emit_fingerprints(docs: Corpus | Iterable[Corpus], fmt: Format, out: IO[str]) -> None:
    """Write ``simhash fingerprint`` output, batch by batch as batches arrive (a table waits
    for all of them)."""
    batches = [docs] if isinstance(docs, Corpus) else docs
    if fmt is not Format.TABLE:
        writer = _RecordWriter(fmt, out)
        for batch in batches:
            writer.write(fingerprint_records(batch))
        writer.close()
        return
    docs = docs if isinstance(docs, Corpus) else concatenate(batches)
    records = fingerprint_records(docs)
    s = docs.settings
    table = Table(
        title=f"{_count(len(records), 'fingerprint')} ({s.describe()})", title_justify="left"
    )
    table.add_column("id", overflow="fold")
    table.add_column("fingerprint", no_wrap=True)
    table.add_column("features", justify="right")
    for record in records:
        table.add_row(Text(record["id"]), record["fingerprint"], str(record["features"]))
    _console(out).print(table)


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


def emit_comparison(comparison: Comparison, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash compare`` output; in a table, both fingerprints bit by bit."""
    record = comparison_record(comparison)
    if fmt is Format.JSON:
        out.write(_json(record, out, indent=2) + "\n")
        return
    if fmt is not Format.TABLE:
        _write_records([record], fmt, out)
        return
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
    numbers = Table(show_header=False, box=None)
    numbers.add_column(style="bold", no_wrap=True)
    numbers.add_column(overflow="fold")
    numbers.add_row("A", Text(f"{comparison.a}  {record['fingerprint_a']}"))
    numbers.add_row("B", Text(f"{comparison.b}  {record['fingerprint_b']}"))
    numbers.add_row("hamming distance", f"{comparison.hamming} of {bits} bits")
    numbers.add_row("estimated cosine", f"{comparison.estimated_cosine:.3f}  = cos(pi * h / b)")
    numbers.add_row("true cosine", _cosine_text(comparison.cosine))
    numbers.add_row("settings", comparison.settings.describe())
    console = _console(out)
    console.print(bit_table)
    console.print(numbers)


def _shared_directory(ids: Sequence[str]) -> str:
    """The directory every id lies under (``sample_corpus/``), or "" when there is none."""
    if not ids or any(not doc_id or doc_id == "-" for doc_id in ids):
        return ""
    # Character-wise on purpose: cut back to the last "/" it reaches, which is the directory.
    prefix = os.path.commonprefix(list(ids))  # noqa: RUF071
    cut = prefix.rfind("/")
    return prefix[: cut + 1] if cut >= 0 else ""


def emit_dedupe(result: DedupeResult, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash dedupe`` output: pairs (and in json and table form, clusters). Every
    form but the table is written a chunk of pairs at a time, never all pairs as records."""
    if fmt is Format.JSON:
        _write_dedupe_document(result, out)
        return
    if fmt is not Format.TABLE:
        writer = _RecordWriter(fmt, out)
        for chunk in iter_pair_records(result):
            writer.write(chunk)
        writer.close()
        return
    pairs = pair_records(result)
    ids = result.corpus.ids
    prefix = _shared_directory(ids)
    under = f" (paths under {prefix})" if prefix else ""

    def shown(doc_id: str) -> Text:
        return Text(doc_id[len(prefix) :])

    pair_table = Table(
        title=_count(len(pairs), "near-duplicate pair") + under,
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    pair_table.add_column("cluster", justify="right", no_wrap=True)
    pair_table.add_column("a", overflow="fold", ratio=1)
    pair_table.add_column("b", overflow="fold", ratio=1)
    pair_table.add_column("hamming", justify="right", no_wrap=True)
    pair_table.add_column("estimate", justify="right", no_wrap=True)
    pair_table.add_column("cosine", justify="right", no_wrap=True)
    for pair in pairs:
        pair_table.add_row(
            str(pair["cluster"]),
            shown(pair["a"]),
            shown(pair["b"]),
            str(pair["hamming"]),
            _cosine_text(pair["estimated_cosine"]),
            _cosine_text(pair["cosine"]),
        )
    cluster_table = Table(
        title=_count(len(result.clusters), "cluster") + under,
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    cluster_table.add_column("cluster", justify="right", no_wrap=True)
    cluster_table.add_column("size", justify="right", no_wrap=True)
    cluster_table.add_column("members", overflow="fold")
    for number, members in enumerate(result.clusters):
        cluster_table.add_row(
            str(number),
            str(members.size),
            Text("\n").join(shown(ids[m]) for m in members.tolist()),
        )
    console = _console(out)
    console.print(pair_table)
    console.print(cluster_table)


def apply_records(outcomes: Iterable[Outcome], action: Action) -> Iterator[Record]:
    """``simhash apply``: one record per step, as it is taken."""
    for outcome in outcomes:
        step = outcome.step
        yield {
            "step": step.number,
            "cluster": step.cluster,
            "action": action.value,
            "path": step.target.path,
            "kept": step.kept.path,
            "destination": outcome.destination,
            "status": outcome.status.value,
            "detail": outcome.detail,
        }


def emit_apply(
    outcomes: Iterable[Outcome], action: Action, fmt: Format, out: IO[str]
) -> Counter[str]:
    """Write ``simhash apply``'s steps as they are taken (the table at the end); returns how
    many steps ended in each status."""
    statuses: Counter[str] = Counter()
    records = apply_records(outcomes, action)
    if fmt is not Format.TABLE:
        writer = _RecordWriter(fmt, out)
        for record in records:
            statuses[record["status"]] += 1
            writer.write([record])
        writer.close()
        return statuses
    table = Table(box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("step", justify="right", no_wrap=True)
    table.add_column("cluster", justify="right", no_wrap=True)
    table.add_column("file", overflow="fold", ratio=1)
    table.add_column("status", no_wrap=True)
    table.add_column("detail", overflow="fold", ratio=1)
    styles = {"done": "green", "would_do": "cyan", "refused": "yellow", "failed": "red"}
    for record in records:
        statuses[record["status"]] += 1
        status = record["status"].replace("_", " ")
        table.add_row(
            str(record["step"]),
            str(record["cluster"]),
            Text(record["path"]),
            Text(status, style=styles.get(record["status"], "")),
            Text(record["detail"]),
        )
    table.title = f"{_count(sum(statuses.values()), 'step')} ({action.value})"
    _console(out).print(table)
    return statuses


def emit_records(records: Sequence[Record], fmt: Format, out: IO[str]) -> None:
    """Plain records in any format; as a table, one column per key."""
    if fmt is not Format.TABLE:
        _write_records(records, fmt, out)
        return
    table = Table(title=_count(len(records), "row"), title_justify="left", box=box.SIMPLE_HEAD)
    for key in records[0] if records else ():
        table.add_column(key, overflow="fold")
    for record in records:
        table.add_row(*(Text(str(value)) for value in record.values()))
    _console(out).print(table)


def match_records(
    matches: Matches, names: dict[int, str], queries: Sequence[str], bits: int
) -> Iterator[Record]:
    """``simhash index query``: per query, its stored matches nearest first."""
    cosines = np.cos(np.pi * matches.hamming / bits)
    for q, row, distance, cosine in zip(
        matches.query.tolist(),
        matches.doc.tolist(),
        matches.hamming.tolist(),
        cosines.tolist(),
        strict=True,
    ):
        yield {
            "query": queries[q],
            "match": names[row],
            "hamming": distance,
            "estimated_cosine": _number(cosine),
        }


def emit_matches(
    matches: Matches, names: dict[int, str], queries: Sequence[str], bits: int, fmt: Format,
    out: IO[str],
) -> None:  # fmt: skip
    """Write ``simhash index query`` output."""
    records = match_records(matches, names, queries, bits)
    if fmt is not Format.TABLE:
        _write_records(list(records), fmt, out)
        return
    table = Table(
        title=_count(len(matches.query), "match", "matches"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("query", overflow="fold", ratio=1)
    table.add_column("stored document", overflow="fold", ratio=1)
    table.add_column("hamming", justify="right", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    for record in records:
        table.add_row(
            Text(record["query"]),
            Text(record["match"]),
            str(record["hamming"]),
            _cosine_text(record["estimated_cosine"]),
        )
    _console(out).print(table)


def emit_index_stats(stats: Record, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash index stats``."""
    if fmt is Format.JSON:
        out.write(_json(stats, out, indent=2) + "\n")
        return
    if fmt is not Format.TABLE:
        flat = {k: v for k, v in stats.items() if k != "tables"}
        flat["largest_bucket"] = max((t["largest_bucket"] for t in stats["tables"]), default=0)
        _write_records([flat], fmt, out)
        return
    numbers = Table(show_header=False, box=None)
    numbers.add_column(style="bold", no_wrap=True)
    numbers.add_column(overflow="fold")
    per_document = stats["bytes_per_document"]
    numbers.add_row("index", Text(stats["index"]))
    numbers.add_row("documents", f"{stats['documents']:,} ({stats['files']:,} files)")
    numbers.add_row(
        "settings",
        f"bits={stats['bits']} seed={stats['seed']} tokenizer={stats['tokenizer']} "
        f"weighting={stats['weighting']}",
    )
    numbers.add_row(
        "size on disk",
        f"{stats['bytes']:,} bytes"
        + ("" if per_document is None else f" ({per_document:.0f} per document)"),
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
    console = _console(out)
    console.print(numbers)
    console.print(tables)


# ---------------------------------------------------------------------------- stderr


class Messages:
    """Everything for a person, on stderr: warnings, progress, summaries.

    Paths are always passed as rich Text, so a file named ``[bold]`` stays a file name.
    """

    def __init__(self, stream: IO[str], *, quiet: bool = False) -> None:
        self.console = Console(file=stream, highlight=False, soft_wrap=True)
        self.quiet = quiet

    def event(self, event: Event) -> None:
        """A skipped or warned document, one line each."""
        if self.quiet:
            return
        if isinstance(event, Skipped):
            line = Text.assemble(("warning: ", "yellow"), "skipped ", event.id, f": {event.reason}")
        else:
            line = Text.assemble(("warning: ", "yellow"), event.id, f": {event.message}")
        self.console.print(line)

    def info(self, text: str | Text) -> None:
        """A summary or hint line."""
        if not self.quiet:
            self.console.print(text)

    @contextmanager
    def progress(self, description: str, *, shown: bool = True) -> Iterator[ProgressHooks]:
        """Progress bar over files, shown only when stderr is a terminal (and ``shown``)."""
        hooks = ProgressHooks()
        if self.quiet or not shown or not self.console.is_terminal:
            yield hooks
            return
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        ) as bar:
            task = bar.add_task(description, total=None)
            hooks.on_listed = lambda total: bar.update(task, total=total)
            hooks.on_read = lambda: bar.advance(task)
            yield hooks

    @contextmanager
    def status(self, description: str) -> Iterator[None]:
        """A spinner with the elapsed time for a step without a count, only on a terminal."""
        if self.quiet or not self.console.is_terminal:
            yield
            return
        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        ) as spinner:
            spinner.add_task(description, total=None)
            yield

    def corpus_summary(self, docs: Corpus, verb: str) -> None:
        """``fingerprinted 8 documents (2 skipped: 1 binary, 1 empty)``."""
        self.counts_summary(len(docs), docs.skipped, verb)

    def counts_summary(self, documents: int, skipped: Sequence[Skipped], verb: str) -> None:
        """The same from counts, for output that streamed."""
        by_reason = _skip_counts(skipped)
        detail = ", ".join(f"{count} {reason}" for reason, count in sorted(by_reason.items()))
        tail = f" ({len(skipped)} skipped: {detail})" if by_reason else ""
        self.info(f"{verb} {_count(documents, 'document')}{tail}")

    def apply_summary(self, statuses: Counter[str], *, executed: bool, journal: str | None) -> None:
        """``3 done, 1 refused; journal: plan.json.journal`` or the dry run's equivalent."""
        names = {
            "done": "done",
            "already_done": "already done",
            "would_do": "would be taken",
            "refused": "refused",
            "failed": "failed",
        }
        counts = ", ".join(
            f"{statuses[status]:,} {name}" for status, name in names.items() if statuses[status]
        )
        if not executed:
            self.info(f"dry run: {counts or 'no steps'}; nothing was changed (add --yes to act)")
        else:
            self.info(f"{counts or 'no steps'}; journal: {journal}")

    def dedupe_summary(self, result: DedupeResult, verb: str = "read") -> None:
        """Counts, expected recall, a hint when it is low, and the audit."""
        config, bits = result.config, result.corpus.settings.bits
        self.corpus_summary(result.corpus, verb)
        scheme = result.scheme.label(bits)
        how = "chosen by the planner" if result.plan is not None else "as asked"
        gate = (
            f" ({result.gated_out:,} too far in Hamming distance to check)"
            if result.gated_out
            else ""
        )
        empty = (
            f" and {_count(result.empty_pairs, 'pair')} of empty documents (--include-empty)"
            if result.empty_pairs
            else ""
        )
        self.info(
            f"{_count(result.candidates, 'candidate pair')} from {scheme} ({how}){gate}; "
            f"{_count(len(result.pairs) - result.empty_pairs, 'pair')} at "
            f"{config.verify.value} cosine >= {config.threshold:g}{empty}; "
            f"{_count(len(result.clusters), 'cluster')}"
        )
        self.info(
            f"expected recall at cosine {config.threshold:g}: {result.expected_recall:.2f} "
            "(chance that a pair exactly at the threshold becomes a candidate)"
        )
        if result.suggested_blocks is not None:
            self.info(
                Text(
                    f"hint: recall is low; --blocks {result.suggested_blocks} reaches 0.95 at "
                    "this threshold (more candidates to verify)",
                    style="yellow",
                )
            )
        elif result.suggested_max_distance is not None:
            self.info(
                Text(
                    f"hint: recall is low; --max-distance {result.suggested_max_distance} "
                    "reaches 0.95 at this threshold (more candidates to verify)",
                    style="yellow",
                )
            )
        elif result.plan is not None and result.plan.chosen is None:
            tfidf = (
                " or --weighting tfidf (common words make these documents look alike)"
                if result.corpus.settings.weighting in ("tf", "binary", "log")
                else ""
            )
            self.info(
                Text(
                    f"hint: no scheme at {bits} bits reaches {result.plan.target:g} expected "
                    f"recall at cosine {config.threshold:g} within the candidate budget"
                    f"{_budget_advice(result.plan)}; or try more --bits{tfidf}",
                    style="yellow",
                )
            )
        elif result.expected_recall < 0.9:
            self.info(Text("hint: recall is low; try more --bits", style="yellow"))
        audit = result.audit
        if audit is not None:
            self.info(
                f"audit: {_count(audit.similar_pairs, 'pair')} with true cosine >= "
                f"{config.threshold:g}; the blocks found {audit.found:,} (recall "
                f"{audit.recall:.2f}) and proposed "
                f"{_count(audit.false_candidates, 'false candidate')}"
            )


def _budget_advice(plan: Plan) -> str:
    """What a larger --max-candidates would buy, when it would buy the target recall."""
    beyond = plan.over_budget()
    if beyond is None:
        return ""
    # Two significant digits, rounded up, so that the budget named is enough.
    needed = math.ceil(beyond.expected_candidates)
    step = 10 ** max(len(str(needed)) - 2, 0)
    budget = -(-needed // step) * step
    return (
        f": {beyond.scheme.label(plan.bits)} reaches {beyond.recall:.2f}, comparing about "
        f"{beyond.expected_candidates:,.0f} pairs by chance (--max-candidates {budget})"
    )


@dataclass
class ProgressHooks:
    """Callbacks a reader calls as it lists and reads files (None when nothing is shown)."""

    on_listed: Callable[[int], None] | None = None
    on_read: Callable[[], None] | None = None


# ---------------------------------------------------------------------------- plan

CURVE_COSINES = tuple(round(0.5 + 0.05 * i, 2) for i in range(11))
_BARS = "▁▂▃▄▅▆▇█"


def _shown_assessments(plan: Plan, *, others: int = 5) -> list[Assessment]:
    """The chosen scheme, the page's three, the cheapest others that reach the target, and
    the best recall within the budget."""
    shown: list[Assessment] = [] if plan.chosen is None else [plan.chosen]
    for assessment in plan.assessments:
        scheme = assessment.scheme
        page = scheme.max_distance is None and scheme.blocks in PAGE_BLOCKS
        if page and assessment not in shown:
            shown.append(assessment)
    reaching = [a for a in plan.assessments if a.recall >= plan.target and a not in shown]
    shown += reaching[:others]
    if plan.best_effort() not in shown:
        shown.append(plan.best_effort())
    return shown


def plan_record(plan: Plan) -> Record:
    """``simhash plan -f json``."""

    def record(assessment: Assessment) -> Record:
        scheme = assessment.scheme
        curve = scheme.probability(np.array(CURVE_COSINES), plan.bits)
        return {
            "scheme": scheme.label(plan.bits),
            "kind": scheme.kind,
            "blocks": scheme.blocks,
            "max_distance": scheme.max_distance,
            "tables": scheme.tables,
            "recall": assessment.recall,
            "expected_candidates": assessment.expected_candidates,
            "in_budget": plan.in_budget(assessment),
            "curve": [[c, float(p)] for c, p in zip(CURVE_COSINES, curve.tolist(), strict=True)],
        }

    return {
        "bits": plan.bits,
        "threshold": plan.threshold,
        "docs": plan.n_docs,
        "target_recall": plan.target,
        "max_candidates": plan.max_candidates,
        "chosen": None if plan.chosen is None else record(plan.chosen),
        "over_budget": None if (beyond := plan.over_budget()) is None else record(beyond),
        "schemes": [record(a) for a in _shown_assessments(plan)],
    }


def emit_plan(plan: Plan, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash plan``: the schemes worth considering with their S-curves."""
    document = plan_record(plan)
    if fmt in (Format.JSON, Format.JSONL):
        out.write(_json(document, out, indent=2 if fmt is Format.JSON else None) + "\n")
        return
    if fmt is Format.CSV:
        rows = [{k: v for k, v in r.items() if k != "curve"} for r in document["schemes"]]
        _write_records(rows, fmt, out)
        return
    table = Table(
        title=(
            f"Schemes for cosine >= {plan.threshold:g} at {plan.bits} bits among "
            f"{plan.n_docs:,} documents (target recall {plan.target:g})"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("")
    table.add_column("scheme")
    table.add_column(f"recall at {plan.threshold:g}", justify="right")
    table.add_column("pairs compared by chance", justify="right")
    table.add_column("P(candidate), cosine 0.5 .. 1.0", no_wrap=True)
    chosen = document["chosen"]
    for entry in document["schemes"]:
        bars = "".join(_BARS[min(int(p * len(_BARS)), len(_BARS) - 1)] for _, p in entry["curve"])
        table.add_row(
            "*" if chosen is not None and entry["scheme"] == chosen["scheme"] else "",
            entry["scheme"],
            f"{entry['recall']:.2f}",
            f"{entry['expected_candidates']:,.0f}"
            + ("" if entry["in_budget"] else " (over budget)"),
            bars,
        )
    console = _console(out)
    console.print(table)
    if chosen is None:
        console.print(
            f"No scheme at {plan.bits} bits reaches recall {plan.target:g} at cosine "
            f"{plan.threshold:g} within the candidate budget{_budget_advice(plan)}; or more "
            f"--bits, or a higher --threshold. dedupe would use "
            f"{plan.best_effort().scheme.label(plan.bits)}."
        )
    else:
        console.print(f"* chosen: {chosen['scheme']} (the least expected work)")


# ---------------------------------------------------------------------------- calibrate


def calibration_record(result: Calibration) -> Record:
    """``simhash calibrate -f json``."""
    return {
        "documents": result.documents,
        "pairs": result.pairs,
        "similar_pairs": result.similar_pairs,
        "threshold": result.threshold,
        "seeds": result.seeds,
        "bits": result.bits,
        "error_by_bits": [
            {"bits": b, "mean_absolute_error": e} for b, e in result.error_by_bits.items()
        ],
        "weighted_error": result.weighted_error,
        "unweighted_error": result.unweighted_error,
        "schemes": [
            {
                "blocks": s.blocks,
                "recall": s.recall,
                "expected_recall": s.expected_recall,
                "false_candidate_rate": s.false_candidate_rate,
            }
            for s in result.schemes
        ],
    }


def emit_calibration(result: Calibration, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash calibrate``: three tables a person can read, or one JSON to keep."""
    document = calibration_record(result)
    if fmt in (Format.JSON, Format.JSONL):
        out.write(_json(document, out, indent=2 if fmt is Format.JSON else None) + "\n")
        return
    if fmt is Format.CSV:
        _write_records(document["error_by_bits"], fmt, out)
        return
    console = _console(out)
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
            _count(entry["blocks"], "block") + f" of {width} bits",
            f"{entry['recall']:.3f}",
            f"{entry['expected_recall']:.3f}",
            f"{entry['false_candidate_rate']:.4f}",
        )
    console.print(schemes)
