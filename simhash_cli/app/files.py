"""A whole corpus of files, as :func:`corpus_from_paths` reads it: listed once, counted batch
by batch (in ``jobs`` processes when there are several), the counts merged here in file order so
that tfidf weighs the whole corpus, then fingerprinted. What every command that needs all the
vectors of a tree reads; a stream of fingerprints batch by batch is :mod:`.batches`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..core.corpus import (
    DEFAULT_ADMISSION,
    Admission,
    Corpus,
    Settings,
    collecting,
    from_counts,
    text_settings,
)
from ..core.events import OnEvent, Progress, Skipped
from ..core.text.tokenizer import TokenizerConfig
from ..core.text.vectorize import merge_counts
from ..io.sources.files import DEFAULT_POLICY, STDIN, ReadPolicy
from .batches import (
    MAX_BATCH_BYTES,
    batch_size,
    batches_of,
    count_files,
    expected_work,
    listing,
)
from .hooks import Hooks
from .parallel import ordered_map
from .settings import Reading

__all__ = ["corpus_from_paths", "read_files"]


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
    admission: Admission = DEFAULT_ADMISSION,
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
        admission: which documents read become documents (without a token: skipped, or
            kept with 0 features and fingerprint 0).

    Raises:
        PathNotFoundError: a path does not exist.
        ParameterError: settings without a tokenizer (of vectors).
        InputError: with ``policy.strict_encoding``, a file that does not decode.
    """
    tokenizer, weighting = text_settings(settings)
    skipped: list[Skipped] = []
    handle = collecting(on_event, skipped)
    listed = listing(
        paths, on_event, skipped, policy=policy, distinct=distinct, on_listed=on_listed
    )
    files = listed.files
    per_batch = batch_files or batch_size(len(files), jobs)
    if jobs > 1 and STDIN not in files and len(files) > per_batch:
        ids: list[str] = []
        stamps: list[NDArray[np.void]] = []
        counts, features = _count_in_processes(
            files,
            listed.sizes,
            tokenizer,
            handle,
            ids,
            stamps,
            jobs=jobs,
            batch_files=per_batch,
            on_read=on_read,
            policy=policy,
            keyed=weighting.whole,
        )
    else:
        ids, batch_stamps, _, counts, features = count_files(
            files, tokenizer, policy, handle, on_read
        )
        stamps = [batch_stamps]
    return from_counts(
        ids,
        counts,
        features,
        settings,
        on_event,
        skipped,
        stamps=np.concatenate(stamps),
        admission=admission,
    )


def _count_in_processes(
    files: list[str],
    sizes: list[int],
    tokenizer: TokenizerConfig,
    on_event: OnEvent,
    ids: list[str],
    stamps: list[NDArray[np.void]],
    *,
    jobs: int,
    batch_files: int,
    on_read: Callable[[], None] | None,
    policy: ReadPolicy,
    keyed: bool,
) -> tuple[sp.csr_array, list[str]]:
    """Batches of files read and counted by ``jobs`` processes, merged in file order (their
    ids and stamps appended to ``ids`` and ``stamps``; ``sizes``: the files' as listed), the
    columns ``keyed`` or not (:func:`~simhash_cli.core.text.vectorize.merge_counts`)."""
    batches = batches_of(files, batch_files, MAX_BATCH_BYTES, sizes)
    parts: list[tuple[sp.csr_array, list[str]]] = []
    arguments = [(batch, tokenizer, policy) for batch in batches]
    results = ordered_map(count_files, arguments, jobs, work=expected_work(sizes))
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
    return merge_counts(parts, keyed=keyed)


def read_files(
    paths: Sequence[str],
    reading: Reading,
    hooks: Hooks,
    progress: Progress,
    *,
    distinct: bool = True,
) -> Corpus:
    """Every document of ``paths`` with its vectors, read as ``reading`` says, its events to
    ``hooks`` and its files counted on ``progress`` (:func:`corpus_from_paths`)."""
    return corpus_from_paths(
        paths,
        reading.settings,
        on_event=hooks.event,
        on_listed=progress.on_listed,
        on_read=progress.on_read,
        distinct=distinct,
        jobs=reading.jobs,
        policy=reading.policy,
        admission=reading.admission,
    )
