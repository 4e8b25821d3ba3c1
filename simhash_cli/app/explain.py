"""``simhash explain``: two documents read (files, or records found by id), then explained
(:mod:`simhash_cli.core.explain`) with a word-level diff of their texts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..core.corpus import Corpus, corpus_from_texts
from ..core.explain import PAGE_BLOCKS, Explained, explained
from ..errors import BadValueError, InputError, UsageError
from ..io.sinks.formats import Output
from ..io.sources.fields import Fields
from ..io.sources.files import check_paths_exist, read_documents
from .guard import refuse_output_over_input
from .hooks import Hooks
from .records import from_vector_records, records_by_id
from .settings import Input, Reading, Source

__all__ = ["ExplainRequest", "explain_documents"]


@dataclass(frozen=True)
class ExplainRequest:
    """``simhash explain A B``: why two documents match, files or records by id."""

    a: str
    b: str
    texts: str | None = None
    """A and B are ids of this file's ``--texts`` records."""
    vectors: str | None = None
    """A and B are ids of this file's ``--vectors`` records (features only, no text)."""
    text_field: tuple[str, ...] = ()
    """Where the records' texts are (``text`` when empty)."""
    id_field: str | None = None
    """Where the records' ids are (``id`` when None)."""
    blocks: int | None = None
    """The scheme whose shared blocks are shown (None: 1, 4 and 8 blocks)."""
    top: int = 12
    reading: Reading = field(default_factory=Reading)
    output: Output = field(default_factory=Output)

    @property
    def source(self) -> Source:
        """The records file, or the two files."""
        fields = Fields.of(self.text_field, self.id_field)
        if self.texts is not None:
            return Source(Input.TEXTS, location=self.texts, fields=fields)
        if self.vectors is not None:
            return Source(Input.VECTORS, location=self.vectors, fields=fields)
        return Source(Input.PATHS, (self.a, self.b), fields=fields)

    def check(self) -> None:
        """Raises: UsageError: records of two kinds, a directory, or a scheme of blocks that
        does not divide the fingerprint."""
        if self.texts is not None and self.vectors is not None:
            raise UsageError("explain reads --texts or --vectors, not both")
        if self.source.kind is Input.PATHS:
            for path in (self.a, self.b):
                if os.path.isdir(path):
                    raise UsageError(f"explain takes files; {path} is a directory")
        if self.blocks is not None and self.reading.bits % self.blocks:
            raise BadValueError(
                f"{self.blocks} blocks do not divide {self.reading.bits} bits", parameter="blocks"
            )
        refuse_output_over_input(self.source, {"output": self.output.path})


def explain_documents(request: ExplainRequest, hooks: Hooks) -> Explained:
    """Read A and B as the request names them and explain them.

    Raises:
        InputError: an id no record has, or a document without features.
    """
    source, reading = request.source, request.reading
    schemes = PAGE_BLOCKS if request.blocks is None else (request.blocks,)
    ids = (request.a, request.b)
    if source.kind is Input.VECTORS:
        found = _records(source, "vectors", ids, reading.policy.max_bytes)
        docs = from_vector_records(found, reading.vector_settings, hooks.event, [])
        _both(docs, ids)
        return explained(docs, (0, 1), None, schemes=schemes, top=request.top)
    if source.kind is Input.TEXTS:
        records = _records(source, "texts", ids, reading.policy.max_bytes)
        texts = (records[0].text, records[1].text)
    else:
        check_paths_exist(ids)
        read = {d.id: d.text for d in read_documents(ids, hooks.event, policy=reading.policy)}
        missing = [path for path in ids if path not in read]
        if missing:
            raise InputError(f"{missing[0]} is not a text document (see the warning above)")
        texts = (read[request.a], read[request.b])
    if reading.weighting.corpus_wide:
        hooks.info("note: tfidf weights here take their idf from A and B only")
    docs = corpus_from_texts(list(texts), reading.settings, ids=ids, on_event=hooks.event)
    _both(docs, ids)
    return explained(docs, (0, 1), texts, schemes=schemes, top=request.top)


def _records(source: Source, kind: Any, ids: tuple[str, str], max_line: int | None) -> list[Any]:
    """The records of ``ids`` in ``source`` (A's first), read until both are found."""
    return records_by_id(source.location or "-", kind, ids, max_line, source.fields)


def _both(docs: Corpus, ids: tuple[str, str]) -> None:
    if len(docs) != 2:
        reasons = "; ".join(f"{s.id}: {s.reason}" for s in docs.skipped)
        raise InputError(f"explain needs A and B with features ({reasons or ', '.join(ids)})")
