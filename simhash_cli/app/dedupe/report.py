"""``dedupe --report FILE``: what a reviewer browses, gathered from a run.

The model is plain data (numbers, strings, lists) that :mod:`simhash_cli.io.sinks.report`
writes as one self-contained HTML page: the run's summary, the cosines of the flagged pairs and
of the corpus's chance pairs, the scheme's S-curve, and the clusters largest first, each
member with its cosine to the one kept, an explanation against it and a word diff. The texts
are read again for the diffs (files, and ``--texts`` records from a file); standard input
cannot be, so its report has no diffs and says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ...core.corpus import Corpus, given_ids
from ...core.explain import PAGE_BLOCKS, explained
from ...core.result import DedupeResult
from ...core.search import blocking
from ...core.sketch.fingerprint import hamming_rows
from ...core.text.vectorize import vectorize
from ...core.verify.ambiguity import chance_sample
from ...core.verify.cosines import cosine_pairs
from ...io.sinks.atomic import atomic_output
from ...io.sinks.explain import explanation_record
from ...io.sinks.formats import counted
from ...io.sinks.records import summary_record
from ...io.sinks.report import render_report
from ...io.sources.files import STDIN, read_documents
from ...io.sources.records import TextRecord
from ..hooks import Hooks
from ..records import find_records
from ..settings import Input, Source

__all__ = ["CHANCE_PAIRS", "MAX_TEXT", "report_model", "write_report"]

CHANCE_PAIRS = 4_000
"""Random pairs of documents in different groups whose cosines are drawn."""

MAX_TEXT = 20_000
"""Characters of each document diffed in a report (its size grows with them)."""

BINS = 50
CURVE_POINTS = 101


def write_report(
    result: DedupeResult,
    source: Source,
    path: str,
    hooks: Hooks,
    *,
    plan: dict[str, Any] | None = None,
) -> None:
    """``dedupe --report FILE``: the page written whole or not at all."""
    model = report_model(result, source, hooks, plan=plan)
    clusters, documents = counted(len(result.clusters), "cluster"), len(result.corpus)
    title = f"simhash dedupe: {clusters} among {counted(documents, 'document')}"
    page = render_report(model, title)
    with atomic_output(path) as out:
        out.write(page)
    hooks.info(f"report written to {path}: open it in a browser")


def report_model(
    result: DedupeResult,
    source: Source,
    hooks: Hooks,
    *,
    plan: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything the page shows, as plain data.

    Args:
        result: the run (its clusters as the plan made them, when there is a plan).
        source: what the run read (to read the members' texts again).
        hooks: told what is happening.
        plan: the plan written with the run (``dedupe --plan``), whose actions the page shows.
    """
    docs, groups = result.corpus, result.groups
    bits = docs.settings.bits
    notes: list[str] = []
    members = np.concatenate(groups.clusters) if groups.clusters else np.empty(0, np.int64)
    with hooks.status(f"reading the texts of {members.size:,} documents for the report"):
        texts = _texts(source, [docs.ids[m] for m in members.tolist()], notes)
    made = None
    if (
        docs.weights is None
        and texts
        and docs.settings.weighting is not None
        and not docs.settings.corpus_wide
    ):
        # Weights that depend on their document alone: made again from the texts.
        assert docs.settings.tokenizer is not None and docs.settings.weighting is not None
        ordered = [m for m in members.tolist() if docs.ids[m] in texts]
        matrix, features = vectorize(
            [texts[docs.ids[m]] for m in ordered],
            tokenizer=docs.settings.tokenizer,
            weighting=docs.settings.weighting,
        )
        rows = np.full(len(docs), -1, dtype=np.int64)
        rows[np.asarray(ordered, dtype=np.int64)] = np.arange(len(ordered))
        made = (matrix, features, rows)
    elif docs.weights is None:
        notes.append("no vectors were kept, so no feature is listed")
    schemes = (result.scheme.blocks,) if result.scheme.kind == "blocks" else PAGE_BLOCKS
    actions = _actions(plan)
    ids = given_ids(docs.ids)
    clusters: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    with hooks.status(f"explaining the members of {len(groups.clusters):,} clusters"):
        for number in range(len(groups.clusters)):
            order = groups.ordered(number).tolist()
            kept = order[0]
            listed = []
            for m in order:
                cosine = float(groups.cosine[m])
                member: dict[str, Any] = {
                    "id": ids[m],
                    "cosine": None if np.isnan(cosine) else round(cosine, 6),
                    "kept": m == kept,
                    # The plan names each file by its absolute path, the run as it was given.
                    "action": actions.get(os.path.abspath(docs.ids[m])),
                    "detail": None,
                }
                if m != kept:
                    member["detail"] = len(details)
                    details.append(_detail(docs, (kept, m), texts, made, schemes))
                listed.append(member)
            finite = [x["cosine"] for x in listed[1:] if x["cosine"] is not None]
            clusters.append(
                {
                    "number": number,
                    "size": len(order),
                    "least": min(finite) if finite else None,
                    "members": listed,
                }
            )
    clusters.sort(key=lambda c: (-c["size"], c["number"]))
    flagged = result.pairs.cosine if groups.exact else result.pairs.estimated_cosine
    flagged = flagged[np.isfinite(flagged)]
    chance = _chance_cosines(result)
    grid = np.linspace(0.0, 1.0, CURVE_POINTS)
    curve = np.asarray(result.scheme.probability(grid, bits), dtype=np.float64)
    return {
        "summary": summary_record(result),
        "settings": docs.settings.describe(),
        "scheme": result.scheme.label(bits),
        "threshold": result.config.threshold,
        "exact": groups.exact,
        "skipped": [{"id": s.id, "reason": s.reason} for s in docs.skipped[:1000]],
        "histogram": {
            "edges": np.linspace(0.0, 1.0, BINS + 1).round(4).tolist(),
            "flagged": _counts(flagged),
            "chance": None if chance is None else _counts(chance),
            "chance_measure": "true cosine" if docs.weights is not None else "estimated cosine",
        },
        "curve": {
            "cosine": grid.round(4).tolist(),
            "probability": curve.round(6).tolist(),
            "jaccard": result.scheme.rows is not None,
        },
        "clusters": clusters,
        "details": details,
        "plan": None if plan is None else {"keep": plan.get("keep"), "path": plan.get("path")},
        "notes": notes,
    }


