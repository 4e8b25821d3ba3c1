"""``simhash dedupe``'s request, built from typed parts that each check themselves (the
search: :class:`~simhash_cli.app.search_request.SearchRequest`; the keep rule:
:class:`~simhash_cli.app.keep.request.KeepRequest`; the dataset's files:
:class:`~.outputs.DatasetOutputs`; ``--against REF``: :class:`Against`), and the rules between
the parts, each stated once: :meth:`DedupeRequest.check` asks each part with what it needs of
the others. ``--against REF``: what goes with a decontamination, and REF read as the input is
read (files for files, records of the same kind and fields, or an index, whose fingerprints are
compared by estimate; the run is :mod:`.against`'s).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...core.clusters.groups import Clustering
from ...core.config import DedupeConfig
from ...core.verify.cosines import Verify
from ...errors import UsageError
from ...io.opening import open_file
from ...io.sinks.dataset import sidecar_of
from ...io.sinks.formats import Format, Output
from ...io.sinks.report import check_report_engine
from ...io.sources.fields import Fields
from ...io.sources.files import STDIN
from ...io.sources.parquet import is_parquet
from ...io.sources.shards import compression_of, shards_of
from ...io.sources.snapshot import Snapshot
from ..engine import Job, Need
from ..guard import Reads, refuse_output_over_input, refuse_overwrites, sidecars
from ..keep.request import KeepRequest
from ..keep.rule import KeepRule
from ..memory import physical_memory
from ..parts import taken
from ..plans.request import PlanRequest
from ..search_request import SearchPlace, SearchRequest
from ..settings import (
    COMPRESSED_RATIO,
    VECTOR_BYTES_PER_BYTE,
    EngineChoice,
    Input,
    Memory,
    Reading,
    Source,
    check_records,
)
from .outputs import AfterRun, DatasetOutputs, DatasetRequest

__all__ = [
    "Against",
    "DatasetRequest",
    "DedupeRequest",
    "PlanRequest",
    "dedupe_request",
    "is_index",
]

_SQLITE = b"SQLite format 3\x00"


def is_index(path: str) -> bool:
    """Whether ``path`` is an SQLite database (an index made by ``simhash index add``)."""
    try:
        with open_file(path) as handle:
            return handle.read(len(_SQLITE)) == _SQLITE
    except OSError:
        return False


@dataclass(frozen=True)
class Against:
    """``--against REF``: flag (drop) what comes near this reference set.

    Attributes:
        reference: REF, files or records as the input is, or an index.
        text_field: where REF's records keep their text (empty: as the input's).
        id_field: where REF's records keep their id (None: as the input's).
    """

    reference: str
    text_field: tuple[str, ...] = ()
    id_field: str | None = None

    @functools.cached_property
    def is_index(self) -> bool:
        """Whether REF is an index (its fingerprints are compared by estimate): looked at
        once."""
        return is_index(self.reference)

    @property
    def names_fields(self) -> bool:
        """Whether REF's own fields are named."""
        return bool(self.text_field) or self.id_field is not None

    def source(self, given: Source) -> Source:
        """REF read as the input (``given``) is read: paths, or records of the input's kind,
        with the input's fields unless REF's own are named.

        Raises:
            UsageError: fields of REF named for files, or REF's text field for vectors.
        """
        if given.kind is Input.PATHS:
            if self.names_fields:
                raise UsageError(
                    "{against_text_field} and {against_id_field} name the fields of REF's "
                    "records; files have none",
                    parameters=("against_text_field", "against_id_field"),
                )
            return Source(Input.PATHS, (self.reference,), skip_bad_lines=given.skip_bad_lines)
        fields = given.fields
        if self.names_fields:
            fields = Fields.of(self.text_field, self.id_field)
            if self.text_field and given.kind is not Input.TEXTS:
                raise UsageError(
                    "{against_text_field} names where REF's texts are; vectors have features",
                    parameters=("against_text_field",),
                )
        return Source(given.kind, (), self.reference, given.skip_bad_lines, fields)

    def check(self, request: DedupeRequest) -> None:
        """Refuse, before any work, what does not go with ``--against``.

        Raises:
            UsageError: an option for a dedupe of clusters, tf-idf (its weights would come
                from each set alone), ``--verify exact`` against an index, or fingerprints.
        """
        search, keeping = request.search, request.keeping
        # What a dedupe may ask that --against does not do, by parameter: asked, and why not.
        not_with = (
            ("plan", request.plan is not None, "a plan acts on clusters of files"),
            ("report", request.report is not None, "the report browses clusters"),
            ("index", request.index is not None, "an index keeps a corpus to deduplicate"),
            ("audit", search.audit, "an audit measures a dedupe's blocks"),
            (
                "max_distance",
                search.max_distance is not None,
                "candidates against a reference are every pair, or blocks",
            ),
            (
                "minhash",
                search.minhash is not None,
                "candidates against a reference are every pair, or blocks",
            ),
            (
                "keep_by",
                keeping.keep_by is not None,
                "each flagged record is dropped: there is nothing to choose",
            ),
        )
        for name, asked, why in not_with:
            if asked:
                raise UsageError(
                    f"{{against}} goes without {{{name}}}: {why}", parameters=("against", name)
                )
        if keeping.named:
            raise UsageError(
                "{against} goes without {keep}: each flagged record is dropped",
                parameters=("against", "keep"),
            )
        if request.output.format is Format.GROUPS or request.output.listing is not None:
            raise UsageError(
                "{against} lists the pairs of a document and a reference document, not "
                "clusters: give {format} table, json, jsonl or csv, without {list}",
                parameters=("against", "format", "list"),
            )
        if search.clustering is not Clustering.REPRESENTATIVE:
            raise UsageError(
                "{against} goes without {clustering}: it makes no clusters",
                parameters=("against", "clustering"),
            )
        self._check_input(request)

    def _check_input(self, request: DedupeRequest) -> None:
        """The input and REF: texts, files or vectors, read alike."""
        if request.reading.weighting.corpus_wide:
            raise UsageError(
                "{against} goes without {weighting} tfidf: its weights would come from each "
                "set alone, and the two would not compare",
                parameters=("against", "weighting"),
            )
        if request.source.kind is Input.FINGERPRINTS:
            raise UsageError(
                "{against} compares texts, files or vectors with a reference: give {texts}, "
                "{vectors} or PATHs",
                parameters=("against", "texts", "vectors"),
            )
        if not self.is_index:
            refuse_output_over_input(self.source(request.source), request.outputs)
            return
        if self.names_fields:
            raise UsageError(
                f"{self.reference} is an index: it has no fields to name",
                parameters=("against_text_field", "against_id_field"),
            )
        if request.verification is Verify.EXACT:
            raise UsageError(
                f"{self.reference} is an index: it holds fingerprints, not vectors, so it "
                "is compared by estimate; leave out {verify} exact",
                parameters=("verify",),
            )
        refuse_overwrites(request.outputs, Reads(files=sidecars(self.reference)))


