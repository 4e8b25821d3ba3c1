"""The installed command in a real terminal: stderr on a pseudo-terminal (so progress is drawn
live), stdout sent to a file or a pipe. CliRunner never sees this: no test of it has a terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import SAMPLE

SIMHASH = str(Path(sys.executable).parent / "simhash")


def on_a_terminal(args: list[str], stdout: int) -> tuple[int, bytes]:
    """Run ``simhash ARGS`` with stderr on a pseudo-terminal and stdout to ``stdout``; the exit
    code and what the terminal showed."""
    master, slave = os.openpty()
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
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="100")
    env.pop("NO_COLOR", None)
    try:
        done = subprocess.run(
            [SIMHASH, *args],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=slave,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    return done.returncode, bytes(shown)


@pytest.mark.parametrize("command", ["fingerprint", "dedupe"])
def test_records_reach_a_file_while_progress_is_drawn_on_the_terminal(
    command: str, tmp_path: Path
) -> None:
    out = tmp_path / "records.jsonl"
    with open(out, "wb") as handle:
        code, shown = on_a_terminal([command, "-f", "jsonl", str(SAMPLE)], handle.fileno())
    assert code == 0, shown.decode(errors="replace")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == (8 if command == "fingerprint" else 4)
    assert b'"fingerprint"' not in shown and b'"hamming"' not in shown  # none on the screen


def test_records_reach_a_pipe_while_progress_is_drawn_on_the_terminal(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    received = bytearray()

    def collect() -> None:
        while chunk := os.read(read_end, 65536):
            received.extend(chunk)

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        code, shown = on_a_terminal(["fingerprint", str(SAMPLE)], write_end)
    finally:
        os.close(write_end)
    reader.join(timeout=10)
    os.close(read_end)
    assert code == 0, shown.decode(errors="replace")
    assert received.count(b'"fingerprint"') == 8  # piped: JSON Lines, every document
