"""Results -> records: the documented keys of every command's JSON, JSON Lines and CSV output."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from ...core.clusters.groups import Groups
from ...core.comparison import Comparison
from ...core.corpus import Corpus, Settings, given_ids
from ...core.events import Skipped
from ...core.matches import Matches
from ...core.result import DedupeResult
from ...core.search.calibrate import Calibration
from ...core.search.pilot import Share
from ...core.search.pricing import PAGE_BLOCKS, Assessment, Survey, load
from ...core.sketch.fingerprint import estimate_cosine_rows, to_hex, to_int
from ...core.verify.ambiguity import NEAR, Spread
from .formats import Record, estimate_number, json_number, member_item, to_json, unicode_capable
from .summary import missed_pairs

__all__ = [
    "budget_advice",
    "calibration_record",
    "cluster_records",
    "comparison_record",
    "dedupe_document",
    "fingerprint_lines",
    "fingerprint_records",
    "iter_cluster_records",
    "iter_member_rows",
    "iter_pair_records",
    "match_records",
    "pair_records",
    "summary_record",
    "survey_record",
]


def settings_record(settings: Settings) -> Record:
    return dict(settings.names())


def fingerprint_records(docs: Corpus) -> list[Record]:
    """One record per document: id, fingerprint, bits, seed, features, tokenizer, weighting."""
    settings = settings_record(docs.settings)
    bits = docs.settings.bits
    return [
        {
            "id": doc_id,
            "fingerprint": to_hex(to_int(row), bits),
            "features": int(count),
            **settings,
        }
        for doc_id, row, count in zip(
            given_ids(docs.ids), docs.fingerprints, docs.n_features.tolist(), strict=True
        )
    ]


def fingerprint_lines(docs: Corpus, *, ascii_only: bool) -> str:
    """The JSON Lines of :func:`fingerprint_records`, the same bytes, made without a dict and
    a ``json.dumps`` per record: only the id needs encoding, the settings are one tail."""
    bits = docs.settings.bits
    tail = to_json(settings_record(docs.settings), ascii_only=ascii_only)[1:]
    digits = bits // 4
    ids = given_ids(docs.ids)
    if docs.fingerprints.shape[1] == 1:
        values = docs.fingerprints[:, 0].tolist()
    else:
        values = [to_int(row) for row in docs.fingerprints]
    return "".join(
        f'{{"id": {to_json(doc_id, ascii_only=ascii_only)}, "fingerprint": '
        f'"{value:0{digits}x}", "features": {count}, {tail}\n'
        for doc_id, value, count in zip(ids, values, docs.n_features.tolist(), strict=True)
    )


def comparison_record(comparison: Comparison, threshold: float | None = None) -> Record:
    """``simhash compare`` as one record; with ``threshold``, whether the pair reaches it (by
    its true cosine, else its estimate)."""
    bits = comparison.settings.bits
    judged = (
        {}
        if threshold is None
        else {
            "threshold": threshold,
            "near_duplicate": comparison.reaches(threshold),
        }
    )
    a, b = given_ids([comparison.a, comparison.b])
    return {
        "a": a,
        "b": b,
        "fingerprint_a": to_hex(comparison.fingerprint_a, bits),
        "fingerprint_b": to_hex(comparison.fingerprint_b, bits),
        "hamming": comparison.hamming,
        "estimated_cosine": json_number(comparison.estimated_cosine),
        "cosine": None if comparison.cosine is None else json_number(comparison.cosine),
        **judged,
        **settings_record(comparison.settings),
    }


def cluster_numbers(result: DedupeResult) -> NDArray[np.int64]:
    """Each document's cluster number (-1 outside any cluster)."""
    numbers = np.full(len(result.corpus), -1, dtype=np.int64)
    for number, members in enumerate(result.clusters):
        numbers[members] = number
    return numbers


PAIR_CHUNK = 20_000


def iter_pair_records(result: DedupeResult, *, chunk: int | None = None) -> Iterator[list[Record]]:
    """Flagged pairs, ``chunk`` records at a time: a, b, hamming, estimated_cosine, cosine
    (null if not computed), cluster (null when the two are not in one cluster: each is a
    near-duplicate of its own cluster's representative). Only a chunk of them is ever made
    into records."""
    ids = given_ids(result.corpus.ids)
    numbers = cluster_numbers(result)
    for pairs in result.pairs.chunks(chunk or PAIR_CHUNK):
        first = pairs.pairs[:, 0]
        yield [
            {
                "a": ids[i],
                "b": ids[j],
                "hamming": hamming,
                "estimated_cosine": json_number(estimate),
                "cosine": json_number(cosine),
                "cluster": cluster if cluster == other >= 0 else None,
            }
            for i, j, hamming, estimate, cosine, cluster, other in zip(
                first.tolist(),
                pairs.pairs[:, 1].tolist(),
                pairs.hamming.tolist(),
                pairs.estimated_cosine.tolist(),
                pairs.cosine.tolist(),
                numbers[first].tolist(),
                numbers[pairs.pairs[:, 1]].tolist(),
                strict=True,
            )
        ]


