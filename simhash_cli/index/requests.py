"""The requests of the ``simhash index`` commands, each with the rules between its options."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..app.engine import Need
from ..app.guard import Reads, refuse_overwrites, sidecars
from ..app.requests import DEFAULT_THRESHOLD, refuse_output_over_input
from ..app.settings import EngineChoice, Input, Reading, Source, default_jobs
from ..core.blocking import DEFAULT_MAX_CANDIDATES
from ..core.cosines import Verify
from ..core.search import DEFAULT_MAX_PAIRS
from ..errors import UsageError
from ..io.sinks.formats import Output

__all__ = [
    "NO_STANDARD_INPUT",
    "IndexAddRequest",
    "IndexDedupeRequest",
    "IndexQueryRequest",
    "refuse_output_over_index",
]

NO_STANDARD_INPUT = (
    "index add stores files by their path; standard input has none "
    "(give {vectors} -, {texts} - or {fingerprints} - for records)"
)
STORED = (Input.VECTORS, Input.TEXTS, Input.FINGERPRINTS)


def refuse_output_over_index(db: str, output: Output) -> None:
    """``-o FILE`` that is the index (or its ``-wal``/``-shm``) would turn it into a report.

    Raises:
        UsageError: before the index is opened.
    """
    refuse_overwrites({"output": output.path}, Reads(files=sidecars(db)))


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

    def check(self) -> None:
        """Raises: UsageError: no input, or an output over an input."""
        self.source.require(STORED)
        refuse_output_over_input(self.source, {"output": self.output.path}, also=sidecars(self.db))


@dataclass(frozen=True)
class IndexDedupeRequest:
    """``simhash index dedupe DB``: near-duplicates among the stored documents."""

    db: str
    threshold: float = DEFAULT_THRESHOLD
    verify: Verify = Verify.ESTIMATE
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    max_pairs: int = DEFAULT_MAX_PAIRS
    jobs: int = field(default_factory=default_jobs)
    output: Output = field(default_factory=Output)

    def check(self) -> None:
        """Raises: UsageError: an output over the index."""
        refuse_output_over_index(self.db, self.output)
