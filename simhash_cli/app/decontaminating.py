"""``simhash dedupe --against REF``, run: the reference read here, the documents by the
engine (:meth:`~simhash_cli.app.engine.Engine.documents`), and the two compared
(:func:`simhash_cli.core.against.against`). What goes with it: :mod:`.against`."""

from __future__ import annotations

from ..core.against import Decontamination, against
from ..core.corpus import Corpus
from ..core.cosines import Verify
from ..errors import InputError, SettingsMismatchError
from .against import reference_source
from .engine import Engine
from .hooks import Hooks
from .requests import DedupeRequest
from .run import load

__all__ = ["decontaminate", "load_reference"]


def load_reference(request: DedupeRequest, engine: Engine, hooks: Hooks) -> Corpus:
    """The reference documents, read here with their vectors for exact verification.

    Raises:
        InputError: a reference without a document.
    """
    exact = request.verification is Verify.EXACT
    with hooks.status(f"reading the reference {request.against}"):
        reference = load(
            reference_source(request), request.reading, engine, hooks, vectors_needed=exact
        )
    return _some(reference, request)


def _some(reference: Corpus, request: DedupeRequest) -> Corpus:
    if not len(reference):
        raise InputError(f"the reference {request.against} holds no document to compare with")
    return reference


def decontaminate(
    request: DedupeRequest, engine: Engine, reference: Corpus, hooks: Hooks
) -> Decontamination:
    """The documents the request names, against ``reference``.

    Raises:
        SettingsMismatchError: a reference (an index) made with other settings.
    """
    reference = _some(reference, request)
    docs, rows = engine.documents(request, hooks)
    if len(docs) and docs.settings != reference.settings:
        raise SettingsMismatchError(
            f"the reference {request.against} was made with {reference.settings.describe()}; "
            f"these documents with {docs.settings.describe()}: they do not compare"
        )
    with hooks.status(
        f"comparing {len(docs):,} documents with {len(reference):,} reference documents"
    ):
        return against(docs, reference, request.config, rows)
