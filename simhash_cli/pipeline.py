"""The one place that chains the stages: corpus -> vectors -> fingerprints -> pairs -> clusters."""

from __future__ import annotations

import dataclasses
import multiprocessing
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from . import blocking, cluster, corpus, parquet, verify
from .errors import (
    InputError,
    MalformedLineError,
    ParameterError,
    SettingsMismatchError,
    SimhashError,
)
from .fingerprint import (
    DEFAULT_BITS,
    DEFAULT_SEED,
    fingerprint_matrix,
    from_int,
    hamming_rows,
    n_words,
    to_int,
    validate_bits,
    validate_seed,
)
from .plan import Plan, Scheme, plan, sample_background
from .tokenizer import TokenizerConfig
from .vectorize import (
    Weighting,
    apply_weighting,
    count_matrix,
    from_mappings,
    merge_counts,
    vectorize,
)
from .verify import ScoredPairs, Verify

__all__ = [
    "AUDIT_MAX_DOCS",
    "AUTO",
    "STAMP_DTYPE",
    "Audit",
    "CandidateCount",
    "Comparison",
    "Corpus",
    "DedupeConfig",
    "DedupeResult",
    "PairBudgetError",
    "Settings",
    "Verifier",
    "check_config",
    "choose_scheme",
    "collecting",
    "compare",
    "concatenate",
    "corpus_from_fingerprints",
    "corpus_from_paths",
    "corpus_from_text_records",
    "corpus_from_texts",
    "corpus_from_vectors",
    "dedupe",
    "dedupe_result",
    "fingerprint_batch",
    "from_fingerprint_records",
    "from_text_records",
    "from_vector_records",
    "iter_fingerprints",
    "pair_budget_error",
    "plan_for",
    "report_batches",
    "skipping",
    "sorted_pairs",
    "suggest_blocks",
    "suggest_max_distance",
    "verify_candidates",
]

Result = TypeVar("Result")
Mapper = Callable[[Callable[..., Any], Sequence[tuple[Any, ...]], int], Iterable[Any]]
"""``mapper(function, arguments, jobs)``: ``function(*args)`` for each argument tuple, in order."""

AUTO: Literal["auto"] = "auto"
AUDIT_MAX_DOCS = 5000
# Below this many files a batch is not worth a process: starting one costs about 0.3 s.
MIN_BATCH_FILES = 1000
EMPTY_TEXT = "empty (no tokens)"
EMPTY_VECTOR = "empty (no non-zero weight)"
# Documents sharing one fingerprint that are still paired one by one (see _verified_pairs).
COPIES_PAIRED = 100
DEFAULT_MAX_PAIRS = 10_000_000
RECALL_HINT_BELOW = 0.9
VECTORS_TOKENIZER = "vectors"
VECTORS_WEIGHTING = "given"


@dataclass(frozen=True)
class Settings:
    """What a fingerprint was made with; fingerprints compare only under equal settings."""

    bits: int = DEFAULT_BITS
    seed: int = DEFAULT_SEED
    tokenizer: str = "word"
    weighting: str = Weighting.TF.value

    def describe(self) -> str:
        """Human-readable, for error messages: ``bits=64 seed=12345 tokenizer=word ...``."""
        return (
            f"bits={self.bits} seed={self.seed} "
            f"tokenizer={self.tokenizer} weighting={self.weighting}"
        )


STAMP_DTYPE = np.dtype(
    [
        ("device", np.uint64),
        ("inode", np.uint64),
        ("size", np.int64),
        ("mtime_ns", np.int64),
        ("ctime_ns", np.int64),
    ]
)
"""A file as the scan read it (:data:`simhash_cli.corpus.Stamp`), one record per document."""


def _stamp_array(stamps: Sequence[corpus.Stamp]) -> NDArray[np.void]:
    return np.array(list(stamps), dtype=STAMP_DTYPE)


@dataclass
class Corpus:
    """Documents that made it through reading, with their vectors and fingerprints.

    Attributes:
        ids: n document ids.
        fingerprints: (n, n_words) uint64.
        n_features: (n,) int64 distinct features per document.
        settings: how the fingerprints were made.
        weights: (n, n_features) CSR weights, or None when read from fingerprints.
        features: the weight matrix's column names.
        skipped: documents left out, and why.
        stamps: (n,) :data:`STAMP_DTYPE`, each file as it was read (all zero for a stream),
            or None when the documents did not come from files.
    """

    ids: list[str]
    fingerprints: NDArray[np.uint64]
    n_features: NDArray[np.int64]
    settings: Settings
    weights: sp.csr_array | None = None
    features: list[str] = field(default_factory=list)
    skipped: list[corpus.Skipped] = field(default_factory=list)
    stamps: NDArray[np.void] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def select(self, rows: NDArray[np.int64]) -> Corpus:
        """The documents at ``rows``, in that order, with their vectors and stamps."""
        return Corpus(
            [self.ids[row] for row in rows.tolist()],
            self.fingerprints[rows],
            self.n_features[rows],
            self.settings,
            None if self.weights is None else sp.csr_array(self.weights[rows]),
            self.features,
            self.skipped,
            None if self.stamps is None else self.stamps[rows],
        )


def collecting(on_event: corpus.OnEvent, skipped: list[corpus.Skipped]) -> corpus.OnEvent:
    def handle(event: corpus.Event) -> None:
        if isinstance(event, corpus.Skipped):
            skipped.append(event)
        on_event(event)

    return handle


