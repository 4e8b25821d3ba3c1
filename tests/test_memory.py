"""Freed memory is handed back to the system after a corpus is read (glibc keeps it otherwise)."""

from __future__ import annotations

import os
import platform

import numpy as np
import pytest

from simhash_cli.app.memory import release_freed_memory


def resident() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's heap"
)
def test_the_freed_batches_of_a_read_leave_the_resident_set() -> None:
    np.ones(8 << 20, dtype=np.uint8)  # a freed 8 MB block raises glibc's mmap threshold
    batches, small = [], []
    for _ in range(150):  # 300 MB of batches in the heap, each followed by a block still held
        batches.append(np.ones(2 << 20, dtype=np.uint8))
        small.append(np.ones(1 << 16, dtype=np.uint8))
    del batches
    before = resident()
    release_freed_memory()
    assert before - resident() > 200 << 20
    assert len(small) == 150
