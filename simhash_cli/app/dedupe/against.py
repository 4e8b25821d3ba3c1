"""``simhash dedupe --against REF``, run: the reference read here, the documents by the
engine (:meth:`~simhash_cli.app.engine.Engine.documents`), and the two compared
(:func:`simhash_cli.core.against.against`), then the dataset's records copied by their fate.
What goes with it: :meth:`.request.Against.check`."""

from __future__ import annotations

import dataclasses

from ...core.against import Decontamination, against
from ...core.corpus import Corpus
from ...core.verify.cosines import Verify
from ...errors import InputError, SettingsMismatchError
from ...index.store import Store
from ...io.sinks.dataset import Tally
from ...io.sources.snapshot import Snapshot
from ..engine import Engine
from ..hooks import Hooks
from ..indexing.adding import stored_corpus
from ..loading import load
from ..settings import Input
from .datasets import write_decontaminated
from .request import Against, DedupeRequest

__all__ = [
    "decontaminate",
    "load_reference",
    "reading_as_the_index",
    "reference_for",
    "write_against",
]


def reference_for(
    request: DedupeRequest, engine: Engine, hooks: Hooks
) -> tuple[DedupeRequest, Corpus]:
    """REF, and the request as its documents are to be read: an index's stored fingerprints
    (the documents then read with its settings), or REF's documents read on ``engine``."""
    if _against(request).is_index:
        reference = reference_of(_against(request).reference)
        return reading_as_the_index(request, reference, hooks), reference
    return request, load_reference(request, engine, hooks)


def load_reference(request: DedupeRequest, engine: Engine, hooks: Hooks) -> Corpus:
    """The reference documents, read here with their vectors for exact verification.

    Raises:
        InputError: a reference without a document.
    """
    exact = request.verification is Verify.EXACT
    named = _against(request)
    with hooks.status(f"reading the reference {named.reference}"):
        source = named.source(request.source)
        reference = load(source, request.reading, engine, hooks, vectors_needed=exact)
    return _some(reference, request)


def reading_as_the_index(request: DedupeRequest, reference: Corpus, hooks: Hooks) -> DedupeRequest:
    """The request, its documents to be read with the settings of the index it is compared
    with (``reference``, the index's stored fingerprints), as ``index query`` reads them:
    unless the user named settings of their own, which must then be the index's.

    Raises:
        SettingsMismatchError: settings named that are not the index's, or texts against an
            index of given vectors (or vectors against one of texts), before any reading.
    """
    reading, theirs = request.reading, reference.settings
    ours = reading.settings_for(request.source.kind)
    if ours == theirs or not len(reference):
        return request
    made = f"the index {_against(request).reference} was made with {theirs.describe()}"
    if reading.settings_given:
        raise SettingsMismatchError(
            f"{made}; these documents would be read with {ours.describe()}: leave out the "
            "settings to read them as the index's were, or give the index's"
        )
    vectors = request.source.kind is Input.VECTORS
    if (theirs.tokenizer is None) != vectors:
        what = "vectors as given" if theirs.tokenizer is None else "text"
        raise SettingsMismatchError(f"{made} (of {what}): these documents do not compare with it")
    if theirs.corpus_wide:
        raise SettingsMismatchError(
            f"{made}: tfidf weights come from each set alone, and the two would not compare"
        )
    adopted = reading.adopting(theirs)
    hooks.info(f"reading the documents with the settings of the index: {theirs.describe()}")
    return dataclasses.replace(request, reading=adopted)


def _some(reference: Corpus, request: DedupeRequest) -> Corpus:
    if not len(reference):
        raise InputError(
            f"the reference {_against(request).reference} holds no document to compare with"
        )
    return reference


def decontaminate(
    request: DedupeRequest, engine: Engine, reference: Corpus, hooks: Hooks
) -> Decontamination:
    """The documents the request names, against ``reference``.

    Raises:
        SettingsMismatchError: a reference (an index) made with other settings.
    """
    reference = _some(reference, request)
    job = request.job
    if engine.remote is not None:
        docs, rows = engine.remote.documents(job, hooks)
    else:
        exact = job.config.verify is Verify.EXACT
        docs, rows = load(job.source, job.reading, engine, hooks, vectors_needed=exact), None
    if len(docs) and docs.settings != reference.settings:
        raise SettingsMismatchError(
            f"the reference {_against(request).reference} was made with "
            f"{reference.settings.describe()}; "
            f"these documents with {docs.settings.describe()}: they do not compare"
        )
    with hooks.status(
        f"comparing {len(docs):,} documents with {len(reference):,} reference documents"
    ):
        return against(docs, reference, request.config, rows)


def write_against(
    result: Decontamination, request: DedupeRequest, before: Snapshot | None, hooks: Hooks
) -> Tally | None:
    """The dataset's records copied by their fate (near a reference document: dropped), when
    asked; ``before``: the input before the run read it. Returns their tally."""
    dataset = request.dataset
    if dataset is None or before is None:
        return None
    return write_decontaminated(
        result,
        dataset.source,
        _against(request).reference,
        dataset.targets,
        hooks,
        max_line=dataset.max_line,
        before=before,
    )


def _against(request: DedupeRequest) -> Against:
    """The reference of a decontamination (``--against``: :meth:`DedupeRequest.check` made
    sure of it)."""
    assert request.against is not None
    return request.against


def reference_of(db: str) -> Corpus:
    """What the index ``db`` holds, as a reference set (``dedupe --against DB``)."""
    with Store.open(db, readonly=True) as store:
        return stored_corpus(store)
