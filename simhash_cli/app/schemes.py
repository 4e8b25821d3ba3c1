"""``simhash plan`` (the schemes for a corpus, read or described) and ``simhash calibrate`` (the
reference page's experiments on a corpus): their requests and their runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.config import CALIBRATE_MAX_DOCS, DEFAULT_THRESHOLD, DedupeConfig
from ..core.search import blocking
from ..core.search.blocking import DEFAULT_MAX_CANDIDATES
from ..core.search.calibrate import Calibration, calibrate
from ..core.search.planner import pilot_for, survey_for
from ..core.search.pricing import Background, Survey, survey
from ..errors import UsageError
from ..io.sinks.formats import Output
from .engine import Engine
from .guard import refuse_output_over_input
from .hooks import Hooks
from .loading import load
from .settings import Input, Reading, Source, check_records


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
    max_docs: int = CALIBRATE_MAX_DOCS

    def check(self) -> None:
        """Raises: UsageError: no input, or options that do not apply to it."""
        self.source.require((Input.TEXTS, Input.VECTORS))
        check_records(self.source, self.reading)
        refuse_output_over_input(self.source, {"output": self.output.path})


def survey_schemes(request: SurveyRequest, engine: Engine, hooks: Hooks) -> Survey:
    """``simhash plan``: the schemes for a corpus that is read, or one that is described."""
    if not request.source.empty:
        # Documents of words keep their vectors: MinHash schemes are priced on their sets.
        words = request.source.kind in (Input.PATHS, Input.TEXTS)
        corpus = load(request.source, request.reading, engine, hooks, vectors_needed=words)
        # The pilot dedupe runs, on the same documents: the plan is the plan dedupe makes.
        copies = blocking.collapse(corpus.fingerprints, corpus.settings.bits)
        pilot = pilot_for(corpus, DedupeConfig(threshold=request.threshold), copies)
        return survey_for(
            corpus,
            threshold=request.threshold,
            max_candidates=request.max_candidates,
            copies=copies,
            pilot=pilot,
        )
    assert request.docs is not None  # SurveyRequest.check
    return survey(
        bits=request.reading.bits,
        threshold=request.threshold,
        n_docs=request.docs,
        background=Background(cosine=request.background or 0.0),
        max_candidates=request.max_candidates,
    )


def calibrate_corpus(request: CalibrateRequest, engine: Engine, hooks: Hooks) -> Calibration:
    """``simhash calibrate``: the reference page's experiments on these documents."""
    docs = load(request.source, request.reading, engine, hooks)
    assert docs.weights is not None
    with hooks.status(f"calibrating on {min(len(docs), request.max_docs):,} documents"):
        return calibrate(
            docs.weights,
            docs.features,
            threshold=request.threshold,
            bits=docs.settings.bits,
            seeds=request.seeds,
            max_docs=request.max_docs,
        )
