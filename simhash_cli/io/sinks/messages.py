"""Everything for a person, on standard error: warnings, progress, summaries and hints.

Paths are always passed as Rich Text, so a file named ``[bold]`` stays a file name.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import Progress as RichProgress
from rich.table import Column
from rich.text import Text

from ...core.against import Decontamination
from ...core.corpus import Corpus
from ...core.events import BINARY, Event, Excluded, Progress, Skipped, Warned
from ...core.result import DedupeResult
from .console import colours
from .dataset import Tally, Targets
from .formats import counted
from .records import budget_advice, skip_counts
from .steps import doing
from .summary import (
    ambiguity_line,
    clustering_meaning,
    expected_recall_meaning,
    found_line,
    group_pairs_line,
    hint_line,
    measured_line,
    reaches_target,
    recall_line,
    share_text,
)
from .visible import visible

__all__ = ["Messages"]


# Examples of each kind of skip or warning named in the summary, when each is not listed.
EXAMPLES = 3

# Skips a terminal is not warned of: documents with nothing in them to compare, or too little
# (--min-length): nothing is wrong with them, and a dataset passes them through as they are.
_PASSED = {"empty": "without a word", "short": "short"}
"""How the records a dataset passes through are counted, by kind."""
PASSED_OVER = frozenset(_PASSED)

SUMMED = frozenset({BINARY})
"""Reasons to skip a document that a walk expects to meet and that say nothing particular to
it, summed up in a log too (a line each only with -v): a folder of documentation wrote a line
for each of its 211 binary files, where rg and fd say nothing."""

SUMMED_KINDS = frozenset({"short"})
"""Kinds of skip summed up in a log too, whatever their detail: a dataset of short texts
left out by the user's own --min-length would write a line for each."""

# The option that reads what a walk left out by a rule.
_READ_THEM = {"hidden": "--hidden", "ignored": "--no-ignore"}


@dataclass
class _Kind:
    count: int = 0
    examples: list[str] = field(default_factory=list)


def _tally(kinds: dict[str, _Kind], kind: str, name: str) -> None:
    """One more document of ``kind``, named among the first few."""
    tally = kinds.setdefault(kind, _Kind())
    tally.count += 1
    if len(tally.examples) < EXAMPLES:
        tally.examples.append(_named(name))


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):  # closed
        return False


def _piped() -> bool:
    """Whether standard output is a pipe."""
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdout.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # closed, or replaced by a test runner
        return False


def _named(name: str) -> str:
    """A document's name or id as a warning shows it: quoted when it reads as a number (the
    record ``4`` skipped is not four things skipped)."""
    shown = visible(name)
    return repr(shown) if _NUMBER.fullmatch(shown) else shown


_NUMBER = re.compile(r"[+-]?[\d.,_]*\d[\d.,_]*")  # at least one digit: "-" is a name


