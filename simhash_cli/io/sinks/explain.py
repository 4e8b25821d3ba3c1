"""``simhash explain`` written out: one JSON record, the features as CSV rows, or on a terminal
the numbers, the blocks, the features and the diff, its changes highlighted."""

from __future__ import annotations

import re
from typing import IO

from rich import box
from rich.table import Table
from rich.text import Text

from ...core.explain import Contribution, Explained, Segment
from ...core.sketch.fingerprint import to_hex
from .console import data_console, pair_numbers
from .formats import Format, Record, counted, json_number, json_text, write_records
from .records import settings_record
from .visible import visible

__all__ = ["emit_explanation", "explanation_record"]

EQUAL_SHOWN = 160
"""Characters of an unchanged stretch shown on a terminal around the changes."""


def _contributions(items: tuple[Contribution, ...]) -> list[Record]:
    return [
        {"feature": c.feature, "a": c.a, "b": c.b, "share": json_number(c.share)} for c in items
    ]


def explanation_record(explained: Explained) -> Record:
    """The explanation as one JSON record (docs/output.md documents its keys)."""
    e = explained.explanation
    bits = explained.settings.bits
    record: Record = {
        "a": e.a,
        "b": e.b,
        "fingerprint_a": to_hex(e.fingerprint_a, bits),
        "fingerprint_b": to_hex(e.fingerprint_b, bits),
        "hamming": e.hamming,
        "estimated_cosine": json_number(e.estimated_cosine),
        "cosine": None if e.cosine is None else json_number(e.cosine),
        "shared_features": e.shared_features,
        "only_a": e.only_a,
        "only_b": e.only_b,
        "carrying": _contributions(e.carrying),
        "costing_a": _contributions(e.costing_a),
        "costing_b": _contributions(e.costing_b),
        "blocks": [
            {
                "blocks": m.blocks,
                "width": m.width,
                "shared": list(m.shared),
                "candidate": m.candidate,
            }
            for m in e.blocks
        ],
        "diff": None
        if explained.diff is None
        else [{"op": s.op, "a": s.a, "b": s.b} for s in explained.diff],
        "diff_cut": explained.cut,
    }
    return record | settings_record(explained.settings)


def emit_explanation(explained: Explained, fmt: Format, out: IO[str]) -> None:
    """Write ``simhash explain`` output: JSON (one record, a line of it for jsonl), CSV (one
    row per feature listed), or a table on a terminal."""
    record = explanation_record(explained)
    bits = explained.settings.bits
    if fmt is Format.JSON:
        out.write(json_text(record, out, indent=2) + "\n")
        return
    if fmt is Format.JSONL:
        out.write(json_text(record, out) + "\n")
        return
    e = explained.explanation
    if fmt is Format.CSV:
        rows = [
            {"part": part, "feature": c.feature, "a": c.a, "b": c.b, "share": c.share}
            for part, items in (
                ("carrying", e.carrying),
                ("costing_a", e.costing_a),
                ("costing_b", e.costing_b),
            )
            for c in items
        ]
        write_records(rows, fmt, out)
        return
    console = data_console(out)
    numbers = pair_numbers(
        (e.a, e.b),
        (str(record["fingerprint_a"]), str(record["fingerprint_b"])),
        e.hamming,
        bits,
        e.estimated_cosine,
        e.cosine,
    )
    numbers.add_row(
        "features",
        f"{e.shared_features:,} shared, {e.only_a:,} only in A, {e.only_b:,} only in B",
    )
    for match in e.blocks:
        plural = "block" if match.blocks == 1 else "blocks"
        scheme = f"{match.blocks} {plural} of {match.width} bits"
        if match.shared:
            shared = ", ".join(str(k) for k in match.shared)
            said = f"shares {counted(len(match.shared), 'block')} ({shared}): a candidate"
        else:
            said = "shares no block: not a candidate"
        numbers.add_row(scheme, said)
    numbers.add_row("settings", explained.settings.describe())
    console.print(numbers)
    if e.cosine is not None:
        console.print(_features("Features that carry the cosine", e.carrying, "share of cosine"))
    # A word one side lacks costs the cosine its share of that side's squared length.
    for title, items, weight in (
        ("Only in A", e.costing_a, "a"),
        ("Only in B", e.costing_b, "b"),
    ):
        if items:
            console.print(_features(title, items, f"share of {weight.upper()}", weight))
    if explained.diff is not None:
        cut = " (texts cut short)" if explained.cut else ""
        # Without colour (a pipe, a file, NO_COLOR) the changes are marked as git's
        # --word-diff=plain marks them, so that they survive.
        marked = console.no_color or console.color_system is None
        console.print(
            Text.assemble(
                ("Differences", "bold"),
                f"{cut}: ",
                _changed("A only", "a", marked=marked),
                ", ",
                _changed("B only", "b", marked=marked),
            )
        )
        console.print(diff_text(explained.diff, marked=marked, reflow=console.is_terminal))


