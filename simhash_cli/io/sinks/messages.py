"""Everything for a person, on standard error: warnings, progress, summaries and hints.

Paths are always passed as Rich Text, so a file named ``[bold]`` stays a file name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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
from rich.text import Text

from ...core.corpus import Corpus
from ...core.events import Event, Progress, Skipped
from ...core.minhash import least_jaccard
from ...core.search import DedupeResult
from .formats import counted
from .records import budget_advice, skip_counts
from .visible import visible

__all__ = ["Messages"]


class Messages:
    """Everything for a person, on stderr: warnings, progress, summaries.

    Paths are always passed as rich Text, so a file named ``[bold]`` stays a file name.
    """

    def __init__(self, stream: IO[str], *, quiet: bool = False) -> None:
        self.console = Console(file=stream, highlight=False, soft_wrap=True)
        self.quiet = quiet

    def event(self, event: Event) -> None:
        """A skipped or warned document, one line each."""
        if self.quiet:
            return
        if isinstance(event, Skipped):
            line = Text.assemble(
                ("warning: ", "yellow"), "skipped ", visible(event.id), f": {visible(event.reason)}"
            )
        else:
            line = Text.assemble(
                ("warning: ", "yellow"), visible(event.id), f": {visible(event.message)}"
            )
        self.console.print(line)

    def info(self, text: str | Text) -> None:
        """A summary or hint line. A plain string is shown as it is (no markup), with the
        names in it made visible; a Text is the package's own, styled."""
        if not self.quiet:
            self.console.print(Text(visible(text)) if isinstance(text, str) else text)

    @contextmanager
    def progress(self, description: str, *, shown: bool = True) -> Iterator[Progress]:
        """Progress bar over files, shown only when stderr is a terminal (and ``shown``)."""
        hooks = Progress()
        if self.quiet or not shown or not self.console.is_terminal:
            yield hooks
            return
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with self._live(*columns, TimeElapsedColumn()) as bar:
            task = bar.add_task(description, total=None)
            hooks.on_listed = lambda total: bar.update(task, total=total)
            hooks.on_read = lambda: bar.advance(task)
            yield hooks

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
        if self.quiet or not self.console.is_terminal:
            yield
            return
        columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
        with self._live(*columns) as spinner:
            spinner.add_task(description, total=None)
            yield

    def corpus_summary(self, docs: Corpus, verb: str) -> None:
        """``fingerprinted 8 documents (2 skipped: 1 binary, 1 empty)``."""
        self.counts_summary(len(docs), docs.skipped, verb)

    def counts_summary(self, documents: int, skipped: Sequence[Skipped], verb: str) -> None:
        """The same from counts, for output that streamed."""
        by_reason = skip_counts(skipped)
        detail = ", ".join(f"{count} {reason}" for reason, count in sorted(by_reason.items()))
        tail = f" ({len(skipped)} skipped: {detail})" if by_reason else ""
        self.info(f"{verb} {counted(documents, 'document')}{tail}")

    def apply_summary(self, statuses: Counter[str], *, executed: bool, journal: str | None) -> None:
        """``3 done, 1 refused; journal: plan.json.journal`` or the dry run's equivalent."""
        names = {
            "done": "done",
            "already_done": "already done",
            "would_do": "would be taken",
            "refused": "refused",
            "failed": "failed",
        }
        counts = ", ".join(
            f"{statuses[status]:,} {name}" for status, name in names.items() if statuses[status]
        )
        if not executed:
            self.info(f"dry run: {counts or 'no steps'}; nothing was changed (add --yes to act)")
        else:
            self.info(f"{counts or 'no steps'}; journal: {journal}")

    def dedupe_summary(self, result: DedupeResult, verb: str = "read") -> None:
        """Counts, expected recall, a hint when it is low, and the audit."""
        config, bits = result.config, result.corpus.settings.bits
        self.corpus_summary(result.corpus, verb)
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
        self.info(
            f"{counted(result.candidates, 'candidate pair')} from {scheme} ({how}){gate}; "
            f"{counted(len(result.pairs) - result.empty_pairs, 'pair')} at "
            f"{config.verify.value} cosine >= {config.threshold:g}{empty}; "
            f"{counted(len(result.clusters), 'cluster')}"
        )
        self.info(
            f"expected recall at cosine {config.threshold:g}: {result.expected_recall:.2f} "
            f"({expected_recall_meaning(result)})"
        )
        found = result.run_recall
        if found is not None:
            about = "about " if found.sampled else ""
            self.info(
                f"this run found about {found.recall:.2f} of {estimated_pairs(result)} "
                f"(estimated from {about or 'the '}{counted(found.pairs, 'pair')} it found "
                f"among them and each one's chance of being found{rare_pairs(found.rare, about)})"
            )
        if result.advice is not None:
            advice = result.advice
            self.info(
                Text(
                    f"hint: {advice.assessment.scheme.option} would find about "
                    f"{advice.recall:.2f} of them, comparing about "
                    f"{advice.assessment.expected_candidates:,.0f} unrelated pairs",
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
        elif result.expected_recall < 0.9:
            self.info(Text("hint: recall is low; try more --bits", style="yellow"))
        audit = result.audit
        if audit is not None:
            self.info(
                f"audit: {counted(audit.similar_pairs, 'pair')} with true cosine >= "
                f"{config.threshold:g}; the blocks found {audit.found:,} (recall "
                f"{audit.recall:.2f}) and proposed "
                f"{counted(audit.false_candidates, 'false candidate')}"
            )


def expected_recall_meaning(result: DedupeResult) -> str:
    """What the expected recall of the result's scheme is the chance of."""
    if result.scheme.rows is None:
        return "chance that a pair exactly at the threshold becomes a candidate"
    least = float(least_jaccard(result.config.threshold))
    return (
        "chance that a pair exactly at the threshold becomes a candidate when its word sets "
        f"overlap as little as that cosine allows, Jaccard {least:.2f}"
    )


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