def _from_weights(
    ids: list[str],
    weights: sp.csr_array,
    features: list[str],
    settings: Settings,
    on_event: corpus.OnEvent,
    skipped: list[corpus.Skipped],
    empty_reason: str,
    stamps: NDArray[np.void] | None = None,
    include_empty: bool = False,
) -> Corpus:
    """Drop documents without a non-zero weight (reported), then fingerprint the rest.

    Such a vector has no direction: its fingerprint would be 0 and its cosine undefined, and
    it must never be reported as a duplicate of a real document. With ``include_empty`` they
    stay, marked by 0 features (and fingerprint 0, as the reference gives them), and
    :func:`dedupe` groups them with each other only.
    """
    n_docs = weights.shape[0]
    n_features = np.diff(weights.indptr).astype(np.int64)
    entry_rows = np.repeat(np.arange(n_docs), n_features)
    n_nonzero = np.bincount(entry_rows[weights.data != 0], minlength=n_docs)
    empty = np.flatnonzero(n_nonzero == 0)
    if include_empty:
        n_features[empty] = 0
        empty = empty[:0]
    for row in empty.tolist():
        event = corpus.Skipped(ids[row], empty_reason)
        skipped.append(event)
        on_event(event)
    if empty.size:
        keep = np.flatnonzero(n_nonzero > 0)
        weights = sp.csr_array(weights[keep])
        ids = [ids[row] for row in keep.tolist()]
        n_features = n_features[keep]
        stamps = None if stamps is None else stamps[keep]
    fingerprints = fingerprint_matrix(weights, features, bits=settings.bits, seed=settings.seed)
    return Corpus(ids, fingerprints, n_features, settings, weights, features, skipped, stamps)


def corpus_from_paths(
    paths: Sequence[str],
    *,
    bits: int = DEFAULT_BITS,
    seed: int = DEFAULT_SEED,
    tokenizer: TokenizerConfig | None = None,
    weighting: Weighting = Weighting.TF,
    on_event: corpus.OnEvent = lambda event: None,
    on_listed: Callable[[int], None] | None = None,
    on_read: Callable[[], None] | None = None,
    distinct: bool = True,
    jobs: int = 1,
    batch_files: int | None = None,
    policy: corpus.ReadPolicy = corpus.DEFAULT_POLICY,
    include_empty: bool = False,
) -> Corpus:
    """Read files, directories and ``-``; tokenize, weight and fingerprint every text.

    Args:
        paths: as the user gave them; all must exist (checked before anything is read).
        bits: fingerprint width.
        seed: global seed.
        tokenizer: how text becomes features.
        weighting: how counts become weights (tfidf over these documents).
        on_event: receives every Skipped and Warned event as it happens.
        on_listed: called once with the number of files to read (for progress).
        on_read: called once per file read (for progress).
        distinct: read a file reached twice only once (hard links, a path given twice).
        jobs: processes that read and count batches of ``batch_files`` files; the result is
            the same for any number (standard input is always read by this process).
        batch_files: files per batch handed to a process (default: half of each process's
            share, at least 1,000).
        policy: strict decoding (a file whose bytes do not decode is an error), and the
            largest file read.
        include_empty: keep documents without a token, with 0 features and fingerprint 0,
            instead of skipping them.

    Raises:
        PathNotFoundError: a path does not exist.
        ParameterError: bits or seed out of range.
        InputError: with ``policy.strict_encoding``, a file that does not decode.
    """
    tokenizer = tokenizer or TokenizerConfig()
    settings = Settings(
        validate_bits(bits),
        validate_seed(seed),
        tokenizer.name,
        weighting.value,
    )
    skipped: list[corpus.Skipped] = []
    handle = collecting(on_event, skipped)
    files = corpus.list_files(
        paths, handle, distinct=distinct, follow_symlinks=policy.follow_symlinks
    )
    if on_listed is not None:
        on_listed(len(files))
    per_batch = batch_files or _batch_size(len(files), jobs)
    if jobs > 1 and corpus.STDIN not in files and len(files) > per_batch:
        ids: list[str] = []
        stamps: list[NDArray[np.void]] = []
        counts, features = _count_in_processes(
            files,
            tokenizer,
            handle,
            ids,
            stamps,
            jobs=jobs,
            batch_files=per_batch,
            on_read=on_read,
            policy=policy,
        )
    else:
        ids, batch_stamps, _, counts, features = _count_files(
            files, tokenizer, policy, handle, on_read
        )
        stamps = [batch_stamps]
    weights = apply_weighting(counts, weighting)
    return _from_weights(
        ids,
        weights,
        features,
        settings,
        on_event,
        skipped,
        EMPTY_TEXT,
        np.concatenate(stamps),
        include_empty,
    )


# A batch holds its documents' vectors while it is counted: this many files at the most.
MAX_BATCH_FILES = 20_000


