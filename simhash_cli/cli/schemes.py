"""``simhash plan`` and ``simhash calibrate``: which scheme, and how well it does, for a corpus."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..app.choices import Input
from ..core.config import CALIBRATE_MAX_DOCS
from .main import SUMMARIES, Command
from .options import (
    collapse,
    later,
    max_candidates_option,
    own,
    reading_group,
    source_group,
    threshold_option,
)
from .outputs import OUTPUT, quiet_option
from .types import COSINE

if TYPE_CHECKING:
    from ..app.schemes import CalibrateRequest, SurveyRequest
    from ..io.sinks.messages import Messages

__all__ = ["calibrate_command", "plan_command"]


@click.command("plan", cls=Command, short_help=SUMMARIES["plan"])
@collapse(
    source_group(Input.VECTORS, Input.TEXTS),
    reading_group(),
    own(
        threshold_option,
        click.option(
            "--docs",
            type=click.IntRange(0),
            help="Documents in the corpus (required without PATHs; with them, their number).",
        ),
        click.option(
            "--background",
            type=COSINE,
            help="Cosine of a typical unrelated pair: 0 for random vectors; term counts of "
            "natural text are often 0.5 or more. Without PATHs [default: 0]; with them, "
            "measured on their fingerprints as dedupe does.",
        ),
        max_candidates_option,
    ),
    OUTPUT,
    into=later("..app.schemes:SurveyRequest"),
)
@quiet_option
def plan_command(request: SurveyRequest, messages: Messages) -> None:
    """Compare candidate schemes for a threshold, fingerprint width and corpus.

    For each scheme worth considering: the chance that a pair at the threshold becomes a
    candidate (expected recall), the pairs of unrelated documents it would compare among
    DOCS, and the S-curve of the candidate probability against cosine. The scheme marked *
    is the one `dedupe --blocks auto` would choose. Given PATHs (or --vectors), the corpus is
    read and fingerprinted, and the plan is the one dedupe would make for it.

    \b
    Examples:
      simhash plan --threshold 0.9 --docs 1000000
      simhash plan --threshold 0.8 --bits 128 --docs 50000 --background 0.5
      simhash plan --threshold 0.9 sample_corpus/
    """
    from ..app.schemes import survey_schemes  # (the help imports no run)
    from ..engines.local import LocalEngine
    from ..io.sinks.atomic import opened
    from ..io.sinks.schemes import emit_survey

    request.check()
    survey = survey_schemes(request, LocalEngine(), messages)
    with opened(request.output.path) as out:
        emit_survey(survey, request.output.resolve(sys.stdout), out)


@click.command("calibrate", cls=Command, short_help=SUMMARIES["calibrate"])
@collapse(
    source_group(Input.VECTORS, Input.TEXTS),
    reading_group(),
    own(
        threshold_option,
        click.option(
            "--seeds",
            type=click.IntRange(1, 1000),
            default=20,
            show_default=True,
            help="Seeds (0, 1, ...) every measurement is repeated over.",
        ),
        click.option(
            "--max-docs",
            type=click.IntRange(2, 20_000),
            default=CALIBRATE_MAX_DOCS,
            show_default=True,
            help="Documents evaluated (every pair of them); a larger corpus is sampled.",
        ),
    ),
    OUTPUT,
    into=later("..app.schemes:CalibrateRequest"),
)
@quiet_option
def calibrate_command(request: CalibrateRequest, messages: Messages) -> None:
    """Measure the estimates and the block schemes on your documents.

    Mean absolute error of the estimated cosine against the true cosine at 8 to 512 bits;
    weighted against unweighted fingerprints on the similar pairs; and the measured recall and
    false-candidate rate of the blocking schemes of 1, 4 and 8 blocks at --bits. Use it to
    choose --bits and --blocks for a corpus like this one.

    \b
    Examples:
      simhash calibrate sample_corpus/
      simhash calibrate --threshold 0.8 --seeds 50 -f json docs/ > cal.json
    """
    from ..app.schemes import calibrate_corpus  # (the help imports no run)
    from ..engines.local import LocalEngine
    from ..io.sinks.atomic import opened
    from ..io.sinks.schemes import emit_calibration

    request.check()
    result = calibrate_corpus(request, LocalEngine(), messages)
    with opened(request.output.path) as out:
        emit_calibration(result, request.output.resolve(sys.stdout), out)
