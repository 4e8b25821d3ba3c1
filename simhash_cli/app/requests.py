"""One typed, frozen request per command; ``check()`` states every rule between its options, once,
and runs before any work (a long read must never end in a usage error).

The command line builds a request from its options and hands it to a run function of
:mod:`.run` (or of :mod:`simhash_cli.app.index.run`); a library caller can build one directly.
``simhash dedupe``'s request is in :mod:`.dedupe`, ``simhash explain``'s beside its run, in
:mod:`.explaining`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..core.blocking import DEFAULT_MAX_CANDIDATES
from ..core.calibrate import DEFAULT_MAX_DOCS
from ..core.vectorize import Weighting
from ..errors import UsageError
from ..io.sinks.formats import Output
from .engine import Need
from .guard import refuse_output_over_input
from .settings import (
    EngineChoice,
    Input,
    Reading,
    Source,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "CalibrateRequest",
    "CompareRequest",
    "FingerprintRequest",
    "SurveyRequest",
    "check_records",
    "refuse_output_over_input",
]

DEFAULT_THRESHOLD = 0.9
"""The cosine that makes a pair a near-duplicate unless asked otherwise."""

VECTORS_AS_GIVEN = (
    "{vectors} are fingerprinted exactly as given; {ngram}, {char_ngrams} and {weighting} "
    "apply to text"
)
FINGERPRINTS_AS_MADE = (
    "{ngram}, {char_ngrams} and {weighting} do not apply to {fingerprints} "
    "(the records say how they were made)"
)


def check_records(source: Source, reading: Reading) -> None:
    """Records say some of their settings themselves: refuse options that would not apply."""
    if source.kind is Input.VECTORS:
        reading.refuse_text_options(VECTORS_AS_GIVEN)
    elif source.kind is Input.FINGERPRINTS:
        reading.refuse_text_options(FINGERPRINTS_AS_MADE)


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
        return self.source.streamable and self.reading.weighting is not Weighting.TFIDF

    @property
    def records_streamed(self) -> bool:
        """Whether ``--texts`` or ``--vectors`` records come piece by piece (not tfidf), parsed
        and fingerprinted by ``--jobs`` processes: only a few pieces are ever in memory."""
        return (
            self.source.kind in (Input.TEXTS, Input.VECTORS)
            and self.reading.weighting is not Weighting.TFIDF
        )

    def check(self) -> None:
        """Raises: UsageError: options that do not go together."""
        self.source.require((Input.VECTORS,))
        check_records(self.source, self.reading)
        refuse_output_over_input(self.source, {"output": self.output.path})

    def needs(self) -> list[Need]:
        """What this request needs of an engine."""
        return [Need.WHOLE_CORPUS] if not self.streamed or self.source.reads_stdin_path else []


@dataclass(frozen=True)
class CompareRequest:
    """``simhash compare A B...``: a document side by side with one or more others."""

    a: str
    b: tuple[str, ...]
    threshold: float = DEFAULT_THRESHOLD
    check_pairs: bool = False
    reading: Reading = field(default_factory=Reading)
    output: Output = field(default_factory=Output)

    @property
    def source(self) -> Source:
        """The files, read as given (the same file twice is compared with itself)."""
        return Source(Input.PATHS, (self.a, *self.b))

    def check(self) -> None:
        """Raises: UsageError: a directory, or no file to compare with."""
        if not self.b:
            raise UsageError("compare takes A and at least one B")
        for path in (self.a, *self.b):
            if os.path.isdir(path):
                raise UsageError(f"compare takes files; {path} is a directory")
        refuse_output_over_input(self.source, {"output": self.output.path})


@dataclass(frozen=True)
class SurveyRequest:
    """``simhash plan``: the candidate schemes for a threshold, width and corpus.

    Attributes:
        source: the corpus, or an empty source to describe one by ``docs`` and ``background``.
        docs: without a corpus, its number of documents.
        background: without a corpus, the cosine of a typical unrelated pair (default 0).
    """

    source: Source
    reading: Reading = field(default_factory=Reading)
    output: Output = field(default_factory=Output)
    threshold: float = DEFAULT_THRESHOLD
    docs: int | None = None
    background: float | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES

    def check(self) -> None:
        """Raises: UsageError: a corpus both given and described, or neither."""
        if not self.source.empty:
            if self.docs is not None or self.background is not None:
                raise UsageError(
                    "{docs} and {background} describe a corpus you do not give; "
                    "with PATHs or {vectors} they are measured",
                    parameters=("docs", "background", "vectors"),
                )
            check_records(self.source, self.reading)
        elif self.docs is None:
            raise UsageError(
                "give {docs} N (the corpus size), or the corpus: PATH...", parameters=("docs",)
            )
        refuse_output_over_input(self.source, {"output": self.output.path})


@dataclass(frozen=True)
class CalibrateRequest:
    """``simhash calibrate``: the reference page's experiments on the user's documents."""

    source: Source
    reading: Reading = field(default_factory=Reading)
    output: Output = field(default_factory=Output)
    threshold: float = DEFAULT_THRESHOLD
    seeds: int = 20
    max_docs: int = DEFAULT_MAX_DOCS

    def check(self) -> None:
        """Raises: UsageError: no input, or options that do not apply to it."""
        self.source.require((Input.VECTORS,))
        check_records(self.source, self.reading)
        refuse_output_over_input(self.source, {"output": self.output.path})