def pair_records(result: DedupeResult) -> list[Record]:
    """Every record of :func:`iter_pair_records`, in one list."""
    return [record for chunk in iter_pair_records(result) for record in chunk]


def iter_cluster_records(
    result: DedupeResult, *, chunk: int | None = None
) -> Iterator[list[Record]]:
    """Clusters, ``chunk`` at a time (:func:`cluster_record`)."""
    ids = given_ids(result.corpus.ids)
    chunk = chunk or PAIR_CHUNK
    groups = result.groups
    for start in range(0, len(groups.clusters), chunk):
        stop = min(start + chunk, len(groups.clusters))
        yield [cluster_record(groups, number, ids) for number in range(start, stop)]


def cluster_record(groups: Groups, number: int, ids: Sequence[str | int]) -> Record:
    """Cluster ``number``: its size, its representative (the member kept) and its members,
    one object each (id, duplicate_of: null for the representative, cosine to it), in the
    order of :meth:`~simhash_cli.core.clusters.groups.Groups.ordered`: the representative
    first, as the table, the CSV and the report list them."""
    kept = int(groups.representative[number])
    ordered = groups.ordered(number)
    return {
        "cluster": number,
        "size": int(ordered.size),
        "representative": ids[kept],
        "members": [
            {
                "id": ids[m],
                "duplicate_of": None if m == kept else ids[kept],
                "cosine": json_number(cosine),
            }
            for m, cosine in zip(ordered.tolist(), groups.cosine[ordered].tolist(), strict=True)
        ],
    }


def iter_member_rows(result: DedupeResult, *, chunk: int | None = None) -> Iterator[list[Record]]:
    """One flat row per clustered document (for CSV), ``chunk`` clusters at a time: cluster,
    size, id, representative (the member kept, as the JSON key names it), duplicate_of (the
    same, empty for the representative itself) and cosine to it: each member of
    :func:`cluster_record`, in its order."""
    for records in iter_cluster_records(result, chunk=chunk):
        yield [
            {
                "cluster": record["cluster"],
                "size": record["size"],
                "id": member["id"],
                "representative": record["representative"],
                "duplicate_of": member["duplicate_of"],
                "cosine": member["cosine"],
            }
            for record in records
            for member in record["members"]
        ]


def cluster_records(result: DedupeResult) -> list[Record]:
    """Every record of :func:`iter_cluster_records`, in one list."""
    return [record for chunk in iter_cluster_records(result) for record in chunk]


def skip_counts(skipped: Sequence[Skipped]) -> dict[str, int]:
    return dict(Counter(skip.kind for skip in skipped))


def group_pairs_record(result: DedupeResult) -> Record | None:
    """What checking the pairs inside found groups did (None: not asked for)."""
    closure = result.closure
    if closure is None:
        if result.closure_skipped is None:
            return None
        return {"checked": 0, "skipped": result.closure_skipped}
    return {
        "groups": closure.groups,
        "checked": closure.checked,
        "found": closure.found,
        "bounded_groups": closure.bounded_groups,
        "bounded_documents": closure.bounded_documents,
        "limit": closure.limit,
    }


def chance_pairs_record(result: DedupeResult) -> Record | None:
    """Where the corpus's chance pairs sit, when they come near the threshold (None: they
    do not, or could not be measured)."""
    found = result.ambiguity
    if found is None:
        return None

    def spread(one: Spread) -> Record:
        return {
            "weighting": one.weighting.value,
            "median": one.median,
            "near": one.near,
            "above": one.above,
            "flagged_kept": one.flagged,
        }

    return {
        "pairs": found.pairs,
        "grouped_included": found.grouped,
        "near_below": NEAR,
        "flagged": found.flagged,
        "now": spread(found.now),
        "instead": None if found.instead is None else spread(found.instead),
    }


