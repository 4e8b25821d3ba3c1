"""The local engine: this machine's processes (``--jobs``) map the stages.

A process pool (spawned workers that ignore Ctrl-C) computes batches in order, this process
taking its share; :func:`corpus_from_paths` counts batches in the workers and merges their
counts here, so that tfidf sees the whole corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..app.batches import Mapper, batch_size, batches_of, count_files, listing
from ..app.dedupe.rereading import dedupe_records_rereading
from ..app.engine import Job, Need
from ..app.hooks import Hooks
from ..app.loading import load
from ..app.parallel import ordered_map
from ..app.settings import Reading
from ..core.against import KeyedRows
from ..core.corpus import EMPTY_TEXT, Corpus, Settings, collecting, from_weights, text_settings
from ..core.cosines import Verify
from ..core.events import OnEvent, Progress, Skipped
from ..core.result import DedupeResult
from ..core.search import dedupe
from ..core.tokenizer import TokenizerConfig
from ..core.vectorize import apply_weighting, merge_counts
from ..io.sources.files import DEFAULT_POLICY, STDIN, ReadPolicy

__all__ = ["LocalEngine", "corpus_from_paths"]


Result = TypeVar("Result")


def corpus_from_paths(
    paths: Sequence[str],
    settings: Settings = Settings(),  # noqa: B008 (frozen, shared)
    *,
    on_event: OnEvent = lambda event: None,
    on_listed: Callable[[int], None] | None = None,
    on_read: Callable[[], None] | None = None,
    distinct: bool = True,
    jobs: int = 1,
    batch_files: int | None = None,
    policy: ReadPolicy = DEFAULT_POLICY,
    include_empty: bool = False,
) -> Corpus:
    """Read files, directories and ``-``; tokenize, weight and fingerprint every text.

    Args:
        paths: as the user gave them; all must exist (checked before anything is read).
        settings: what the fingerprints are made with: width, seed, how text becomes
            features and how counts become weights (tfidf over these documents).
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
        ParameterError: settings without a tokenizer (of vectors).
        InputError: with ``policy.strict_encoding``, a file that does not decode.
    """
    tokenizer, weighting = text_settings(settings)
    skipped: list[Skipped] = []
    handle = collecting(on_event, skipped)
    files = listing(paths, on_event, skipped, policy=policy, distinct=distinct, on_listed=on_listed)
    per_batch = batch_files or batch_size(len(files), jobs)
    if jobs > 1 and STDIN not in files and len(files) > per_batch:
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
        ids, batch_stamps, _, counts, features = count_files(
            files, tokenizer, policy, handle, on_read
        )
        stamps = [batch_stamps]
    weights = apply_weighting(counts, weighting)
    return from_weights(
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


def _count_in_processes(
    files: list[str],
    tokenizer: TokenizerConfig,
    on_event: OnEvent,
    ids: list[str],
    stamps: list[NDArray[np.void]],
    *,
    jobs: int,
    batch_files: int,
    on_read: Callable[[], None] | None,
    policy: ReadPolicy,
) -> tuple[sp.csr_array, list[str]]:
    """Batches of files read and counted by ``jobs`` processes, merged in file order (their
    ids and stamps appended to ``ids`` and ``stamps``)."""
    batches = batches_of(files, batch_files)
    parts: list[tuple[sp.csr_array, list[str]]] = []
    arguments = [(batch, tokenizer, policy) for batch in batches]
    results = ordered_map(count_files, arguments, jobs)
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


class LocalEngine:
    """This machine's processes: a batch per process (``jobs``), this process taking its
    share; the search in this process. It does everything a request may need."""

    refused: ClassVar[frozenset[Need]] = frozenset()

    @property
    def mapper(self) -> Mapper:
        """Batches spread over ``jobs`` processes, in order (:func:`ordered_map`)."""
        return ordered_map

    def read_files(
        self,
        paths: Sequence[str],
        reading: Reading,
        hooks: Hooks,
        progress: Progress,
        *,
        distinct: bool = True,
    ) -> Corpus:
        """Every document of ``paths`` with its vectors (:func:`corpus_from_paths`)."""
        return corpus_from_paths(
            paths,
            reading.settings,
            on_event=hooks.event,
            on_listed=progress.on_listed,
            on_read=progress.on_read,
            distinct=distinct,
            jobs=reading.jobs,
            policy=reading.policy,
            include_empty=reading.include_empty,
        )

    def dedupe(self, job: Job, hooks: Hooks) -> DedupeResult:
        """Read here (streamed when no vectors are needed; records held as fingerprints and
        read again when ``--memory`` says so), then search here."""
        if job.rereads_records:
            return dedupe_records_rereading(job.source, job.reading, job.config, hooks)
        docs = load(job.source, job.reading, self, hooks, vectors_needed=job.vectors_needed)
        with hooks.status(f"finding and verifying candidates among {len(docs):,} documents"):
            return dedupe(docs, job.config)

    def documents(self, job: Job, hooks: Hooks) -> tuple[Corpus, KeyedRows | None]:
        """Read here, with their vectors for exact verification."""
        exact = job.config.verify is Verify.EXACT
        return load(job.source, job.reading, self, hooks, vectors_needed=exact), None