def _features(
    title: str, items: tuple[Contribution, ...], share: str, side: str | None = None
) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("feature", overflow="fold")
    if side is None:
        table.add_column("A", justify="right")
        table.add_column("B", justify="right")
    else:
        table.add_column("weight", justify="right")
    table.add_column(share, justify="right")
    for c in items:
        weights = [f"{c.a:g}", f"{c.b:g}"] if side is None else [f"{c.a if side == 'a' else c.b:g}"]
        table.add_row(Text(visible(c.feature)), *weights, f"{c.share:.3f}")
    return table


def _shown(text: str) -> str:
    """Document text for a terminal: its lines kept (a line ended by CR LF as any other),
    every other control made visible."""
    return "\n".join(visible(line.removesuffix("\r")) for line in text.split("\n"))


def _changed(text: str, side: str, *, marked: bool) -> tuple[str, str]:
    """A side's words, styled (A struck through in red, B underlined in green), or with
    ``marked`` between ``[-`` and ``-]`` (A) or ``{+`` and ``+}`` (B)."""
    if side == "a":
        return (f"[-{text}-]" if marked else text), "red strike"
    return (f"{{+{text}+}}" if marked else text), "green underline"


def diff_text(diff: list[Segment], *, marked: bool = False, reflow: bool = False) -> Text:
    """The diff as one text: unchanged stretches plain (long ones shortened around the
    changes), A's side struck through in red, B's underlined in green; with ``marked``, also
    between git's word-diff markers (for a reader without colour). With ``reflow`` (a
    terminal), a paragraph's lines are one line that the terminal wraps at its own width:
    texts wrapped at 95 columns were wrapped again at 80, every other line a stub."""
    text = _diff_text(diff, marked=marked)
    if not reflow:
        return text
    return Text(_flowed(text.plain), spans=list(text.spans))


_LINE_BREAK = re.compile(r"\n")
_OWN_LINE = re.compile(r"\s|[-*+>•]\s|\d+[.)]\s")
"""How a line that keeps its line break before it starts: indented (code, a quote), or an
item of a list."""


def _flowed(plain: str) -> str:
    """``plain`` with the breaks inside its paragraphs made spaces, each character for one
    (so that the styles' spans stay where they are): a break before or after a blank line (or
    one of spaces), or before or after a line of its own (:data:`_OWN_LINE`), is kept."""
    chars = list(plain)
    breaks = list(_LINE_BREAK.finditer(plain))
    starts = [0] + [found.end() for found in breaks]
    for k, found in enumerate(breaks):
        before = plain[starts[k] : found.start()]
        end = breaks[k + 1].start() if k + 1 < len(breaks) else len(plain)
        after = plain[found.end() : end]
        own = _OWN_LINE.match(before) or _OWN_LINE.match(after)
        if before.strip() and after.strip() and not own:
            chars[found.start() : found.end()] = " " * (found.end() - found.start())
    return "".join(chars)


def _diff_text(diff: list[Segment], *, marked: bool) -> Text:
    text = Text()
    for at, segment in enumerate(diff):
        if segment.op == "equal":
            shown = segment.a
            if len(shown) > 2 * EQUAL_SHOWN:
                head = shown[:EQUAL_SHOWN] if at else ""
                tail = shown[-EQUAL_SHOWN:] if at < len(diff) - 1 else ""
                shown = f"{head} … {tail}"
            text.append(_shown(shown))
            continue
        if segment.a:
            text.append(*_changed(_shown(segment.a), "a", marked=marked))
        if segment.b:
            text.append(*_changed(_shown(segment.b), "b", marked=marked))
    return text
