"""The step a run is in, as the messages name it ("reading files", "verifying pairs"): memory
that runs out inside a step is known to have run out there, and the one line of the error says
so. Its own module, so that the command group reads it without importing the messages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["doing", "step_of"]

_DOING = "simhash_doing"


@contextmanager
def doing(description: str) -> Iterator[None]:
    """Run the block as the step ``description``: memory that runs out inside it is known to
    have run out there (the innermost step names it; :func:`step_of` reads it)."""
    try:
        yield
    except MemoryError as exc:
        if not hasattr(exc, _DOING):
            setattr(exc, _DOING, description)
        raise


def step_of(exc: BaseException) -> str | None:
    """The step :func:`doing` found ``exc`` in, if any."""
    found = getattr(exc, _DOING, None)
    return found if isinstance(found, str) else None
