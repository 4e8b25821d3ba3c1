"""Which files a walk of a directory lists: hidden ones, ignore files, ``--exclude`` and
``--include``, as ripgrep and fd choose them.

* Hidden files and directories (a name starting with ``.``, so ``.git`` too) are left out
  unless asked for.
* The ``.gitignore`` and ``.ignore`` files of the directories walked are honoured, each for
  the directory it is in and those below it, with git's rules (the ``pathspec`` library's
  implementation of them: ``*``, ``**``, a leading ``/``, a trailing ``/`` for directories,
  ``!`` to take a pattern back). A deeper file's patterns come after its parents', so they win.
  Inside a git work tree, as git reads them, so do the ignore files of the directories above
  the one walked, up to the work tree's top, its ``.git/info/exclude`` and the user's
  excludes file (``core.excludesFile``: :mod:`.git_excludes`; weakest of all): what is left
  out does not depend on where the walk starts. A directory holding a ``.git`` (a nested
  repository, a submodule) leaves the git rules of the one around it behind and reads its own.
* ``--exclude`` patterns, in the same syntax, leave out files and whole directories wherever
  they are; ``--include`` patterns, when there are any, keep only the files matching one.
  Both are matched against the path below the directory given (``*.txt``, a pattern without a
  ``/``, matches a name at any depth).

A file named on the command line is always read: rules choose among what a walk finds.
Nothing here prints; what was left out goes to the caller as :class:`Excluded` events, and
an ignore file not read (or a line of one that is not a pattern) as :class:`Warned` ones.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

from ...core.events import OnEvent, Warned
from ...errors import TooLarge, UsageError
from ..opening import read_bounded
from .git_excludes import excludes_file, git_dir

__all__ = ["IGNORE_FILES", "Rules", "Selection"]

IGNORE_FILES = (".gitignore", ".ignore")


@dataclass(frozen=True)
class Selection:
    """Which files a walk lists (see the module's docstring).

    Attributes:
        include: patterns; when any are given, only the files matching one are listed.
        exclude: patterns of files and directories left out.
        hidden: list hidden files and walk hidden directories too.
        ignore_files: honour the ``.gitignore`` and ``.ignore`` files found in the walk.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    hidden: bool = False
    ignore_files: bool = True

    def __post_init__(self) -> None:
        for pattern in self.include + self.exclude:
            if not _valid(pattern):
                raise UsageError(f"invalid pattern {pattern!r} (the syntax of .gitignore)")

    def rules(self, root: str, on_event: OnEvent) -> Rules:
        """The rules of a walk of ``root`` (its patterns compiled once), with the ignore files
        above it (see the module's docstring)."""
        top = work_tree_of(root)
        return Rules(
            self,
            root,
            _above(root, top, on_event) if self.ignore_files else (),
            _spec(self.exclude) if self.exclude else None,
            _spec(self.include) if self.include else None,
            top,
        )


# An ignore file's patterns: (where the paths it judges start, what goes before the part of
# a path below it, the patterns, whether they are git's: a .gitignore or an excludes file,
# which stop at the top of their repository). A walked directory's own file judges the paths
# below it (no prefix); a file above the walk's root judges them as ``prefix + path below
# the root``.
Ignore = tuple[str, str, "pathspec.GitIgnoreSpec", bool]


def work_tree_of(directory: str) -> str | None:
    """The top of the git work tree ``directory`` is in (the nearest directory holding a
    ``.git``, itself included), or None outside any."""
    current = os.path.abspath(directory)
    while True:
        if git_dir(current) is not None:  # (its .git is a repository, or names one)
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _above(root: str, top: str | None, on_event: OnEvent) -> tuple[Ignore, ...]:
    """The ignore files that judge a walk of ``root`` from above it: its work tree's (at
    ``top``) excludes files, then the ignore files of each directory from the work tree's top
    down to ``root``'s parent; none outside a work tree (``root``'s own are read as it is
    entered)."""
    if top is None:
        return ()
    here = os.path.abspath(root)
    found: list[Ignore] = []
    places = [(path, top) for path in _excludes(top, git_dir(top))]
    above = len(places)
    directory = here
    while directory != top:
        directory = os.path.dirname(directory)
        places[above:above] = [(os.path.join(directory, name), directory) for name in IGNORE_FILES]
    for path, base in places:
        spec = _ignore_file(path, on_event, missing_ok=True)
        if spec is not None:
            prefix = os.path.relpath(here, base)
            git = os.path.basename(path) != ".ignore"
            found.append((root, "" if prefix == "." else prefix + "/", spec, git))
    return tuple(found)


def _excludes(top: str, repository: str | None) -> list[str]:
    """The excludes files of the work tree at ``top``, weakest first: the user's
    (``core.excludesFile``), then its ``.git/info/exclude``."""
    user = excludes_file(top, repository)
    own = [os.path.join(repository, "info", "exclude")] if repository else []
    return [*([user] if user else []), *own]


def _spec(lines: Sequence[str]) -> pathspec.GitIgnoreSpec:
    import pathspec  # here: a command that walks no tree (compare A B) does not import it

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _file_spec(lines: Sequence[str]) -> tuple[pathspec.GitIgnoreSpec, list[int]]:
    """An ignore file's patterns, and the numbers of its lines that are not patterns (passed
    over with a warning, as git does)."""
    try:
        return _spec(lines), []
    except (ValueError, re.error):
        bad = [number for number, line in enumerate(lines, 1) if not _valid(line)]
        skipped = set(bad)
        return _spec([line for n, line in enumerate(lines, 1) if n not in skipped]), bad


def _valid(line: str) -> bool:
    try:
        _spec([line])
    except (ValueError, re.error):  # a range out of order ([z-a]) is re's error
        return False
    return True


IGNORE_FILE_LIMIT = 1 << 20
"""The largest ignore file read (git's own are a few KiB); a larger one is passed over."""


def _ignore_file(
    path: str, on_event: OnEvent, *, missing_ok: bool = False
) -> pathspec.GitIgnoreSpec | None:
    """The patterns of the ignore file at ``path``, or None when there is none to honour
    (``missing_ok``: a path that is not a file, as ``.git/info/exclude`` of a work tree whose
    ``.git`` is a file, is none)."""
    try:
        data = read_bounded(path, IGNORE_FILE_LIMIT)
    except FileNotFoundError:
        return None
    except (NotADirectoryError, IsADirectoryError) as exc:
        if not missing_ok:
            on_event(Warned(path, f"ignore file not read: {exc.strerror or exc}"))
        return None
    except TooLarge:
        on_event(Warned(path, f"ignore file of more than {IGNORE_FILE_LIMIT:,} bytes: not read"))
        return None
    except OSError as exc:
        on_event(Warned(path, f"ignore file not read: {exc.strerror or exc}"))
        return None
    spec, bad = _file_spec(data.decode("utf-8", errors="replace").splitlines())
    if bad:
        shown = ", ".join(str(number) for number in bad[:5]) + (", ..." if len(bad) > 5 else "")
        lines = "line" if len(bad) == 1 else "lines"
        on_event(Warned(path, f"{lines} {shown} of the ignore file: not a pattern, passed over"))
    return spec


@dataclass(frozen=True)
class Rules:
    """The rules in force in one directory of a walk: the selection's, and the ignore files
    of this directory and those above it (each with the directory it is in)."""

    selection: Selection
    root: str
    ignores: tuple[Ignore, ...]
    exclude: pathspec.GitIgnoreSpec | None
    include: pathspec.GitIgnoreSpec | None
    top: str | None = None
    """The top of the git work tree the directory is in (None: none)."""

    def entering(self, directory: str, on_event: OnEvent) -> Rules:
        """The rules below ``directory``: these, and its own ignore files. A directory holding
        a ``.git`` is a repository of its own (a nested one, a submodule): as git, it leaves
        the ignore files and excludes of the repository around it behind and reads its own
        (the ``.ignore`` files around it still count, as ripgrep counts them)."""
        if not self.selection.ignore_files:
            return self
        ignores, top = self.ignores, self.top
        repository = git_dir(directory)
        if repository is not None and os.path.abspath(directory) != top:
            top = os.path.abspath(directory)
            kept = tuple(ignore for ignore in ignores if not ignore[3])
            ignores = kept + tuple(
                (directory, "", spec, True)
                for path in _excludes(directory, repository)
                if (spec := _ignore_file(path, on_event, missing_ok=True)) is not None
            )
        for name in IGNORE_FILES:
            spec = _ignore_file(os.path.join(directory, name), on_event)
            if spec is not None:
                ignores += ((directory, "", spec, name != ".ignore"),)
        if ignores == self.ignores and top == self.top:
            return self
        return Rules(self.selection, self.root, ignores, self.exclude, self.include, top)

    def left_out(self, path: str, *, directory: bool) -> str | None:
        """Why the walk leaves ``path`` out (the rule), or None to list it (a file) or enter
        it (a directory)."""
        name = os.path.basename(path)
        if not self.selection.hidden and name.startswith("."):
            return "hidden"
        below = _relative(path, self.root, directory)
        if self.exclude is not None and self.exclude.match_file(below):
            return "excluded"
        ignored = None
        for base, prefix, spec, _git in self.ignores:
            verdict = _last_match(spec, prefix + _relative(path, base, directory), len(prefix))
            if verdict is not None:
                ignored = verdict
        if ignored:
            return "ignored"
        if not directory and self.include is not None and not self.include.match_file(below):
            return "not included"
        return None


def _last_match(spec: pathspec.GitIgnoreSpec, path: str, unwalked: int) -> bool | None:
    """Whether the last of ``spec``'s patterns that matches ``path`` ignores it (None: none
    matches), as git judges each path of a walk (one that does not enter what it ignores).
    The spec's own check ranks a match through a parent directory above a match of the path
    itself, so ``*``, ``!*.md``, ``!*/`` left every subdirectory out, where git enters them.
    ``unwalked``: how many characters of ``path`` name the walk's root and the directories
    above it, which the walk did not judge (an ignore file above the root)."""
    verdict = None
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue
        if any(_judges(found, path, unwalked) for found in regex.finditer(path)):
            verdict = pattern.include
    return verdict


def _judges(found: re.Match[str], path: str, unwalked: int) -> bool:
    """Whether a pattern's match judges ``path``: a match of the path itself, or through a
    directory (its ``ps_d`` group) that is the path, or the walk's root or above it (what
    git ignores there it ignores all of). A directory the walk entered was judged already."""
    if found.groupdict().get("ps_d") is None:
        return True
    end = found.end("ps_d")
    return end == len(path) or end <= unwalked


def _relative(path: str, base: str, directory: bool) -> str:
    """``path`` (found by walking ``base``, so under it) below ``base``, a directory's with a
    trailing ``/`` (as git matches ``build/`` against directories only)."""
    relative = path[len(base) :].lstrip("/")
    return relative + "/" if directory else relative
