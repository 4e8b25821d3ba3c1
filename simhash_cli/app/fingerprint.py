"""``simhash fingerprint``: its request, and its run (the whole corpus, or batch by batch, or
record piece by piece)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..core.corpus import Corpus
from ..core.events import Progress, Skipped
from ..io.sinks.formats import Output
from .engine import Engine, Need
from .guard import refuse_output_over_input
from .hooks import Hooks
from .loading import load, report_passed_over, stream, stream_records
from .settings import EngineChoice, Input, Reading, Source, check_records


@dataclass(frozen=True)
class FingerprintRequest:
    """``simhash fingerprint``: one fingerprint record per document."""

    source: Source
    reading: Reading = field(default_factory=Reading)
    engine: EngineChoice = field(default_factory=EngineChoice)
    output: Output = field(default_factory=Output)

    @property
    def streamed(self) -> bool:
        """Whether fingerprints come batch by batch (files, not tfidf): only a batch is ever in
        memory. tfidf needs the whole corpus, and records are read whole."""
        return self.source.streamable and not self.reading.weighting.corpus_wide

    @property
    def records_streamed(self) -> bool:
        """Whether ``--texts`` or ``--vectors`` records come piece by piece (not tfidf), parsed
        and fingerprinted by ``--jobs`` processes: only a few pieces are ever in memory."""
        return (
            self.source.kind in (Input.TEXTS, Input.VECTORS)
            and not self.reading.weighting.corpus_wide
        )

    def check(self) -> None:
        """Raises: UsageError: options that do not go together."""
        self.source.require((Input.TEXTS, Input.VECTORS))
        check_records(self.source, self.reading)
        refuse_output_over_input(self.source, {"output": self.output.path})

    def needs(self) -> list[Need]:
        """What this request needs of an engine."""
        return [Need.WHOLE_CORPUS] if not self.streamed or self.source.reads_stdin_path else []


@dataclass
class Tally:
    """What went by in a stream of batches: documents, and those skipped."""

    documents: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    def counted(self, batches: Iterator[Corpus]) -> Iterator[Corpus]:
        """The same batches, counted as they pass."""
        for batch in batches:
            self.documents += len(batch)
            self.skipped.extend(batch.skipped)
            yield batch


def fingerprint_corpus(request: FingerprintRequest, engine: Engine, hooks: Hooks) -> Corpus:
    """``simhash fingerprint`` when the whole corpus is needed (records, tfidf)."""
    return load(request.source, request.reading, engine, hooks)


def fingerprint_batches(
    request: FingerprintRequest, engine: Engine, hooks: Hooks, progress: Progress, tally: Tally
) -> Iterator[Corpus]:
    """``simhash fingerprint`` of files, batch by batch (``request.streamed``), counted in
    ``tally``."""
    return tally.counted(stream(request.source, request.reading, engine, hooks, progress))


def fingerprint_records(
    request: FingerprintRequest, hooks: Hooks, tally: Tally
) -> Iterator[Corpus]:
    """``simhash fingerprint --texts`` or ``--vectors``, piece by piece
    (``request.records_streamed``), counted in ``tally``."""
    report_passed_over(request.source, hooks)
    return tally.counted(stream_records(request.source, request.reading, hooks))