class Messages:
    """Everything for a person, on stderr: warnings, progress, summaries.

    Paths are always passed as rich Text, so a file named ``[bold]`` stays a file name.

    Args:
        stream: standard error.
        quiet: 1 or more: nothing but errors (no warnings, progress, summary or hints).
        verbose: a line for every document skipped or warned about, and every path a walk
            left out, even on a terminal (where they are otherwise summed up by kind); a
            dedupe's whole account instead of its short summary.
    """

    def __init__(self, stream: IO[str], *, quiet: int = 0, verbose: bool = False) -> None:
        self.console = Console(file=stream, highlight=False, color_system=colours())
        # Read from the stream itself: colours forced (--color always) make no terminal.
        self.terminal = _isatty(stream)
        # On a terminal a long line is wrapped at a space, never mid-word; to a log or a pipe
        # it stays one line, whatever its length.
        self.console.soft_wrap = not self.terminal
        self.level = int(quiet)
        self.verbose = verbose
        self.passing = False
        """A dataset run: a record without a word goes to the kept records as it is, and is
        said to be passed through, not skipped."""
        self.skips: dict[str, _Kind] = {}
        self.warnings: dict[str, _Kind] = {}
        self.left_out: dict[str, _Kind] = {}
        self.summed: dict[str, _Kind] = {}  # skips a log sums up (SUMMED) too

    @property
    def quiet(self) -> bool:
        """Whether nothing but errors is shown (``-q``)."""
        return self.level >= 1

    @property
    def lists_documents(self) -> bool:
        """Whether each document skipped or warned about gets a line: when verbose, or when
        stderr is not a terminal (a log keeps every one) and warnings are on."""
        return self.verbose or (self.level == 0 and not self.terminal)

    def event(self, event: Event) -> None:
        """A document skipped or warned about, or a path a walk left out: a line of its own
        (see :attr:`lists_documents`; a path left out only when verbose), else counted by kind
        for :meth:`event_summary`."""
        if isinstance(event, Skipped) and self._passed(event):
            if self.lists_documents:
                line = Text(f"note: {_named(event.id)}: ")
                line.append(visible(event.reason))  # (no token, or no weight but 0)
                self.console.print(line.append(", passed through as it is"))
            return
        if isinstance(event, Skipped):
            kinds, kind = self.skips, event.kind
            line = Text.assemble(("warning: ", "yellow"), f"skipped {_named(event.id)}: ")
            line.append(visible(event.reason))
        elif isinstance(event, Warned):
            kinds, kind = self.warnings, event.message
            line = Text.assemble(("warning: ", "yellow"), f"{visible(event.id)}: ")
            line.append(visible(event.message))
        else:
            kinds, kind = self.left_out, event.rule
            line = Text(f"left out {visible(event.id)} ({event.rule})")
        _tally(kinds, kind, event.id)
        summed = isinstance(event, Skipped) and (event.reason in SUMMED or kind in SUMMED_KINDS)
        if summed:
            _tally(self.summed, kind, event.id)
        if self.verbose or (
            self.lists_documents and not isinstance(event, Excluded) and not summed
        ):
            self.console.print(line)

    def _passed(self, event: Skipped) -> bool:
        """Whether a record left out of the search goes to the kept records all the same."""
        return self.passing and event.kind in PASSED_OVER

    def event_summary(self, noun: str = "file") -> None:
        """What was skipped, warned about or left out and not listed line by line: by kind,
        with counts and a few examples (``noun``: what the documents are)."""
        if not self.quiet:
            if not self.lists_documents:
                # Empty documents have nothing to compare and nothing wrong: on a terminal the
                # summary's line of what was read counts them (a tree of code has an empty
                # __init__.py in every package, and every run warned of them); a log and -v
                # still name each.
                worth = {k: v for k, v in self.skips.items() if k not in PASSED_OVER}
                self._tallied("warning: ", "skipped", worth, noun)
                self._tallied("warning: ", "warned about", self.warnings, noun)
            elif not self.verbose:  # a log: what was summed, not listed
                self._tallied("warning: ", "skipped", self.summed, noun)
            if not self.verbose:
                self._tallied("note: ", "left out", self.left_out, "path")
        # Each is summed up once: what comes after (a second batch of events) is new.
        self.skips, self.warnings, self.left_out, self.summed = {}, {}, {}, {}

    def _tallied(self, label: str, verb: str, kinds: dict[str, _Kind], noun: str) -> None:
        """``warning: skipped files: 6,880 binary (e.g. a, b, c); 8 too large (...)``, with no
        total of its own (the summary's line of what was read counts every skip, those a
        terminal is not warned of among them); ``warning: bytes that are not valid text were
        replaced (2 files: a, b)``; ``note: left out 12 paths: 12 .gitignore (...)``."""
        if not kinds:
            return
        ranked = sorted(kinds.items(), key=lambda item: (-item[1].count, item[0]))

        def named(tally: _Kind) -> str:
            return ("e.g. " if tally.count > len(tally.examples) else "") + ", ".join(
                tally.examples
            )

        if kinds is self.warnings:  # each what happened, then how often and where
            detail = "; ".join(
                f"{name} ({counted(tally.count, noun)}: {named(tally)})" for name, tally in ranked
            )
        else:
            detail = "; ".join(f"{tally.count:,} {name} ({named(tally)})" for name, tally in ranked)
        if kinds is self.left_out:
            total = sum(kind.count for kind in kinds.values())
            flags = sorted({_READ_THEM[rule] for rule in kinds if rule in _READ_THEM})
            tail = f"; {' or '.join(flags)} to read them" if flags else ""
            text = f"{verb} {counted(total, noun)}: {detail}{tail}"
        else:
            unnamed = any(tally.count > len(tally.examples) for tally in kinds.values())
            tail = "; --verbose lists every one" if unnamed else ""
            text = (
                f"{detail}{tail}" if kinds is self.warnings else f"{verb} {noun}s: {detail}{tail}"
            )
        line = Text(label, style="yellow")
        line.append(text)
        self.console.print(line)

    def info(self, text: str | Text) -> None:
        """A summary or hint line. A plain string is shown as it is (no markup), with the
        names in it made visible; a Text is the package's own, styled."""
        if not self.quiet:
            self.console.print(Text(visible(text)) if isinstance(text, str) else text)

    @contextmanager
    def progress(
        self, description: str, *, shown: bool = True, unit: str | None = None
    ) -> Iterator[Progress]:
        """Progress bar over files, shown only when stderr is a terminal (and ``shown``); with
        ``unit``, a running count of what is done (``12,345 records``) whose whole is not
        known."""
        hooks = Progress()
        with doing(description), ExitStack() as stack:
            if shown and self._draws:
                whole = Column(no_wrap=True, min_width=len(f"1,000,000 {unit}"))
                done: ProgressColumn = (
                    MofNCompleteColumn()
                    if unit is None
                    else TextColumn(
                        "{task.completed:,.0f} " + unit, markup=False, table_column=whole
                    )
                )
                columns = (
                    # A long name is shortened, never the count and the time after it.
                    TextColumn(
                        "{task.description}",
                        markup=False,
                        table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1),
                    ),
                    BarColumn(bar_width=None if unit is None else 20),
                    done,
                    TimeElapsedColumn(),
                )
                bar = stack.enter_context(self._live(*columns))
                task = bar.add_task(visible(description), total=None)
                hooks.on_listed = lambda total: bar.update(task, total=total)
                hooks.on_read = lambda: bar.advance(task)
                hooks.on_advance = lambda n: bar.advance(task, n)
            yield hooks

    typing: bool = False
    """Whether a person types the input at this terminal (``-``): nothing is drawn over it."""

    @property
    def _draws(self) -> bool:
        """Whether live displays are drawn: on a terminal, unless quieted, unless a person
        types the input there, and not while the data goes into a pipe (its reader, head, jq
        or less, writes on this terminal too: a bar would be drawn among its lines and left
        behind when it stops)."""
        return not self.level and self.terminal and not self.typing and not _piped()

    def _live(self, *columns: ProgressColumn) -> RichProgress:
        """A live display on stderr that vanishes when done. It draws on stderr only: stdout
        carries data and stays the command's own (by default Rich takes it over while live,
        and records written to a file or a pipe would land on the screen)."""
        return RichProgress(
            *columns,
            console=self.console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    @contextmanager
    def status(self, description: str) -> Iterator[None]:
        """A spinner with the elapsed time for a step without a count, only on a terminal."""
        with doing(description), ExitStack() as stack:
            if self._draws:
                columns = (
                    SpinnerColumn(),
                    TextColumn("{task.description}", markup=False),
                    TimeElapsedColumn(),
                )
                spinner = stack.enter_context(self._live(*columns))
                spinner.add_task(visible(description), total=None)
            yield

    def corpus_summary(self, docs: Corpus, verb: str) -> None:
        """``fingerprinted 8 documents (2 skipped: 1 binary, 1 empty)``."""
        noun = "file" if docs.stamps is not None else "record"
        self.counts_summary(len(docs), docs.skipped, verb, noun)

    def counts_summary(
        self, documents: int, skipped: Sequence[Skipped], verb: str, noun: str = "file"
    ) -> None:
        """The same from counts, for output that streamed (``noun``: what the documents are);
        a note when nothing was read."""
        passed_over = bool(skipped or self.left_out)
        self.event_summary(noun)
        passed = skip_counts([event for event in skipped if self._passed(event)])
        skipped = [event for event in skipped if not self._passed(event)]
        by_reason = skip_counts(skipped)
        detail = ", ".join(f"{count:,} {reason}" for reason, count in sorted(by_reason.items()))
        through = ", ".join(f"{count:,} {_PASSED[kind]}" for kind, count in sorted(passed.items()))
        parts = [f"{through}, passed through"] if passed else []
        parts += [f"{len(skipped):,} skipped: {detail}"] if by_reason else []
        tail = f" ({'; '.join(parts)})" if parts else ""
        self.info(f"{verb} {counted(documents, 'document')}{tail}")
        if documents == 0:
            why = (
                "each was skipped or left out, as counted above"
                if passed_over
                else "none was found"
            )
            self.info(Text(f"note: no document was read: {why}", style="yellow"))

    def against_summary(self, result: Decontamination) -> None:
        """What was read, how the reference was compared, and how many came near it."""
        config, scheme = result.config, result.scheme
        self.corpus_summary(result.corpus, "read")
        n, m = len(result.corpus), len(result.reference)
        if scheme.kind == "every":
            why = f": {scheme.why}" if scheme.why else ""
            how = (
                f"compared {counted(n, 'document')} with {counted(m, 'reference document')}, "
                f"every pair ({result.candidates:,}{why})"
            )
        else:
            how = (
                f"{counted(result.candidates, 'candidate pair')} against "
                f"{counted(m, 'reference document')} from "
                f"{scheme.label(result.corpus.settings.bits)} (expected recall at cosine "
                f"{config.threshold:g}: {scheme.expected_recall:.2f})"
            )
        self.info(
            f"{how}; {counted(int(result.flagged.size), 'document')} within "
            f"{config.verify.value} cosine {config.threshold:g} of one "
            f"({counted(len(result.pairs), 'pair')})"
        )

    def dataset_summary(
        self, tally: Tally, targets: Targets, why: str = "as near-duplicates"
    ) -> None:
        """``kept 7 of 10 records in out.jsonl: 2 dropped as near-duplicates, 1 skipped``
        (``why``: what the dropped ones are)."""
        where = f" in {visible(targets.kept)}" if targets.kept else ""
        dropped = f" to {visible(targets.dropped)}" if targets.dropped else ""
        malformed = f", {tally.malformed:,} of them malformed" if tally.malformed else ""
        annotated = (
            f"; each with its fate in {visible(targets.annotated)}" if targets.annotated else ""
        )
        passed = (
            f" ({tally.unfingerprinted:,} of them not compared, passed through)"
            if tally.unfingerprinted
            else ""
        )
        self.info(
            f"kept {tally.kept:,} of {counted(tally.read, 'record')}{where}{passed}: "
            f"{tally.dropped:,} dropped {why}{dropped}, {tally.skipped:,} "
            f"skipped{malformed}{annotated}"
        )

    def apply_summary(self, statuses: Counter[str], *, executed: bool, journal: str | None) -> None:
        """``3 done, 1 refused; journal: plan.json.journal`` or the dry run's equivalent."""
        names = {
            "done": "done",
            "already_done": "already done",
            "would_do": "would be taken",
            "refused": "refused",
            "failed": "failed",
        }
        # What would be taken is named ("3 would be taken" left the reader to guess what).
        counts = ", ".join(
            counted(statuses[status], "step") + f" {name}"
            if status == "would_do"
            else f"{statuses[status]:,} {name}"
            for status, name in names.items()
            if statuses[status]
        )
        if not executed:
            self.info(f"dry run: {counts or 'no steps'}; nothing was changed (add --yes to act)")
        else:
            self.info(f"{counts or 'no steps'}; journal: {journal}")

    def dedupe_summary(self, result: DedupeResult, verb: str = "read") -> None:
        """What was read and found, how much of it, and one hint at most; with ``-v`` the
        whole account (:meth:`dedupe_account`). Nothing more when nothing was read."""
        if self.verbose:
            self.dedupe_account(result, verb)
            return
        self.corpus_summary(result.corpus, verb)
        if not len(result.corpus):
            return
        self.info(found_line(result))
        self.info(recall_line(result))
        hint = hint_line(result)
        if hint is not None:
            self.info(Text(hint, style="yellow"))
        if result.audit is not None:
            self.info(_audit_line(result))

    def dedupe_account(self, result: DedupeResult, verb: str = "read") -> None:
        """Counts, the scheme, expected and measured recall, every hint, and the audit."""
        config, bits = result.config, result.corpus.settings.bits
        self.corpus_summary(result.corpus, verb)
        if not len(result.corpus):
            return
        scheme = result.scheme.label(bits)
        how = "chosen by the planner" if result.survey is not None else "as asked"
        gate = (
            f" ({result.gated_out:,} too far in Hamming distance to check)"
            if result.gated_out
            else ""
        )
        empty = (
            f" and {counted(result.empty_pairs, 'pair')} of empty documents (--include-empty)"
            if result.empty_pairs
            else ""
        )
        added = result.closure.found if result.closure is not None else 0
        if result.scheme.kind == "every":  # no candidates: every product was taken
            found = f"every pair compared by exact products ({how}), "
            found += f"{counted(result.candidates, 'pair')} near the threshold checked"
        else:
            found = f"{counted(result.candidates, 'candidate pair')} from {scheme} ({how}){gate}"
        self.info(
            f"{found}; "
            f"{counted(len(result.pairs) - result.empty_pairs - added, 'pair')} at "
            f"{config.verify.value} cosine >= {config.threshold:g}{empty}; "
            f"{counted(len(result.clusters), 'cluster')} ({clustering_meaning(result)})"
        )
        closure = group_pairs_line(result)
        if closure:
            self.info(closure)
        self.info(
            f"expected recall at cosine {config.threshold:g}: {result.expected_recall:.2f} "
            f"({expected_recall_meaning(result)})"
        )
        self.info(measured_line(result))
        if result.ambiguity is not None:
            self.info(Text(ambiguity_line(result.ambiguity), style="yellow"))
        if result.advice is not None:
            advice = result.advice
            advised = advice.assessment.scheme
            work = (
                "by exact products of every pair"
                if advised.kind == "every"
                else f"comparing about {advice.assessment.expected_candidates:,.0f} unrelated pairs"
            )
            self.info(
                Text(
                    f"hint: {advised.option} would find {share_text(advice.recall)} of the "
                    f"pilot's pairs, {work}",
                    style="yellow",
                )
            )
        elif result.suggested_blocks is not None:
            self.info(
                Text(
                    f"hint: recall is low; --blocks {result.suggested_blocks} reaches 0.95 at "
                    "this threshold (more candidates to verify)",
                    style="yellow",
                )
            )
        elif result.suggested_max_distance is not None:
            self.info(
                Text(
                    f"hint: recall is low; --max-distance {result.suggested_max_distance} "
                    "reaches 0.95 at this threshold (more candidates to verify)",
                    style="yellow",
                )
            )
        elif result.survey is not None and result.survey.chosen is None:
            tfidf = (
                " or --weighting tfidf (common words make these documents look alike)"
                if result.corpus.settings.common_words_dominate
                else ""
            )
            self.info(
                Text(
                    f"hint: no scheme at {bits} bits reaches {result.survey.target:g} expected "
                    f"recall at cosine {config.threshold:g} within the candidate budget"
                    f"{budget_advice(result.survey)}; or try more --bits{tfidf}",
                    style="yellow",
                )
            )
        elif result.expected_recall < 0.9 and not reaches_target(result):
            self.info(Text("hint: recall is low; try more --bits", style="yellow"))
        if result.audit is not None:
            self.info(_audit_line(result))


def _audit_line(result: DedupeResult) -> str:
    """What ``--audit`` measured: asked for, so shown in the short summary too."""
    audit = result.audit
    assert audit is not None
    return (
        f"audit: {counted(audit.similar_pairs, 'pair')} with true cosine >= "
        f"{result.config.threshold:g}; the blocks found {audit.found:,} (recall "
        f"{audit.recall:.2f}) and proposed "
        f"{counted(audit.false_candidates, 'false candidate')}"
    )
