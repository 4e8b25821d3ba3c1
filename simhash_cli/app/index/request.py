"""The requests of the ``simhash index`` commands, each with the rules between its options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...core.config import DEFAULT_THRESHOLD, DedupeConfig
from ...core.verify.cosines import Verify
from ...errors import UsageError
from ...io.sinks.formats import Output
from ...io.sources.files import DEFAULT_POLICY, ReadPolicy
from ..engine import Need
from ..guard import Reads, refuse_output_over_input, refuse_overwrites, sidecars
from ..indexing.adding import NO_STANDARD_INPUT
from ..keep.request import KeepRequest
from ..keep.rule import KeepRule
from ..parts import taken
from ..plans.request import PlanRequest
from ..search_request import SearchPlace, SearchRequest
from ..settings import EngineChoice, Input, Reading, Source, default_jobs

__all__ = [
    "IndexAddRequest",
    "IndexDedupeRequest",
    "IndexQueryRequest",
    "StoreRequest",
    "index_dedupe_request",
    "refuse_output_over_index",
]

STORED = (Input.VECTORS, Input.TEXTS, Input.FINGERPRINTS)


def refuse_output_over_index(db: str, output: Output) -> None:
    """``-o FILE`` that is the index (or its ``-wal``/``-shm``) would turn it into a report.

    Raises:
        UsageError: before the index is opened.
    """
    refuse_overwrites({"output": output.path}, Reads(files=sidecars(db)))


@dataclass(frozen=True)
class StoreRequest:
    """``simhash index stats DB`` and ``simhash index prune DB``: the index alone."""

    db: str
    output: Output = field(default_factory=Output)

    def check(self) -> None:
        """Raises: UsageError: an output over the index."""
        refuse_output_over_index(self.db, self.output)


@dataclass(frozen=True)
class IndexAddRequest:
    """``simhash index add DB``: fingerprint documents and store them.

    The reading's settings are the index's when it exists; named ones must be its own.
    """

    db: str
    source: Source
    reading: Reading = field(default_factory=Reading)
    engine: EngineChoice = field(default_factory=EngineChoice)

    def check(self) -> None:
        """Raises: UsageError: options that do not go together."""
        self.source.require(STORED, stdin=False)
        if self.source.reads_stdin_path:
            raise UsageError(NO_STANDARD_INPUT, parameters=("vectors", "texts", "fingerprints"))
        if self.source.kind is Input.FINGERPRINTS and self.reading.settings_given:
            raise UsageError(
                "{fingerprints} records say how they were made: give no settings",
                parameters=("fingerprints",),
            )
        refuse_overwrites({"db": self.db}, Reads(files=tuple(self.source.input_paths())))

    def needs(self) -> list[Need]:
        """What this request needs of an engine."""
        return [Need.STORED_RECORDS] if self.source.is_records else []


@dataclass(frozen=True)
class IndexQueryRequest:
    """``simhash index query DB``: for each document, the stored ones within the threshold."""

    db: str
    source: Source
    threshold: float = DEFAULT_THRESHOLD
    max_distance: int | None = None
    check_matches: bool = False
    limit: int | None = None
    output: Output = field(default_factory=Output)
    policy: ReadPolicy = DEFAULT_POLICY
    """How the files looked up are read and which a walk lists (their settings are the
    index's)."""

    def check(self) -> None:
        """Raises: UsageError: no input, or an output over an input."""
        self.source.require(STORED)
        refuse_output_over_input(self.source, {"output": self.output.path}, also=sidecars(self.db))


@dataclass(frozen=True)
class IndexDedupeRequest:
    """``simhash index dedupe DB``: near-duplicates among the stored documents.

    Attributes:
        db: the index.
        search: as ``dedupe``'s (verified by estimate unless ``--verify exact``, which reads
            the stored files again).
        keeping: which member of each cluster is kept.
        check_pairs: exit with DUPLICATES_FOUND when any pair is flagged.
        plan: also write an action plan of the stored files.
        roots: with a plan: the directories it may act in (``--root``), never the stored
            paths.
        jobs: processes that read the stored files again.
    """

    db: str
    search: SearchRequest = field(default_factory=SearchRequest)
    keeping: KeepRequest = field(default_factory=KeepRequest)
    check_pairs: bool = False
    plan: str | None = None
    roots: tuple[str, ...] = ()
    jobs: int = field(default_factory=default_jobs)
    output: Output = field(default_factory=Output)

    PLACE: ClassVar[SearchPlace] = SearchPlace(
        Input.FINGERPRINTS, stored=True, fingerprints_only=True
    )
    """What the search runs on: the index's fingerprints (their width is the index's)."""

    @property
    def exact(self) -> bool:
        """Whether the stored files are read again for their true cosine."""
        return self.search.verification(self.PLACE) is Verify.EXACT

    @property
    def config(self) -> DedupeConfig:
        """The tuning of the search."""
        return self.search.config(self.PLACE)

    @property
    def keep_rule(self) -> KeepRule:
        """Which member of each cluster is kept (``--keep``, ``--protect``)."""
        return self.keeping.rule()

    def plan_request(self) -> PlanRequest | None:
        """The action plan asked for, bound to the ``--root`` directories: whoever can write
        a shared index could otherwise add any path, and a plan that took each stored path
        as its own root would remove it."""
        if self.plan is None:
            return None
        return PlanRequest(self.plan, self.keep_rule, self.roots)

    def check(self) -> None:
        """Raises: UsageError: an output over the index; plan options that do not apply."""
        refuse_output_over_index(self.db, self.output)
        self.search.check(self.PLACE)
        refuse_overwrites(
            {"output": self.output.path, "plan": self.plan}, Reads(files=sidecars(self.db))
        )
        if self.plan is not None and not self.exact:
            raise UsageError(
                "{plan} needs the stored files read again, as they are now: add {verify} exact",
                parameters=("plan", "verify"),
            )
        if self.plan is None and (self.keeping.protect or self.roots):
            raise UsageError(
                "{protect} and {root} go with {plan} FILE", parameters=("protect", "root", "plan")
            )
        if self.plan is not None and not self.roots:
            raise UsageError(
                "{plan} of an index needs {root} DIR, the directory the plan may act in (the "
                "tree the files were added from): a stored path is never taken as a root",
                parameters=("plan", "root"),
            )
        self.keeping.check_stored(read_again=self.exact)


def index_dedupe_request(**options: Any) -> IndexDedupeRequest:
    """The request of ``simhash index dedupe``'s options, each given by its name (those left
    out keep their defaults), put in the part that owns it.

    Raises:
        TypeError: an option no part has.
    """
    search = taken(SearchRequest, options)
    keeping = taken(KeepRequest, options)
    return IndexDedupeRequest(search=search, keeping=keeping, **options)
