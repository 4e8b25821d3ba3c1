"""Run a command; print its wall time and the peak of the summed resident memory of its whole
process tree (``/usr/bin/time`` reports one process's peak, not a cluster's workers' sum).

    python bench/peak_rss.py simhash dedupe --engine dask --texts big.jsonl -q
"""

from __future__ import annotations

import subprocess
import sys
import time


def tree_rss(root: int) -> int:
    """Kilobytes resident in ``root`` and every process below it, now."""
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