def _batch_size(n_files: int, jobs: int) -> int:
    """Files per batch: two batches per process, at least 1,000 (a process costs ~0.3 s to
    start), at most 20,000 (memory)."""
    return min(MAX_BATCH_FILES, max(MIN_BATCH_FILES, -(-n_files // (2 * max(jobs, 1)))))


def fingerprint_batch(
    files: list[str],
    tokenizer: TokenizerConfig,
    weighting: Weighting,
    settings: Settings,
    policy: corpus.ReadPolicy,
    include_empty: bool = False,
    keep_vectors: bool = False,
) -> tuple[list[corpus.Event], Corpus]:
    """One batch read, counted, weighted and fingerprinted (in a worker or here), with the
    events of its reading; the vectors come back too with ``keep_vectors``. Weights that need
    the whole corpus (tfidf) are the caller's to refuse."""
    ids, stamps, events, counts, features = _count_files(files, tokenizer, policy)
    weights = apply_weighting(counts, weighting)
    batch = _from_weights(
        ids, weights, features, settings, events.append, [], EMPTY_TEXT, stamps, include_empty
    )
    if keep_vectors:
        return events, batch
    return events, Corpus(
        batch.ids, batch.fingerprints, batch.n_features, settings, stamps=batch.stamps
    )


def iter_fingerprints(
    paths: Sequence[str],
    *,
    bits: int = DEFAULT_BITS,
    seed: int = DEFAULT_SEED,
    tokenizer: TokenizerConfig | None = None,
    weighting: Weighting = Weighting.TF,
    on_event: corpus.OnEvent = lambda event: None,
    on_listed: Callable[[int], None] | None = None,
    on_read: Callable[[], None] | None = None,
    jobs: int = 1,
    batch_files: int | None = None,
    policy: corpus.ReadPolicy = corpus.DEFAULT_POLICY,
    include_empty: bool = False,
    mapper: Mapper | None = None,
) -> Iterator[Corpus]:
    """Fingerprints of files, batch by batch, in file order: memory follows the batch, not the
    corpus (no vectors are kept). Each batch's documents depend on that batch alone, which is
    why tfidf, whose weights come from the whole corpus, is not offered here.

    ``mapper(function, arguments, jobs)`` computes the batches (default: this process and
    ``jobs - 1`` worker processes); it must yield the results in the order of ``arguments``.

    Yields:
        One Corpus per batch (ids, fingerprints, feature counts; weights None).

    Raises:
        ParameterError: tfidf weighting.
        PathNotFoundError: a path does not exist (before anything is read).
    """
    if weighting is Weighting.TFIDF:
        raise ParameterError("tfidf weights need the whole corpus; use corpus_from_paths")
    tokenizer = tokenizer or TokenizerConfig()
    settings = Settings(validate_bits(bits), validate_seed(seed), tokenizer.name, weighting.value)
    listing: list[corpus.Skipped] = []
    files = corpus.list_files(
        paths, collecting(on_event, listing), follow_symlinks=policy.follow_symlinks
    )
    if on_listed is not None:
        on_listed(len(files))
    per_batch = batch_files or _batch_size(len(files), jobs)
    batches = [files[i : i + per_batch] for i in range(0, len(files), per_batch)]
    if not batches:
        empty = np.zeros((0, n_words(settings.bits)), np.uint64)
        none = _stamp_array([])
        yield Corpus([], empty, np.zeros(0, np.int64), settings, skipped=listing, stamps=none)
    else:
        jobs = jobs if corpus.STDIN not in files else 1  # standard input is this process's
        arguments = [
            (batch, tokenizer, weighting, settings, policy, include_empty) for batch in batches
        ]
        results = (mapper or _ordered_map)(fingerprint_batch, arguments, jobs)
        yield from report_batches(batches, results, on_event, on_read, listing)


def report_batches(
    batches: list[list[str]],
    results: Iterable[tuple[list[corpus.Event], Corpus]],
    on_event: corpus.OnEvent,
    on_read: Callable[[], None] | None,
    listing: list[corpus.Skipped],
) -> Iterator[Corpus]:
    """Pass each batch's events on, in order; the first batch also carries the files that
    listing skipped, so that the batches' skips add up to the run's."""
    for number, (files, (events, batch)) in enumerate(zip(batches, results, strict=True)):
        for event in events:
            on_event(event)
        if on_read is not None:
            for _ in files:
                on_read()
        skipped = [event for event in events if isinstance(event, corpus.Skipped)]
        batch.skipped = (listing if number == 0 else []) + skipped
        yield batch


def concatenate(batches: Iterable[Corpus]) -> Corpus:
    """One corpus from batches with the same settings (fingerprints only, no vectors)."""
    parts = list(batches)
    if not parts:
        raise InputError("no batches to join")
    settings = parts[0].settings
    stamps = [part.stamps for part in parts if part.stamps is not None]
    return Corpus(
        [doc_id for part in parts for doc_id in part.ids],
        np.concatenate([part.fingerprints for part in parts]),
        np.concatenate([part.n_features for part in parts]),
        settings,
        skipped=[skip for part in parts for skip in part.skipped],
        stamps=np.concatenate(stamps) if len(stamps) == len(parts) else None,
    )


def _ordered_map(
    function: Callable[..., Result], arguments: Sequence[tuple[Any, ...]], jobs: int
) -> Iterator[Result]:
    """``function(*args)`` for each of ``arguments``, yielded in order, computed by this
    process and ``jobs - 1`` worker processes.

    This process takes a share of the work instead of waiting: it starts on the first batch
    at once, while the workers are still starting (a new interpreter importing numpy and
    scipy takes about 0.3 s), and goes on taking the next batch nobody has started whenever
    the one due next is not ready.
    """
    if jobs <= 1 or len(arguments) <= 1:
        yield from (function(*args) for args in arguments)
        return
    with _worker_pool(jobs - 1) as pool:
        futures: dict[int, Future[Result]] = {}
        ready: dict[int, Result] = {}
        handed_out = 1  # the first batch is this process's

        def feed() -> None:
            """Keep each worker a batch ahead, so that none waits for this process."""
            nonlocal handed_out
            while handed_out < len(arguments) and len(futures) < 2 * (jobs - 1):
                futures[handed_out] = pool.submit(function, *arguments[handed_out])
                handed_out += 1

        feed()
        ready[0] = function(*arguments[0])
        for due in range(len(arguments)):
            while due not in ready:
                feed()
                if due in futures and futures[due].done():
                    ready[due] = futures.pop(due).result()
                elif handed_out < len(arguments):
                    ready[handed_out] = function(*arguments[handed_out])
                    handed_out += 1
                else:
                    ready[due] = futures.pop(due).result()
            yield ready.pop(due)


@contextmanager
def _worker_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """Worker processes that ignore Ctrl-C: this process stops them and reports it once."""
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=signal.signal,
        initargs=(signal.SIGINT, signal.SIG_IGN),
    ) as pool:
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _count_files(
    files: list[str],
    tokenizer: TokenizerConfig,
    policy: corpus.ReadPolicy = corpus.DEFAULT_POLICY,
    on_event: corpus.OnEvent | None = None,
    on_read: Callable[[], None] | None = None,
) -> tuple[list[str], NDArray[np.void], list[corpus.Event], sp.csr_array, list[str]]:
    """Read and count files: (ids read, their stamps, events, term counts, their columns). In
    a worker the events are collected and returned; given ``on_event`` they go there as they
    happen."""
    events: list[corpus.Event] = []
    ids: list[str] = []
    stamps: list[corpus.Stamp] = []

    def texts() -> Iterator[str]:
        documents = corpus.read_documents(
            files, on_event or events.append, on_read=on_read, policy=policy
        )
        for document in documents:
            ids.append(document.id)
            stamps.append(document.stamp)
            yield document.text

    counts, features = count_matrix(texts(), tokenizer)
    return ids, _stamp_array(stamps), events, counts, features


def _count_in_processes(
    files: list[str],
    tokenizer: TokenizerConfig,
    on_event: corpus.OnEvent,
    ids: list[str],
    stamps: list[NDArray[np.void]],
    *,
    jobs: int,
    batch_files: int,
    on_read: Callable[[], None] | None,
    policy: corpus.ReadPolicy,
) -> tuple[sp.csr_array, list[str]]:
    """Batches of files read and counted by ``jobs`` processes, merged in file order (their
    ids and stamps appended to ``ids`` and ``stamps``)."""
    batches = [files[i : i + batch_files] for i in range(0, len(files), batch_files)]
    parts: list[tuple[sp.csr_array, list[str]]] = []
    arguments = [(batch, tokenizer, policy) for batch in batches]
    results = _ordered_map(_count_files, arguments, jobs)
    for batch, (batch_ids, batch_stamps, events, counts, features) in zip(
        batches, results, strict=True
    ):
        for event in events:
            on_event(event)
        ids.extend(batch_ids)
        stamps.append(batch_stamps)
        parts.append((counts, features))
        if on_read is not None:
            for _ in batch:
                on_read()
    return merge_counts(parts)


def corpus_from_texts(
    texts: Sequence[str],
    *,
    ids: Sequence[str] | None = None,
    bits: int = DEFAULT_BITS,
    seed: int = DEFAULT_SEED,
    tokenizer: TokenizerConfig | None = None,
    weighting: Weighting = Weighting.TF,
    on_event: corpus.OnEvent = lambda event: None,
) -> Corpus:
    """Documents already in memory (ids default to "0", "1", ...), as :func:`corpus_from_paths`
    would make them from files holding these texts."""
    tokenizer = tokenizer or TokenizerConfig()
    settings = Settings(validate_bits(bits), validate_seed(seed), tokenizer.name, weighting.value)
    names = [str(i) for i in range(len(texts))] if ids is None else list(ids)
    if len(names) != len(texts):
        raise InputError(f"{len(names)} ids for {len(texts)} texts")
    weights, features = vectorize(texts, tokenizer=tokenizer, weighting=weighting)
    return _from_weights(names, weights, features, settings, on_event, [], EMPTY_TEXT)


def corpus_from_vectors(
    source: str,
    *,
    bits: int = DEFAULT_BITS,
    seed: int = DEFAULT_SEED,
    on_event: corpus.OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    include_empty: bool = False,
) -> Corpus:
    """Read ``--vectors`` JSON Lines and fingerprint each vector exactly as given.

    ``skip_bad_lines``: a malformed line is left out and reported (a Skipped event) instead
    of stopping the run.
    """
    settings = Settings(
        validate_bits(bits),
        validate_seed(seed),
        VECTORS_TOKENIZER,
        VECTORS_WEIGHTING,
    )
    skipped: list[corpus.Skipped] = []
    on_bad_line = skipping(on_event, skipped) if skip_bad_lines else None
    records: list[Any] = _read_records(source, "vectors", on_bad_line)
    return from_vector_records(records, settings, on_event, skipped, include_empty)


def _read_records(
    source: str, kind: corpus.RecordKind, on_bad_line: corpus.OnBadLine
) -> list[corpus.Record]:
    """JSON Lines, or Parquet for a ``.parquet`` name."""
    if parquet.is_parquet(source):
        return parquet.read_records(source, kind, on_bad_line=on_bad_line)
    reader = corpus.read_texts if kind == "texts" else corpus.read_vectors
    return list(reader(source, on_bad_line))


def from_vector_records(
    records: Sequence[corpus.VectorRecord],
    settings: Settings,
    on_event: corpus.OnEvent,
    skipped: list[corpus.Skipped],
    include_empty: bool = False,
) -> Corpus:
    """Vectors as given, fingerprinted; those without a non-zero weight skipped (reported)."""
    weights, features = from_mappings(record.features for record in records)
    ids = [record.id for record in records]
    return _from_weights(
        ids,
        weights,
        features,
        settings,
        on_event,
        skipped,
        EMPTY_VECTOR,
        include_empty=include_empty,
    )


def corpus_from_text_records(
    source: str,
    *,
    bits: int = DEFAULT_BITS,
    seed: int = DEFAULT_SEED,
    tokenizer: TokenizerConfig | None = None,
    weighting: Weighting = Weighting.TF,
    on_event: corpus.OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    include_empty: bool = False,
) -> Corpus:
    """Read ``--texts`` JSON Lines (``{"id": ..., "text": ...}``) and treat each text as a file
    holding it would be. ``skip_bad_lines``: as for :func:`corpus_from_vectors`."""
    tokenizer = tokenizer or TokenizerConfig()
    settings = Settings(validate_bits(bits), validate_seed(seed), tokenizer.name, weighting.value)
    skipped: list[corpus.Skipped] = []
    on_bad_line = skipping(on_event, skipped) if skip_bad_lines else None
    records: list[Any] = _read_records(source, "texts", on_bad_line)
    return from_text_records(
        records, settings, tokenizer, weighting, on_event, skipped, include_empty
    )


def from_text_records(
    records: Sequence[corpus.TextRecord],
    settings: Settings,
    tokenizer: TokenizerConfig,
    weighting: Weighting,
    on_event: corpus.OnEvent,
    skipped: list[corpus.Skipped],
    include_empty: bool = False,
) -> Corpus:
    """Texts tokenized, weighted and fingerprinted; those without a token skipped (reported)."""
    counts, features = count_matrix((record.text for record in records), tokenizer)
    weights = apply_weighting(counts, weighting)
    ids = [record.id for record in records]
    return _from_weights(
        ids, weights, features, settings, on_event, skipped, EMPTY_TEXT, include_empty=include_empty
    )


def skipping(
    on_event: corpus.OnEvent, skipped: list[corpus.Skipped]
) -> Callable[[MalformedLineError], None]:
    """Malformed lines of JSON input as Skipped events, counted with the run's other skips."""

    def skip(error: MalformedLineError) -> None:
        event = corpus.Skipped(error.where, f"malformed: {error.detail}")
        skipped.append(event)
        on_event(event)

    return skip


def corpus_from_fingerprints(
    source: str,
    *,
    on_event: corpus.OnEvent = lambda event: None,
    skip_bad_lines: bool = False,
    include_empty: bool = False,
) -> Corpus:
    """Read the output of ``simhash fingerprint -f jsonl`` back (all with the same settings).

    ``skip_bad_lines``: as for :func:`corpus_from_vectors`. A record of 0 features (written by
    ``fingerprint --include-empty``) is an empty document: skipped unless ``include_empty``.

    Raises:
        SettingsMismatchError: records made with different settings, naming both.
        InputError: a malformed record, or no record at all.
    """
    skipped: list[corpus.Skipped] = []
    on_bad_line = skipping(on_event, skipped) if skip_bad_lines else None
    records = list(corpus.read_fingerprints(source, on_bad_line))
    if not records:
        raise InputError(f"no fingerprint records in {'<stdin>' if source == '-' else source}")
    return from_fingerprint_records(records, on_event, skipped, include_empty)


def from_fingerprint_records(
    records: Sequence[corpus.FingerprintRecord],
    on_event: corpus.OnEvent,
    skipped: list[corpus.Skipped],
    include_empty: bool = False,
) -> Corpus:
    """Fingerprint records as a corpus (at least one record, all with the same settings).

    Raises:
        SettingsMismatchError: records made with different settings, naming both.
    """
    first = records[0]
    settings = Settings(first.bits, first.seed, first.tokenizer, first.weighting)
    for record in records:
        other = Settings(record.bits, record.seed, record.tokenizer, record.weighting)
        if other != settings:
            raise SettingsMismatchError(
                f"fingerprints made with different settings cannot be compared: "
                f"{first.id!r} has {settings.describe()}, {record.id!r} has {other.describe()}"
            )
    if not include_empty:
        for record in records:
            if record.features == 0:
                event = corpus.Skipped(record.id, EMPTY_TEXT)
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


@dataclass(frozen=True)
class Comparison:
    """Two documents side by side (``simhash compare``)."""

    a: str
    b: str
    fingerprint_a: int
    fingerprint_b: int
    settings: Settings
    hamming: int
    estimated_cosine: float
    cosine: float | None


def compare(pair: Corpus) -> Comparison:
    """Compare the two documents of ``pair``.

    Raises:
        InputError: the corpus does not hold exactly two documents (one was skipped).
    """
    if len(pair) != 2:
        reasons = "; ".join(f"{s.id}: {s.reason}" for s in pair.skipped)
        raise InputError(f"compare needs two documents with features ({reasons})")
    scored = verify.score_pairs(
        np.array([[0, 1]], dtype=np.int64),
        pair.fingerprints,
        bits=pair.settings.bits,
        weights=pair.weights,
    )
    cosine = float(scored.cosine[0])
    return Comparison(
        a=pair.ids[0],
        b=pair.ids[1],
        fingerprint_a=to_int(pair.fingerprints[0]),
        fingerprint_b=to_int(pair.fingerprints[1]),
        settings=pair.settings,
        hamming=int(scored.hamming[0]),
        estimated_cosine=float(scored.estimated_cosine[0]),
        cosine=None if np.isnan(cosine) else cosine,
    )


@dataclass(frozen=True)
class DedupeConfig:
    """Tuning of ``dedupe``: blocking scheme, verification and threshold."""

    blocks: int | Literal["auto"] = AUTO
    """Equal blocks per fingerprint, or ``auto``: the planner's cheapest scheme that reaches
    0.95 expected recall at the threshold on this corpus (blocks or Manku's tables)."""
    threshold: float = 0.9
    verify: Verify = Verify.EXACT
    max_candidates: int | None = blocking.DEFAULT_MAX_CANDIDATES
    max_pairs: int | None = DEFAULT_MAX_PAIRS
    """Stop (PairBudgetError) when more pairs than this reach the threshold: at that point the
    documents are alike as a whole, and the pairs would fill memory before they were shown."""
    audit: bool = False
    max_distance: int | None = None
    """When set, candidates are exactly the pairs within this many bits (Manku's tables) and
    ``blocks`` is not used."""
    hamming_gate: bool = True
    """Skip the exact check of candidates whose Hamming distance a pair at the threshold
    reaches with odds below 1 in 10,000 (:func:`~simhash_cli.verify.hamming_gate`)."""


@dataclass(frozen=True)
class Audit:
    """The blocking scheme measured against all pairs' true cosine (``--audit``).

    Attributes:
        similar_pairs: pairs with true cosine >= threshold.
        found: how many of them became candidates.
        recall: found / similar_pairs (1.0 when there are none).
        false_candidates: candidates whose true cosine is below the threshold.
        missed: the similar pairs the scheme did not find, scored.
    """

    similar_pairs: int
    found: int
    recall: float
    false_candidates: int
    missed: ScoredPairs


@dataclass(frozen=True)
class DedupeResult:
    """Flagged pairs, their clusters and the numbers behind them."""

    corpus: Corpus
    config: DedupeConfig
    scheme: Scheme
    plan: Plan | None
    candidates: int
    gated_out: int
    """Candidates not checked exactly: beyond the Hamming gate of the threshold."""
    pairs: ScoredPairs
    clusters: list[NDArray[np.int64]]
    expected_recall: float
    suggested_blocks: int | None
    suggested_max_distance: int | None
    audit: Audit | None
    empty_pairs: int = 0
    """Pairs of empty documents (``--include-empty``), among ``pairs``: estimate 1.0, cosine
    NaN (undefined), grouped with each other only."""


def suggest_blocks(bits: int, threshold: float, *, target: float = 0.95) -> int | None:
    """Fewest blocks (so fewest candidates) whose expected recall at ``threshold`` >= target."""
    for blocks in range(1, bits + 1):
        if bits % blocks == 0:
            probability = blocking.candidate_probability(threshold, bits=bits, blocks=blocks)
            if float(probability) >= target:
                return blocks
    return None


def suggest_max_distance(bits: int, threshold: float, *, target: float = 0.95) -> int | None:
    """Smallest Hamming radius whose expected recall at ``threshold`` >= target."""
    for distance in range(bits):
        probability = blocking.within_probability(threshold, bits=bits, max_distance=distance)
        if float(probability) >= target:
            return distance
    return None


def _scheme(
    docs: Corpus, config: DedupeConfig, copies: blocking.Copies
) -> tuple[Scheme, Plan | None]:
    """The scheme the config names, or the planner's choice for this corpus."""
    bits = docs.settings.bits
    n_distinct = copies.fingerprints.shape[0]
    if config.max_distance is not None:
        k = config.max_distance
        if not 0 <= k < bits:
            raise ParameterError(f"max_distance must be from 0 to {bits - 1}, not {k}")
        return Scheme("tables", blocking.choose_tables(n_distinct, bits, k), k), None
    if config.blocks != AUTO:
        return Scheme("blocks", blocking.validate_blocks(bits, int(config.blocks))), None
    chosen = plan_for(
        docs, threshold=config.threshold, max_candidates=config.max_candidates, copies=copies
    )
    return chosen.best_effort().scheme, chosen


def plan_for(
    docs: Corpus,
    *,
    threshold: float,
    max_candidates: int | None,
    copies: blocking.Copies | None = None,
) -> Plan:
    """The planner's view of this corpus: how many distinct fingerprints it has (copies of
    one are compared once), and how often those of unrelated documents agree by chance
    (measured on a sample of their pairs)."""
    bits = docs.settings.bits
    distinct = (copies or blocking.collapse(docs.fingerprints, bits)).fingerprints
    return plan(
        bits=bits,
        threshold=threshold,
        n_docs=distinct.shape[0],
        background=sample_background(distinct),
        max_candidates=max_candidates,
    )


def dedupe(docs: Corpus, config: DedupeConfig | None = None) -> DedupeResult:
    """Candidates by the chosen scheme, verification at the threshold, clusters.

    Raises:
        ParameterError: blocks that do not divide bits, a threshold outside [-1, 1], exact
            verification or an audit without the documents' vectors.
        CandidateBudgetError: the scheme would produce too many candidate pairs.
    """
    config = config or DedupeConfig()
    empty = np.flatnonzero(docs.n_features == 0)
    if empty.size:
        return _with_empty(docs, config, empty)
    check_config(docs, config, has_vectors=docs.weights is not None)
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    scheme, planned = _scheme(docs, config, copies)
    n_candidates, n_checked, kept, audited = _verified_pairs(docs, config, scheme, copies)
    return dedupe_result(
        docs, config, scheme, planned, n_candidates, n_checked, kept, audited=audited
    )


def check_config(docs: Corpus, config: DedupeConfig, *, has_vectors: bool) -> None:
    """Refuse what this corpus cannot be deduplicated with, before any work.

    Raises:
        ParameterError: a threshold outside [-1, 1]; exact verification or an audit without
            the documents' vectors; an audit at a threshold <= 0 or of too many documents.
    """
    verify.validate_threshold(config.threshold)
    needs_vectors = config.verify is Verify.EXACT or config.audit
    if needs_vectors and not has_vectors:
        raise ParameterError(
            "exact verification and --audit need the documents' vectors; "
            "fingerprints alone support --verify estimate"
        )
    if config.audit and config.threshold <= 0:
        raise ParameterError("--audit needs a threshold above 0")
    if config.audit and len(docs) > AUDIT_MAX_DOCS:
        raise ParameterError(
            f"--audit compares all pairs and is limited to {AUDIT_MAX_DOCS:,} documents "
            f"(this corpus has {len(docs):,})"
        )


def choose_scheme(docs: Corpus, config: DedupeConfig) -> tuple[Scheme, Plan | None]:
    """The scheme :func:`dedupe` would run on these documents, and the planner's view when
    it chose (``blocks="auto"``)."""
    return _scheme(docs, config, blocking.collapse(docs.fingerprints, docs.settings.bits))


def dedupe_result(
    docs: Corpus,
    config: DedupeConfig,
    scheme: Scheme,
    planned: Plan | None,
    n_candidates: int,
    n_checked: int,
    kept: ScoredPairs,
    *,
    audited: NDArray[np.int64] | None = None,
    clusters: list[NDArray[np.int64]] | None = None,
) -> DedupeResult:
    """The result of a run that found ``n_candidates`` with ``scheme``, checked ``n_checked``
    of them exactly and kept the pairs ``kept`` (sorted): clusters (unless given), recall and
    advice."""
    bits = docs.settings.bits
    expected = float(scheme.probability(config.threshold, bits))
    low = expected < RECALL_HINT_BELOW and planned is None
    exact = config.verify is Verify.EXACT
    by_blocks = scheme.max_distance is None
    return DedupeResult(
        corpus=docs,
        config=config,
        scheme=scheme,
        plan=planned,
        candidates=n_candidates,
        gated_out=n_candidates - n_checked if exact else 0,
        pairs=kept,
        clusters=cluster.clusters(kept.pairs, len(docs)) if clusters is None else clusters,
        expected_recall=expected,
        suggested_blocks=suggest_blocks(bits, config.threshold) if low and by_blocks else None,
        suggested_max_distance=(
            suggest_max_distance(bits, config.threshold) if low and not by_blocks else None
        ),
        audit=_audit(docs, audited, config.threshold) if audited is not None else None,
    )


def _with_empty(docs: Corpus, config: DedupeConfig, empty: NDArray[np.int64]) -> DedupeResult:
    """Empty documents (kept by ``--include-empty``) are duplicates of each other and of
    nothing else: the others are deduplicated on their own, the empty ones make one cluster
    (paired one by one up to COPIES_PAIRED of them, else each with the first)."""
    real = np.flatnonzero(docs.n_features != 0)
    result = dedupe(docs.select(real), config)
    if empty.size <= COPIES_PAIRED:
        first, second = np.triu_indices(empty.size, 1)
        among = np.stack((empty[first], empty[second]), axis=1)
    else:
        among = np.stack((np.repeat(empty[0], empty.size - 1), empty[1:]), axis=1)
    n = among.shape[0]
    paired = ScoredPairs(among, np.zeros(n, np.int64), np.ones(n), np.full(n, np.nan))

    def mapped(scored: ScoredPairs) -> ScoredPairs:
        return ScoredPairs(
            real[scored.pairs], scored.hamming, scored.estimated_cosine, scored.cosine
        )

    pairs = sorted_pairs([mapped(result.pairs), paired])
    audit = result.audit
    return dataclasses.replace(
        result,
        corpus=docs,
        pairs=pairs,
        clusters=cluster.clusters(pairs.pairs, len(docs)),
        audit=None if audit is None else dataclasses.replace(audit, missed=mapped(audit.missed)),
        empty_pairs=n,
    )


def _verified_pairs(
    docs: Corpus, config: DedupeConfig, scheme: Scheme, copies: blocking.Copies
) -> tuple[int, int, ScoredPairs, NDArray[np.int64] | None]:
    """(number of candidates, how many were checked exactly, the pairs that reach the
    threshold, every candidate when an audit needs them), pairs sorted.

    Candidates are made among distinct fingerprints only. The documents of a fingerprint
    shared by up to :data:`COPIES_PAIRED` of them are then paired with each other and with
    the documents of every candidate fingerprint; a larger group (a boilerplate page) is
    represented by its first document, and its other members are paired with that one
    only, so that a thousand copies are 999 candidates, not half a million. Candidates come
    chunk by chunk and each chunk is verified as it comes (:class:`Verifier`), so memory
    follows the pairs kept, not the candidates.
    """
    bits, fps = docs.settings.bits, copies.fingerprints
    chunks: Iterable[tuple[NDArray[np.int64], NDArray[np.int64]]]
    if scheme.max_distance is None:
        chunks = blocking.candidate_chunks(
            fps, bits, scheme.blocks, max_candidates=config.max_candidates
        )
    else:
        within = blocking.pairs_within(
            fps,
            scheme.max_distance,
            bits=bits,
            blocks=scheme.blocks if scheme.max_distance else None,
            max_pairs=config.max_candidates,
        )
        chunks = [(within, hamming_rows(fps[within[:, 0]], fps[within[:, 1]]))]
    verifier = Verifier(docs, config)
    budget = CandidateCount(config.max_candidates, len(docs))
    everything = [np.empty((0, 2), dtype=np.int64)]
    verify_candidates(
        verifier,
        copies,
        chunks,
        budget,
        with_copies=True,
        seen=everything.append if config.audit else None,
    )
    kept = verifier.finish()
    audited = None
    if config.audit:
        audited = blocking.expand_copies(np.concatenate(everything), copies)
    return budget.total, verifier.checked, kept, audited


class CandidateCount:
    """Pairs of documents to verify, counted against ``--max-candidates`` as they come."""

    def __init__(self, limit: int | None, n_docs: int) -> None:
        self.limit, self.n_docs, self.total = limit, n_docs, 0

    def add(self, more: int) -> None:
        """Count ``more`` pairs.

        Raises:
            CandidateBudgetError: the total passed the limit.
        """
        self.total += more
        if self.limit is not None and self.total > self.limit:
            raise blocking.CandidateBudgetError(
                f"copies of the same fingerprints make more than {self.limit:,} "
                f"pairs of documents to verify among {self.n_docs:,} documents (budget "
                f"{self.limit:,}); --max-candidates raises the budget"
            )


def verify_candidates(
    verifier: Verifier,
    copies: blocking.Copies,
    chunks: Iterable[tuple[NDArray[np.int64], NDArray[np.int64]]],
    budget: CandidateCount,
    *,
    with_copies: bool,
    seen: Callable[[NDArray[np.int64]], None] | None = None,
) -> None:
    """Candidate pairs of distinct fingerprints (with their distances) -> the pairs of
    documents they stand for, counted, gated and handed to ``verifier``; with
    ``with_copies``, also the pairs of documents sharing one fingerprint.

    Copies in small groups stand for themselves; a large group (more than
    :data:`COPIES_PAIRED`, boilerplate) is represented by its first document, and its other
    members are paired with that one only. ``seen`` receives every chunk of candidates.
    """
    large = copies.counts > COPIES_PAIRED
    shown = copies._replace(counts=np.where(large, 1, copies.counts))
    for pairs, distance in chunks:
        if seen is not None:
            seen(pairs)
        budget.add(int((shown.counts[pairs[:, 0]] * shown.counts[pairs[:, 1]]).sum()))
        # Gated before the copies are spread: they share their fingerprint's distance.
        near = distance <= verifier.limit
        doc_pairs, source = blocking.pairs_of_copies(pairs[near], shown)
        verifier.add(doc_pairs, distance[near][source])
    if with_copies:
        for same in (blocking.pairs_among_copies(shown), blocking.pairs_with_first(copies, large)):
            budget.add(same.shape[0])
            verifier.add(same, np.zeros(same.shape[0], dtype=np.int64))


class PairBudgetError(SimhashError):
    """More pairs reach the threshold than the budget (``--max-pairs``) allows."""


class Verifier:
    """Candidates in, the pairs that reach the threshold out, chunk by chunk.

    With estimated verification a pair is kept when its estimate reaches the threshold. With
    exact verification (microseconds a pair) only candidates within the Hamming gate are
    checked (:func:`~simhash_cli.verify.hamming_gate`: the distance beyond which a pair at
    the threshold lands with odds below 1 in 10,000). When more than
    :data:`~simhash_cli.verify.SKETCH_PAIRS_PER_DOC` per document pass it (64 bits cannot
    tell 0.9 from 0.7), every document gets a 256-bit sketch and the same test is made on it
    first; until that is clear, the pairs that passed wait unchecked. Without ``sketches``
    every pair within the gate is checked exactly (when the documents' feature names are not
    at hand).
    """

    def __init__(self, docs: Corpus, config: DedupeConfig, *, sketches: bool = True) -> None:
        self.docs, self.config = docs, config
        self.bits = docs.settings.bits
        self.exact = config.verify is Verify.EXACT
        if not self.exact:
            self.limit = verify.estimate_limit(config.threshold, self.bits)
        elif config.hamming_gate:
            self.limit = verify.hamming_gate(config.threshold, self.bits)
        else:
            self.limit = self.bits
        self.unit: sp.csr_array | None = None
        self.has_norm = np.zeros(0, dtype=bool)
        if self.exact:
            assert docs.weights is not None
            self.unit, self.has_norm = verify.unit_rows(docs.weights)
        self.undecided = (
            sketches and self.exact and config.hamming_gate and self.bits < verify.SKETCH_BITS
        )
        self.sketches: NDArray[np.uint64] | None = None
        self.sketch_limit = verify.hamming_gate(config.threshold, verify.SKETCH_BITS)
        self.waiting: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = []
        self.n_waiting = 0
        self.kept: list[ScoredPairs] = []
        self.n_kept = 0
        self.checked = 0

    def add(self, pairs: NDArray[np.int64], distance: NDArray[np.int64]) -> None:
        """One chunk of candidates with their Hamming distances."""
        near = distance <= self.limit
        if not self.undecided:
            self._verify(pairs[near], distance[near])
            return
        self.waiting.append((pairs[near], distance[near]))
        self.n_waiting += int(near.sum())
        if self.n_waiting > verify.SKETCH_PAIRS_PER_DOC * len(self.docs):
            assert self.docs.weights is not None
            self.sketches = verify.sketch(
                self.docs.weights, self.docs.features, seed=self.docs.settings.seed
            )
            self.undecided = False
            self._release()

    def finish(self) -> ScoredPairs:
        """The pairs kept, sorted."""
        self._release()
        return sorted_pairs(self.kept)

    def _release(self) -> None:
        for waiting in self.waiting:
            self._verify(*waiting)
        self.waiting, self.n_waiting = [], 0

    def _verify(self, pairs: NDArray[np.int64], distance: NDArray[np.int64]) -> None:
        if self.sketches is not None:
            sketches = self.sketches
            near = hamming_rows(sketches[pairs[:, 0]], sketches[pairs[:, 1]]) <= self.sketch_limit
            pairs, distance = pairs[near], distance[near]
        cosine = np.full(pairs.shape[0], np.nan)
        if self.unit is not None:
            self.checked += pairs.shape[0]
            cosine = verify.unit_cosine_pairs(self.unit, self.has_norm, pairs)
        estimate = verify.estimate_cosine_rows(distance, self.bits)
        scored = ScoredPairs(pairs, distance, estimate, cosine)
        config = self.config
        kept = scored.select(
            verify.keep_mask(scored, threshold=config.threshold, verify=config.verify)
        )
        self.kept.append(kept)
        self.n_kept += len(kept)
        if config.max_pairs is not None and self.n_kept > config.max_pairs:
            raise pair_budget_error(config, self.docs)


def pair_budget_error(config: DedupeConfig, docs: Corpus) -> PairBudgetError:
    """More than ``config.max_pairs`` pairs of ``docs`` reach the threshold: what to do."""
    tfidf = (
        "with term counts, common words make documents alike: try --weighting tfidf; or "
        if docs.settings.weighting in ("tf", "binary", "log")
        else ""
    )
    return PairBudgetError(
        f"more than {config.max_pairs:,} pairs reach {config.verify.value} cosine >= "
        f"{config.threshold:g} among {len(docs):,} documents, which are alike as "
        f"a whole: {tfidf}raise --threshold; --max-pairs raises the limit"
    )


def sorted_pairs(parts: list[ScoredPairs]) -> ScoredPairs:
    """Scored pairs from chunks as one, sorted by pair."""
    if not parts:
        empty = np.empty(0, dtype=np.float64)
        return ScoredPairs(np.empty((0, 2), dtype=np.int64), np.empty(0, np.int64), empty, empty)
    pairs = np.concatenate([part.pairs for part in parts])
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    return ScoredPairs(
        pairs[order],
        np.concatenate([part.hamming for part in parts])[order],
        np.concatenate([part.estimated_cosine for part in parts])[order],
        np.concatenate([part.cosine for part in parts])[order],
    )


def _audit(docs: Corpus, candidate_pairs: NDArray[np.int64], threshold: float) -> Audit:
    """All pairs' true cosine from one sparse product, against the candidates."""
    assert docs.weights is not None
    n = len(docs)
    unit, _ = verify.unit_rows(docs.weights)
    products = sp.coo_array(sp.triu(unit @ unit.T, k=1))
    similar = products.data >= threshold - verify.THRESHOLD_TOLERANCE
    similar_codes = np.sort(
        products.row[similar].astype(np.int64) * n + products.col[similar].astype(np.int64)
    )
    candidate_codes = candidate_pairs[:, 0] * np.int64(n) + candidate_pairs[:, 1]
    found = np.isin(similar_codes, candidate_codes)
    missed_codes = similar_codes[~found]
    missed = np.stack((missed_codes // n, missed_codes % n), axis=1)
    n_similar = int(similar_codes.size)
    n_found = int(found.sum())
    return Audit(
        similar_pairs=n_similar,
        found=n_found,
        recall=n_found / n_similar if n_similar else 1.0,
        false_candidates=int(candidate_codes.size) - n_found,
        missed=verify.score_pairs(
            missed, docs.fingerprints, bits=docs.settings.bits, weights=docs.weights
        ),
    )
