"""A plan's seal: how ``simhash apply`` tells a plan this user's ``dedupe --plan`` wrote, unchanged,
from one that was edited or comes from elsewhere.

A plan is a file anyone can edit, and its ``roots`` (the paths it scanned, which bound every
step) are a field of that same file. So ``dedupe --plan`` seals what it writes: an HMAC-SHA256
of the plan's content, keyed by a secret that lives in the user's state directory
(``$XDG_STATE_HOME/simhash/plan-key``, else ``~/.local/state/simhash/plan-key``; mode 0600, made
on first use). A plan whose seal checks out is one this user's simhash wrote and nobody changed
since; apply takes its roots on its word. Any other plan (edited, sealed with another user's or
machine's key, or not sealed) acts only inside the roots given to apply with ``--root``.

A key that another user could read or replace (not owned by this user, or open to the group or
others) seals nothing: plans are then written without a seal, and none checks out.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from typing import Any

from ...errors import TooLarge
from ...io.opening import read_bounded

__all__ = ["SEAL_FIELD", "KeyState", "check_seal", "key_path", "seal"]

SEAL_FIELD = "seal"
_KEY_BYTES = 32
_CONTEXT = b"simhash plan seal 1\n"


def key_path() -> str:
    """Where the key is: ``$XDG_STATE_HOME/simhash/plan-key`` (else ``~/.local/state``)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(state, "simhash", "plan-key")


@dataclass(frozen=True)
class KeyState:
    """The key, or why there is none to seal or check with."""

    key: bytes | None
    why: str = ""


def _trusted(path: str) -> str:
    """Why the key file at ``path`` cannot be trusted, or ''."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_uid != os.geteuid():
        return f"{path} belongs to another user"
    if info.st_mode & 0o077:
        return f"{path} can be read or written by others (mode {stat.S_IMODE(info.st_mode):o})"
    return ""


def _read_key(path: str) -> KeyState:
    try:
        why = _trusted(path)
        if why:
            return KeyState(None, why)
        key = read_bounded(path, _KEY_BYTES)
    except FileNotFoundError:
        return KeyState(None, f"no key at {path}")
    except (OSError, TooLarge) as exc:
        return KeyState(None, f"the key {path} cannot be read ({getattr(exc, 'strerror', exc)})")
    if len(key) != _KEY_BYTES:
        return KeyState(None, f"the key {path} is not a key ({len(key)} bytes)")
    return KeyState(key)


def _create_key(path: str) -> None:
    """A new key, born whole and private: written under a temporary name (mode 0600), then
    linked to its name, which fails rather than replace a key another run made meanwhile."""
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    descriptor, temp = tempfile.mkstemp(prefix=".plan-key.", dir=directory)
    try:
        with open(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(_KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def load_key(*, create: bool) -> KeyState:
    """The user's key; with ``create``, made when there is none."""
    path = key_path()
    state = _read_key(path)
    if state.key is None and create and not os.path.lexists(path):
        try:
            _create_key(path)
        except OSError as exc:
            return KeyState(None, f"the key {path} cannot be made ({exc.strerror or exc})")
        state = _read_key(path)
    return state


def _digest(key: bytes, document: dict[str, Any]) -> str:
    body = {name: value for name, value in document.items() if name != SEAL_FIELD}
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hmac.new(key, _CONTEXT + canonical.encode(), hashlib.sha256).hexdigest()


def seal(document: dict[str, Any]) -> tuple[str | None, str]:
    """The seal of ``document`` with the user's key (made on first use), or (None, why not)."""
    state = load_key(create=True)
    if state.key is None:
        return None, state.why
    return _digest(state.key, document), ""


def check_seal(document: dict[str, Any]) -> tuple[bool, str]:
    """Whether ``document`` (a plan as read) carries this user's seal of its very content, and
    if not, why not."""
    given = document.get(SEAL_FIELD)
    if not isinstance(given, str):
        return False, "it is not sealed"
    state = load_key(create=False)
    if state.key is None:
        return False, f"there is no key to check its seal with ({state.why})"
    if not hmac.compare_digest(given, _digest(state.key, document)):
        return False, "its seal does not match (edited since, or sealed by another user or machine)"
    return True, ""
