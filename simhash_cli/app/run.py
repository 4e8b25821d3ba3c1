"""The run function of each command: a checked request in, a result out.

Each chains the stages for its command on the engine it is given and tells the person what
happens through ``hooks``; it never prints. The face writes the result (:mod:`simhash_cli.io`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import blocking
from ..core.calibrate import Calibration, calibrate
from ..core.config import DedupeConfig
from ..core.corpus import EMPTY_TEXT, Corpus, concatenate, from_weights
from ..core.events import OnEvent, Progress, Skipped
from ..core.groups import Clustering
from ..core.result import DedupeResult
from ..core.schemes import Background, Survey, survey
from ..core.search import Comparison, compare_with, dedupe, group_pairs_of, pilot_for, survey_for
from ..core.vectorize import Weighting, apply_weighting, merge_counts
from ..errors import InputError
from ..io.sinks.atomic import atomic_output
from ..io.sources.files import STDIN
from ..io.sources.pieces import Piece, pieces
from ..io.sources.records import repeated_id
from ..io.sources.shards import passed_over
from .actions.apply import apply, apply_records
from .actions.journal import JOURNAL_VERSION, Journal, exclusive
from .actions.plans import keep_rank, make_plan
from .actions.request import ApplyRequest
from .actions.script import write_script
from .actions.seal import SEAL_FIELD, seal
from .actions.steps import LoadedPlan
from .batches import iter_fingerprints
from .dedupe import DedupeRequest, PlanRequest
from .engine import Engine
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
from .requests import CalibrateRequest, CompareRequest, FingerprintRequest, SurveyRequest
from .settings import Input, Reading, Source

__all__ = [
    "Tally",
    "calibrate_corpus",
    "compare_documents",
    "dedupe_documents",
    "fingerprint_batches",
    "fingerprint_corpus",
    "fingerprinted_pieces",
    "fingerprinted_records",
    "journal_header",
    "load",
    "load_records",
    "pieces_of",
    "report_passed_over",
    "script_of",
    "search_loaded",
    "stream",
    "survey_schemes",
    "taking_steps",
    "write_plan",
]


def load_records(source: Source, reading: Reading, hooks: Hooks) -> Corpus:
    """The records ``source`` names (texts, vectors or fingerprints) as a corpus, read here."""
    location = source.location or "-"
    if source.kind is Input.TEXTS:
        return corpus_from_text_records(
            location,
            bits=reading.bits,
            seed=reading.seed,
            tokenizer=reading.tokenizer,
            weighting=reading.weighting,
            on_event=hooks.event,
            skip_bad_lines=source.skip_bad_lines,
            include_empty=reading.include_empty,
            max_line=reading.policy.max_bytes,
            fields=source.fields,
        )
    if source.kind is Input.VECTORS:
        return corpus_from_vectors(
            location,
            bits=reading.bits,
            seed=reading.seed,
            on_event=hooks.event,
            skip_bad_lines=source.skip_bad_lines,
            include_empty=reading.include_empty,
            max_line=reading.policy.max_bytes,
            fields=source.fields,
        )
    docs = corpus_from_fingerprints(
        location,
        on_event=hooks.event,
        skip_bad_lines=source.skip_bad_lines,
        include_empty=reading.include_empty,
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
        where = source.location or STDIN
        # A spinner, but not over what a person types at the terminal.
        with nullcontext() if where == STDIN else hooks.status(f"reading the records of {where}"):
            if source.kind is Input.FINGERPRINTS:
                docs = load_records(source, reading, hooks)
            elif source.kind is Input.VECTORS and not vectors_needed:
                # No word sets to keep for MinHash: vectors are not texts.
                docs = fingerprinted_records(source, reading, hooks)
            elif source.kind is Input.TEXTS and reading.jobs > 1:
                docs = counted_records(source, reading, hooks)
            else:
                docs = load_records(source, reading, hooks)
    else:
        with hooks.progress("reading files") as progress:
            if not vectors_needed and reading.weighting is not Weighting.TFIDF:
                docs = concatenate(stream(source, reading, engine, hooks, progress))
            else:
                docs = engine.read_files(source.paths, reading, hooks, progress, distinct=distinct)
    release_freed_memory()  # the reading's batches, before the search's own peak
    return docs


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
        include_empty=reading.include_empty,
        mapper=engine.mapper,
    )


@dataclass
class Tally:
    """What went by in a stream of batches: documents, and those skipped."""

    documents: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    def counted(self, batches: Iterator[Corpus]) -> Iterator[Corpus]:
        """The same batches, counted as they pass."""
        for batch in batches:
            self.documents += len(batch)
            self.skipped.extend(batch.skipped)
            yield batch


def fingerprint_corpus(request: FingerprintRequest, engine: Engine, hooks: Hooks) -> Corpus:
    """``simhash fingerprint`` when the whole corpus is needed (records, tfidf)."""
    return load(request.source, request.reading, engine, hooks)


def fingerprint_batches(
    request: FingerprintRequest, engine: Engine, hooks: Hooks, progress: Progress, tally: Tally
) -> Iterator[Corpus]:
    """``simhash fingerprint`` of files, batch by batch (``request.streamed``), counted in
    ``tally``."""
    return tally.counted(stream(request.source, request.reading, engine, hooks, progress))


def fingerprint_records(
    request: FingerprintRequest, hooks: Hooks, tally: Tally
) -> Iterator[Corpus]:
    """``simhash fingerprint --texts`` or ``--vectors``, piece by piece
    (``request.records_streamed``), counted in ``tally``."""
    report_passed_over(request.source, hooks)
    return tally.counted(stream_records(request.source, request.reading, hooks))


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
            reading.include_empty,
            source.fields,
        )
        for piece in split.pieces
    )
    for done in ordered_map(fingerprint_piece, arguments, reading.jobs):
        for event in done.events:
            hooks.event(event)
        repeats = split.repeats(done.ids, done.lines, done.name, hooks.event)
        docs = done.docs
        if repeats:
            keep = np.array([doc_id not in repeats for doc_id in docs.ids], dtype=bool)
            docs = dataclasses.replace(
                docs.select(np.flatnonzero(keep)), skipped=[*docs.skipped, *repeats.values()]
            )
        yield docs


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
        for done in ordered_map(count_piece, arguments, reading.jobs):
            for event in done.events:
                hooks.event(event)
            skipped.extend(done.skipped)
            repeats = split.repeats(done.ids, done.lines, done.name, hooks.event)
            counts, piece_ids = done.counts, done.ids
            if repeats:
                rows = [row for row, doc_id in enumerate(piece_ids) if doc_id not in repeats]
                counts, piece_ids = counts[rows], [piece_ids[row] for row in rows]
                skipped.extend(repeats.values())
            ids.extend(piece_ids)
            yield counts, done.features

    counts, features = merge_counts(parts())
    return from_weights(
        ids,
        apply_weighting(counts, reading.weighting),
        features,
        reading.settings,
        hooks.event,
        skipped,
        EMPTY_TEXT,
        include_empty=reading.include_empty,
    )


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


def compare_documents(request: CompareRequest, engine: Engine, hooks: Hooks) -> list[Comparison]:
    """``simhash compare A B...``: A with each B that is a document (the others skipped, as
    every command skips them).

    Raises:
        InputError: A is no document, or no B is.
    """
    docs = load(request.source, request.reading, engine, hooks, distinct=False)
    if len(docs) < 2 or docs.ids[0] != request.a:
        reasons = "; ".join(f"{s.id}: {s.reason}" for s in docs.skipped)
        raise InputError(f"compare needs A and a B with features ({reasons})")
    if request.reading.weighting is Weighting.TFIDF:
        hooks.info(
            f"note: tfidf weights here take their idf from these {len(docs):,} documents "
            "only; dedupe takes it from all it reads, so the cosines differ"
        )
    return compare_with(docs)


def dedupe_documents(request: DedupeRequest, engine: Engine, hooks: Hooks) -> DedupeResult:
    """``simhash dedupe`` on the engine (for ``--index``, see :mod:`simhash_cli.app.index.run`)."""
    return engine.dedupe(request.job, hooks)


def search_loaded(docs: Corpus, config: DedupeConfig, hooks: Hooks) -> DedupeResult:
    """The search of ``simhash dedupe`` on documents already read, here."""
    with hooks.status(f"finding and verifying candidates among {len(docs):,} documents"):
        return dedupe(docs, config)


def kept_by_rule(result: DedupeResult, plan: PlanRequest) -> DedupeResult:
    """The clusters made around the files ``plan`` keeps (its keep rule, protected files
    first) instead of the most central ones, so that what is shown is what the plan does."""
    docs = result.corpus
    if docs.stamps is None:  # refused before reading (DedupeRequest.check)
        raise InputError("{plan} needs the files read in this run", parameters=("plan",))
    rank = keep_rank(docs.ids, docs.stamps, plan.keep, plan.protect)
    groups = group_pairs_of(
        result.pairs, len(docs), result.config, rank=rank, components=result.clusters
    )
    return dataclasses.replace(result, groups=groups)


def write_plan(result: DedupeResult, plan: PlanRequest, hooks: Hooks) -> dict[str, Any]:
    """``dedupe --plan FILE``: what would be done with each cluster, written whole or not at
    all; nothing is changed. Returns the plan written."""
    docs = result.corpus
    if docs.stamps is None:  # refused before reading (DedupeRequest.check)
        raise InputError("{plan} needs the files read in this run", parameters=("plan",))
    document = make_plan(
        docs.ids,
        docs.fingerprints,
        docs.stamps.tolist(),
        docs.settings.bits,
        result.clusters,
        keep=plan.keep,
        roots=plan.roots,
        protect=plan.protect,
        settings=docs.settings.names(),
        representatives=(
            result.groups.representative.tolist()
            if result.groups.kind is Clustering.REPRESENTATIVE
            else None
        ),
    )
    document[SEAL_FIELD], unsealed = seal(document)
    if unsealed:
        hooks.info(
            f"warning: the plan is not sealed ({unsealed}): simhash apply will act on it only "
            "inside the roots given with --root"
        )
    with atomic_output(plan.path) as out:
        # ASCII escapes: a file name that is not UTF-8 survives as \udcXX, as JSON allows.
        out.write(json.dumps(document, ensure_ascii=True, indent=2) + "\n")
    actions = [f["action"] for c in document["clusters"] for f in c["files"]]
    hooks.info(
        f"plan written to {plan.path}: {len(document['clusters']):,} clusters, "
        f"{actions.count('remove'):,} files to remove, {actions.count('protected'):,} protected "
        "(nothing was changed)"
    )
    return document


def survey_schemes(request: SurveyRequest, engine: Engine, hooks: Hooks) -> Survey:
    """``simhash plan``: the schemes for a corpus that is read, or one that is described."""
    if not request.source.empty:
        # Documents of words keep their vectors: MinHash schemes are priced on their sets.
        words = request.source.kind in (Input.PATHS, Input.TEXTS)
        corpus = load(request.source, request.reading, engine, hooks, vectors_needed=words)
        # The pilot dedupe runs, on the same documents: the plan is the plan dedupe makes.
        copies = blocking.collapse(corpus.fingerprints, corpus.settings.bits)
        pilot = pilot_for(corpus, DedupeConfig(threshold=request.threshold), copies)
        return survey_for(
            corpus,
            threshold=request.threshold,
            max_candidates=request.max_candidates,
            copies=copies,
            pilot=pilot,
        )
    assert request.docs is not None  # SurveyRequest.check
    return survey(
        bits=request.reading.bits,
        threshold=request.threshold,
        n_docs=request.docs,
        background=Background(cosine=request.background or 0.0),
        max_candidates=request.max_candidates,
    )


def calibrate_corpus(request: CalibrateRequest, engine: Engine, hooks: Hooks) -> Calibration:
    """``simhash calibrate``: the reference page's experiments on these documents."""
    docs = load(request.source, request.reading, engine, hooks)
    assert docs.weights is not None
    with hooks.status(f"calibrating on {min(len(docs), request.max_docs):,} documents"):
        return calibrate(
            docs.weights,
            docs.features,
            threshold=request.threshold,
            bits=docs.settings.bits,
            seeds=request.seeds,
            max_docs=request.max_docs,
        )


