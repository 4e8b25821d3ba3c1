"""Documents read for a command, the same for every command that reads them: files whole
(:mod:`.files`) or batch by batch on the engine's mapper, and records (texts, vectors,
fingerprints) here, piece by piece in ``--jobs`` processes, an id given twice refused naming
both places."""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.corpus import Corpus, concatenate, from_counts
from ..core.events import OnEvent, Progress, Skipped
from ..core.text.vectorize import merge_counts
from ..io.sources.files import STDIN
from ..io.sources.pieces import Piece, pieces
from ..io.sources.records import repeated_id
from ..io.sources.shards import passed_over
from .batches import SECONDS_PER_BYTE, iter_fingerprints
from .engine import Engine
from .files import read_files
from .hooks import Hooks
from .memory import release_freed_memory
from .parallel import ordered_map
from .records import (
    corpus_from_fingerprints,
    corpus_from_text_records,
    corpus_from_vectors,
    count_piece,
    fingerprint_piece,
)
from .settings import Input, Reading, Source


def load_records(source: Source, reading: Reading, hooks: Hooks) -> Corpus:
    """The records ``source`` names (texts, vectors or fingerprints) as a corpus, read here."""
    location = source.location or "-"
    if source.kind is Input.TEXTS:
        return corpus_from_text_records(
            location,
            reading.settings,
            on_event=hooks.event,
            skip_bad_lines=source.skip_bad_lines,
            admission=reading.admission,
            max_line=reading.policy.max_bytes,
            fields=source.fields,
        )
    if source.kind is Input.VECTORS:
        return corpus_from_vectors(
            location,
            reading.settings_for(Input.VECTORS),
            on_event=hooks.event,
            skip_bad_lines=source.skip_bad_lines,
            admission=reading.admission,
            max_line=reading.policy.max_bytes,
            fields=source.fields,
        )
    docs = corpus_from_fingerprints(
        location,
        on_event=hooks.event,
        skip_bad_lines=source.skip_bad_lines,
        admission=reading.admission,
        max_line=reading.policy.max_bytes,
    )
    reading.check_recorded(docs.settings)
    return docs


def load(
    source: Source,
    reading: Reading,
    engine: Engine,
    hooks: Hooks,
    *,
    distinct: bool = True,
    vectors_needed: bool = True,
) -> Corpus:
    """Everything ``source`` names, as one corpus. Without ``vectors_needed`` the fingerprints
    of files and ``--vectors`` records are streamed and no vectors kept (tfidf aside: its
    weights need them all). ``--texts`` keep theirs (MinHash schemes are made of their word
    sets), counted in ``reading.jobs`` processes when there are several (in one, merging the
    pieces' counts costs more than it saves)."""
    if source.is_records:
        report_passed_over(source, hooks)
        if source.kind is Input.VECTORS and not holds_vectors(source, reading, vectors_needed):
            # No word sets to keep for MinHash: vectors are not texts.
            docs = fingerprinted_records(source, reading, hooks)
        elif source.kind is Input.TEXTS and reading.jobs > 1:
            docs = counted_records(source, reading, hooks)
        else:
            where = source.location or STDIN
            # A spinner, but not over what a person types at the terminal.
            spinner = f"reading the records of {where}"
            with nullcontext() if where == STDIN else hooks.status(spinner):
                docs = load_records(source, reading, hooks)
    else:
        with hooks.progress("reading files") as progress:
            if not holds_vectors(source, reading, vectors_needed):
                docs = concatenate(stream(source, reading, engine, hooks, progress))
            else:
                docs = read_files(source.paths, reading, hooks, progress, distinct=distinct)
    release_freed_memory()  # the reading's batches, before the search's own peak
    return docs


def holds_vectors(source: Source, reading: Reading, vectors_needed: bool) -> bool:
    """Whether :func:`load` keeps the documents' vectors (an engine that reads elsewhere
    keeps the same, to plan as this one does): when they are needed, for ``--texts`` (MinHash
    schemes are made of their word sets) and for tf-idf (its weights need them all); never
    for stored fingerprints, which have none."""
    if source.kind is Input.FINGERPRINTS:
        return False
    return vectors_needed or source.kind is Input.TEXTS or reading.weighting.corpus_wide


