"""How the application talks to the face: one hooks object for everything a person is told
while a command runs (documents skipped or warned about, progress, a spinner, a line of
information). The command line's is :class:`simhash_cli.io.sinks.messages.Messages`;
:class:`Silent` tells nobody anything (the library's, and tests')."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from ..core.events import Event, Progress

__all__ = ["Hooks", "Silent"]


class Hooks(Protocol):
    """What a run function may tell a person."""

    def event(self, event: Event) -> None:
        """A document skipped, or used with a warning."""

    def info(self, text: str) -> None:
        """A line of information (a summary, what was written where)."""

    def progress(
        self, description: str, *, shown: bool = True, unit: str | None = None
    ) -> AbstractContextManager[Progress]:
        """Progress over counted work (files read, steps taken) while the block runs; with
        ``unit``, a count of work whose whole is not known (``records``)."""

    def status(self, description: str) -> AbstractContextManager[None]:
        """A spinner for work without a count while the block runs."""


class Silent:
    """Hooks that tell nobody anything."""

    def event(self, event: Event) -> None:
        """Nothing."""

    def info(self, text: str) -> None:
        """Nothing."""

    @contextmanager
    def progress(
        self, description: str, *, shown: bool = True, unit: str | None = None
    ) -> Iterator[Progress]:
        """No callbacks: nothing is counted."""
        yield Progress()

    @contextmanager
    def status(self, description: str) -> Iterator[None]:
        """Nothing."""
        yield
