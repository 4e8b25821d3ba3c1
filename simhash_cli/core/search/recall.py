"""What a run missed and what would find more, priced on the pilot's pairs.

A run's recall is measured, never modelled: the share of the pilot's pairs (a uniform sample
of the corpus's pairs at the threshold, or every one of them) that the run's output holds
(:func:`~simhash_cli.core.pipeline.measured_recall`). The pairs it missed are counted on the
same sample, and a scheme that would find more is priced by its chance on each of the same
pairs. Where no pilot could be run, nothing stands in for it: the run says its recall was not
measured, and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from .pilot import Pilot, Share
from .pricing import Assessment

__all__ = ["Advice", "missed"]


@dataclass(frozen=True)
class Advice:
    """A scheme that would find more, judged by the planner.

    Attributes:
        assessment: the planner's judgement of it.
        recall: its mean chance over the pilot's pairs (a pair sharing a fingerprint is always
            found), with an interval.
    """

    assessment: Assessment
    recall: Share


def missed(measured: Share, pilot: Pilot | None) -> Share:
    """The pairs at the threshold a run of ``measured`` recall missed: the pilot's pairs it
    missed (exact when the pilot held every pair), else scaled to the corpus by the pilot's
    inclusion, between the ends of both intervals (the recall's and the pairs' count)."""
    if measured.exact or pilot is None:
        count = float(round((1.0 - measured.value) * measured.pairs))
        return Share(count, count, count, measured.pairs, True)
    total = pilot.total()
    return Share(
        (1.0 - measured.value) * total.value,
        (1.0 - measured.high) * total.low,
        (1.0 - measured.low) * total.high,
        measured.pairs,
        False,
    )
