"""``simhash compare A B...``: its request and its run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..core.config import DEFAULT_THRESHOLD
from ..core.search import Comparison, compare_with
from ..core.vectorize import Weighting
from ..errors import InputError, UsageError
from ..io.sinks.formats import Output
from .engine import Engine
from .guard import refuse_output_over_input
from .hooks import Hooks
from .loading import load
from .settings import Input, Reading, Source


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


def compare_documents(request: CompareRequest, engine: Engine, hooks: Hooks) -> list[Comparison]:
    """``simhash compare A B...``: A with each B that is a document (the others skipped, as
    every command skips them).

    Raises:
        InputError: A is no document, or no B is.
    """
    docs = load(request.source, request.reading, engine, hooks, distinct=False)
    if len(docs) < 2 or docs.ids[0] != request.a:
        reasons = "; ".join(f"{s.id}: {s.reason}" for s in docs.skipped)
        raise InputError(f"compare needs A and a B with features ({reasons})")
    if request.reading.weighting is Weighting.TFIDF:
        hooks.info(
            f"note: tfidf weights here take their idf from these {len(docs):,} documents "
            "only; dedupe takes it from all it reads, so the cosines differ"
        )
    return compare_with(docs)
