"""A plan file -> a :class:`~.steps.LoadedPlan`, trusted only as far as it checks out.

A plan is a file anyone can edit. It is read as hostile input: every path must be absolute,
resolved and spelled once (no ``/x/./kept``, no ``..``, no NUL), no file may appear twice under
any spelling or in two clusters (by its recorded device and inode, too), each cluster keeps
exactly the file it names, and the paths it scanned (``roots``) are recorded, so that
:mod:`.checks` refuses any step outside them.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from ...errors import InputError, PathNotFoundError, TooLarge
from ...io.opening import read_bounded
from ..plans.document import PLAN_VERSION, FileState
from ..plans.seal import check_seal
from .steps import LoadedPlan, Step

__all__ = ["load_plan"]

_ACTIONS = ("keep", "remove", "protected", "skip")
_NOT_A_PLAN = "not a plan written by simhash dedupe --plan"


def _field(entry: dict[str, Any], name: str, kind: type, where: str) -> Any:
    value = entry.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"{where}: '{name}' must be {kind.__name__}, not {value!r}")
    return value


def _path(value: Any, where: str, what: str = "path") -> str:
    """A path as plans record them: absolute, normalised, without NUL."""
    if not isinstance(value, str):
        raise InputError(f"{where}: '{what}' must be str, not {value!r}")
    if "\0" in value:
        raise InputError(f"{where}: {what} {value!r} holds a NUL byte")
    if not os.path.isabs(value) or os.path.normpath(value) != value or value.startswith("//"):
        raise InputError(
            f"{where}: {what} {value!r} is not an absolute, normalised path (plans record "
            "each file once, as /a/b)"
        )
    return value


def _planned(entry: dict[str, Any], where: str) -> FileState:
    digest = _field(entry, "sha256", str, where)
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise InputError(f"{where}: 'sha256' is not a SHA-256 hex digest")
    return FileState(
        _path(entry.get("path"), where),
        _field(entry, "device", int, where),
        _field(entry, "inode", int, where),
        _field(entry, "size", int, where),
        _field(entry, "mtime_ns", int, where),
        digest,
    )


PLAN_LIMIT = 4 << 30
"""The largest plan read (a plan of ten million files is about 4 GB)."""


def _read(path: str) -> bytes:
    try:
        return read_bounded(path, PLAN_LIMIT)
    except FileNotFoundError:
        raise PathNotFoundError(f"no such plan: {path}") from None
    except TooLarge as exc:
        raise InputError(f"{path}: not a plan ({exc})") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"cannot read the plan {path}: {reason}") from None


def _document(path: str, data: bytes) -> dict[str, Any]:
    try:
        plan = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}: {_NOT_A_PLAN} ({exc})") from None
    if not isinstance(plan, dict) or "clusters" not in plan:
        raise InputError(f"{path}: {_NOT_A_PLAN}")
    if plan.get("version") != PLAN_VERSION:
        raise InputError(
            f"{path}: plan version {plan.get('version')!r}, this simhash reads version "
            f"{PLAN_VERSION}: make the plan again with simhash dedupe --plan"
        )
    return plan


def _paths(plan: dict[str, Any], key: str, where: str) -> list[str]:
    value = plan.get(key, [])
    if not isinstance(value, list):
        raise InputError(f"{where}: '{key}' must be a list of absolute paths")
    return [_path(item, where, key) for item in value]


class _Members:
    """Every file a plan names, by spelling and by recorded identity: none twice."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._files: dict[tuple[int, int], str] = {}

    def add_name(self, name: str, where: str, position: int) -> None:
        if name in self._names:
            raise InputError(f"{where}: {name!r} is also in {self._names[name]}")
        self._names[name] = f"cluster {position}"

    def add_file(self, state: FileState, where: str) -> None:
        key = (state.device, state.inode)
        if key in self._files:
            raise InputError(
                f"{where}: {state.path!r} and {self._files[key]!r} are recorded as one file "
                "(same device and inode)"
            )
        self._files[key] = state.path


def load_plan(path: str) -> LoadedPlan:
    """Read a plan written by ``dedupe --plan`` and check that it is whole and consistent:
    each cluster keeps exactly the file it names, and no file appears twice.

    Raises:
        InputError: unreadable, not a plan, another version, or inconsistent.
    """
    data = _read(path)
    plan = _document(path, data)
    protect = _paths(plan, "protect", path)
    roots = _paths(plan, "roots", path)
    if not roots:
        raise InputError(f"{path}: 'roots' (the paths the plan scanned) must not be empty")
    clusters = plan["clusters"]
    if not isinstance(clusters, list):
        raise InputError(f"{path}: 'clusters' must be a list")
    steps: list[Step] = []
    members = _Members()
    for position, cluster in enumerate(clusters):
        where = f"{path}: cluster {position}"
        if not isinstance(cluster, dict) or not isinstance(cluster.get("files"), list):
            raise InputError(f"{where}: must be an object with a list of 'files'")
        files = cluster["files"]
        for entry in files:
            if not isinstance(entry, dict) or entry.get("action") not in _ACTIONS:
                raise InputError(f"{where}: each file needs an action, one of {_ACTIONS}")
            members.add_name(_path(entry.get("path"), where), where, position)
        kept = [entry for entry in files if entry["action"] == "keep"]
        removed = [entry for entry in files if entry["action"] == "remove"]
        if (
            len(kept) > 1
            or (removed and not kept)
            or cluster.get("keep") != (kept[0]["path"] if kept else None)
        ):
            raise InputError(f"{where}: must keep exactly the one file its 'keep' names")
        acted = [_planned(entry, where) for entry in kept + removed]
        for state in acted:
            members.add_file(state, where)
        for state in acted[1:]:
            steps.append(Step(len(steps) + 1, position, state, acted[0]))
    digest = hashlib.sha256(data).hexdigest()
    sealed, unsealed = check_seal(plan)
    settings = plan.get("settings")
    loaded = LoadedPlan(
        os.path.abspath(path), digest, protect, steps, roots, sealed, unsealed,
        settings=settings if isinstance(settings, dict) else {},
    )  # fmt: skip
    return loaded.bounded_by(())
