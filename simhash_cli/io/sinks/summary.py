"""The sentences of a dedupe's summary, made from its result alone. By default a few plain
lines (:func:`found_line`, :func:`recall_line`, :func:`hint_line`): what was found, how much of
it, one hint at most. With ``-v`` the whole account: the scheme, the recall measured on the
pilot's pairs (or why it was not), the pairs missed, where chance pairs sit,
what the clustering means, what checking inside groups added (the JSON summary always holds
every figure). Pure words from numbers: :class:`.messages.Messages` prints them on standard
error.
"""

from __future__ import annotations

from ...core.clusters.groups import Clustering
from ...core.result import DedupeResult
from ...core.search.pilot import Share
from ...core.search.pricing import TARGET_RECALL
from ...core.search.recall import missed
from ...core.sketch.minhash import least_jaccard
from ...core.verify.ambiguity import NEAR, Ambiguity
from .formats import counted

__all__ = [
    "ambiguity_line",
    "clustering_meaning",
    "expected_recall_meaning",
    "found_line",
    "group_pairs_line",
    "hint_line",
    "measured_line",
    "missed_pairs",
    "reaches_target",
    "recall_line",
    "share_text",
]


def found_line(result: DedupeResult) -> str:
    """``4 near-duplicate pairs in 2 clusters (cosine >= 0.9)``."""
    config = result.config
    cosine = "cosine" if config.verify.value == "exact" else "estimated cosine"
    empty = (
        f", {counted(result.empty_pairs, 'pair')} of empty documents" if result.empty_pairs else ""
    )
    kind = "cluster" if result.groups.kind is Clustering.REPRESENTATIVE else "chain"
    pairs = len(result.pairs) - result.empty_pairs
    return (
        f"{counted(pairs, 'near-duplicate pair')} in {counted(len(result.clusters), kind)} "
        f"({cosine} >= {config.threshold:g}{empty})"
    )


def recall_line(result: DedupeResult) -> str:
    """How much of what is there the run found, in one line: measured, or not measured and
    why (no model stands in for a measure)."""
    measured = result.measured_recall
    if result.scheme.kind == "every":
        return "recall 1.00: every pair was compared, none was missed"
    if measured is None:
        return f"recall not measured: {result.unmeasured}"
    missed = missed_pairs(result)
    if measured.exact:
        if missed.value == 0:
            return "recall 1.00: measured on every pair, none was missed"
        return (
            f"recall {measured.value:.2f}: measured on every pair, "
            f"{counted(round(missed.value), 'pair')} missed"
        )
    return (
        f"recall about {measured.value:.2f} ({measured.low:.2f} to {measured.high:.2f}), "
        f"measured on a random sample{_missed_tail(missed)}"
    )


def share_text(share: Share) -> str:
    """``0.97`` when exact, else ``about 0.97 (0.93 to 0.99)``."""
    if share.exact:
        return f"{share.value:.2f}"
    return f"about {share.value:.2f} ({share.low:.2f} to {share.high:.2f})"


def reaches_target(result: DedupeResult) -> bool:
    """Whether the run's recall was measured at the planner's target or more."""
    measured = result.measured_recall
    return measured is not None and measured.value >= TARGET_RECALL


def _missed_tail(missed: Share) -> str:
    """``; about 40 pairs missed (12 to 95)``, or nothing when none was seen missed."""
    if missed.value < 0.5:
        return ""
    return (
        f"; about {counted(round(missed.value), 'pair')} missed "
        f"({missed.low:,.0f} to {missed.high:,.0f})"
    )


def hint_line(result: DedupeResult) -> str | None:
    """The one hint worth a person's time, if any: a scheme that finds more first, then a
    corpus whose unrelated documents come near the threshold."""
    advice = result.advice
    if advice is not None:
        return (
            f"hint: {advice.assessment.scheme.option} would raise recall to "
            f"{share_text(advice.recall)}"
        )
    chance = (
        f"a pair at cosine {result.config.threshold:g} is a candidate with chance "
        f"{result.expected_recall:.2f}"
    )
    if result.suggested_blocks is not None:
        return f"hint: {chance}; --blocks {result.suggested_blocks} makes it 0.95"
    if result.suggested_max_distance is not None:
        return f"hint: {chance}; --max-distance {result.suggested_max_distance} makes it 0.95"
    if result.survey is not None and result.survey.chosen is None:
        return (
            f"hint: no scheme reaches recall {result.survey.target:g} within the candidate "
            "budget; -v says what would"
        )
    if result.expected_recall < 0.9 and not reaches_target(result):
        return f"hint: {chance}; more --bits would raise it"
    found = result.ambiguity
    if found is not None:
        instead = (
            "--ngram 3" if found.instead is None else f"--weighting {found.instead.weighting.value}"
        )
        near = f"unrelated documents come near cosine {found.threshold:g} here"
        return f"hint: {near}; try {instead} (-v)"
    return None


