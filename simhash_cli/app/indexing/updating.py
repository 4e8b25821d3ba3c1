"""An index of files kept up to date, as the index commands and ``dedupe --index`` both use
it: the index opened for adding, the files added (only new and changed ones read), how files
are read to be compared with it, and the search on what it stores."""

from __future__ import annotations

from ...core.config import DedupeConfig
from ...core.corpus import Corpus, Settings
from ...core.pipeline import dedupe
from ...core.result import DedupeResult
from ...index.store import Store
from ...index.writing import Writer
from ...io.sources.files import DEFAULT_POLICY, ReadPolicy
from ..engine import Engine
from ..hooks import Hooks
from ..settings import Reading
from .adding import (
    AddReport,
    add_files,
    open_for_adding,
)

__all__ = [
    "add_files_of",
    "open_index",
    "reading_of",
    "say_added",
    "searched",
]


def say_added(db: str, report: AddReport, store: Store, hooks: Hooks) -> None:
    """The line that says what an add did to ``db``."""
    hooks.info(
        f"{db}: {report.new:,} new, {report.updated:,} updated, "
        f"{report.unchanged:,} unchanged (not read), {len(report.removed):,} removed, "
        f"{len(report.skipped):,} skipped; {store.count():,} documents stored"
    )


def add_files_of(
    writer: Writer, paths: tuple[str, ...], reading: Reading, engine: Engine, hooks: Hooks
) -> AddReport:
    """The files of ``paths`` added to the index on the engine's mapper, a bar shown."""
    with hooks.progress("reading files") as progress:
        return add_files(
            writer,
            paths,
            on_event=hooks.event,
            on_listed=progress.on_listed,
            on_read=progress.on_read,
            jobs=reading.jobs,
            policy=reading.policy,
            mapper=engine.mapper,
        )


def open_index(db: str, reading: Reading, default: Settings) -> Writer:
    """The index, made with ``default`` if missing; one that exists must hold fingerprints
    made with the settings the user named (if any)."""
    return open_for_adding(db, default if reading.settings_given else None, default)


def reading_of(
    settings: Settings, *, jobs: int = 1, policy: ReadPolicy = DEFAULT_POLICY
) -> Reading:
    """How documents are read to be compared with an index made with ``settings``: its
    bits and seed, and for files its tokenizer and weighting (read as ``policy`` says)."""
    return Reading(jobs=jobs, policy=policy).adopting(settings)


def searched(docs: Corpus, config: DedupeConfig, hooks: Hooks) -> DedupeResult:
    """The search on the stored documents (read again, for exact verification), here."""
    with hooks.status(f"finding and verifying candidates among {len(docs):,} documents"):
        return dedupe(docs, config)
