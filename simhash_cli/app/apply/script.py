"""A plan -> a POSIX shell script that takes the same steps as ``simhash apply``, for review.

Each step of the script checks, when it runs, that the file and its cluster's kept file are
still the regular files the plan recorded (inode, size and the SHA-256 of their bytes) and
that they are not the same file; a step whose check fails is refused on stderr and the script
goes on. What can be decided when the script is written (a protected root, two paths of one
file, a hard link across filesystems) is written as a refusal. Paths are single-quoted, byte
for byte: any name a filesystem allows survives, newlines included.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ...errors import ExitCode
from .checks import Bounds, destination_of, static_refusal, temp_name
from .steps import Action, LoadedPlan

__all__ = ["shell_quote", "write_script"]

_PRELUDE = r"""#!/bin/sh
# Written by simhash apply --script; review it, then run it with: sh THIS_FILE
#
# Each step first checks that the file and the kept file of its cluster are still the regular
# files the plan recorded (inode, size, SHA-256 of their bytes) and not the same file. A step
# whose check fails is refused (reported on stderr) and the others go on. Exit status 0 when
# every step was taken, __INCOMPLETE__ when any was refused or failed.
set -u
LC_ALL=C
export LC_ALL
refused=0

already() {  # STEP: the file already is as the step leaves it (an earlier run)
    printf 'already done: step %s\n' "$1" >&2
}

refuse() {  # STEP REASON
    printf 'refused: step %s: %s\n' "$1" "$2" >&2
    refused=$((refused + 1))
}

digest() {  # FILE: its SHA-256 in hex, or "none" without a tool to compute it
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum <"$1" | cut -c1-64
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 <"$1" | cut -c1-64
    elif command -v openssl >/dev/null 2>&1; then
        openssl dgst -sha256 <"$1" | sed 's/^.* //'
    else
        echo none
    fi
}

same() {  # PATH INODE SIZE SHA256: true when PATH is still that regular file
    [ -f "$1" ] && [ ! -h "$1" ] || return 1
    inode=$(ls -di -- "$1") || return 1
    inode=${inode#"${inode%%[! ]*}"}
    [ "${inode%% *}" = "$2" ] || return 1
    [ "$(wc -c <"$1" | tr -d ' ')" = "$3" ] || return 1
    [ "$(digest "$1")" = "$4" ]
}

check() {  # STEP FILE INODE SIZE SHA256 KEPT INODE SIZE SHA256
    if ! same "$6" "$7" "$8" "$9"; then
        refuse "$1" "the kept file $6 is not as planned"
        return 1
    fi
    if ! same "$2" "$3" "$4" "$5"; then
        refuse "$1" "the file $2 is not as planned"
        return 1
    fi
    if [ "$2" -ef "$6" ]; then
        refuse "$1" "$2 is the same file as the kept one"
        return 1
    fi
}

delete() {  # CHECK...
    if [ ! -e "$2" ] && [ ! -h "$2" ]; then already "$1"; return 0; fi
    check "$@" || return 0
    rm -f -- "$2" || refuse "$1" "rm failed"
}

move_to() {  # CHECK... DESTINATION ITS_DIRECTORY
    if [ ! -e "$2" ] && [ ! -h "$2" ] && same "${10}" "$3" "$4" "$5"; then
        already "$1"
        return 0
    fi
    check "$@" || return 0
    if [ -e "${10}" ] || [ -h "${10}" ]; then
        refuse "$1" "the destination ${10} already exists"
        return 0
    fi
    mkdir -p -- "${11}" && mv -- "$2" "${10}" || refuse "$1" "mv failed"
}

hard_link() {  # CHECK... TEMPORARY_NAME
    if [ ! -h "$2" ] && [ "$2" -ef "$6" ]; then already "$1"; return 0; fi
    check "$@" || return 0
    if ln -- "$6" "${10}" && mv -f -- "${10}" "$2"; then
        return 0
    fi
    rm -f -- "${10}"
    refuse "$1" "ln or mv failed"
}

symbolic_link() {  # CHECK... TEMPORARY_NAME LINK_TEXT
    if [ -h "$2" ] && [ "$(readlink -- "$2")" = "${11}" ]; then already "$1"; return 0; fi
    check "$@" || return 0
    if ln -s -- "${11}" "${10}" && mv -f -- "${10}" "$2"; then
        return 0
    fi
    rm -f -- "${10}"
    refuse "$1" "ln or mv failed"
}

"""

_EPILOGUE = """
if [ "$refused" -ne 0 ]; then
    printf '%s steps refused or failed\\n' "$refused" >&2
    exit __INCOMPLETE__
fi
"""

_FUNCTIONS = {
    Action.DELETE: "delete",
    Action.MOVE_TO: "move_to",
    Action.HARDLINK: "hard_link",
    Action.SYMLINK: "symbolic_link",
}


def shell_quote(text: str) -> str:
    """``text`` as one single-quoted shell word (``'`` written as ``'\\''``)."""
    return "'" + text.replace("'", "'\\''") + "'"


def _comment(text: str) -> str:
    """``text`` for a ``#`` comment: quoted as a shell word, and with every line break and
    other control character escaped, so that the comment cannot end early."""
    shown = "".join(
        char if char.isprintable() or char == " " else f"\\x{ord(char):02x}" for char in text
    )
    return shell_quote(shown)


def _words(values: Sequence[object]) -> str:
    return " ".join(shell_quote(str(value)) for value in values)


def write_script(
    plan: LoadedPlan,
    action: Action,
    *,
    destination: str | None = None,
    protect: Sequence[str] = (),
    consent: bool = False,
) -> bytes:
    """The script for ``plan``, as bytes (file names that are not UTF-8 stay as they are).
    Every line that names something from the plan or the command line quotes it: a comment
    too, since a newline in a name would otherwise end the comment and start a command."""
    bounds = Bounds.of(plan, protect, consent)
    incomplete = str(int(ExitCode.INCOMPLETE))
    lines = [
        _PRELUDE.replace("__INCOMPLETE__", incomplete),
        f"# plan: {_comment(plan.path)}",
        f"# plan SHA-256: {plan.sha256}",
        f"# action: {action.value}" + (f" {_comment(destination)}" if destination else ""),
        "",
    ]
    for step in plan.steps:
        target, kept = step.target, step.kept
        moved = None if destination is None else destination_of(destination, target.path)
        refusal = static_refusal(step, action, bounds, moved)
        if refusal is not None:
            lines.append(f"refuse {step.number} {shell_quote(refusal + ': ' + target.path)}")
            continue
        arguments: list[object] = [
            step.number,
            target.path,
            target.inode,
            target.size,
            target.sha256,
            kept.path,
            kept.inode,
            kept.size,
            kept.sha256,
        ]
        if action is Action.MOVE_TO:
            assert moved is not None
            arguments += [moved, os.path.dirname(moved)]
        elif action is not Action.DELETE:
            arguments.append(temp_name(target.path))
            if action is Action.SYMLINK:
                arguments.append(os.path.abspath(kept.path))
        lines.append(f"{_FUNCTIONS[action]} {_words(arguments)}")
    lines.append(_EPILOGUE.replace("__INCOMPLETE__", incomplete))
    return "\n".join(lines).encode("utf-8", "surrogateescape")
