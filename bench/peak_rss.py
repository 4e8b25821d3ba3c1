"""Run a command; print its wall time and the peak of the summed resident memory of its whole
process tree (``/usr/bin/time`` reports one process's peak, not a cluster's workers' sum).

    python bench/peak_rss.py simhash dedupe --engine dask --texts big.jsonl -q
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def tree_rss(root: int) -> int:
    """Kilobytes resident in ``root`` and every process below it, now: read from /proc
    (each process's resident pages, and the children of each of its threads), without
    starting a process: 0.03 ms a poll, where ``ps`` took 4.1 ms of a core (2% of one at
    five polls a second, taken from the tools measured) and counted itself, a child of the
    measuring process, in the tree it measured (4.5 MB). Where /proc has no list of
    children, ``ps`` lists them."""
    if not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"):
        return _tree_rss_ps(root)
    page = os.sysconf("SC_PAGE_SIZE") // 1024
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
                total += int(handle.read().split()[1]) * page
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                    pending.extend(int(child) for child in handle.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue  # (it ended while it was read)
    return total


def _tree_rss_ps(root: int) -> int:
    """:func:`tree_rss` from ``ps``'s list of every process."""
    listing = subprocess.run(
        ["ps", "-e", "-o", "pid=,ppid=,rss="], capture_output=True, text=True, check=True
    ).stdout
    children: dict[int, list[int]] = {}
    resident: dict[int, int] = {}
    for line in listing.splitlines():
        pid, parent, rss = map(int, line.split())
        children.setdefault(parent, []).append(pid)
        resident[pid] = rss
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        total += resident.get(pid, 0)
        pending.extend(children.get(pid, []))
    return total


def measure(command: list[str], poll: float = 0.25) -> tuple[int, float, int]:
    """Run ``command`` (its stdout to /dev/null): (exit status, wall seconds, peak kilobytes
    of its process tree, polled every ``poll`` seconds)."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss(process.pid))
        time.sleep(poll)
    return process.returncode, time.monotonic() - start, peak


def main(command: list[str]) -> int:
    status, wall, peak = measure(command)
    print(f"exit {status}, {wall:.1f} s, peak of the tree {peak / 1e6:.2f} GB")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