@dataclass(frozen=True)
class DedupeRequest:
    """``simhash dedupe``: near-duplicate pairs and their clusters.

    Attributes:
        source, reading, engine, output: what is read, how, on which engine, and where the
            pairs go.
        search: how candidates are found and verified, and how they become clusters.
        keeping: which member of each cluster is kept.
        dataset_files: records: the files the kept, dropped or annotated records go to.
        against: flag what comes near a reference set instead (a decontamination).
        check_pairs: exit with DUPLICATES_FOUND when any pair is flagged.
        plan: also write an action plan (files only).
        report: also write a self-contained HTML report of the run to this file.
        index: keep the fingerprints in this index and read only new and changed files.
        memory: what records hold of each document: vectors, or fingerprints (read again).
    """

    source: Source
    reading: Reading = field(default_factory=Reading)
    engine: EngineChoice = field(default_factory=EngineChoice)
    output: Output = field(default_factory=Output)
    search: SearchRequest = field(default_factory=SearchRequest)
    keeping: KeepRequest = field(default_factory=KeepRequest)
    dataset_files: DatasetOutputs = field(default_factory=DatasetOutputs)
    against: Against | None = None
    check_pairs: bool = False
    plan: str | None = None
    report: str | None = None
    index: str | None = None
    memory: Memory = Memory.AUTO

    @property
    def place(self) -> SearchPlace:
        """What the search runs on, as its rules ask."""
        kind = self.source.kind
        return SearchPlace(
            kind,
            index=self.index is not None,
            # The width is known before reading unless the records say it themselves.
            width=None if kind is Input.FINGERPRINTS else self.reading.bits,
            fingerprints_only=kind is Input.FINGERPRINTS
            or (self.against is not None and self.against.is_index),
        )

    @property
    def verification(self) -> Verify:
        """The verification asked for, or the input's default: estimates where there are
        fingerprints alone (``--fingerprints``, or ``--against`` an index)."""
        return self.search.verification(self.place)

    @property
    def config(self) -> DedupeConfig:
        """The tuning of the search."""
        return self.search.config(self.place)

    @property
    def keep_rule(self) -> KeepRule:
        """Which member of each cluster is kept (``--keep``, ``--keep-by``, ``--protect``)."""
        return self.keeping.rule(self.source)

    @property
    def dataset(self) -> DatasetRequest | None:
        """The records to write, if any (``--kept``, ``--dropped``)."""
        if not self.dataset_files.asked:
            return None
        return DatasetRequest(
            self.source,
            self.dataset_files.targets(),
            self.keep_rule.name,
            self.reading.policy.max_bytes,
        )

    @property
    def plan_request(self) -> PlanRequest | None:
        """The action plan asked for, if any."""
        if self.plan is None:
            return None
        return PlanRequest(self.plan, self.keep_rule, tuple(self.source.paths))

    def after(self, before: Snapshot | None) -> AfterRun:
        """What the run writes besides its pairs; ``before``: the dataset's input as it was
        before the run read it (:func:`~.run.before_run`)."""
        dataset = self.dataset
        return AfterRun(
            self.plan_request,
            None if self.report is None else (self.report, self.source),
            None if dataset is None or before is None else (dataset, before),
        )

    @property
    def vectors_needed(self) -> bool:
        """Whether the documents' vectors must be kept (exact verification, an audit)."""
        return self.job.vectors_needed

    @property
    def job(self) -> Job:
        """What an engine is handed: the source (every record checked, as it is read, not
        to hold the key its fate is to be written under), the reading and the search."""
        source = self.source
        if self.dataset_files.adds_fate:
            reserved = self.dataset_files.annotation
            source = dataclasses.replace(
                source, fields=dataclasses.replace(source.fields, reserved=reserved)
            )
        return Job(source, self.reading, self.config, self.rereads_records)

    @property
    def outputs(self) -> dict[str, str | None]:
        """Every file the run may write, by parameter."""
        files = self.dataset_files.files
        return {
            "output": self.output.path,
            "plan": self.plan,
            "report": self.report,
            **files,
            **{
                f"{name} (its metadata)": sidecar_of(path)
                for name, path in files.items()
                if path is not None and not is_parquet(path)
            },
        }

    def check(self) -> None:
        """Raises: UsageError, BadValueError: options that do not go together."""
        if self.against is not None:  # first: what it goes without, before how
            self.against.check(self)
        self.search.check(self.place)
        also = () if self.index is None else sidecars(self.index)
        refuse_output_over_input(self.source, self.outputs, also=also)
        self.dataset_files.check(
            self.source, plan=self.plan is not None, index=self.index is not None
        )
        self.keeping.check_read(self.source, index=self.index is not None)
        if self.report is not None:
            check_report_engine()
        self._check_plan()
        check_records(self.source, self.reading)
        self._check_index()
        self._check_memory()
        if self.index is None:
            self.source.require((Input.VECTORS, Input.TEXTS, Input.FINGERPRINTS))

    def needs(self) -> list[Need]:
        """What this request needs of an engine, in the order a refusal names them."""
        asked = {
            Need.INDEX: self.index is not None,
            Need.AUDIT: self.search.audit,
            Need.EMPTY_DOCUMENTS: self.reading.admission.include_empty,
            Need.TFIDF: self.reading.weighting.corpus_wide,
            Need.MINHASH: self.search.minhash is not None,
            Need.EVERY_PAIR: self.search.blocks == "every",
        }
        return [need for need, wanted in asked.items() if wanted]

    def _check_plan(self) -> None:
        if self.plan is None and self.keeping.protect:
            raise UsageError("{protect} goes with {plan} FILE", parameters=("protect", "plan"))
        if self.plan is not None and (self.source.is_records or self.index is not None):
            raise UsageError(
                "{plan} acts on files read in this run, so that each can be checked to be the "
                "file that was compared: give PATHs, without {vectors}, {fingerprints}, {texts} "
                "or {index}",
                parameters=("plan", "vectors", "fingerprints", "texts", "index"),
            )

    @property
    def rereads_records(self) -> bool:
        """Whether the records are held as fingerprints and read again for what needs vectors
        (``--memory``; auto: when their vectors could fill half the machine's memory)."""
        if not self._can_reread or self.memory is Memory.VECTORS:
            return False
        if self.memory is Memory.FINGERPRINTS:
            return True
        assert self.source.location is not None
        needed = sum(
            os.path.getsize(shard) * (COMPRESSED_RATIO if compression_of(shard) else 1)
            for shard in shards_of(self.source.location)
        )
        total = physical_memory()
        return total is not None and needed * VECTOR_BYTES_PER_BYTE > total // 2

    @property
    def _can_reread(self) -> bool:
        return (
            self.source.kind in (Input.TEXTS, Input.VECTORS)
            and self.source.location not in (None, STDIN)
            and "://" not in (self.source.location or "")
            and not self.reading.weighting.corpus_wide
            and not self.reading.admission.include_empty
            and not self.search.audit
            and self.against is None
            and not self.engine.is_dask
            and self.search.blocks != "every"
        )

    def _check_memory(self) -> None:
        if self.memory is Memory.FINGERPRINTS and not self._can_reread:
            raise UsageError(
                "{memory} fingerprints reads the records again: it goes with {texts} or "
                "{vectors} FILE on the local engine, without tfidf, {include_empty}, {audit}, "
                "{against} or {blocks} every",
                parameters=(
                    "memory",
                    "texts",
                    "vectors",
                    "include_empty",
                    "audit",
                    "against",
                    "blocks",
                ),
            )

    def _check_index(self) -> None:
        if self.index is None:
            return
        if self.source.is_records:
            raise UsageError(
                "{index} keeps the fingerprints of files: give PATHs, not {texts}, {vectors} "
                "or {fingerprints}",
                parameters=("index", "texts", "vectors", "fingerprints"),
            )
        if self.search.audit:
            raise UsageError(
                "{index} goes without {audit}, which needs every document's vector",
                parameters=("index", "audit"),
            )
        if self.source.empty:
            raise UsageError("{index} needs PATHs", parameters=("index",))


def dedupe_request(
    *,
    against: str | None = None,
    against_text_field: tuple[str, ...] = (),
    against_id_field: str | None = None,
    **options: Any,
) -> DedupeRequest:
    """The request of ``simhash dedupe``'s options, each given by its name (the command
    line's; those left out keep their defaults), put in the part that owns it.

    Raises:
        TypeError: an option no part has.
        UsageError: REF's fields named without REF.
    """
    if against is None and (against_text_field or against_id_field is not None):
        raise UsageError(
            "{against_text_field} and {against_id_field} name the fields of REF's records: "
            "they go with {against} REF",
            parameters=("against_text_field", "against_id_field", "against"),
        )
    parts: Mapping[str, Any] = {
        "search": taken(SearchRequest, options),
        "keeping": taken(KeepRequest, options),
        "dataset_files": taken(DatasetOutputs, options),
        "against": None
        if against is None
        else Against(against, tuple(against_text_field), against_id_field),
    }
    return DedupeRequest(**parts, **options)
