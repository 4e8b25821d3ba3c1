"""The persistent index against what a user would do without it: SQLite written with a plain
executemany, and every stored fingerprint scanned with numpy for each query.

Writes docs/benchmarks-index.md. Run with `make bench-index` (about a minute and a half).
"""

from __future__ import annotations

import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from simhash_cli import TokenizerConfig, Weighting
from simhash_cli.core.corpus import Settings
from simhash_cli.index.reading import documents
from simhash_cli.index.search import within
from simhash_cli.index.writing import Writer

N = 1_000_000
QUERIES = 1_000
# The 1,000 queries are timed this many times: the first run reads the lists' pages from the
# file (reported on its own), the median is the index warm, as the scan's fingerprints are.
BATCH_RUNS = 7
K = 3
BATCH = 50_000
ROOT = Path(__file__).resolve().parent.parent


def fingerprints(n: int, seed: int) -> np.ndarray:
    """Random 64-bit fingerprints, 1% of them within 3 bits of another."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    near = rng.choice(n, n // 100, replace=False)
    source = rng.integers(0, n, near.size)
    flips = np.zeros(near.size, np.uint64)
    for _ in range(K):
        flips |= np.uint64(1) << rng.integers(0, 64, near.size).astype(np.uint64)
    values[near] = values[source] ^ flips
    return values


def plain(path: str, ids: list[bytes], values: np.ndarray) -> float:
    """The same rows written to SQLite with one executemany, no tables."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute(
        "CREATE TABLE docs (id INTEGER PRIMARY KEY, path BLOB NOT NULL, size INTEGER, "
        "mtime_ns INTEGER, features INTEGER NOT NULL, w0 INTEGER NOT NULL)"
    )
    signed = values.view(np.int64).tolist()
    started = time.perf_counter()
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO docs (path, features, w0) VALUES (?, ?, ?)",
        zip(ids, [100] * len(ids), signed, strict=True),
    )
    connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def ours(path: str, ids: list[str], values: np.ndarray) -> float:
    started = time.perf_counter()
    with Writer.open(path, create=Settings(64, 12345, TokenizerConfig(), Weighting.TF)) as writer:
        features = np.full(len(ids), 100, np.int64)
        for start in range(0, len(ids), BATCH):
            stop = start + BATCH
            writer.add(ids[start:stop], values[start:stop, None], features[start:stop], expected=N)
        writer.finish()
    return time.perf_counter() - started


def size_on_disk(path: str) -> int:
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))


def main() -> None:
    values = fingerprints(N, 1)
    names = [f"/crawl/pages/{i:07d}.html" for i in range(N)]
    raw = [name.encode() for name in names]
    path_bytes = sum(map(len, raw)) / N
    lines = ["# The persistent index", ""]
    with tempfile.TemporaryDirectory(dir=ROOT / "bench") as scratch:
        baseline_path, index_path = f"{scratch}/plain.db", f"{scratch}/index.db"
        baseline = plain(baseline_path, raw, values)
        added = ours(index_path, names, values)
        size = size_on_disk(index_path) / N
        plain_size = size_on_disk(baseline_path) / N
        rng = np.random.default_rng(2)
        queries = values[rng.integers(0, N, QUERIES)].copy()
        flips = np.zeros(QUERIES, np.uint64)
        for _ in range(K):
            flips |= np.uint64(1) << rng.integers(0, 64, QUERIES).astype(np.uint64)
        queries ^= flips
        with Writer.open(index_path) as writer:
            store = writer.store
            within(store, queries[:10, None], K)  # warm the page cache
            single = []
            for q in range(100):
                started = time.perf_counter()
                within(store, queries[q : q + 1, None], K)
                single.append(time.perf_counter() - started)
            batches = []
            for _ in range(BATCH_RUNS):
                started = time.perf_counter()
                found = within(store, queries[:, None], K)
                batches.append(time.perf_counter() - started)
            first, batch = batches[0], statistics.median(batches)
            started = time.perf_counter()
            _, _, stored, _ = documents(store)
            load = time.perf_counter() - started
            extra = fingerprints(10_000, 3)
            started = time.perf_counter()
            writer.add([f"/crawl/new/{i}.html" for i in range(10_000)], extra[:, None],
                      np.full(10_000, 100, np.int64))  # fmt: skip
            incremental = time.perf_counter() - started
        started = time.perf_counter()
        scanned = 0
        column = stored[:, 0]
        for q in range(QUERIES):
            scanned += int((np.bitwise_count(column ^ queries[q]) <= K).sum())
        scan = time.perf_counter() - started
    assert scanned == len(found.query), (scanned, len(found.query))
    lines += [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, numpy {np.__version__}. "
        f"{N:,} random 64-bit fingerprints (1% planted within {K} bits of another), paths of "
        f"{path_bytes:.0f} bytes. One run of `make bench-index`; times are wall-clock.",
        "",
        "| measure | ours | baseline | ratio |",
        "| --- | ---: | ---: | ---: |",
        f"| add {N:,} precomputed fingerprints (batches of {BATCH:,}, one transaction each) "
        f"vs one plain executemany of the same rows | {added:.2f} s | {baseline:.2f} s | "
        f"{added / baseline:.2f}x slower |",
        f"| bytes on disk per document beyond the path | {size - path_bytes:.0f} | "
        f"{plain_size - path_bytes:.0f} (no tables) | |",
        f"| one query at Hamming {K} (median of 100, in process) | "
        f"{statistics.median(single) * 1000:.2f} ms | | |",
        f"| {QUERIES:,} queries at Hamming {K} (median of {BATCH_RUNS} runs) vs a numpy scan of "
        f"all stored fingerprints per query (fingerprints already in memory) | "
        f"{batch * 1000:.1f} ms | {scan * 1000:.0f} ms | {scan / batch:.0f}x faster |",
        f"| the same, the first of those runs (the lists' pages read from the file) | "
        f"{first * 1000:.1f} ms | {scan * 1000:.0f} ms | {scan / first:.0f}x faster |",
        f"| the median, the scan first loading the stored fingerprints | {batch * 1000:.1f} ms | "
        f"{(scan + load) * 1000:.0f} ms | {(scan + load) / batch:.0f}x faster |",
        f"| add 10,000 more to the {N:,} (tables updated row by row) | {incremental:.2f} s | | |",
        "",
        f"Both found the same {len(found.query):,} matches.",
        "",
    ]
    out = ROOT / "docs" / "benchmarks-index.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
