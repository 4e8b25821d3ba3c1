"""What the application needs of an engine: where batches are computed (its :class:`Mapper`),
and, for an engine whose documents stay where they are read (a cluster), the dedupe done there
(:class:`RemoteSearch`). :mod:`simhash_cli.engines` holds the two there are; the command line
opens the one a request names and hands it to the slices, which read and search here whenever
the engine has no remote search."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Protocol

from ..core.against import KeyedRows
from ..core.config import DedupeConfig
from ..core.corpus import Corpus
from ..core.result import DedupeResult
from ..core.verify.cosines import Verify
from ..errors import UsageError
from .batches import Mapper
from .hooks import Hooks
from .settings import Reading, Source, placeholders

__all__ = ["Engine", "Job", "Need", "RemoteSearch", "refuse"]


class Need(Enum):
    """What a request may need of an engine; the value names it in a refusal."""

    INDEX = "{index}"
    AUDIT = "{audit}"
    EMPTY_DOCUMENTS = "{include_empty}"
    TFIDF = "{weighting} tfidf (its weights need the whole corpus)"
    WHOLE_CORPUS = (
        "{vectors}, {texts}, tfidf or standard input (it fingerprints files batch by batch)"
    )
    STORED_RECORDS = "{vectors} or {fingerprints}"
    MINHASH = "{minhash} (its signatures are made where the vectors are)"
    EVERY_PAIR = "{blocks} every (its products need every vector in one place)"


def refuse(engine: str, refused: frozenset[Need], needs: Iterable[Need]) -> None:
    """Refuse, before the engine starts, a request that needs what it does not do.

    Raises:
        UsageError: ``engine dask does not take audit``, for the first such need.
    """
    for need in needs:
        if need in refused:
            names = ("engine", *placeholders(need.value))
            raise UsageError(f"{{engine}} {engine} does not take {need.value}", parameters=names)


@dataclass(frozen=True)
class Job:
    """What an engine is handed for a dedupe: what to read, how, and what to search for
    (a request's, checked: :attr:`~simhash_cli.app.dedupe.DedupeRequest.job`).

    Attributes:
        source: the documents.
        reading: how they are read and fingerprinted.
        config: the search.
        rereads_records: records held as fingerprints and read again for what needs their
            vectors (``--memory``).
    """

    source: Source
    reading: Reading
    config: DedupeConfig
    rereads_records: bool = False

    @property
    def vectors_needed(self) -> bool:
        """Whether the documents' vectors must be kept (exact verification, an audit)."""
        return self.config.verify is Verify.EXACT or self.config.audit


class RemoteSearch(Protocol):
    """A dedupe done where the documents are read (the workers of a cluster), never bringing
    their vectors into this process."""

    def dedupe(self, job: Job, hooks: Hooks) -> DedupeResult:
        """The whole of ``simhash dedupe``: read what the job names, search, verify."""

    def documents(self, job: Job, hooks: Hooks) -> tuple[Corpus, KeyedRows | None]:
        """What the job names, fingerprinted, and where exact verification needs them,
        their vectors: in the corpus (None), or fetched by the rows given."""


class Engine(Protocol):
    """An engine: where batches run (``mapper``), what it does not do (``refused``), and its
    :class:`RemoteSearch` if its documents stay where they are read (None: read here)."""

    refused: ClassVar[frozenset[Need]]

    @property
    def mapper(self) -> Mapper:
        """Computes batches of files (:func:`~simhash_cli.app.batches.fingerprint_batch`), in
        order: what streaming and index adds run on."""

    @property
    def remote(self) -> RemoteSearch | None:
        """The search done where the documents are, or None: the slice reads and searches in
        this process."""
