"""The keep rule a request asks for (``--keep``, ``--keep-by``, ``--protect``) and its rules
against what the run reads: what ``dedupe`` and ``index dedupe`` share."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import BadValueError, UsageError
from ...io.sources.files import STDIN
from ..choices import Input
from ..settings import Source
from . import DEFAULT_KEEP, FILE_RULES, Keep
from .rule import KeepBy, KeepRule

__all__ = ["KeepRequest"]


@dataclass(frozen=True)
class KeepRequest:
    """Which member of each cluster is kept.

    Attributes:
        keep: the rule (``--keep``).
        keep_by: records: keep the one whose field is largest (``FIELD:max``) or smallest.
        protect: with a plan: the files never marked for removal, kept by their cluster.
    """

    keep: Keep = DEFAULT_KEEP
    keep_by: str | None = None
    protect: tuple[str, ...] = ()

    def rule(self, source: Source | None = None) -> KeepRule:
        """The rule, for the documents ``source`` names (None: stored files)."""
        by = None if self.keep_by is None else KeepBy.parse(self.keep_by)
        return KeepRule(self.keep, by, self.protect, source)

    @property
    def named(self) -> bool:
        """Whether a rule other than the default was asked for."""
        return self.keep is not DEFAULT_KEEP or self.keep_by is not None

    def check_read(self, source: Source, *, index: bool) -> None:
        """The rule applies to what this run reads: file rules to files read in it (not
        through an ``index``), the length of a text to files or a file of ``--texts``, a
        field to records.

        Raises:
            BadValueError, UsageError: a rule that what is read cannot answer.
        """
        files = source.kind is Input.PATHS and not index
        again = source.location not in (None, STDIN)  # records read again
        if self.keep in FILE_RULES and not files:
            raise BadValueError(
                f"--keep {self.keep.value} compares the files read in this run: give PATHs "
                "(without --index); records are kept by central, first, longest or --keep-by "
                "FIELD:max",
                parameter="keep",
            )
        texts = source.kind is Input.TEXTS and again
        if self.keep is Keep.LONGEST and not (files or texts):
            raise BadValueError(
                "--keep longest compares sizes: of files, or of texts in a --texts FILE (read "
                "again for them)",
                parameter="keep",
            )
        if self.keep_by is not None:
            if source.kind not in (Input.TEXTS, Input.VECTORS) or not again:
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

    def check_stored(self, *, read_again: bool) -> None:
        """The rule applies to an index's stored files: those that compare files only when
        they are ``read_again`` (exact verification).

        Raises:
            BadValueError: a file rule, or longest, on fingerprints alone.
        """
        if self.keep in (*FILE_RULES, Keep.LONGEST) and not read_again:
            raise BadValueError(
                f"--keep {self.keep.value} compares the stored files as they are: add "
                "--verify exact, which reads them again",
                parameter="keep",
            )
