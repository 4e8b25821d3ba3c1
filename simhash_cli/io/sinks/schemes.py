"""The planner's outputs: ``simhash plan``'s schemes with their S-curves and ``simhash
calibrate``'s sweep, as tables a person reads or one document to keep.
"""

from __future__ import annotations

from typing import IO, Any

from rich import box
from rich.table import Table
from rich.text import Text

from ...core.search.calibrate import Calibration
from ...core.search.pricing import Survey
from .console import data_console, print_table
from .formats import Format, counted, json_text, write_records
from .records import budget_advice, calibration_record, survey_record

__all__ = ["emit_calibration", "emit_survey"]


_BARS = "▁▂▃▄▅▆▇█"


def emit_survey(plan: Survey, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash plan``: the schemes worth considering with their S-curves."""
    document = survey_record(plan)
    if fmt in (Format.JSON, Format.JSONL):
        _write_json(document, fmt, out)
        return
    if fmt is Format.CSV:
        rows = [{k: v for k, v in r.items() if k != "curve"} for r in document["schemes"]]
        write_records(rows, fmt, out)
        return
    distinct = (
        f" ({counted(plan.n_docs, 'distinct fingerprint')})"
        if plan.n_docs != plan.all_documents
        else ""
    )
    all_pairs = plan.n_docs * (plan.n_docs - 1) // 2
    title = (
        f"Schemes for cosine >= {plan.threshold:g} at {plan.bits} bits among "
        f"{counted(plan.all_documents, 'document')}{distinct} (target recall {plan.target:g})"
    )
    table = Table(title=Text(title), box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False)
    # Every column fits 80 columns: the numbers and the curve whole, a scheme's option wrapped
    # at its words when it must be.
    table.add_column("")
    table.add_column("scheme", ratio=1)
    table.add_column("recall", justify="right", no_wrap=True)
    table.add_column("unrelated", justify="right", no_wrap=True)
    table.add_column("comparisons", justify="right", no_wrap=True)
    table.add_column("cosine 0.5..1", no_wrap=True)
    chosen = document["chosen"]
    for entry in document["schemes"]:
        bars = "".join(_BARS[min(int(p * len(_BARS)), len(_BARS) - 1)] for _, p in entry["curve"])
        table.add_row(
            "*" if chosen is not None and entry["scheme"] == chosen["scheme"] else "",
            entry["option"],  # what a person types to run it (its words: -f json, --help)
            f"{entry['recall']:.2f}",
            # Every pair compares them all, by its products (no candidate, but not free).
            f"{all_pairs if entry['kind'] == 'every' else entry['expected_pairs']:,.0f}",
            # (a mark, where "(over budget)" took 14 columns from the schemes' names)
            f"{entry['work']:,.0f}" + ("" if entry["in_budget"] else " !"),
            bars,
        )
    legend = (
        f"recall: the share of the pairs at cosine {plan.threshold:g} a scheme would find; "
        f"unrelated: how many of the {all_pairs:,} pairs of distinct fingerprints it would "
        "compare by chance; comparisons: its work, a pair counted once per block or table "
        f"(--max-candidates bounds it, ! over that; every pair: {_every_work(document)}); "
        "cosine 0.5..1: a pair's chance to be compared at cosine 0.5, 0.55, ..., 1. Each "
        "scheme is dedupe's option: --blocks N, a pair shares one of N blocks of its "
        "fingerprints; --max-distance K, every pair within K bits (Manku's tables); "
        "--minhash BxR, a pair shares one of B bands of R hashes of its words (MinHash)"
    )
    table.caption = Text(legend)
    console = data_console(out)
    print_table(console, table)
    if chosen is None:
        best = plan.best_effort()
        console.print(
            f"No scheme at {plan.bits} bits reaches recall {plan.target:g} at cosine "
            f"{plan.threshold:g} within the candidate budget{budget_advice(plan)}; or more "
            f"--bits, or a higher --threshold. Within it, dedupe would use "
            f"{best.scheme.label(plan.bits)} (recall {best.recall:.2f})."
        )
    else:
        console.print(f"* chosen: {chosen['option']}, {chosen['scheme']} (the least expected work)")


def _every_work(document: dict[str, Any]) -> str:
    """What the comparisons of comparing every pair are: its products priced as so many, none
    left when the run's pilot compared them all already."""
    every = [entry for entry in document["schemes"] if entry["kind"] == "every"]
    if every and every[0]["work"] == 0:
        return "none left, the sample compared first held them all"
    return "its products, priced as so many"


# ---------------------------------------------------------------------------- calibrate


def emit_calibration(result: Calibration, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash calibrate``: three tables a person can read, or one JSON to keep."""
    document = calibration_record(result)
    if fmt in (Format.JSON, Format.JSONL):
        _write_json(document, fmt, out)
        return
    if fmt is Format.CSV:
        write_records(document["error_by_bits"], fmt, out)
        return
    console = data_console(out)
    sweep = Table(
        title=(
            f"Estimated against true cosine: {result.pairs:,} pairs of {result.documents:,} "
            f"documents, {result.seeds} seeds"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        min_width=80,
    )
    sweep.add_column("bits", justify="right")
    sweep.add_column("mean absolute error", justify="right")
    sweep.add_column("x previous (1/sqrt(2) = 0.71)", justify="right")
    previous = None
    for entry in document["error_by_bits"]:
        error = entry["mean_absolute_error"]
        ratio = "" if previous in (None, 0) else f"{error / previous:.2f}"
        sweep.add_row(str(entry["bits"]), f"{error:.3f}", ratio)
        previous = error
    console.print(sweep)
    if result.weighted_error is None or result.unweighted_error is None:
        console.print(f"No pair reaches cosine {result.threshold:g}: nothing to compare below.")
        return
    weights = Table(
        title=(
            f"Weights matter: the {result.similar_pairs:,} pairs with true cosine >= "
            f"{result.threshold:g}, {result.bits} bits"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        min_width=80,
    )
    weights.add_column("fingerprint")
    weights.add_column("mean absolute error", justify="right")
    weights.add_row("weighted", f"{result.weighted_error:.3f}")
    weights.add_row("unweighted (a set)", f"{result.unweighted_error:.3f}")
    console.print(weights)
    schemes = Table(
        title=f"Blocking at {result.bits} bits against true cosine >= {result.threshold:g}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        min_width=80,
    )
    for name in ("scheme", "measured recall", "expected recall", "false-candidate rate"):
        schemes.add_column(name, justify="left" if name == "scheme" else "right")
    for entry in document["schemes"]:
        width = result.bits // entry["blocks"]
        schemes.add_row(
            counted(entry["blocks"], "block") + f" of {width} bits",
            f"{entry['recall']:.3f}",
            f"{entry['expected_recall']:.3f}",
            f"{entry['false_candidate_rate']:.4f}",
        )
    console.print(schemes)


def _write_json(document: dict[str, Any], fmt: Format, out: IO[str]) -> None:
    """One JSON document: indented for ``-f json``, one line for ``-f jsonl``."""
    out.write(json_text(document, out, indent=2 if fmt is Format.JSON else None) + "\n")
