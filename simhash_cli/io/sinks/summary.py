"""The sentences of a dedupe's summary, made from its result alone. By default a few plain
lines (:func:`found_line`, :func:`recall_line`, :func:`hint_line`): what was found, how much of
it, one hint at most. With ``-v`` the whole account: the scheme, the recall measured on the
pilot's pairs or expected at the threshold, the pairs likely missed, where chance pairs sit,
what the clustering means, what checking inside groups added (the JSON summary always holds
every figure). Pure words from numbers: :class:`.messages.Messages` prints them on standard
error.
"""

from __future__ import annotations

from ...core.ambiguity import NEAR, Ambiguity
from ...core.groups import Clustering
from ...core.minhash import least_jaccard
from ...core.result import DedupeResult
from .formats import counted

__all__ = [
    "ambiguity_line",
    "clustering_meaning",
    "estimated_pairs",
    "expected_recall_meaning",
    "found_line",
    "group_pairs_line",
    "hint_line",
    "likely_missed",
    "measured_line",
    "rare_pairs",
    "recall_line",
    "unmeasured",
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
    """How much of what is there the run found, in one line: measured, estimated or expected."""
    measured, found = result.measured_recall, result.run_recall
    if measured is not None and measured.exact:
        if measured.value >= 1.0:
            return "recall 1.00: every pair was compared, none was missed"
        return (
            f"recall {measured.value:.2f}: every pair was compared, "
            f"{counted(likely_missed(result), 'pair')} missed"
        )
    if measured is not None:
        missed = likely_missed(result)
        tail = f"; about {counted(missed, 'pair')} missed" if missed else ""
        return (
            f"recall about {measured.value:.2f} ({measured.low:.2f} to {measured.high:.2f}), "
            f"measured on a random sample{tail}"
        )
    if found is not None:
        return f"recall about {found.recall:.2f}, estimated from the pairs found"
    return f"expected recall {result.expected_recall:.2f} (not measured on these documents)"


def hint_line(result: DedupeResult) -> str | None:
    """The one hint worth a person's time, if any: a scheme that finds more first, then a
    corpus whose unrelated documents come near the threshold."""
    advice = result.advice
    if advice is not None:
        return (
            f"hint: {advice.assessment.scheme.option} would raise recall to about "
            f"{advice.recall:.2f}"
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
    if result.expected_recall < 0.9:
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
    """The run's recall measured on the pilot's pairs: how many, how sure, and how many
    pairs it likely missed."""
    measured, pilot, threshold = result.measured_recall, result.pilot, result.config.threshold
    assert measured is not None and pilot is not None
    at = f"the pairs at cosine >= {threshold:g}"
    if measured.exact:
        found = round(measured.value * measured.pairs)
        line = (
            f"this run found {found:,} of the {counted(measured.pairs, 'pair')} at cosine >= "
            f"{threshold:g} (the pilot compared every pair exactly): recall {measured.value:.2f}"
        )
    else:
        total = pilot.total()
        line = (
            f"this run found about {measured.value:.2f} of {at} (95% interval "
            f"{measured.low:.2f} to {measured.high:.2f}), measured on the "
            f"{counted(measured.pairs, 'pair')} at the threshold of "
            f"{counted(pilot.anchors.size, 'document')} drawn at random and compared with "
            f"every other; about {total.value:,.0f} such pairs in all"
        )
    missed = likely_missed(result)
    if missed:
        likely = "" if measured.exact else "likely "
        about = "" if measured.exact else "about "
        line += f"; it {likely}missed {about}{counted(missed, 'pair')}"
    return line


def likely_missed(result: DedupeResult) -> int:
    """The pairs at the threshold the run likely missed, by its measured recall."""
    measured, pilot = result.measured_recall, result.pilot
    if measured is None or pilot is None:
        return 0
    return round((1.0 - measured.value) * pilot.total().value)


def unmeasured(result: DedupeResult) -> str:
    """Why a run's recall is estimated from its own pairs, not measured on a pilot's."""
    pilot = result.pilot
    if result.survey is None:
        return "not checked by a pilot, which runs when the planner chooses the scheme"
    if pilot is None:
        return (
            "not checked by a pilot: the corpus is too large for its budget, or its vectors "
            "are not all at hand"
        )
    anchors = counted(pilot.anchors.size, "document")
    return (
        f"not checked by a pilot: its {anchors} drew only "
        f"{counted(len(pilot.cosine), 'pair')} at the threshold"
    )


def expected_recall_meaning(result: DedupeResult) -> str:
    """What the expected recall of the result's scheme is the chance of."""
    over = "over seeds, not this run's share"
    if result.scheme.rows is None:
        return f"chance that one pair exactly at the threshold becomes a candidate, {over}"
    least = float(least_jaccard(result.config.threshold))
    return (
        "chance that one pair exactly at the threshold becomes a candidate when its word sets "
        f"overlap as little as that cosine allows, Jaccard {least:.2f}, {over}"
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


def estimated_pairs(result: DedupeResult) -> str:
    """The pairs a run's recall estimate is about: those at the threshold that the scheme
    finds with some chance."""
    found, threshold = result.run_recall, result.config.threshold
    assert found is not None
    if found.rarely_below is None:
        return f"the pairs at cosine >= {threshold:g}"
    if result.scheme.rows is None:
        return f"the pairs at cosine >= {found.rarely_below:.2f}"
    return (
        f"the pairs at cosine >= {threshold:g} whose word sets overlap at Jaccard "
        f"{found.rarely_below:.2f} or more"
    )


def rare_pairs(rare: int, about: str) -> str:
    """The pairs found below what the estimate covers, when there are any."""
    if not rare:
        return ""
    return (
        f"; it also found {about}{counted(rare, 'pair')} outside them, which the scheme rarely "
        "finds: how many such pairs there are cannot be estimated"
    )