def stream(
    source: Source, reading: Reading, engine: Engine, hooks: Hooks, progress: Progress
) -> Iterator[Corpus]:
    """The fingerprints of the files ``source`` names, batch by batch, computed by the
    engine's mapper: memory follows the batch, not the corpus."""
    return iter_fingerprints(
        source.paths,
        reading.settings,
        on_event=hooks.event,
        on_listed=progress.on_listed,
        on_read=progress.on_read,
        jobs=reading.jobs,
        policy=reading.policy,
        admission=reading.admission,
        mapper=engine.mapper,
    )


def report_passed_over(source: Source, hooks: Hooks) -> None:
    """What a walk of the records' shards passes over, said once, as a walk of files says it."""
    if source.location is not None:
        for event in passed_over(source.location):
            hooks.event(event)


def stream_records(source: Source, reading: Reading, hooks: Hooks) -> Iterator[Corpus]:
    """The fingerprints of ``--texts`` or ``--vectors`` records, piece by piece, in order: the
    pieces are read here and parsed and fingerprinted by ``reading.jobs`` processes
    (:func:`~simhash_cli.app.records.fingerprint_piece`). An id given in two pieces is refused
    naming both places, or with ``--skip-bad-lines`` its later record is left out."""
    kind = source.kind.value
    settings = reading.settings_for(source.kind)
    split = pieces_of(source, reading)
    arguments = (
        (
            piece,
            kind,
            settings,
            reading.policy.max_bytes,
            source.skip_bad_lines,
            reading.admission,
            source.fields,
        )
        for piece in split.pieces
    )
    with reading_records(source, hooks) as advance:
        for done in ordered_map(fingerprint_piece, arguments, reading.jobs):
            for event in done.events:
                hooks.event(event)
            advance(len(done.lines))
            repeats = split.repeats(done.ids, done.lines, done.name, hooks.event)
            docs = done.docs
            if repeats:
                keep = np.array([doc_id not in repeats for doc_id in docs.ids], dtype=bool)
                docs = dataclasses.replace(
                    docs.select(np.flatnonzero(keep)), skipped=[*docs.skipped, *repeats.values()]
                )
            yield docs


@contextmanager
def reading_records(source: Source, hooks: Hooks) -> Iterator[Callable[[int], None]]:
    """A count of the records read so far, piece by piece, on the person's terminal (not
    over what they type into standard input): a large file shows it is being read."""
    where = source.location or STDIN
    description = f"reading the records of {os.path.basename(where.rstrip('/')) or where}"
    with hooks.progress(description, shown=where != STDIN, unit="records") as progress:
        yield progress.on_advance or (lambda n: None)


def fingerprinted_records(source: Source, reading: Reading, hooks: Hooks) -> Corpus:
    """The fingerprints of ``--texts`` or ``--vectors`` records (not tfidf), made by
    ``reading.jobs`` processes piece by piece (:func:`stream_records`) and joined: what is
    kept per document is its id and fingerprint, never its vector."""
    return fingerprinted_pieces(source, reading, hooks)[0]


def fingerprinted_pieces(
    source: Source, reading: Reading, hooks: Hooks
) -> tuple[Corpus, list[int]]:
    """:func:`fingerprinted_records`, and how many documents each piece gave, in order (to
    find a document's piece when the records are read again)."""
    batches = list(stream_records(source, reading, hooks))
    if batches:
        return concatenate(batches), [len(batch) for batch in batches]
    settings = reading.settings_for(source.kind)
    return Corpus.empty(settings), []


