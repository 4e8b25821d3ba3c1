"""``simhash dedupe``'s run, and what follows it: the search (here, on a cluster's remote
search, or through the index), the clusters made around what the keep rule keeps, then what is
written besides the pairs (the plan, the report page, the dataset's records). The face hands the
pairs and the summary to io between the two."""

from __future__ import annotations

import json
from typing import Any

from ...core.clusters.groups import Clustering
from ...core.pipeline import dedupe
from ...core.result import DedupeResult
from ...errors import InputError
from ...io.sinks.atomic import atomic_output
from ...io.sinks.dataset import Tally
from ...io.sources.snapshot import Snapshot
from ..engine import Engine, Job
from ..hooks import Hooks
from ..keep import Keep
from ..keep.rule import kept
from ..loading import load
from ..plans.document import make_plan
from ..plans.request import PlanRequest
from ..plans.seal import SEAL_FIELD, seal
from .datasets import first_reading, write_dataset
from .outputs import AfterRun, DatasetRequest
from .report import write_report
from .request import DedupeRequest
from .rereading import dedupe_records_rereading
from .through_index import dedupe_through_index


def before_run(dataset: DatasetRequest | None, hooks: Hooks) -> Snapshot | None:
    """The records' input as it is before the run reads it, when a dataset is to be copied
    from it (:func:`~.datasets.first_reading`)."""
    return None if dataset is None else first_reading(dataset.source, hooks)


def dedupe_documents(request: DedupeRequest, engine: Engine, hooks: Hooks) -> DedupeResult:
    """``simhash dedupe`` here (batches on the engine's mapper), on the engine's remote search
    (a cluster), or through ``--index``: its clusters made around what its keep rule keeps
    (:func:`kept`)."""
    if request.index:
        result = dedupe_through_index(request, engine, hooks)
    elif engine.remote is not None:
        result = engine.remote.dedupe(request.job, hooks)
    else:
        result = dedupe_here(request.job, engine, hooks)
    return kept(result, request.keep_rule)


def dedupe_here(job: Job, engine: Engine, hooks: Hooks) -> DedupeResult:
    """The documents read into this process (fingerprints streamed when no vectors are
    needed; records held as fingerprints and read again when ``--memory`` says so), then
    searched here."""
    if job.rereads_records:
        return dedupe_records_rereading(job.source, job.reading, job.config, hooks)
    docs = load(job.source, job.reading, engine, hooks, vectors_needed=job.vectors_needed)
    with hooks.status(f"finding and verifying candidates among {len(docs):,} documents"):
        return dedupe(docs, job.config)


def after_run(result: DedupeResult, after: AfterRun, hooks: Hooks) -> Tally | None:
    """What follows the pairs: the plan written, the report page (with the plan's actions),
    the dataset's records copied by their fate. Returns the dataset's tally, if one was
    written."""
    document = None if after.plan is None else write_plan(result, after.plan, hooks)
    if after.page is not None:
        path, source = after.page
        write_report(result, source, path, hooks, plan=document)
    if after.dataset is None:
        return None
    records, before = after.dataset
    return write_dataset(
        result,
        records.source,
        records.targets,
        hooks,
        rule=records.rule,
        max_line=records.max_line,
        before=before,
    )


def write_plan(result: DedupeResult, plan: PlanRequest, hooks: Hooks) -> dict[str, Any]:
    """``dedupe --plan FILE``: what would be done with each cluster, written whole or not at
    all; nothing is changed. Returns the plan written."""
    docs = result.corpus
    if docs.stamps is None:  # refused before reading (DedupeRequest.check)
        raise InputError("{plan} needs the files read in this run", parameters=("plan",))
    document = make_plan(
        docs.ids,
        docs.fingerprints,
        docs.stamps.tolist(),
        docs.settings.bits,
        result.clusters,
        keep=plan.rule.keep,
        roots=plan.roots,
        protect=plan.rule.protect,
        # The threshold too: an unsealed plan's pairs are checked at it (apply/near.py).
        settings={**docs.settings.names(), "threshold": result.config.threshold},
        # The clusters were made around their kept member (every one for central, whose
        # order the plan cannot compute again from the files).
        representatives=(
            result.groups.representative.tolist()
            if result.groups.kind is Clustering.REPRESENTATIVE or plan.rule.keep is Keep.CENTRAL
            else None
        ),
    )
    document[SEAL_FIELD], unsealed = seal(document)
    if unsealed:
        hooks.info(
            f"warning: the plan is not sealed ({unsealed}): simhash apply will act on it only "
            "inside the roots given with --root"
        )
    with atomic_output(plan.path) as out:
        # ASCII escapes: a file name that is not UTF-8 survives as \udcXX, as JSON allows.
        out.write(json.dumps(document, ensure_ascii=True, indent=2) + "\n")
    actions = [f["action"] for c in document["clusters"] for f in c["files"]]
    hooks.info(
        f"plan written to {plan.path}: {len(document['clusters']):,} clusters, "
        f"{actions.count('remove'):,} files to remove, {actions.count('protected'):,} protected "
        "(nothing was changed)"
    )
    return document
