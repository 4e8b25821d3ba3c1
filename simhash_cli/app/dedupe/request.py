"""``simhash dedupe``'s request, its datasets' and its plan's, and every rule between their
options, those of ``--against REF`` among them (what goes with a decontamination, and REF read
as the input is read: files for files, records of the same kind and fields, or an index, whose
fingerprints are compared by estimate; the run is :mod:`.against`'s).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Literal

from ...core.clusters.groups import Clustering
from ...core.config import (
    AUTO,
    DEFAULT_GROUP_PAIRS,
    DEFAULT_MAX_PAIRS,
    DEFAULT_THRESHOLD,
    DedupeConfig,
)
from ...core.search.blocking import DEFAULT_MAX_CANDIDATES
from ...core.verify.cosines import Verify
from ...errors import BadValueError, UsageError
from ...io.opening import open_file
from ...io.sinks.dataset import ANNOTATION, Targets, sidecar_of
from ...io.sinks.formats import Format, Output
from ...io.sinks.report import check_report_engine
from ...io.sources.fields import Fields
from ...io.sources.files import STDIN
from ...io.sources.parquet import is_parquet
from ...io.sources.shards import compression_of, shards_of
from ...io.sources.snapshot import Snapshot
from ..engine import Job, Need
from ..guard import Reads, refuse_output_over_input, refuse_overwrites, sidecars
from ..keep import DEFAULT_KEEP, FILE_RULES, Keep
from ..keep.rule import KeepBy, KeepRule
from ..memory import physical_memory
from ..plans.request import PlanRequest
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
from .datasets import check_dataset
from .outputs import AfterRun, DatasetRequest

__all__ = [
    "DatasetRequest",
    "DedupeRequest",
    "PlanRequest",
    "check_against",
    "is_index",
    "reference_source",
]

_SQLITE = b"SQLite format 3\x00"

# What a dedupe may ask that --against does not do, by parameter.
_NOT_WITH_AGAINST = {
    "plan": "a plan acts on clusters of files",
    "report": "the report browses clusters",
    "index": "an index keeps a corpus to deduplicate",
    "audit": "an audit measures a dedupe's blocks",
    "max_distance": "candidates against a reference are every pair, or blocks",
    "minhash": "candidates against a reference are every pair, or blocks",
    "keep_by": "each flagged record is dropped: there is nothing to choose",
}


def is_index(path: str) -> bool:
    """Whether ``path`` is an SQLite database (an index made by ``simhash index add``)."""
    try:
        with open_file(path) as handle:
            return handle.read(len(_SQLITE)) == _SQLITE
    except OSError:
        return False


def check_against(request: DedupeRequest) -> None:
    """Refuse, before any work, what does not go with ``--against``.

    Raises:
        UsageError: an option for a dedupe of clusters, tf-idf (its weights would come from
            each set alone), ``--verify exact`` against an index, or fingerprints.
    """
    assert request.against is not None
    for name, why in _NOT_WITH_AGAINST.items():
        if getattr(request, name) not in (None, False):
            raise UsageError(
                f"{{against}} goes without {{{name}}}: {why}", parameters=("against", name)
            )
    if request.keep is not DEFAULT_KEEP or request.keep_by is not None:
        raise UsageError(
            "{against} goes without {keep}: each flagged record is dropped",
            parameters=("against", "keep"),
        )
    if request.output.format is Format.GROUPS or request.output.listing is not None:
        raise UsageError(
            "{against} lists the pairs of a document and a reference document, not clusters: "
            "give {format} table, json, jsonl or csv, without {list}",
            parameters=("against", "format", "list"),
        )
    if request.clustering is not Clustering.REPRESENTATIVE:
        raise UsageError(
            "{against} goes without {clustering}: it makes no clusters",
            parameters=("against", "clustering"),
        )
    if request.reading.weighting.corpus_wide:
        raise UsageError(
            "{against} goes without {weighting} tfidf: its weights would come from each set "
            "alone, and the two would not compare",
            parameters=("against", "weighting"),
        )
    if request.source.kind is Input.FINGERPRINTS:
        raise UsageError(
            "{against} compares texts, files or vectors with a reference: give {texts}, "
            "{vectors} or PATHs",
            parameters=("against", "texts", "vectors"),
        )
    named = request.against_text_field or request.against_id_field is not None
    if named and is_index(request.against):
        raise UsageError(
            f"{request.against} is an index: it has no fields to name",
            parameters=("against_text_field", "against_id_field"),
        )
    if is_index(request.against):
        if request.verification is Verify.EXACT:
            raise UsageError(
                f"{request.against} is an index: it holds fingerprints, not vectors, so it "
                "is compared by estimate; leave out {verify} exact",
                parameters=("verify",),
            )
        refuse_overwrites(request.outputs, Reads(files=sidecars(request.against)))
    else:
        refuse_output_over_input(reference_source(request), request.outputs)


def reference_source(request: DedupeRequest) -> Source:
    """REF read as the input is read: paths, or records of the input's kind, with the
    input's fields unless REF's own are named.

    Raises:
        UsageError: fields of REF named for files, or REF's text field for vectors.
    """
    assert request.against is not None
    source = request.source
    named = request.against_text_field or request.against_id_field is not None
    if source.kind is Input.PATHS:
        if named:
            raise UsageError(
                "{against_text_field} and {against_id_field} name the fields of REF's records; "
                "files have none",
                parameters=("against_text_field", "against_id_field"),
            )
        return Source(Input.PATHS, (request.against,), skip_bad_lines=source.skip_bad_lines)
    fields = source.fields
    if named:
        fields = Fields.of(request.against_text_field, request.against_id_field)
        if request.against_text_field and source.kind is not Input.TEXTS:
            raise UsageError(
                "{against_text_field} names where REF's texts are; vectors have features",
                parameters=("against_text_field",),
            )
    return Source(source.kind, (), request.against, source.skip_bad_lines, fields)


@dataclass(frozen=True)
class DedupeRequest:
    """``simhash dedupe``: near-duplicate pairs and their clusters.

    Attributes:
        blocks: equal blocks per fingerprint, ``every`` pair, ``auto``, or None when not asked
            (auto).
        max_distance: instead of blocks, Manku's tables for pairs within this many bits.
        minhash: (bands, rows) of a MinHash signature of the feature sets; with a number of
            blocks or a distance, their candidates too.
        verify: how candidates are verified, or None for the input's default (exact for text
            and vectors; estimate for fingerprints and the index, which hold no vectors).
        check: exit with DUPLICATES_FOUND when any pair is flagged.
        plan: also write an action plan (files only).
        report: also write an HTML report of the run.
        keep: which member of each cluster is kept (:class:`KeepRule`).
        index: keep the fingerprints in this index and read only new and changed files.
    """

    source: Source
    reading: Reading = field(default_factory=Reading)
    engine: EngineChoice = field(default_factory=EngineChoice)
    output: Output = field(default_factory=Output)
    blocks: int | Literal["auto", "every"] | None = None
    max_distance: int | None = None
    minhash: tuple[int, int] | None = None
    pilot: bool = True
    threshold: float = DEFAULT_THRESHOLD
    verify: Verify | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    max_pairs: int = DEFAULT_MAX_PAIRS
    clustering: Clustering = Clustering.REPRESENTATIVE
    group_pairs: int = DEFAULT_GROUP_PAIRS
    audit: bool = False
    check_pairs: bool = False
    plan: str | None = None
    keep: Keep = DEFAULT_KEEP
    protect: tuple[str, ...] = ()
    index: str | None = None
    report: str | None = None
    """Also write a self-contained HTML report of the run to this file."""
    kept: str | None = None
    """Records: write the kept ones, whole and unchanged, to this file (the input's format)."""
    dropped: str | None = None
    """Records: write the dropped ones, each with what it duplicates, to this file."""
    annotated: str | None = None
    """Records: write every one, with its fate added, to this file."""
    keep_by: str | None = None
    """Records: keep the one whose field is largest (``FIELD:max``) or smallest."""
    annotation_field: str | None = None
    """Records: the key (the prefix of the Parquet columns) of a record's fate, when asked."""
    against: str | None = None
    """Decontamination: flag (drop) what comes near this reference set (:func:`check_against`)."""
    against_text_field: tuple[str, ...] = ()
    """Where REF's records keep their text (empty: as the input's)."""
    against_id_field: str | None = None
    """Where REF's records keep their id (None: as the input's)."""
    memory: Memory = Memory.AUTO
    """What records hold of each document: vectors, or fingerprints (read again)."""

    @property
    def verification(self) -> Verify:
        """The verification asked for, or the input's default: estimates where there are
        fingerprints alone (``--fingerprints``, or ``--against`` an index)."""
        if self.verify is not None:
            return self.verify
        fingerprints_only = self.source.kind is Input.FINGERPRINTS or (
            self.against is not None and is_index(self.against)
        )
        return Verify.ESTIMATE if fingerprints_only else Verify.EXACT

    @property
    def config(self) -> DedupeConfig:
        """The tuning of the search."""
        return DedupeConfig(
            blocks=AUTO if self.blocks is None else self.blocks,
            max_distance=self.max_distance,
            minhash=self.minhash,
            pilot=self.pilot,
            threshold=self.threshold,
            verify=self.verification,
            max_candidates=self.max_candidates,
            max_pairs=self.max_pairs,
            clustering=self.clustering,
            group_pairs=self.group_pairs,
            audit=self.audit,
        )

    @property
    def dataset(self) -> DatasetRequest | None:
        """The records to write, if any (``--kept``, ``--dropped``)."""
        if not self.writes_dataset:
            return None
        return DatasetRequest(
            self.source,
            Targets(
                self.kept,
                self.dropped,
                self.annotated,
                annotation=self.annotation_field or ANNOTATION,
            ),
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
        if self.dropped is not None or self.annotated is not None:
            reserved = self.annotation_field or ANNOTATION
            source = dataclasses.replace(
                source, fields=dataclasses.replace(source.fields, reserved=reserved)
            )
        return Job(source, self.reading, self.config, self.rereads_records)

    @property
    def outputs(self) -> dict[str, str | None]:
        """Every file the run may write, by parameter."""
        return {
            "output": self.output.path,
            "plan": self.plan,
            "report": self.report,
            **self._dataset_outputs,
            **{
                f"{name} (its metadata)": sidecar_of(path)
                for name, path in self._dataset_outputs.items()
                if path is not None and not is_parquet(path)
            },
        }

    def check(self) -> None:
        """Raises: UsageError, BadValueError: options that do not go together."""
        self._check_scheme()
        also = () if self.index is None else sidecars(self.index)
        refuse_output_over_input(self.source, self.outputs, also=also)
        if self.against is not None:
            check_against(self)
        self._check_dataset()
        self._check_keep()
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
            Need.AUDIT: self.audit,
            Need.EMPTY_DOCUMENTS: self.reading.admission.include_empty,
            Need.TFIDF: self.reading.weighting.corpus_wide,
            Need.MINHASH: self.minhash is not None,
            Need.EVERY_PAIR: self.blocks == "every",
        }
        return [need for need, wanted in asked.items() if wanted]

    def _check_scheme(self) -> None:
        named = {
            "blocks": self.blocks is not None,
            "max_distance": self.max_distance is not None,
            "minhash": self.minhash is not None,
        }
        chosen = [name for name, given in named.items() if given]
        # MinHash with one fingerprint scheme is a union of the two; any other two are not.
        union = chosen == ["blocks", "minhash"] and isinstance(self.blocks, int)
        union |= chosen == ["max_distance", "minhash"]
        if len(chosen) > 1 and not union:
            listed = " and ".join(f"{{{name}}}" for name in chosen)
            count = "two" if len(chosen) == 2 else "three"
            raise UsageError(f"{listed} are {count} schemes: choose one", parameters=tuple(chosen))
        if self.blocks == "every" and (
            self.source.kind is Input.FINGERPRINTS
            or self.index is not None
            or self.verification is not Verify.EXACT
        ):
            raise UsageError(
                "{blocks} every computes true cosines: give files, {texts} or {vectors} (not "
                "{fingerprints} or {index}), verified exactly",
                parameters=("blocks", "texts", "vectors", "fingerprints", "index"),
            )
        if self.minhash is not None and (
            self.source.kind in (Input.VECTORS, Input.FINGERPRINTS) or self.index is not None
        ):
            raise UsageError(
                "{minhash} hashes the words of each document: give files or {texts} (not "
                "{vectors}, {fingerprints} or {index})",
                parameters=("minhash", "texts", "vectors", "fingerprints", "index"),
            )
        if self.minhash is not None and self.verification is not Verify.EXACT:
            raise UsageError(
                "{minhash} candidates are checked by true cosine: leave out {verify} estimate",
                parameters=("minhash", "verify"),
            )
        # The width is known before reading unless the records say it themselves.
        if self.source.kind is Input.FINGERPRINTS:
            return
        width = self.reading.bits
        if self.max_distance is not None and self.max_distance >= width:
            raise BadValueError(
                f"must be below the fingerprint width ({width})", parameter="max_distance"
            )
        if isinstance(self.blocks, int) and width % self.blocks:
            raise BadValueError(
                f"must divide the fingerprint width ({width}) evenly, not {self.blocks}",
                parameter="blocks",
            )

    @property
    def _dataset_outputs(self) -> dict[str, str | None]:
        return {"kept": self.kept, "dropped": self.dropped, "annotated": self.annotated}

    @property
    def writes_dataset(self) -> bool:
        """Whether records are written (``--kept``, ``--dropped``, ``--annotated``)."""
        return any(path is not None for path in self._dataset_outputs.values())

    @property
    def keep_rule(self) -> KeepRule:
        """Which member of each cluster is kept (``--keep``, ``--keep-by``, ``--protect``)."""
        by = None if self.keep_by is None else KeepBy.parse(self.keep_by)
        return KeepRule(self.keep, by, self.protect, self.source)

    def _check_dataset(self) -> None:
        if self.writes_dataset:
            if self.plan is not None or self.index is not None:
                raise UsageError(
                    "{kept} and {dropped} go without {plan} and {index}",
                    parameters=("kept", "dropped", "plan", "index"),
                )
            check_dataset(self.source, self._dataset_outputs, self.annotation_field or ANNOTATION)
        if self.annotation_field is not None:
            if self.dropped is None and self.annotated is None:
                raise UsageError(
                    "{annotation_field} names the fate that {dropped} and {annotated} add",
                    parameters=("annotation_field", "dropped", "annotated"),
                )
            if not self.annotation_field or not self.annotation_field.isprintable():
                raise BadValueError(
                    f"{self.annotation_field!r}: a key is a name of printable characters",
                    parameter="annotation_field",
                )

    def _check_keep(self) -> None:
        """The keep rule applies to what this run reads: file rules to files read in it, the
        length of a text to files or a file of ``--texts``, a field to records."""
        files = self.source.kind is Input.PATHS and self.index is None
        again = self.source.location not in (None, STDIN)  # records read again
        if self.keep in FILE_RULES and not files:
            raise BadValueError(
                f"--keep {self.keep.value} compares the files read in this run: give PATHs "
                "(without --index); records are kept by central, first, longest or --keep-by "
                "FIELD:max",
                parameter="keep",
            )
        texts = self.source.kind is Input.TEXTS and again
        if self.keep is Keep.LONGEST and not (files or texts):
            raise BadValueError(
                "--keep longest compares sizes: of files, or of texts in a --texts FILE (read "
                "again for them)",
                parameter="keep",
            )
        if self.keep_by is not None:
            if self.source.kind not in (Input.TEXTS, Input.VECTORS) or not again:
                raise UsageError(
                    "{keep_by} keeps the record with a field's extreme: give {texts} or "
                    "{vectors} FILE (read again for the field)",
                    parameters=("keep_by", "texts", "vectors"),
                )
            if self.keep is not DEFAULT_KEEP:
                raise UsageError(
                    "{keep_by} picks the kept record instead of {keep}: give one of them",
                    parameters=("keep_by", "keep"),
                )
            KeepBy.parse(self.keep_by)

    def _check_plan(self) -> None:
        if self.plan is None and self.protect:
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
            and not self.audit
            and self.against is None
            and not self.engine.is_dask
            and self.blocks != "every"
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
        if self.audit or self.source.is_records:
            raise UsageError(
                "{index} keeps the fingerprints of files: it goes with PATHs, without {audit} "
                "(which needs every document's vector)",
                parameters=("index", "audit"),
            )
        if self.source.empty:
            raise UsageError("{index} needs PATHs", parameters=("index",))
