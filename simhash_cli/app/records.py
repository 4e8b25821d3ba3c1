"""Records -> a corpus: ``--texts`` (tokenized as files would be), ``--vectors`` (used exactly
as given) and fingerprint records read back (all of one setting).

Both engines make their corpora of records here, so that a record means the same everywhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..core.corpus import (
    DEFAULT_ADMISSION,
    EMPTY_TEXT,
    EMPTY_VECTOR,
    Admission,
    Corpus,
    Settings,
    from_counts,
    from_weights,
    text_settings,
)
from ..core.events import Event, OnEvent, Skipped
from ..core.sketch import minhash
from ..core.sketch.fingerprint import feature_keys, from_int, n_words
from ..core.text.tokenizer import TokenizerConfig
from ..core.text.vectorize import count_matrix, from_mappings
from ..errors import InputError, MalformedLineError, ParameterError, SettingsMismatchError
from ..io.sources.dispatch import iter_records, read_records
from ..io.sources.fields import DEFAULT_FIELDS, Fields
from ..io.sources.files import DEFAULT_MAX_BYTES
from ..io.sources.fingerprints import read_fingerprints
from ..io.sources.pieces import Piece, Placed
from ..io.sources.records import FingerprintRecord, RecordKind, TextRecord, VectorRecord

__all__ = [
    "Counted",
    "Fingerprinted",
    "corpus_from_fingerprints",
    "corpus_from_text_records",
    "corpus_from_vectors",
    "count_piece",
    "count_wanted",
    "find_records",
    "fingerprint_piece",
    "from_fingerprint_records",
    "from_text_records",
    "from_vector_records",
    "sign_piece",
    "skipping",
]


def corpus_from_vectors(
    source: str,
    settings: Settings = Settings.of_vectors(),  # noqa: B008 (frozen, shared)
    *,
    on_event: OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    admission: Admission = DEFAULT_ADMISSION,
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
) -> Corpus:
    """Read ``--vectors`` JSON Lines and fingerprint each vector exactly as given, under
    ``settings`` (of vectors: :meth:`Settings.of_vectors`).

    ``skip_bad_lines``: a malformed line is left out and reported (a Skipped event) instead
    of stopping the run.

    Raises:
        ParameterError: settings with a tokenizer (vectors are not tokenized).
    """
    if settings.tokenizer is not None:
        raise ParameterError(
            "vectors are fingerprinted as given: give Settings.of_vectors(bits, seed)"
        )
    skipped: list[Skipped] = []
    on_bad_line = skipping(on_event, skipped) if skip_bad_lines else None
    records: list[Any] = read_records(source, "vectors", on_bad_line, max_line, fields)
    return from_vector_records(records, settings, on_event, skipped, admission)


def corpus_from_text_records(
    source: str,
    settings: Settings = Settings(),  # noqa: B008 (frozen, shared)
    *,
    on_event: OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    admission: Admission = DEFAULT_ADMISSION,
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
) -> Corpus:
    """Read ``--texts`` JSON Lines (``{"id": ..., "text": ...}``) and treat each text as a file
    holding it would be, under ``settings``. ``skip_bad_lines``: as for
    :func:`corpus_from_vectors`."""
    text_settings(settings)  # settings for text
    skipped: list[Skipped] = []
    on_bad_line = skipping(on_event, skipped) if skip_bad_lines else None
    # One record at a time: only the ids are kept, each text is counted and let go.
    records: Iterator[Any] = iter_records(source, "texts", on_bad_line, max_line, fields)
    return from_text_records(records, settings, on_event, skipped, admission)


@dataclass(frozen=True)
class Fingerprinted:
    """A piece of records fingerprinted (where it was parsed): the events of its reading, its
    documents (without their vectors), and each record's id with its line (or row), in the
    order read, for the check of ids across pieces (and files: ``name``)."""

    events: list[Event]
    docs: Corpus
    ids: list[str]
    lines: list[int]
    name: str


def fingerprint_piece(
    piece: Piece,
    kind: RecordKind,
    settings: Settings,
    max_line: int | None,
    skip_bad_lines: bool,
    admission: Admission,
    fields: Fields = DEFAULT_FIELDS,
) -> Fingerprinted:
    """One piece of ``--texts`` or ``--vectors`` records parsed and fingerprinted as the whole
    input would be (each document's fingerprint depends on its own record alone)."""
    events: list[Event] = []
    skipped: list[Skipped] = []
    on_bad_line = skipping(events.append, skipped) if skip_bad_lines else None
    placed = Placed()
    records: list[Any] = piece.parse(kind, max_line, on_bad_line, placed, fields)
    if kind == "texts":
        # The vectors are dropped here: whole-number weights need no canonical column order.
        ordered = settings.weighting is None or not settings.weighting.whole
        docs = from_text_records(
            records, settings, events.append, skipped, admission, ordered=ordered
        )
    else:
        docs = from_vector_records(records, settings, events.append, skipped, admission)
    docs = dataclasses.replace(docs, weights=None, features=[])
    ids = [record.id for record in records]
    return Fingerprinted(events, docs, ids, placed.lines, piece.name)


@dataclass(frozen=True)
class Counted:
    """A piece of ``--texts`` records counted (where it was parsed), for a run that keeps the
    vectors: the events of its reading, its malformed lines skipped, each record's id with its
    line (in the file ``name``), and the term counts of the records' texts, a row each (empty
    rows included)."""

    events: list[Event]
    skipped: list[Skipped]
    ids: list[str]
    lines: list[int]
    counts: sp.csr_array
    features: list[str]
    name: str


def count_piece(
    piece: Piece,
    tokenizer: TokenizerConfig,
    max_line: int | None,
    skip_bad_lines: bool,
    fields: Fields = DEFAULT_FIELDS,
) -> Counted:
    """The term counts of one piece of ``--texts`` records. Weighting and fingerprints wait
    for the whole corpus (tfidf takes its document frequencies from every piece); the pieces'
    counts are merged by :func:`~simhash_cli.core.text.vectorize.merge_counts` into the matrix
    :func:`corpus_from_text_records` makes."""
    events: list[Event] = []
    skipped: list[Skipped] = []
    on_bad_line = skipping(events.append, skipped) if skip_bad_lines else None
    placed = Placed()
    records: list[Any] = piece.parse("texts", max_line, on_bad_line, placed, fields)
    # Unordered: the merge numbers the columns of every piece again, and sorts the rows.
    counts, features = count_matrix((record.text for record in records), tokenizer, ordered=False)
    ids = [record.id for record in records]
    return Counted(events, skipped, ids, placed.lines, counts, features, piece.name)


def count_wanted(
    piece: Piece,
    kind: RecordKind,
    wanted: frozenset[str],
    tokenizer: TokenizerConfig,
    max_line: int | None,
    fields: Fields,
) -> tuple[list[str], sp.csr_array, list[str]]:
    """The records of one piece whose ids are ``wanted``, read again: (their ids, their term
    counts, or weights as given for ``vectors``, the columns' features)."""
    records: list[Any] = [
        record
        for record in piece.parse(kind, max_line, lambda error: None, Placed(), fields)
        if record.id in wanted
    ]
    if kind == "texts":
        counts, features = count_matrix((record.text for record in records), tokenizer)
    else:
        counts, features = from_mappings(record.features for record in records)
    return [record.id for record in records], counts, features


@dataclass(frozen=True)
class Signed:
    """A piece of ``--texts`` records with the keys of the bands of each one's MinHash
    signature: each record's id with its line (in the file ``name``), which of them have a
    word, and the band keys of those."""

    ids: list[str]
    lines: list[int]
    worded: NDArray[np.bool_]
    band_keys: NDArray[np.uint64]
    name: str


def sign_piece(
    piece: Piece,
    tokenizer: TokenizerConfig,
    max_line: int | None,
    fields: Fields,
    bands: tuple[int, int],
    seed: int,
) -> Signed:
    """The band keys (``bands``: so many bands of so many bins, ``seed``) of the MinHash
    signatures of one piece of ``--texts`` records, as :func:`~simhash_cli.core.pipeline.dedupe`
    makes them from the words of a corpus holding them (malformed lines passed over: the first
    reading reported them)."""
    placed = Placed()
    records: list[Any] = piece.parse("texts", max_line, lambda error: None, placed, fields)
    counts, features = count_matrix((record.text for record in records), tokenizer)
    worded = np.diff(counts.indptr) > 0
    chosen = np.flatnonzero(worded).astype(np.int64)
    keys = minhash.banded(
        counts, feature_keys(features), bands=bands[0], rows=bands[1], seed=seed, chosen=chosen
    )
    ids = [record.id for record in records]
    return Signed(ids, placed.lines, worded, keys, piece.name)


def find_records(
    source: str,
    kind: RecordKind,
    ids: set[str],
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
) -> dict[str, Any]:
    """The records of ``source`` whose id is in ``ids``, each at its first place, read until
    all are found (malformed lines passed over: the run that read them reported them)."""
    found: dict[str, Any] = {}
    for record in iter_records(source, kind, skipping(lambda event: None, []), max_line, fields):
        if record.id in ids and record.id not in found:
            found[record.id] = record
            if len(found) == len(ids):
                break
    return found


def records_by_id(
    source: str,
    kind: RecordKind,
    ids: Sequence[str],
    max_line: int | None = DEFAULT_MAX_BYTES,
    fields: Fields = DEFAULT_FIELDS,
) -> list[Any]:
    """The record of each of ``ids`` in ``source``, in the order of ``ids`` (``explain A B``
    and ``compare A B...`` of records).

    Raises:
        InputError: an id no record has, the first one named.
    """
    wanted = find_records(source, kind, set(ids), max_line, fields)
    name = "standard input" if source == "-" else source
    for doc_id in ids:
        if doc_id not in wanted:
            raise InputError(f"no record of {name} has the id {doc_id!r}")
    return [wanted[doc_id] for doc_id in ids]


def skipping(on_event: OnEvent, skipped: list[Skipped]) -> Callable[[MalformedLineError], None]:
    """Malformed lines of JSON input as Skipped events, counted with the run's other skips."""

    def skip(error: MalformedLineError) -> None:
        event = Skipped(error.where, f"malformed: {error.detail}")
        skipped.append(event)
        on_event(event)

    return skip


def corpus_from_fingerprints(
    source: str,
    *,
    on_event: OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    admission: Admission = DEFAULT_ADMISSION,
    max_line: int | None = DEFAULT_MAX_BYTES,
) -> Corpus:
    """Read the output of ``simhash fingerprint -f jsonl`` back (all with the same settings).

    ``skip_bad_lines``: as for :func:`corpus_from_vectors`. A record of 0 features (written by
    ``fingerprint --include-empty``) is an empty document: skipped unless the ``admission``
    keeps empty ones.

    Raises:
        SettingsMismatchError: records made with different settings, naming both.
        InputError: a malformed record.
    """
    skipped: list[Skipped] = []
    on_bad_line = skipping(on_event, skipped) if skip_bad_lines else None
    records = list(read_fingerprints(source, on_bad_line, max_line))
    if not records:  # nothing to compare, as an empty --vectors or directory is
        settings = Settings.of_vectors()
        empty = np.zeros((0, n_words(settings.bits)), np.uint64)
        return Corpus([], empty, np.zeros(0, np.int64), settings, skipped=skipped)
    return from_fingerprint_records(records, on_event, skipped, admission)


def from_vector_records(
    records: Sequence[VectorRecord],
    settings: Settings,
    on_event: OnEvent,
    skipped: list[Skipped],
    admission: Admission = DEFAULT_ADMISSION,
) -> Corpus:
    """Vectors as given, fingerprinted; those without a non-zero weight skipped (reported)."""
    weights, features = from_mappings(record.features for record in records)
    ids = [record.id for record in records]
    return from_weights(
        ids,
        weights,
        features,
        settings,
        on_event,
        skipped,
        EMPTY_VECTOR,
        admission=admission,
    )


def from_text_records(
    records: Iterable[TextRecord],
    settings: Settings,
    on_event: OnEvent,
    skipped: list[Skipped],
    admission: Admission = DEFAULT_ADMISSION,
    *,
    ordered: bool = True,
) -> Corpus:
    """Texts tokenized and weighted as ``settings`` say, and fingerprinted; those without a
    token skipped (reported). Not ``ordered``: the vectors' columns in the order their
    features first occur (see :func:`~simhash_cli.core.text.vectorize.count_matrix`)."""
    if settings.tokenizer is None or settings.weighting is None:
        raise ParameterError("texts need a tokenizer and a weighting")
    ids: list[str] = []

    def texts() -> Iterator[str]:
        for record in records:
            ids.append(record.id)
            yield record.text

    counts, features = count_matrix(texts(), settings.tokenizer, ordered=ordered)
    return from_counts(ids, counts, features, settings, on_event, skipped, admission=admission)


def from_fingerprint_records(
    records: Sequence[FingerprintRecord],
    on_event: OnEvent,
    skipped: list[Skipped],
    admission: Admission = DEFAULT_ADMISSION,
) -> Corpus:
    """Fingerprint records as a corpus (at least one record, all with the same settings).

    Raises:
        SettingsMismatchError: records made with different settings, naming both.
    """
    first = records[0]
    settings = first.settings
    for record in records:
        other = record.settings
        if other != settings:
            raise SettingsMismatchError(
                f"fingerprints made with different settings cannot be compared: "
                f"{first.id!r} has {settings.describe()}, {record.id!r} has {other.describe()}"
            )
    if not admission.include_empty:
        for record in records:
            if record.features == 0:
                event = Skipped(record.id, EMPTY_TEXT)
                skipped.append(event)
                on_event(event)
        records = [record for record in records if record.features != 0]
    width = n_words(settings.bits)
    fingerprints = (
        np.stack([from_int(record.fingerprint, settings.bits) for record in records])
        if records
        else np.zeros((0, width), np.uint64)
    )
    n_features = np.array([record.features for record in records], dtype=np.int64)
    ids = [record.id for record in records]
    return Corpus(ids, fingerprints, n_features, settings, skipped=skipped)