def _counts(values: NDArray[np.float64]) -> list[int]:
    counts, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=BINS, range=(0.0, 1.0))
    return [int(c) for c in counts]


def _chance_cosines(result: DedupeResult) -> NDArray[np.float64] | None:
    """Cosines of random pairs of distinct fingerprints in different clusters (every such pair
    of a small corpus), true ones when the vectors are at hand, else estimates."""
    docs = result.corpus
    copies = blocking.collapse(docs.fingerprints, docs.settings.bits)
    rows = copies.representatives
    if rows.size < 3:
        return None
    # Each cluster one label, each document in none a label of its own.
    group = np.arange(len(docs), dtype=np.int64) + len(result.clusters)
    for number, members in enumerate(result.clusters):
        group[members] = number
    sample = chance_sample(rows, group, pairs=CHANCE_PAIRS, every=True)
    if docs.weights is not None and np.array_equal(np.diff(docs.weights.indptr), docs.n_features):
        cosine = cosine_pairs(docs.weights, sample, docs.column_order)
        return cosine[np.isfinite(cosine)]
    distance = hamming_rows(docs.fingerprints[sample[:, 0]], docs.fingerprints[sample[:, 1]])
    return np.cos(np.pi * distance / docs.settings.bits)


def _actions(plan: dict[str, Any] | None) -> dict[str, str]:
    """Each planned file's action (keep, remove, protected, skip), by its absolute path."""
    if plan is None:
        return {}
    return {
        str(f["path"]): str(f["action"])
        for cluster in plan.get("clusters", [])
        for f in cluster.get("files", [])
    }


def _detail(
    docs: Corpus,
    pair: tuple[int, int],
    texts: dict[str, str],
    made: tuple[sp.csr_array, list[str], NDArray[np.int64]] | None,
    schemes: tuple[int, ...],
) -> dict[str, Any]:
    """A member against the kept one (``pair``): the explanation and, when both texts are at
    hand, their diff (each text cut at MAX_TEXT characters). ``made``: weights made again for
    the report, their features and each document's row of them (-1: none)."""
    both = [texts.get(docs.ids[row]) for row in pair]
    given = None
    if both[0] is not None and both[1] is not None:
        given = (both[0][:MAX_TEXT], both[1][:MAX_TEXT])
    weights = features = None
    if made is not None:
        matrix, features, rows = made
        if rows[pair[0]] >= 0 and rows[pair[1]] >= 0:
            weights = matrix[[int(rows[pair[0]]), int(rows[pair[1]])]]
    explanation = explained(
        docs, pair, given, schemes=schemes, top=8, weights=weights, features=features
    )
    record = explanation_record(explanation)
    for key in ("a", "b", "diff", "diff_cut", *docs.settings.names()):
        record.pop(key, None)  # the page knows them already
    diff = explanation.diff
    return {
        "explain": record,
        # An unchanged stretch once, unless its spacing differs.
        "diff": None
        if diff is None
        else [
            [s.op[0], s.a] if s.op == "equal" and s.a == s.b else [s.op[0], s.a, s.b] for s in diff
        ],
        "cut": given is not None and any(t is not None and len(t) > MAX_TEXT for t in both),
    }


def _texts(source: Source, ids: Iterable[str], notes: list[str]) -> dict[str, str]:
    """The texts of ``ids`` read again: files, or ``--texts`` records of a file."""
    wanted = set(ids)
    if not wanted:
        return {}
    if source.kind is Input.PATHS:
        if STDIN in wanted:
            notes.append("standard input cannot be read again: its text is not shown")
        paths = sorted(wanted - {STDIN})
        return {d.id: d.text for d in read_documents(paths, lambda event: None)}
    if source.kind is Input.TEXTS:
        if source.location in (None, STDIN):
            notes.append("records from standard input cannot be read again: no text is shown")
            return {}
        if not os.path.isfile(source.location):
            notes.append(f"{source.location} is not one file: its texts are not read again")
            return {}
        found = find_records(source.location, "texts", wanted, fields=source.fields)
        return {doc_id: r.text for doc_id, r in found.items() if isinstance(r, TextRecord)}
    notes.append("vectors have no text: no diff is shown")
    return {}
