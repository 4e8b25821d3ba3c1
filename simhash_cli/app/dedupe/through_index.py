"""``dedupe --index DB PATH...``: the index brought up to date, then the stored fingerprints
of the listed files deduplicated, with the answer of a run without the index."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ...core.corpus import Corpus
from ...core.result import DedupeResult
from ...core.verify.cosines import Verify
from ..engine import Engine
from ..from_fingerprints import verified_from_candidates
from ..hooks import Hooks
from ..indexing.adding import (
    stored_files,
)
from ..indexing.again import (
    add_files_of,
    files_pilot,
    open_index,
    say_added,
    searched,
    with_vectors,
)
from .request import DedupeRequest

__all__ = ["dedupe_through_index"]


def dedupe_through_index(request: DedupeRequest, engine: Engine, hooks: Hooks) -> DedupeResult:
    """``dedupe --index DB PATH...``: the index brought up to date (only new and changed files
    read), then the stored fingerprints of the listed files deduplicated: the answer of a run
    without the index (:func:`verified_from_candidates`)."""
    assert request.index is not None
    reading = request.reading
    with open_index(request.index, reading, reading.settings) as writer:
        report = add_files_of(writer, request.source.paths, reading, engine, hooks)
        say_added(request.index, report, writer.store, hooks)
        docs = stored_files(writer.store, report)
    if request.config.verify is Verify.ESTIMATE:
        return searched(docs, request.config, hooks)

    def vectors_of(docs: Corpus, rows: NDArray[np.int64], why: str) -> Corpus:
        return with_vectors(docs, rows, hooks, why)

    pilot = files_pilot(hooks, reading.jobs)
    return verified_from_candidates(docs, request.config, vectors_of, hooks, pilot_of=pilot)
