"""The journal of an apply run, and the locks that keep two runs of one plan apart.

The journal is JSON Lines beside the plan: each step ``started`` before and its outcome after,
every line fsynced, so that a rerun after a kill knows what was cut short. Its header ties it
to one plan (by SHA-256), action and destination; another plan's journal is refused.

A file that is not this plan's journal is never opened for writing: an existing file is read
(and locked) through a read-only descriptor and must begin with this run's header, whole,
before anything is appended; a new journal comes into being with its header already in it
(written under a temporary name, then linked to its name, which fails rather than replace a
file that appeared meanwhile). While a run acts it holds an exclusive lock (``flock``) on the
plan and on the journal, so a second run of the same plan, or onto the same journal, is
refused at once instead of racing the first.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import BusyError, InputError, OutputError
from ...io.opening import open_file
from .steps import Action, Status, Step

__all__ = ["JOURNAL_VERSION", "Journal", "exclusive", "read_journal"]


JOURNAL_VERSION = 1

# "undoing" and "undone": a step taken back by apply --undo (:mod:`.undo`).
_STATUSES = {status.value for status in Status} | {"started", "undoing", "undone"}


def _lock(descriptor: int, path: str, what: str) -> None:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise BusyError(
            f"another simhash apply is acting on {what} {path}: wait for it to end "
            "(two runs of one plan at once would race for the same files)"
        ) from None


@contextmanager
def exclusive(path: str, what: str = "the plan") -> Iterator[None]:
    """Hold an exclusive lock on the file at ``path`` (opened read-only) for the block.

    Raises:
        BusyError: another process holds it.
        InputError: the file cannot be opened.
    """
    try:
        handle = open_file(path)
    except OSError as exc:
        raise InputError(f"cannot open {what} {path}: {exc.strerror}") from None
    with handle:
        _lock(handle.fileno(), path, what)
        yield


def _opened(path: str) -> int:
    """A read-only descriptor of the regular file at ``path`` (through the one opener)."""
    with open_file(path) as handle:
        return os.dup(handle.fileno())


def _encoded(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=True) + "\n").encode()


class Journal:
    """An append-only JSON Lines record of a run's steps, each line synced to disk.

    Args:
        path: where the journal is (or is to be).
        header: its first line: the plan (its SHA-256), action and destination.
        steps: how many steps the plan has (a line naming another step is not ours).
    """

    def __init__(self, path: str, header: dict[str, Any], steps: int) -> None:
        self.path = path
        self.header = header
        self.steps = steps
        self._reader: int | None = None
        self._descriptor: int | None = None

    def open(self) -> None:
        """Lock and check the journal (making it, header first, when there is none), then
        append to it.

        Raises:
            InputError: not this plan's journal, or a line that is not a journal's.
            BusyError: another run holds it.
        """
        self._reader = self._open_locked()
        data = self._read_all(self._reader)
        keep = self._check(data)
        try:
            # Opened again to write, never through a link, and only if it is still the file
            # checked: a name flipped to a link or another file meanwhile is not written.
            self._descriptor = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
            )
            checked, opened = os.fstat(self._reader), os.fstat(self._descriptor)
            if (checked.st_dev, checked.st_ino) != (opened.st_dev, opened.st_ino):
                self.close()
                raise InputError(
                    f"the journal {self.path} was replaced while it was checked: "
                    "nothing is written to it"
                )
            if keep < len(data):  # a last line cut short by a kill: our own, dropped
                os.ftruncate(self._descriptor, keep)
        except OSError as exc:
            self.close()
            raise InputError(f"cannot write the journal {self.path}: {exc.strerror}") from None

    def _open_locked(self) -> int:
        for _ in range(2):
            try:
                descriptor = _opened(self.path)
            except FileNotFoundError:
                self._create()
                continue
            except OSError as exc:
                raise InputError(f"cannot read the journal {self.path}: {exc.strerror}") from None
            try:
                _lock(descriptor, self.path, "the journal")
            except BusyError:
                os.close(descriptor)
                raise
            return descriptor
        raise InputError(f"the journal {self.path} vanishes as it is made")

    def _create(self) -> None:
        """A new journal, born with its header (never an empty or half-written first line)."""
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            descriptor, temp = tempfile.mkstemp(prefix=".journal.", dir=directory)
        except OSError as exc:
            raise InputError(f"cannot write the journal {self.path}: {exc.strerror}") from None
        try:
            with open(descriptor, "wb") as handle:
                handle.write(_encoded(self.header))
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, 0o644)
            with contextlib.suppress(FileExistsError):  # another run made it: read that one
                os.link(temp, self.path)
        except OSError as exc:
            raise InputError(f"cannot write the journal {self.path}: {exc.strerror}") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)

    def _read_all(self, descriptor: int) -> bytes:
        chunks = []
        try:
            while chunk := os.read(descriptor, 1 << 20):
                chunks.append(chunk)
        except OSError as exc:
            self.close()
            raise InputError(f"cannot read the journal {self.path}: {exc.strerror}") from None
        return b"".join(chunks)

    def _check(self, data: bytes) -> int:
        """How many bytes of ``data`` to keep: the whole lines, after checking that the first
        is this run's header and every other one a line this journal could hold."""
        lines = data.split(b"\n")
        complete, tail = lines[:-1], lines[-1]
        header = _parsed(complete[0]) if complete else None
        if header is None or {k: header.get(k) for k in self.header} != self.header:
            self.close()
            raise InputError(
                f"{self.path} is not the journal of this plan, action and destination "
                "(it is left as it is): give another {journal} FILE, or move that one away",
                parameters=("journal",),
            )
        for number, line in enumerate(complete[1:], 2):
            record = _parsed(line)
            if record is None or not self._fits(record):
                self.close()
                raise InputError(f"{self.path}:{number}: not a line of a simhash apply journal")
        return len(data) - len(tail)

    def _fits(self, record: dict[str, Any]) -> bool:
        step, status = record.get("step"), record.get("status")
        return (
            isinstance(step, int)
            and not isinstance(step, bool)
            and 1 <= step <= self.steps
            and status in _STATUSES
            and isinstance(record.get("path"), str)
        )

    def _append(self, record: dict[str, Any]) -> None:
        assert self._descriptor is not None
        try:
            os.write(self._descriptor, _encoded(record))
            os.fsync(self._descriptor)
        except OSError as exc:
            raise OutputError(
                f"cannot write the journal {self.path}: {exc.strerror}; the run stopped there "
                "(run it again when it can be written: each step is checked on the files)"
            ) from None

    def record(self, step: Step, status: str, detail: str = "") -> None:
        entry: dict[str, Any] = {"step": step.number, "path": step.target.path, "status": status}
        if detail:
            entry["detail"] = detail
        self._append(entry)

    def close(self) -> None:
        for name in ("_descriptor", "_reader"):
            descriptor = getattr(self, name)
            if descriptor is not None:
                os.close(descriptor)
                setattr(self, name, None)


def read_journal(path: str) -> tuple[dict[str, Any], dict[int, str]]:
    """A journal's header and each step's last word in it, read as hostile input.

    Raises:
        InputError: it cannot be read, or is not a simhash apply journal.
    """
    try:
        with open_file(path) as handle:
            data = handle.read()
    except FileNotFoundError:
        raise InputError(f"no such journal: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read the journal {path}: {exc.strerror}") from None
    lines = data.split(b"\n")[:-1]  # a last line cut short by a kill says nothing yet
    header = _parsed(lines[0]) if lines else None
    actions = {action.value for action in Action}
    if (
        header is None
        or header.get("journal") != JOURNAL_VERSION
        or not isinstance(header.get("plan"), str)
        or header.get("action") not in actions
    ):
        raise InputError(f"{path} is not the journal of a simhash apply run")
    last: dict[int, str] = {}
    for number, line in enumerate(lines[1:], 2):
        record = _parsed(line)
        step = None if record is None else record.get("step")
        if record is None or not isinstance(step, int) or record.get("status") not in _STATUSES:
            raise InputError(f"{path}:{number}: not a line of a simhash apply journal")
        last[step] = str(record["status"])
    return header, last


def _parsed(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None