def script_of(request: ApplyRequest, plan: LoadedPlan) -> bytes:
    """``apply --script``: the steps as a POSIX shell script, for review."""
    return write_script(
        plan,
        request.action,
        destination=request.destination,
        protect=request.protect,
        consent=request.delete_near_duplicates,
    )


def journal_header(request: ApplyRequest, plan: LoadedPlan) -> dict[str, Any]:
    """The first line of a journal: the plan (by its SHA-256), action and destination it is
    the journal of."""
    return {
        "journal": JOURNAL_VERSION,
        "plan": plan.path,
        "plan_sha256": plan.sha256,
        "action": request.action.value,
        "destination": request.destination,
    }


@contextmanager
def taking_steps(
    request: ApplyRequest, plan: LoadedPlan, progress: Progress
) -> Iterator[Iterator[dict[str, Any]]]:
    """``simhash apply``: the record of each step as it is taken (or, in a dry run, checked).
    When it acts, the run holds the plan's lock and its journal for its whole length."""
    with ExitStack() as held:
        journal = None
        if request.execute:
            held.enter_context(exclusive(plan.path))
            journal = Journal(request.journal_path, journal_header(request, plan), len(plan.steps))
            journal.open()
            held.callback(journal.close)
        if progress.on_listed is not None:
            progress.on_listed(len(plan.steps))
        outcomes = apply(
            plan,
            request.action,
            destination=request.destination,
            execute=request.execute,
            journal=journal,
            protect=request.protect,
            consent=request.delete_near_duplicates,
            on_step=progress.on_read,
        )
        yield apply_records(outcomes, request.action)