def counted_records(source: Source, reading: Reading, hooks: Hooks) -> Corpus:
    """``--texts`` records with their vectors, counted piece by piece by ``reading.jobs``
    processes (:func:`~simhash_cli.app.records.count_piece`) and merged here in order: the
    corpus :func:`~simhash_cli.app.records.corpus_from_text_records` reads in one process."""
    split = pieces_of(source, reading)
    arguments = (
        (piece, reading.tokenizer, reading.policy.max_bytes, source.skip_bad_lines, source.fields)
        for piece in split.pieces
    )
    ids: list[str] = []
    skipped: list[Skipped] = []

    def parts() -> Iterator[tuple[Any, list[str]]]:
        work = records_work(source.location or STDIN)
        for done in ordered_map(count_piece, arguments, reading.jobs, work=work):
            for event in done.events:
                hooks.event(event)
            advance(len(done.lines))
            skipped.extend(done.skipped)
            repeats = split.repeats(done.ids, done.lines, done.name, hooks.event)
            counts, piece_ids = done.counts, done.ids
            if repeats:
                rows = [row for row, doc_id in enumerate(piece_ids) if doc_id not in repeats]
                counts, piece_ids = counts[rows], [piece_ids[row] for row in rows]
                skipped.extend(repeats.values())
            ids.extend(piece_ids)
            yield counts, done.features

    with reading_records(source, hooks) as advance:
        # Whole-number counts are fingerprinted alike in any order: their columns are
        # numbered once, by key, in the order every later sum takes them.
        counts, features = merge_counts(parts(), keyed=reading.weighting.whole)
    return from_counts(
        ids, counts, features, reading.settings, hooks.event, skipped, admission=reading.admission
    )


def records_work(location: str) -> float | None:
    """Seconds one process takes to count a file of records, about, by its size (as
    :func:`~simhash_cli.app.batches.expected_work` guesses for files), so that the workers
    start at once on a large one; None for a stream or shards (their pace decides)."""
    if location == STDIN:
        return None
    try:
        status = os.stat(location)
    except OSError:
        return None  # (the reading says why)
    return status.st_size * SECONDS_PER_BYTE if stat.S_ISREG(status.st_mode) else None


@dataclass
class RecordPieces:
    """The pieces of a records input, and the check that no id is given in two of them."""

    pieces: Iterator[Piece]
    skip_bad_lines: bool
    # Each id's first place, keyed by the id's hash (a 64-bit SipHash: two ids sharing one are
    # about 3 in 10**8 at 10**6 records): a tenth of the memory of the ids themselves. A place
    # is one int, its file's number (in ``files``) times _PER_FILE plus its line.
    first: dict[int, int] = field(default_factory=dict)
    files: dict[str, int] = field(default_factory=dict)

    def repeats(
        self, ids: list[str], lines: list[int], name: str, on_event: OnEvent
    ) -> dict[str, Skipped]:
        """The ids of a piece (of the file ``name``) given in an earlier one, each with its
        record's skip (given to ``on_event``); without ``--skip-bad-lines`` the first is
        refused naming both places."""
        found: dict[str, Skipped] = {}
        file = self.files.setdefault(name, len(self.files)) * _PER_FILE
        for doc_id, line in zip(ids, lines, strict=True):
            earlier = self.first.setdefault(hash(doc_id), file + line)
            if earlier != file + line:
                error = repeated_id(doc_id, f"{name}:{line}", self._place(earlier))
                if not self.skip_bad_lines:
                    raise error
                found[doc_id] = Skipped(error.where, f"malformed: {error.detail}")
                on_event(found[doc_id])
        return found

    def _place(self, place: int) -> str:
        names = list(self.files)
        return f"{names[place // _PER_FILE]}:{place % _PER_FILE}"


_PER_FILE = 1 << 48  # more lines than a file holds


def pieces_of(source: Source, reading: Reading) -> RecordPieces:
    """The pieces of the records ``source`` names, with the check of their ids."""
    location = source.location or "-"
    kind = "vectors" if source.kind is Input.VECTORS else "texts"
    listed = pieces(location, reading.policy.max_bytes, kind=kind, fields=source.fields)
    return RecordPieces(listed, source.skip_bad_lines)
