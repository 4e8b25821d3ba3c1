"""The excludes file git reads for every repository of a user (``core.excludesFile``, by
default ``$XDG_CONFIG_HOME/git/ignore``): the weakest of a work tree's ignore rules, below its
``.git/info/exclude``.

Git takes ``core.excludesFile`` from its configuration files, the last one that sets it
winning: the system's (``/etc/gitconfig``, unless ``GIT_CONFIG_NOSYSTEM``), the user's
(``GIT_CONFIG_GLOBAL`` when set, else ``$XDG_CONFIG_HOME/git/config`` then ``~/.gitconfig``)
and the repository's own (``.git/config``). They are read here as git writes them: a
``[core]`` section, a ``key = value`` line (keys in any case, a value in quotes or not, a
comment after ``#`` or ``;``; a relative path from the top of the work tree); their
``[include]`` files are not followed, nor a value continued on the next line.
"""

from __future__ import annotations

import os
import re

from ...errors import TooLarge
from ..opening import read_bounded

__all__ = ["excludes_file", "git_dir"]

_CONFIG_LIMIT = 1 << 20
"""The largest configuration file read (a user's is a few KiB)."""

_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)\s*("(?:[^"\\]|\\.)*"\s*)?\]\s*(.*)$')
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def git_dir(top: str) -> str | None:
    """Where git keeps the repository whose work tree's top is ``top``, as git finds it: its
    ``.git`` directory, or the one a ``.git`` file names (``gitdir: PATH``: a submodule, a
    worktree), and that one's common directory when it has one (a worktree's ``commondir``),
    where its excludes and configuration are. None where ``.git`` is neither, or holds no
    ``HEAD`` (an empty ``.git``: no repository git would see)."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot):
        found = dot
    else:
        try:
            text = read_bounded(dot, _GITFILE_LIMIT).decode("utf-8", errors="replace")
        except (OSError, TooLarge):
            return None
        if not text.startswith("gitdir:"):
            return None
        found = os.path.join(top, text.removeprefix("gitdir:").strip())
    if not os.path.isfile(os.path.join(found, "HEAD")):
        return None
    try:
        common = read_bounded(os.path.join(found, "commondir"), _GITFILE_LIMIT)
    except (OSError, TooLarge):
        return found
    return os.path.join(found, common.decode("utf-8", errors="replace").strip())


_GITFILE_LIMIT = 1 << 12
"""The largest ``.git`` file or ``commondir`` read (a path)."""


def excludes_file(top: str, repository: str | None) -> str | None:
    """The excludes file git reads for the work tree at ``top``, whose repository is
    ``repository`` (:func:`git_dir`; None: none), or None when git reads none (set to nothing,
    or the default has no place: no home)."""
    chosen = None
    for config in _configs(repository):
        found = _excludes_in(config)
        if found is not None:
            chosen = found
    if chosen is not None:
        # A relative path is git's from the top of the work tree (where git runs).
        return os.path.join(top, chosen) if chosen else None  # (set to nothing: none)
    base = os.environ.get("XDG_CONFIG_HOME") or _home(".config")
    return None if base is None else os.path.join(base, "git", "ignore")


def _home(*parts: str) -> str | None:
    home = os.path.expanduser("~")
    return None if home == "~" else os.path.join(home, *parts)


def _configs(repository: str | None) -> list[str]:
    """Git's configuration files, weakest first (the ``repository``'s own last)."""
    found = [] if os.environ.get("GIT_CONFIG_NOSYSTEM") else ["/etc/gitconfig"]
    if "GIT_CONFIG_GLOBAL" in os.environ:
        found.append(os.environ["GIT_CONFIG_GLOBAL"])
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or _home(".config")
        found += [os.path.join(xdg, "git", "config")] if xdg else []
        found += [home] if (home := _home(".gitconfig")) else []
    found += [os.path.join(repository, "config")] if repository else []
    return found


def _excludes_in(path: str) -> str | None:
    """The value of ``core.excludesFile`` in the configuration file at ``path`` (the last one
    given), ~ expanded; None when it sets none or cannot be read."""
    try:
        text = read_bounded(path, _CONFIG_LIMIT).decode("utf-8", errors="replace")
    except (OSError, TooLarge):
        return None
    section, value = "", None
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header is not None:
            # A subsection ([core "x"]) is a section of its own: core.x.excludesFile.
            name, subsection = header.group(1).lower(), header.group(2)
            section = name if subsection is None else f"{name} {subsection}"
            line = header.group(3)
        key = _KEY.match(line)
        if section == "core" and key is not None and key.group(1).lower() == "excludesfile":
            value = _value(key.group(2) or "")
    return None if value is None else os.path.expanduser(value)


def _value(raw: str) -> str:
    """A configuration value as git reads it: quotes dropped, ``\\"`` and ``\\\\`` undone, a
    comment (``#`` or ``;`` outside quotes) and the spaces around cut."""
    out, quoted, escaped = [], False, False
    for char in raw:
        if escaped:
            out.append({"n": "\n", "t": "\t"}.get(char, char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()
