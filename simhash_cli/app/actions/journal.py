"""The journal of an apply run: JSON Lines beside the plan, each step ``started`` before and its
outcome after, every line fsynced, so that a rerun after a kill skips what was done and checks
what was cut short.

Its header ties it to one plan (by SHA-256), action and destination; another plan's journal is
refused.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ...errors import InputError
from .steps import Status, Step

__all__ = ["JOURNAL_VERSION", "Journal"]


JOURNAL_VERSION = 1


class Journal:
    """An append-only JSON Lines record of a run's steps, each line synced to disk.

    The first line ties the journal to one plan (its SHA-256), action and destination; a
    journal of anything else is refused rather than mixed in.
    """

    def __init__(self, path: str, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header
        self.done: set[int] = set()
        self._descriptor: int | None = None

    def open(self) -> None:
        """Read what an earlier run recorded, then append to it (or start it)."""
        lines = self._read()
        if lines:
            first = lines[0]
            if {k: first.get(k) for k in self.header} != self.header:
                raise InputError(
                    f"the journal {self.path} records another plan, action or destination: "
                    "give another {journal} FILE, or move that one away",
                    parameters=("journal",),
                )
            # A step started and not recorded as done is not skipped: the run checks whether
            # it was finished (_finished) and, if not, takes it again.
            finished = (Status.DONE.value, Status.ALREADY_DONE.value)
            self.done = {line["step"] for line in lines[1:] if line.get("status") in finished}
        try:
            self._descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise InputError(f"cannot write the journal {self.path}: {exc.strerror}") from None
        if not lines:
            self._append(self.header)

    def _read(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise InputError(f"cannot read the journal {self.path}: {exc.strerror}") from None
        raw = data.split(b"\n")
        complete, tail = raw[:-1], raw[-1]  # a last line without its newline was cut short
        lines: list[dict[str, Any]] = []
        for number, line in enumerate(complete, 1):
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not isinstance(record, dict):
                raise InputError(f"{self.path}:{number}: not a simhash apply journal line")
            lines.append(record)
        if tail:
            # A line cut short by a kill: dropped, so that the next line starts on its own
            # (a journal holding only part of its first line starts again).
            with open(self.path, "r+b") as handle:
                handle.truncate(len(data) - len(tail))
        return lines

    def _append(self, record: dict[str, Any]) -> None:
        assert self._descriptor is not None
        os.write(self._descriptor, (json.dumps(record, ensure_ascii=True) + "\n").encode())
        os.fsync(self._descriptor)

    def record(self, step: Step, status: str, detail: str = "") -> None:
        entry: dict[str, Any] = {"step": step.number, "path": step.target.path, "status": status}
        if detail:
            entry["detail"] = detail
        self._append(entry)

    def close(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None
