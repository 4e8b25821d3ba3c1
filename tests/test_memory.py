"""Freed memory is handed back to the system after a corpus is read (glibc keeps it otherwise),
and kept for the next arrays while a command works (glibc hands it back too eagerly)."""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from simhash_cli.app import memory, parallel
from simhash_cli.app.memory import TOP_PAD, TRIM_THRESHOLD
from simhash_cli.app.memory import _memory_bounded as memory_bounded
from simhash_cli.cli import outputs
from simhash_cli.cli.main import main

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def resident() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


FREED_BATCHES = """
import ctypes
import numpy as np
from simhash_cli.app.memory import release_freed_memory

def resident():
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * 4096

# Blocks of 2 MB from the heap, as a read's batches come once glibc has raised its mmap
# threshold past them (set here: its dynamic rise depends on what the process freed first).
ctypes.CDLL(None).mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
start = resident()
batches, small = [], []
for _ in range(150):  # 300 MB of batches in the heap, each followed by a block still held
    batches.append(np.ones(2 << 20, dtype=np.uint8))
    small.append(np.ones(1 << 16, dtype=np.uint8))
held = resident() - start
del batches
before = resident()
release_freed_memory()
print(held, before - resident(), len(small))
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's heap")
@pytest.mark.skipif(os.sysconf("SC_PAGE_SIZE") != 4096, reason="pages of 4 KiB")
def test_the_freed_batches_of_a_read_leave_the_resident_set() -> None:
    """In a process of its own: the heap of a test process holds what the tests before it
    left there, and their allocator settings (CI once freed 178 MB of the 300 there)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_"))}
    done = subprocess.run(
        [sys.executable, "-c", FREED_BATCHES], capture_output=True, text=True, check=True,
        env=clean,
    )  # fmt: skip
    held, freed, small = map(int, done.stdout.split())
    assert held > 250 << 20, done.stdout  # the batches were resident
    assert freed > 200 << 20 and small == 150, done.stdout


_asked: list[tuple[int, int]] = []


def _mallopt(parameter: ctypes.c_int, value: ctypes.c_int) -> int:
    _asked.append((parameter.value, value.value))
    return 1


def _libc(name: object) -> SimpleNamespace:
    """A C library that records what ``mallopt`` is asked."""
    return SimpleNamespace(mallopt=_mallopt)


@pytest.fixture
def libc(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """What mallopt is asked, in a process that has asked nothing yet."""
    _asked.clear()
    monkeypatch.setattr(ctypes, "CDLL", _libc)
    monkeypatch.setattr(memory, "_kept", [])
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(memory, "_memory_bounded", lambda: False)
    for variable in ("MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"):
        monkeypatch.delenv(variable, raising=False)
    return _asked


def test_a_process_asks_glibc_once_to_keep_what_it_frees(libc: list[tuple[int, int]]) -> None:
    assert memory.keep_freed_memory()
    assert memory.keep_freed_memory()
    assert sorted(libc) == [(-2, TOP_PAD), (-1, TRIM_THRESHOLD)]  # M_TOP_PAD, M_TRIM_THRESHOLD


def test_a_setting_the_user_made_stays_theirs(
    libc: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MALLOC_TOP_PAD_", "0")
    assert memory.keep_freed_memory()
    assert libc == [(-1, TRIM_THRESHOLD)]


def test_a_tunable_the_user_set_stays_theirs(
    libc: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=65536")
    assert memory.keep_freed_memory()
    assert libc == [(-2, TOP_PAD)]


def test_nothing_is_asked_under_a_limit_on_the_address_space(
    libc: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pad is address space reserved ahead: under ``ulimit -v`` a run that fitted failed
    to start a thread (found by review; tests/test_hostile.py runs one under the limit)."""
    monkeypatch.setattr(memory, "_memory_bounded", memory_bounded)
    limits = {resource.RLIMIT_AS: (600 << 20, resource.RLIM_INFINITY)}
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: limits.get(which, (resource.RLIM_INFINITY,) * 2)
    )
    assert memory._memory_bounded()
    assert not memory.keep_freed_memory()
    assert libc == []


def test_nothing_is_asked_of_another_system(
    libc: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not memory.keep_freed_memory()
    assert libc == []


@pytest.mark.skipif(not GLIBC, reason="glibc's mallopt")
def test_glibc_takes_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_kept", [])
    assert memory.keep_freed_memory()


def test_a_command_and_each_worker_keep_freed_memory_and_a_help_does_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    called: list[str] = []
    monkeypatch.setattr(outputs, "keep_freed_memory", lambda: called.append("command"))
    monkeypatch.setattr(parallel, "keep_freed_memory", lambda: called.append("worker"))
    ignored: list[Any] = []
    monkeypatch.setattr(signal, "signal", lambda *a: ignored.append(a))
    (tmp_path / "a.txt").write_text("one two three", encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(main, ["fingerprint", "--help"]).exit_code == 0
    assert called == []
    made = runner.invoke(main, ["fingerprint", str(tmp_path / "a.txt")])
    assert made.exit_code == 0, made.output
    assert called == ["command"]
    parallel._worker_started()
    assert called == ["command", "worker"]
    assert ignored == [(signal.SIGINT, signal.SIG_IGN)]