def summary_record(result: DedupeResult) -> Record:
    """The numbers behind a dedupe run."""
    docs, config = result.corpus, result.config
    audit = result.audit
    ids = given_ids(docs.ids) if audit is not None else []
    return {
        "documents": len(docs),
        "skipped": len(docs.skipped),
        "skipped_by_reason": skip_counts(docs.skipped),
        "candidates": result.candidates,
        "gated_out": result.gated_out,
        "pairs": len(result.pairs),
        "empty_pairs": result.empty_pairs,
        "clusters": len(result.clusters),
        "documents_in_clusters": sum(int(members.size) for members in result.clusters),
        "clustering": result.groups.kind.value,
        "group_pairs": group_pairs_record(result),
        "chance_pairs": chance_pairs_record(result),
        **settings_record(docs.settings),
        "scheme": result.scheme.label(docs.settings.bits),
        "planned": result.survey is not None,
        "kind": result.scheme.kind,
        "blocks": result.scheme.blocks if result.scheme.kind == "blocks" else None,
        "max_distance": result.scheme.max_distance,
        "minhash": None
        if result.scheme.rows is None
        else {"bands": result.scheme.blocks, "rows": result.scheme.rows},
        "with_fingerprints": None
        if result.scheme.also is None
        else {
            "kind": result.scheme.also.kind,
            "blocks": result.scheme.also.blocks,
            "max_distance": result.scheme.also.max_distance,
        },
        "threshold": config.threshold,
        "verify": config.verify.value,
        "expected_recall": result.expected_recall,
        # Sums over floating cosines: 12 decimals, as the cosines are written.
        "estimated_recall": recall_of(result),
        "measured_recall": measured_record(result),
        "recall_not_measured": result.unmeasured,
        "priced_on": None
        if result.survey is None
        else ("pilot" if result.survey.priced else "threshold"),
        "advice": None
        if result.advice is None
        else {
            "option": result.advice.assessment.scheme.option,
            "scheme": result.advice.assessment.scheme.label(docs.settings.bits),
            "estimated_recall": json_number(result.advice.recall.value),
            "estimated_recall_low": json_number(result.advice.recall.low),
            "estimated_recall_high": json_number(result.advice.recall.high),
            "expected_candidates": estimate_number(result.advice.assessment.expected_candidates),
        },
        "suggested_blocks": result.suggested_blocks,
        "suggested_max_distance": result.suggested_max_distance,
        "audit": None
        if audit is None
        else {
            "similar_pairs": audit.similar_pairs,
            "found": audit.found,
            "recall": audit.recall,
            "false_candidates": audit.false_candidates,
            "missed": [
                {
                    "a": ids[i],
                    "b": ids[j],
                    "hamming": hamming,
                    "cosine": json_number(cosine),
                }
                for (i, j), hamming, cosine in zip(
                    audit.missed.pairs.tolist(),
                    audit.missed.hamming.tolist(),
                    audit.missed.cosine.tolist(),
                    strict=True,
                )
            ],
        },
    }


def write_dedupe_document(result: DedupeResult, out: IO[str]) -> None:
    """:func:`dedupe_document` as ``json.dumps(..., indent=2)`` writes it, byte for byte, its
    pairs and clusters a chunk at a time."""
    ascii_only = not unicode_capable(out)
    out.write("{\n")
    _write_array_member(out, "pairs", iter_pair_records(result), ascii_only)
    out.write(",\n")
    _write_array_member(out, "clusters", iter_cluster_records(result), ascii_only)
    # The summary as json.dumps writes that member, without the braces around it.
    summary = to_json({"summary": summary_record(result)}, ascii_only=ascii_only, indent=2)
    out.write(",\n" + summary[2:] + "\n")


def _write_array_member(
    out: IO[str], name: str, chunks: Iterable[list[Record]], ascii_only: bool
) -> None:
    """``  "name": [...]`` of an object at the top level, as ``json.dumps(indent=2)``."""
    out.write(f'  "{name}": ')
    count = 0
    for chunk in chunks:
        items = [member_item(record, ascii_only=ascii_only) for record in chunk]
        if items:
            out.write(("[\n" if count == 0 else ",\n") + ",\n".join(items))
            count += len(items)
    out.write("[]" if count == 0 else "\n  ]")


def dedupe_document(result: DedupeResult) -> Record:
    """``dedupe -f json``: one object with pairs, clusters and summary."""
    return {
        "pairs": pair_records(result),
        "clusters": cluster_records(result),
        "summary": summary_record(result),
    }


def match_records(
    matches: Matches, names: dict[int, str], queries: Sequence[str], bits: int
) -> Iterator[Record]:
    """``simhash index query``: per query, its stored matches nearest first."""
    cosines = estimate_cosine_rows(matches.hamming, bits)
    asked = given_ids(queries)
    for q, row, distance, cosine in zip(
        matches.query.tolist(),
        matches.doc.tolist(),
        matches.hamming.tolist(),
        cosines.tolist(),
        strict=True,
    ):
        yield {
            "query": asked[q],
            "match": names[row],
            "hamming": distance,
            "estimated_cosine": json_number(cosine),
        }


def recall_of(result: DedupeResult) -> float | None:
    """The run's recall as measured (12 decimals), or None: not measured."""
    if result.measured_recall is None:
        return None
    return json_number(result.measured_recall.value)


