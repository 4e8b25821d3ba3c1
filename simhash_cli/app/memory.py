"""Memory: what the machine has, and how the process's C allocator treats what it frees.

glibc keeps the blocks of a few megabytes that a program frees in its heap, for reuse, once it
has seen such a block freed (its mmap threshold rises to that size). Reading a corpus makes
thousands of them (one batch of counts at a time), so after the corpus is read the heap holds
about as much freed memory as the corpus itself, and that counts in the resident peak of every
later stage. ``malloc_trim(0)`` returns it; where the C library has no such call, nothing is
done.

While a command works, the opposite is asked (:func:`keep_freed_memory`): its stages make
and drop arrays of megabytes thousands of times, and with glibc's defaults the heap hands
their pages back and faults new ones in for the next, a page at a time. On 100,000 prose
records that was 592,000 minor page faults and 3.7 s of system time in an 11.1 s run; with
the heap grown :data:`TOP_PAD` at a time and its free top kept up to :data:`TRIM_THRESHOLD`,
168,000 faults, 1.8 s and 9.7 s, its peak 4% higher (1.93 GB against 1.96 GB at a million
records). Measured, not derived: either setting also turns off glibc's moving mmap threshold
(a block of 128 KB or more is mapped on its own each time), which alone makes more faults,
not fewer. The pad is address space reserved ahead: under a limit on it (``ulimit -v``, a
data segment limit) or strict overcommit it would fail a run that fits, so nothing is asked
there.
"""

from __future__ import annotations

import os
import sys

__all__ = ["TOP_PAD", "TRIM_THRESHOLD", "keep_freed_memory", "physical_memory",
           "release_freed_memory"]  # fmt: skip

TOP_PAD = 256 << 20
"""Bytes the heap grows by beyond what an allocation needs (glibc's ``M_TOP_PAD``, as the
variable ``MALLOC_TOP_PAD_`` sets it)."""

TRIM_THRESHOLD = 1 << 30
"""Free bytes at the top of the heap kept before any is handed back (glibc's
``M_TRIM_THRESHOLD``, as ``MALLOC_TRIM_THRESHOLD_`` sets it)."""

_MALLOPT = (("MALLOC_TRIM_THRESHOLD_", -1, TRIM_THRESHOLD), ("MALLOC_TOP_PAD_", -2, TOP_PAD))
"""glibc's environment variable, ``mallopt`` parameter and value of each setting."""

_kept: list[bool] = []


def physical_memory() -> int | None:
    """Bytes of memory the machine has, or None where the system does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def release_freed_memory() -> None:
    """Hand the heap's free pages back to the system (glibc); a no-op elsewhere."""
    import ctypes  # (here: the help of a command imports this module, never ctypes)

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def keep_freed_memory() -> bool:
    """Ask glibc to keep what this process frees for its next arrays (see the module), once
    per process; whether it was asked. A setting the user made (``MALLOC_TOP_PAD_``,
    ``MALLOC_TRIM_THRESHOLD_``, or either in ``GLIBC_TUNABLES``) stays theirs; under a limit
    on the address space or the data segment, or strict overcommit, nothing is asked, nor
    elsewhere than glibc on Linux."""
    if _kept or not sys.platform.startswith("linux") or _memory_bounded():
        return bool(_kept)
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError):
        return False  # (no C library to ask: the defaults stay)
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    for variable, parameter, value in _MALLOPT:
        tunable = "glibc.malloc." + variable.removeprefix("MALLOC_").rstrip("_").lower()
        if variable not in os.environ and tunable not in tunables:
            mallopt(ctypes.c_int(parameter), ctypes.c_int(value))
    _kept.append(True)
    return True


def _memory_bounded() -> bool:
    """Whether address space reserved ahead could fail a run that fits: a limit on the
    address space or the data segment, or the kernel's strict overcommit (mode 2); also when
    the limits cannot be read (an interpreter whose modules this user may not load)."""
    try:
        import resource
    except ImportError:
        return True
    for limit in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
        if resource.getrlimit(limit)[0] != resource.RLIM_INFINITY:
            return True
    try:
        with open("/proc/sys/vm/overcommit_memory", encoding="ascii") as mode:
            return mode.read().strip() == "2"
    except OSError:
        return False
