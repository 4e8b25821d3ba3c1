"""Errors raised by the library and the exit codes the command line maps them to.

Every error a user can cause is a :class:`SimhashError`; the command line prints its message
as one ``Error: ...`` line on stderr and exits with its :attr:`~SimhashError.exit_code`.
Anything else escaping is a bug in simhash-cli, not a user mistake.
"""

from __future__ import annotations

from enum import IntEnum


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


class SimhashError(Exception):
    """Base class of every error a user of simhash-cli can cause."""

    exit_code: ExitCode = ExitCode.ERROR


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

    def __reduce__(self) -> tuple[type[MalformedLineError], tuple[str, str]]:
        # Raised in a worker process, it must survive pickling on its way back.
        return MalformedLineError, (self.where, self.detail)


class OutputError(SimhashError):
    """The report cannot be written where it was asked to go (``-o FILE``)."""