def measured_record(result: DedupeResult) -> dict[str, Any] | None:
    """The run's measured recall: its share of the pilot's pairs with its interval, the
    pairs at the threshold and those it missed, each with theirs (every pair compared: exact,
    with no pilot)."""
    measured, pilot = result.measured_recall, result.pilot
    if measured is None:
        return None
    total = (
        pilot.total()
        if pilot is not None and result.scheme.kind != "every"
        else Share(float(measured.pairs), float(measured.pairs), float(measured.pairs), 0, True)
    )
    missed = missed_pairs(result)
    return {
        "recall": json_number(measured.value),
        "low": json_number(measured.low),
        "high": json_number(measured.high),
        "pairs": measured.pairs,
        "exact": measured.exact,
        "every_pair_compared": result.scheme.kind == "every",
        "anchors": None if pilot is None else int(pilot.anchors.size),
        "documents": len(result.corpus) if pilot is None else pilot.n_docs,
        "pairs_at_threshold": json_number(total.value),
        "pairs_at_threshold_low": json_number(total.low),
        "pairs_at_threshold_high": json_number(total.high),
        "likely_missed": round(missed.value),
        "likely_missed_low": round(missed.low),
        "likely_missed_high": round(missed.high),
    }


def shown_assessments(plan: Survey, *, others: int = 5) -> list[Assessment]:
    """The chosen scheme, the page's three, the cheapest others that reach the target, and
    the best recall within the budget."""
    shown: list[Assessment] = [] if plan.chosen is None else [plan.chosen]
    for assessment in plan.assessments:
        scheme = assessment.scheme
        page = scheme.kind == "blocks" and scheme.blocks in PAGE_BLOCKS
        if page and assessment not in shown:
            shown.append(assessment)
    reaching = [a for a in plan.assessments if a.recall >= plan.target and a not in shown]
    shown += reaching[:others]
    if plan.best_effort() not in shown:
        shown.append(plan.best_effort())
    return shown


def survey_record(plan: Survey) -> Record:
    """``simhash plan -f json``."""

    def record(assessment: Assessment) -> Record:
        scheme = assessment.scheme
        curve = scheme.probability(np.array(CURVE_COSINES), plan.bits)
        return {
            "scheme": scheme.label(plan.bits),
            "kind": scheme.kind,
            "blocks": scheme.blocks,
            "max_distance": scheme.max_distance,
            "rows": scheme.rows,
            "option": scheme.option,
            "tables": scheme.tables,
            "recall": estimate_number(assessment.recall),
            "expected_candidates": estimate_number(assessment.expected_candidates),
            "expected_pairs": estimate_number(assessment.expected_pairs),
            # What --max-candidates bounds: the candidates, or every pair's products priced
            # as so many (it makes no candidate, and its work is not 0).
            "work": estimate_number(load(assessment)),
            "in_budget": plan.in_budget(assessment),
            "curve": [
                [c, estimate_number(p)] for c, p in zip(CURVE_COSINES, curve.tolist(), strict=True)
            ],
        }

    return {
        "bits": plan.bits,
        "threshold": plan.threshold,
        "docs": plan.n_docs,
        "documents": plan.all_documents,
        "target_recall": plan.target,
        "max_candidates": plan.max_candidates,
        "chosen": None if plan.chosen is None else record(plan.chosen),
        "over_budget": None if (beyond := plan.over_budget()) is None else record(beyond),
        "schemes": [record(a) for a in shown_assessments(plan)],
    }


def calibration_record(result: Calibration) -> Record:
    """``simhash calibrate -f json``."""
    return {
        "documents": result.documents,
        "pairs": result.pairs,
        "similar_pairs": result.similar_pairs,
        "threshold": result.threshold,
        "seeds": result.seeds,
        "bits": result.bits,
        "error_by_bits": [
            {"bits": b, "mean_absolute_error": e} for b, e in result.error_by_bits.items()
        ],
        "weighted_error": result.weighted_error,
        "unweighted_error": result.unweighted_error,
        "schemes": [
            {
                "blocks": s.blocks,
                "recall": s.recall,
                "expected_recall": s.expected_recall,
                "false_candidate_rate": s.false_candidate_rate,
            }
            for s in result.schemes
        ],
    }


CURVE_COSINES = tuple(round(0.5 + 0.05 * i, 2) for i in range(11))


def budget_advice(plan: Survey) -> str:
    """What a larger --max-candidates would buy, when it would buy the target recall."""
    beyond = plan.over_budget()
    if beyond is None:
        return ""
    # Two significant digits, rounded up, so that the budget named is enough.
    needed = math.ceil(beyond.expected_candidates)
    step = 10 ** max(len(str(needed)) - 2, 0)
    budget = -(-needed // step) * step
    return (
        f": {beyond.scheme.label(plan.bits)} reaches {beyond.recall:.2f}, comparing about "
        f"{beyond.expected_candidates:,.0f} pairs (it needs --max-candidates {budget})"
    )
