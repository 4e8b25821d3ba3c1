"""One typed, frozen request per command; ``check()`` states every rule between its options, once,
and runs before any work (a long read must never end in a usage error).

The command line builds a request from its options and hands it to a run function of
:mod:`.run` (or of :mod:`simhash_cli.index.run`); a library caller can build one directly.
``simhash explain``'s request is beside its run, in :mod:`.explaining`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from ..core.blocking import DEFAULT_MAX_CANDIDATES
from ..core.calibrate import DEFAULT_MAX_DOCS
from ..core.config import AUTO, DEFAULT_GROUP_PAIRS, DEFAULT_MAX_PAIRS, DedupeConfig
from ..core.cosines import Verify
from ..core.groups import Clustering
from ..core.vectorize import Weighting
from ..errors import BadValueError, UsageError
from ..io.sinks.dataset import ANNOTATION, Targets, sidecar_of
from ..io.sinks.formats import Output
from ..io.sinks.report import check_report_engine
from ..io.sources.files import STDIN
from ..io.sources.parquet import is_parquet
from ..io.sources.shards import compression_of, shards_of
from .actions.plans import Keep
from .against import check_against
from .datasets import KeepBy, check_dataset
from .engine import Job, Need
from .guard import refuse_output_over_input, sidecars
from .memory import physical_memory
from .settings import (
    COMPRESSED_RATIO,
    VECTOR_BYTES_PER_BYTE,
    EngineChoice,
    Input,
    Memory,
    Reading,
    Source,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "CalibrateRequest",
    "CompareRequest",
    "DatasetRequest",
    "DedupeRequest",
    "FingerprintRequest",
    "PlanRequest",
    "SurveyRequest",
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


def _check_records(source: Source, reading: Reading) -> None:
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
        _check_records(self.source, self.reading)
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
class DatasetRequest:
    """``dedupe --kept FILE`` / ``--dropped FILE``: where the records go, and the rule that
    picks each cluster's kept one."""

    source: Source
    targets: Targets
    keep: Keep = Keep.FIRST
    by: KeepBy | None = None
    rule: str = Keep.FIRST.value
    max_line: int | None = None


@dataclass(frozen=True)
class PlanRequest:
    """``dedupe --plan FILE``: what would be done with each cluster, written to ``path``."""

    path: str
    keep: Keep = Keep.OLDEST
    protect: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    """The paths scanned: no step of the plan may act outside them."""


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
        keep: with ``plan``: the rule for the kept file, when asked.
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
    keep: Keep | None = None
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
    """Decontamination: flag (drop) what comes near this reference set (:mod:`.against`)."""
    against_text_field: tuple[str, ...] = ()
    """Where REF's records keep their text (empty: as the input's)."""
    against_id_field: str | None = None
    """Where REF's records keep their id (None: as the input's)."""
    memory: Memory = Memory.AUTO
    """What records hold of each document: vectors, or fingerprints (read again)."""

    @property
    def verification(self) -> Verify:
        """The verification asked for, or the input's default."""
        if self.verify is not None:
            return self.verify
        return Verify.ESTIMATE if self.source.kind is Input.FINGERPRINTS else Verify.EXACT

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
        by = None if self.keep_by is None else KeepBy.parse(self.keep_by)
        return DatasetRequest(
            self.source,
            Targets(
                self.kept,
                self.dropped,
                self.annotated,
                annotation=self.annotation_field or ANNOTATION,
            ),
            self.keep or Keep.FIRST,
            by,
            self.keep_rule,
            self.reading.policy.max_bytes,
        )

    @property
    def plan_request(self) -> PlanRequest | None:
        """The action plan asked for, if any."""
        if self.plan is None:
            return None
        return PlanRequest(
            self.plan, self.keep or Keep.OLDEST, self.protect, tuple(self.source.paths)
        )

    @property
    def vectors_needed(self) -> bool:
        """Whether the documents' vectors must be kept (exact verification, an audit)."""
        return self.job.vectors_needed

    @property
    def job(self) -> Job:
        """What an engine is handed: the source, the reading and the search."""
        return Job(self.source, self.reading, self.config, self.rereads_records)

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
        if self.report is not None:
            check_report_engine()
        self._check_plan()
        _check_records(self.source, self.reading)
        self._check_index()
        self._check_memory()
        if self.index is None:
            self.source.require((Input.VECTORS, Input.TEXTS, Input.FINGERPRINTS))

    def needs(self) -> list[Need]:
        """What this request needs of an engine, in the order a refusal names them."""
        asked = {
            Need.INDEX: self.index is not None,
            Need.AUDIT: self.audit,
            Need.EMPTY_DOCUMENTS: self.reading.include_empty,
            Need.STDIN_PATH: self.source.reads_stdin_path,
            Need.TFIDF: self.reading.weighting is Weighting.TFIDF,
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
    def keep_rule(self) -> str:
        """The rule that picks each cluster's kept record, as the metadata records it."""
        return self.keep_by or (self.keep or Keep.FIRST).value

    def _check_dataset(self) -> None:
        if self.keep_by is not None and (not self.writes_dataset or self.keep is not None):
            raise UsageError(
                "{keep_by} picks the kept record for {kept}, {dropped} or {annotated}, instead "
                "of {keep}",
                parameters=("keep_by", "kept", "dropped", "annotated", "keep"),
            )
        if self.writes_dataset:
            if self.plan is not None or self.index is not None:
                raise UsageError(
                    "{kept} and {dropped} go without {plan} and {index}",
                    parameters=("kept", "dropped", "plan", "index"),
                )
            check_dataset(
                self.source, self._dataset_outputs, self.keep, self.annotation_field or ANNOTATION
            )
        if self.keep_by is not None:
            KeepBy.parse(self.keep_by)
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

    def _check_plan(self) -> None:
        loose_keep = self.keep is not None and not self.writes_dataset
        if self.plan is None and (self.protect or loose_keep):
            raise UsageError(
                "{keep} and {protect} go with {plan} FILE", parameters=("keep", "protect", "plan")
            )
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
            and self.reading.weighting is not Weighting.TFIDF
            and not self.reading.include_empty
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
            _check_records(self.source, self.reading)
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
        _check_records(self.source, self.reading)
        refuse_output_over_input(self.source, {"output": self.output.path})
