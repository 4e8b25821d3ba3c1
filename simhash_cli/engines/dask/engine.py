"""The dask engine as the application sees it (:class:`~simhash_cli.app.engine.Engine`): its
mapper runs batches as tasks, and it is its own remote search
(:class:`~simhash_cli.app.engine.RemoteSearch`): a dedupe reads where the data is (files and
record files on the workers; standard input here, then sent) and searches on the cluster."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from ...app.batches import Mapper
from ...app.engine import Job, Need
from ...app.hooks import Hooks
from ...app.loading import holds_vectors, load_records, report_passed_over
from ...app.settings import EngineChoice, Input, Source, capped_jobs
from ...core.against import KeyedRows
from ...core.corpus import Corpus, Settings
from ...core.pipeline import check_config
from ...core.result import DedupeResult
from ...core.text.vectorize import Weighting
from ...io.sinks.formats import counted
from ...io.sources.files import STDIN
from . import fetching, search, tfidf
from .cluster import Cluster, connect, mapper
from .reading import OnCluster, check_source, read_paths, read_records, send_corpus

__all__ = ["DaskEngine", "session"]


class DaskEngine:
    """A Dask cluster the application's run functions work on.

    It refuses fingerprints of a whole corpus at once and the index (one SQLite file).
    MinHash, every pair, tf-idf, the audit, empty documents and standard input are taken: the
    workers sign their documents, the vectors a scheme (or the audit, of a few thousand
    documents) needs are fetched, document frequencies are summed over the partitions before
    they are weighted, the empty documents are set aside on the workers and paired here, and
    what is read from standard input is read here and sent.
    """

    refused: ClassVar[frozenset[Need]] = frozenset(Need) - {
        Need.MINHASH,
        Need.EVERY_PAIR,
        Need.TFIDF,
        Need.AUDIT,
        Need.EMPTY_DOCUMENTS,
    }

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    @property
    def mapper(self) -> Mapper:
        """Each batch a task on the cluster, results in order."""
        return mapper(self.cluster)

    @property
    def remote(self) -> DaskEngine:
        """Itself: its documents stay on the workers that read them, and are searched there."""
        return self

    def dedupe(self, job: Job, hooks: Hooks) -> DedupeResult:
        """Files and record files read by the workers; records from standard input read here
        and sent; then the local engine's answer (:func:`.search.dedupe`)."""
        source, config = job.source, job.config
        if source.is_records and source.location == STDIN:
            docs = load_records(source, job.reading, hooks)
            check_config(docs, config, has_vectors=docs.weights is not None)
            kept = holds_vectors(source, job.reading, job.vectors_needed)
            fingerprinted = send_corpus(self.cluster, docs, keep_vectors=kept)
        else:
            fingerprinted = self._read(job, hooks)
        if fingerprinted.vectors:  # says itself what it is doing, step by step
            return search.dedupe(self.cluster, fingerprinted, config, hooks)
        n = len(fingerprinted.docs)
        with hooks.status(f"finding and verifying candidates among {n:,} fingerprints"):
            return search.dedupe(self.cluster, fingerprinted, config, hooks)

    def documents(self, job: Job, hooks: Hooks) -> tuple[Corpus, KeyedRows | None]:
        """Read by the workers, each one's vectors kept there for exact verification and
        fetched for the rows asked (records from standard input are read here)."""
        source = job.source
        if source.is_records and source.location == STDIN:
            return load_records(source, job.reading, hooks), None
        fingerprinted = self._read(job, hooks)
        rows = fetching.keyed_taker(self.cluster, fingerprinted) if fingerprinted.vectors else None
        return fingerprinted.docs, rows

    def _read(self, job: Job, hooks: Hooks) -> OnCluster:
        """The documents read, fingerprinted and held by the workers: for tf-idf, counted
        first, then weighted over them all (:mod:`.tfidf`)."""
        settings = job.reading.settings_for(job.source.kind)
        # The vectors the local engine would hold (it plans MinHash schemes on them).
        keep = holds_vectors(job.source, job.reading, job.vectors_needed)
        if not settings.corpus_wide or job.source.kind is Input.FINGERPRINTS:
            return self._read_as(job, hooks, settings, keep)
        counted = self._read_as(
            job, hooks, dataclasses.replace(settings, weighting=Weighting.TF), True
        )
        with hooks.status("weighting the documents by tf-idf on the workers"):
            return tfidf.weighted(self.cluster, counted, settings, keep_vectors=keep)

    def _read_as(self, job: Job, hooks: Hooks, settings: Settings, keep: bool) -> OnCluster:
        if job.source.is_records:
            return self._read_records(job, hooks, settings, keep)
        return self._read_paths(job, hooks, settings, keep)

    def _read_paths(self, job: Job, hooks: Hooks, settings: Settings, keep: bool) -> OnCluster:
        reading = job.reading
        with hooks.progress("reading files") as progress:
            return read_paths(
                self.cluster,
                job.source.paths,
                settings=settings,
                keep_vectors=keep,
                policy=reading.policy,
                on_event=hooks.event,
                on_listed=progress.on_listed,
                on_read=progress.on_read,
                admission=reading.admission,
            )

    def _read_records(self, job: Job, hooks: Hooks, settings: Settings, keep: bool) -> OnCluster:
        source, reading = job.source, job.reading
        assert source.location is not None
        stored = source.kind is Input.FINGERPRINTS
        if stored:
            settings = Settings()  # the records say theirs
        report_passed_over(source, hooks)
        with hooks.status(f"reading {source.location} on the cluster"):
            return read_records(
                self.cluster,
                source.location,
                source.kind.value,
                settings=settings,
                keep_vectors=keep,
                on_event=hooks.event,
                skip_bad_lines=source.skip_bad_lines,
                check_settings=reading.check_recorded if stored else None,
                max_line=reading.policy.max_bytes,
                fields=source.fields,
                admission=reading.admission,
            )


@contextmanager
def session(
    choice: EngineChoice, hooks: Hooks, source: Source | None = None
) -> Iterator[DaskEngine]:
    """The cluster ``choice`` names (a new local one, or ``scheduler``'s), said on stderr,
    closed on exit. A record file the workers are to read is looked for first: a missing one
    fails before any cluster starts."""
    if source is not None and source.is_records and source.location not in (None, STDIN):
        check_source(source.location)
    workers = choice.workers
    if choice.scheduler is None and workers is not None:
        # A local worker per core at most: more compete for the same cores, each with its
        # own memory (64 of them on 2 cores took 6.4 GB to do the work of 2).
        workers, capped = capped_jobs(workers, "worker", ("worker", "workers"))
        if capped:
            hooks.info(f"note: {capped}")
    with connect(choice.scheduler, workers) as cluster:
        where = "local cluster" if cluster.owned else f"cluster at {choice.scheduler}"
        dashboard = f", dashboard {cluster.dashboard}" if cluster.dashboard else ""
        hooks.info(f"dask: {where} of {counted(cluster.workers, 'worker')}{dashboard}")
        yield DaskEngine(cluster)