def measured_line(result: DedupeResult) -> str:
    """The run's recall as measured: on how many pairs, how sure, and how many pairs it
    missed; or why it was not measured."""
    measured, pilot, threshold = result.measured_recall, result.pilot, result.config.threshold
    if result.scheme.kind == "every":
        return (
            f"every pair was compared by exact products: this run found every pair at cosine "
            f">= {threshold:g}, recall 1.00"
        )
    if measured is None:
        return f"this run's recall was not measured: {result.unmeasured}"
    at = f"the pairs at cosine >= {threshold:g}"
    missed = missed_pairs(result)
    if measured.exact or pilot is None:
        found = round(measured.value * measured.pairs)
        how = (
            "the pilot compared every pair exactly"
            if pilot is not None
            else "the documents share one fingerprint: each pair of them was compared"
        )
        line = (
            f"this run found {found:,} of the {counted(measured.pairs, 'pair')} at cosine >= "
            f"{threshold:g} ({how}): recall {measured.value:.2f}"
        )
        if missed.value:
            line += f"; it missed {counted(round(missed.value), 'pair')}"
        return line
    total = pilot.total()
    return (
        f"this run found about {measured.value:.2f} of {at} (95% interval "
        f"{measured.low:.2f} to {measured.high:.2f}), measured on the "
        f"{counted(measured.pairs, 'pair')} at the threshold of "
        f"{counted(pilot.anchors.size, 'document')} drawn at random and compared with "
        f"every other; about {total.value:,.0f} such pairs in all ({total.low:,.0f} to "
        f"{total.high:,.0f}){_missed_tail(missed)}"
    )


def missed_pairs(result: DedupeResult) -> Share:
    """The pairs at the threshold the run missed, by its measured recall, with an interval
    (none when not measured, or every pair compared)."""
    measured = result.measured_recall
    if measured is None or result.scheme.kind == "every":
        return Share(0.0, 0.0, 0.0, 0, True)
    return missed(measured, result.pilot)


def expected_recall_meaning(result: DedupeResult) -> str:
    """What the expected recall of the result's scheme is the chance of."""
    model = "a model averaged over hash seeds, not what this run found"
    if result.scheme.rows is None:
        return f"the chance that a pair exactly at the threshold is compared: {model}"
    least = float(least_jaccard(result.config.threshold))
    return (
        "the chance that a pair exactly at the threshold is compared when its word sets "
        f"overlap as little as that cosine allows, Jaccard {least:.2f}: {model}"
    )


def _share(value: float) -> str:
    return f"{100 * value:.1f}%" if value else "none"


def ambiguity_line(found: Ambiguity) -> str:
    """The advice when unrelated documents come near the threshold, with the figures."""
    now, t = found.now, found.threshold
    which = "documents" if found.grouped else "documents not grouped together"
    flagged = "flagged or not" if found.grouped else "without being flagged"
    line = (
        f"hint: unrelated documents come near the threshold here: of {found.pairs:,} random "
        f"pairs of {which}, {_share(now.near)} are at {now.weighting.value} cosine "
        f"{t - NEAR:.2f} to {t:.2f} and {_share(now.above)} at {t:.2f} or more {flagged} "
        f"(median {now.median:.2f}), so some flagged pairs may share little more than "
        "common words"
    )
    instead = found.instead
    if instead is None:
        return line + "; word shingles (--ngram 3) weigh phrases instead of words"
    return line + (
        f"; with --weighting {instead.weighting.value} the same pairs sit at median "
        f"{instead.median:.2f} ({_share(instead.near)} near, {_share(instead.above)} at "
        f"{t:.2f} or more), and {instead.flagged:,} of the {found.flagged:,} flagged pairs "
        f"stay at {t:.2f} or more; word shingles (--ngram 3) are another way"
    )


def clustering_meaning(result: DedupeResult) -> str:
    """What a cluster is, in the summary's words."""
    if result.groups.kind is Clustering.COMPONENTS:
        return "connected components: chains whose ends may be below the threshold"
    return "each member a near-duplicate of the one kept"


def group_pairs_line(result: DedupeResult) -> str | None:
    """What checking the pairs inside found groups did, when it did or was skipped."""
    closure, threshold = result.closure, result.config.threshold
    if closure is None:
        if result.closure_skipped is None:
            return None
        return f"the pairs inside the groups found were not checked: {result.closure_skipped}"
    if not closure.checked and not closure.bounded_groups:
        return None
    line = (
        f"checked the {counted(closure.checked, 'pair')} inside {counted(closure.groups, 'group')} "
        f"that were not candidates: {closure.found:,} more at "
        f"{result.config.verify.value} cosine >= {threshold:g}, "
        f"{counted(len(result.pairs) - result.empty_pairs, 'pair')} in all"
    )
    if closure.bounded_groups:
        line += (
            f"; {counted(closure.bounded_groups, 'group')} of "
            f"{counted(closure.bounded_documents, 'document')} had more pairs than "
            f"--group-pairs {closure.limit:,} leaves, and only their candidates were checked"
        )
    return line
