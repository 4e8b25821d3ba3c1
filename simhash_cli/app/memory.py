"""Memory: what the machine has, and what the process has freed going back to the system.

glibc keeps the blocks of a few megabytes that a program frees in its heap, for reuse, once it
has seen such a block freed (its mmap threshold rises to that size). Reading a corpus makes
thousands of them (one batch of counts at a time), so after the corpus is read the heap holds
about as much freed memory as the corpus itself, and that counts in the resident peak of every
later stage. ``malloc_trim(0)`` returns it; where the C library has no such call, nothing is
done.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["physical_memory", "release_freed_memory"]


def physical_memory() -> int | None:
    """Bytes of memory the machine has, or None where the system does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def release_freed_memory() -> None:
    """Hand the heap's free pages back to the system (glibc); a no-op elsewhere."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)
