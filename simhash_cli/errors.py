"""Every error simhash-cli raises on purpose, and the exit codes the command line maps them to.

Every error a user can cause is a :class:`SimhashError`; the command line prints its message
as one ``Error: ...`` line on stderr and exits with its :attr:`~SimhashError.exit_code`.
Anything else escaping is a bug in simhash-cli, not a user mistake.

An error that concerns parameters names them as ``{name}`` in its message and lists them in
:attr:`~SimhashError.parameters`: the library never spells a command-line flag. The command
line renders ``{max_candidates}`` as ``--max-candidates``; ``str(error)`` gives the keyword
argument's name, ``max_candidates``, as a caller of the library would write it.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from enum import IntEnum
from typing import Any

__all__ = [
    "BadValueError",
    "BusyError",
    "CandidateBudgetError",
    "ExitCode",
    "FileChanged",
    "IndexBusyError",
    "InputError",
    "KeyCollision",
    "MalformedLineError",
    "Moved",
    "NotAFile",
    "OutputError",
    "PairBudgetError",
    "ParameterError",
    "PathNotFoundError",
    "PlaceRefused",
    "SettingsMismatchError",
    "SimhashError",
    "TooLarge",
    "UsageError",
    "WorkerLostError",
]


class ExitCode(IntEnum):
    """Process exit codes, in one place so that scripts can rely on them."""

    OK = 0
    """Success (for ``dedupe --check``: no pair was flagged)."""
    ERROR = 1
    """Bad input data, or fingerprints whose settings do not fit together."""
    USAGE = 2
    """Misuse: unknown option, a value out of range, a path that does not exist."""
    DUPLICATES_FOUND = 3
    """``dedupe --check`` flagged at least one pair."""
    INCOMPLETE = 4
    """``apply``: some steps were refused or failed (the others were taken; see the report)."""
    INTERRUPTED = 130
    """Interrupted by Ctrl-C (128 + SIGINT)."""
    BROKEN_PIPE = 141
    """The reader of stdout went away (128 + SIGPIPE), as in ``simhash dedupe . | head -1``."""


def keyword(name: str) -> str:
    """A parameter as the library spells it: its keyword argument's name."""
    return name


def _restore(cls: type[SimhashError], message: str, parameters: tuple[str, ...]) -> SimhashError:
    error = cls.__new__(cls)
    SimhashError.__init__(error, message, parameters=parameters)
    return error


class SimhashError(Exception):
    """Base class of every error a user of simhash-cli can cause.

    Args:
        message: what went wrong and what to do, with ``{name}`` where a parameter is named.
        parameters: the names of the parameters the message names.
    """

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, *, parameters: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.parameters = parameters

    def render(self, spell: Callable[[str], str] = keyword) -> str:
        """The message with each parameter spelled by ``spell`` (the command line: its flag)."""
        text = self.message
        for name in self.parameters:
            text = text.replace("{" + name + "}", spell(name))
        return text

    def __str__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[Any, ...]:
        # Raised in a worker process, it must survive pickling with its parameters.
        return _restore, (type(self), self.message, self.parameters)


class UsageError(SimhashError):
    """Options or arguments that do not go together, found before any work is done."""

    exit_code = ExitCode.USAGE


class BadValueError(UsageError):
    """One parameter's value that cannot be used (``parameter``), found before any work."""

    def __init__(self, message: str, *, parameter: str) -> None:
        super().__init__(message, parameters=(parameter,))

    @property
    def parameter(self) -> str:
        """The parameter whose value is refused."""
        return self.parameters[0]


class ParameterError(SimhashError, ValueError):
    """A tuning parameter (bits, seed, blocks, threshold, n-gram size) is out of range."""

    exit_code = ExitCode.USAGE


class InputError(SimhashError):
    """Input data that cannot be used: malformed JSON Lines, a non-finite weight, ..."""


class PathNotFoundError(InputError):
    """A path named on the command line does not exist; nothing has been read yet."""

    exit_code = ExitCode.USAGE


class SettingsMismatchError(InputError):
    """Fingerprints made with different settings (bits, seed, tokenizer, weighting) were mixed."""


class MalformedLineError(InputError):
    """A line of JSON input that is not a valid record: ``FILE:LINE: what is wrong``."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where
        self.detail = detail

    def __reduce__(self) -> tuple[Any, ...]:
        return MalformedLineError, (self.where, self.detail)


class OutputError(SimhashError):
    """The report cannot be written where it was asked to go (``-o FILE``)."""


class CandidateBudgetError(SimhashError):
    """The blocking scheme would produce more candidate pairs than the budget allows."""


class PairBudgetError(SimhashError):
    """More pairs reach the threshold than the budget (``max_pairs``) allows."""


class IndexBusyError(InputError):
    """Another process held the index's write lock for longer than the busy timeout."""


class BusyError(InputError):
    """Another process is acting on the same plan or journal (it holds the lock)."""


class WorkerLostError(SimhashError):
    """A worker died (killed, or out of memory) while it held or ran a task of ours."""


# ---------------------------------------------------------------------------- signals
# Raised and caught inside the package to change course; none ever reaches a user.


class KeyCollision(Exception):
    """Two different tokens hashed to one 64-bit key (about 1 in 10**8 for a million words):
    the tokenizer's fast path gives way to the exact one."""


class FileChanged(Exception):
    """A file that is not what the scan read (its reason, in words): a plan marks it skip."""


class PlaceRefused(Exception):
    """A file apply may not act on where it is (outside the roots it may act in, or reached
    through a symbolic link): ``reason`` says which, for the step's outcome."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Moved(Exception):
    """A file was moved by another run while this one was moving it: its new name holds it."""


class NotAFile(OSError):
    """The path leads to something that is not a regular file (``strerror`` says what: a FIFO,
    a device, a directory), refused by the one opener (:mod:`simhash_cli.io.opening`)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", path)


class TooLarge(Exception):
    """A file over the size limit (its size, or "more than N bytes" for a stream): skipped."""
