"""``simhash compare A B...``: its request and its run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..core.comparison import Comparison, compare_with
from ..core.config import DEFAULT_THRESHOLD
from ..core.corpus import corpus_from_texts
from ..errors import InputError, UsageError
from ..io.sinks.formats import Output
from ..io.sources.fields import Fields
from .engine import Engine
from .guard import refuse_output_over_input
from .hooks import Hooks
from .loading import load
from .records import from_vector_records, records_by_id
from .settings import Input, Reading, Source


@dataclass(frozen=True)
class CompareRequest:
    """``simhash compare A B...``: a document side by side with one or more others, files or
    records by id."""

    a: str
    b: tuple[str, ...]
    threshold: float = DEFAULT_THRESHOLD
    check_pairs: bool = False
    texts: str | None = None
    """A and the Bs are ids of this file's ``--texts`` records."""
    vectors: str | None = None
    """A and the Bs are ids of this file's ``--vectors`` records."""
    text_field: tuple[str, ...] = ()
    id_field: str | None = None
    reading: Reading = field(default_factory=Reading)
    output: Output = field(default_factory=Output)

    @property
    def others(self) -> tuple[str, ...]:
        """The Bs, A itself left out of several (``compare a.txt *.txt``: a glob that matches
        A too); ``compare a a`` compares A with itself, as asked."""
        if len(self.b) < 2:
            return self.b
        same = _same_file if self.source_kind is Input.PATHS else _same_id
        rest = tuple(b for b in self.b if not same(b, self.a))
        return rest or self.b[:1]

    @property
    def source_kind(self) -> Input:
        if self.texts is not None:
            return Input.TEXTS
        return Input.PATHS if self.vectors is None else Input.VECTORS

    @property
    def source(self) -> Source:
        """The records file, or the files (the same file twice is compared with itself)."""
        fields = Fields.of(self.text_field, self.id_field)
        kind = self.source_kind
        if kind is Input.PATHS:
            return Source(Input.PATHS, (self.a, *self.others), fields=fields)
        return Source(kind, location=self.texts or self.vectors, fields=fields)

    def check(self) -> None:
        """Raises: UsageError: records of two kinds, a directory, or no B to compare with."""
        if not self.b:
            raise UsageError("compare takes A and at least one B")
        if self.texts is not None and self.vectors is not None:
            raise UsageError("compare reads --texts or --vectors, not both")
        if self.source_kind is Input.PATHS:
            for path in (self.a, *self.b):
                if os.path.isdir(path):
                    raise UsageError(f"compare takes files; {path} is a directory")
        refuse_output_over_input(self.source, {"output": self.output.path})


def _same_file(path: str, other: str) -> bool:
    try:
        return path == other or os.path.samefile(path, other)
    except (OSError, ValueError):  # a path that does not exist is reported as it is read
        return False


def _same_id(doc_id: str, other: str) -> bool:
    return doc_id == other


def compare_documents(request: CompareRequest, engine: Engine, hooks: Hooks) -> list[Comparison]:
    """``simhash compare A B...``: A with each B that is a document (the others skipped, as
    every command skips them), the most similar first.

    Raises:
        InputError: A is no document, or no B is; an id no record has.
    """
    source, reading = request.source, request.reading
    if source.kind is Input.PATHS:
        docs = load(source, reading, engine, hooks, distinct=False)
    else:
        ids = (request.a, *request.others)
        found = records_by_id(source.location or "-", source.kind.value, ids,
                              reading.policy.max_bytes, source.fields)  # fmt: skip
        if source.kind is Input.VECTORS:
            docs = from_vector_records(found, reading.vector_settings, hooks.event, [])
        else:
            texts = [record.text for record in found]
            given = [record.id for record in found]  # as the records gave them: 1, not "1"
            docs = corpus_from_texts(texts, reading.settings, ids=given, on_event=hooks.event)
    if len(docs) < 2 or str(docs.ids[0]) != request.a:
        reasons = "; ".join(f"{s.id}: {s.reason}" for s in docs.skipped)
        raise InputError(f"compare needs A and a B with features ({reasons})")
    if reading.weighting.corpus_wide:
        hooks.info(
            f"note: tfidf weights here take their idf from these {len(docs):,} documents "
            "only; dedupe takes it from all it reads, so the cosines differ"
        )
    return compare_with(docs)
