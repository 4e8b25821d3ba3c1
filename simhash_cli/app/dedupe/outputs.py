"""What a dedupe writes besides its pairs, as its request names them: the dataset's records
(:class:`DatasetRequest`), and with the action plan (a
:class:`~simhash_cli.app.plans.request.PlanRequest`) and the report page, :class:`AfterRun`,
each written after the run by :func:`~.run.after_run`."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import BadValueError, UsageError
from ...io.sinks.dataset import ANNOTATION, Targets
from ...io.sources.snapshot import Snapshot
from ..keep import DEFAULT_KEEP
from ..plans.request import PlanRequest
from ..settings import Source
from .datasets import check_dataset


@dataclass(frozen=True)
class DatasetRequest:
    """``dedupe --kept FILE`` / ``--dropped FILE``: where the records go, and the name of the
    rule that kept them."""

    source: Source
    targets: Targets
    rule: str = DEFAULT_KEEP.value
    max_line: int | None = None


@dataclass(frozen=True)
class DatasetOutputs:
    """``--kept``, ``--dropped`` and ``--annotated`` FILE, and the key a record's fate is
    added under (``--annotation-field``), as asked.

    Attributes:
        kept: write the kept records, whole and unchanged, to this file (the input's format).
        dropped: write the dropped ones, each with what it duplicates, to this file.
        annotated: write every one, with its fate added, to this file.
        annotation_field: the key (the prefix of the Parquet columns) of a record's fate.
    """

    kept: str | None = None
    dropped: str | None = None
    annotated: str | None = None
    annotation_field: str | None = None

    @property
    def files(self) -> dict[str, str | None]:
        """The files, by parameter."""
        return {"kept": self.kept, "dropped": self.dropped, "annotated": self.annotated}

    @property
    def asked(self) -> bool:
        """Whether records are written."""
        return any(path is not None for path in self.files.values())

    @property
    def annotation(self) -> str:
        """The key a record's fate is added under."""
        return self.annotation_field or ANNOTATION

    @property
    def adds_fate(self) -> bool:
        """Whether a record's fate is added to it (``--dropped``, ``--annotated``): the
        records read must not hold :attr:`annotation` already."""
        return self.dropped is not None or self.annotated is not None

    def targets(self) -> Targets:
        """Where the records go."""
        return Targets(self.kept, self.dropped, self.annotated, annotation=self.annotation)

    def check(self, source: Source, *, plan: bool, index: bool) -> None:
        """Raises: UsageError, BadValueError: records that cannot be copied from ``source``,
        with a ``plan`` or an ``index``, or a key that names no fate."""
        if self.asked:
            if plan or index:
                raise UsageError(
                    "{kept} and {dropped} go without {plan} and {index}",
                    parameters=("kept", "dropped", "plan", "index"),
                )
            check_dataset(source, self.files, self.annotation)
        if self.annotation_field is not None:
            if not self.adds_fate:
                raise UsageError(
                    "{annotation_field} names the fate that {dropped} and {annotated} add",
                    parameters=("annotation_field", "dropped", "annotated"),
                )
            if not self.annotation_field or not self.annotation_field.isprintable():
                raise BadValueError(
                    f"{self.annotation_field!r}: a key is a name of printable characters",
                    parameter="annotation_field",
                )


@dataclass(frozen=True)
class AfterRun:
    """What a dedupe writes besides its pairs, each when asked: the action plan, the report
    page (its file, and what the run read) and the dataset's records (with the input as it was
    before the run, to copy them from)."""

    plan: PlanRequest | None = None
    page: tuple[str, Source] | None = None
    dataset: tuple[DatasetRequest, Snapshot] | None = None
