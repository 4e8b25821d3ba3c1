"""A real terminal for tests: the installed command run with a pseudo-terminal for its
streams, and what a person would see once it is done (a terminal emulator, pyte, plays the
bytes: live progress drawn and erased, lines overwritten)."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pyte

SIMHASH = str(Path(sys.executable).parent / "simhash")


ROWS = 400  # tall enough that nothing a command shows scrolls off the emulated screen


def on_a_terminal(
    args: list[str],
    stdout: int | None,
    *,
    columns: int = 100,
    cwd: Path | None = None,
    typed: bytes | None = None,
    program: str = SIMHASH,
) -> tuple[int, bytes]:
    """Run ``simhash ARGS`` with stderr on a pseudo-terminal of ``columns`` columns and stdout
    to ``stdout`` (None: the terminal too); the exit code and the bytes the terminal got.
    With ``typed``, standard input is the terminal too, and those keys are typed on it.
    ``program`` runs instead of simhash (``bash``, for a line of the README), with the
    installed command first on its PATH."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
    shown = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other end closed
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    if typed is not None:
        threading.Timer(1.0, os.write, (master, typed)).start()
    path = f"{Path(SIMHASH).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = dict(os.environ, TERM="xterm-256color", PATH=path)
    for name in ("NO_COLOR", "COLUMNS", "LINES"):  # the terminal's own size, as a user's
        env.pop(name, None)
    try:
        done = subprocess.run(
            [program, *args],
            stdin=subprocess.DEVNULL if typed is None else slave,
            stdout=slave if stdout is None else stdout,
            stderr=slave,
            cwd=cwd,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    return done.returncode, bytes(shown)


def screen_of(shown: bytes, columns: int) -> list[str]:
    """What a person sees once the command is done: the bytes played on a terminal emulator
    (live progress drawn and erased), trailing blank lines dropped."""
    screen = pyte.Screen(columns, ROWS)
    pyte.ByteStream(screen).feed(shown)
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines
