"""The dask engine against the local engine on this machine, side by side in one run.

1. 1,000,000 synthetic documents as 64-bit fingerprints (a tenth near copies of others),
   deduplicated by estimate with 4 blocks: the pair search alone.
2. Text files (bench/corpus.py, term counts, exact verification): reading, tokenizing,
   fingerprinting and the pair search, the local engine with --jobs 2 against 2 workers.

Both engines get the same cores (2 here): the ratio shows what the cluster's machinery costs
or saves on one machine, not what more machines would bring. Writes
docs/benchmarks-dask.md. Run with `make bench-dask` (a few minutes).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from simhash_cli.app.files import corpus_from_paths
from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import Corpus, Settings
from simhash_cli.core.pipeline import dedupe
from simhash_cli.core.result import DedupeResult
from simhash_cli.core.text.tokenizer import TokenizerConfig
from simhash_cli.core.verify.cosines import Verify
from simhash_cli.core.verify.verifier import sorted_pairs
from simhash_cli.engines.dask import cluster as dask_cluster
from simhash_cli.engines.dask import search as dask_engine

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peak_rss
import prose
from corpus import make_texts, write_corpus

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
# Word 3-grams: with single words, Zipf-distributed texts all look alike to term counts.
SHINGLES = TokenizerConfig(ngram=3)


def planted(n: int, seed: int = 3) -> Corpus:
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**64 - 1, size=(n, 1), dtype=np.uint64, endpoint=True)
    near = rng.choice(n, n // 10, replace=False)
    flips = np.zeros(near.size, np.uint64)
    for _ in range(3):
        flips |= np.uint64(1) << rng.integers(0, 64, near.size).astype(np.uint64)
    words[near, 0] = words[rng.integers(0, n, near.size), 0] ^ flips
    return Corpus([f"d{i}" for i in range(n)], words, np.ones(n, np.int64), Settings())


def timed(run: Callable[[], DedupeResult]) -> tuple[float, DedupeResult]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def same(a: DedupeResult, b: DedupeResult) -> bool:
    return bool(np.array_equal(a.pairs.pairs, b.pairs.pairs)) and [
        c.tolist() for c in a.clusters
    ] == [c.tolist() for c in b.clusters]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=40_000)
    parser.add_argument("--records", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--short", type=int, default=200_000)
    parser.add_argument(
        "--parts", nargs="+", choices=("search", "whole"), default=["search", "whole"]
    )
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks-dask.md"))
    args = parser.parse_args()
    if "whole" in args.parts:
        write_whole(args.out, whole_rows(args.records, args.short))
    if "search" not in args.parts:
        return
    rows: list[tuple[str, float, float, bool, str]] = []

    started = time.perf_counter()
    with dask_cluster.connect(workers=WORKERS) as cluster:
        start_up = time.perf_counter() - started
        docs = planted(args.docs)
        config = DedupeConfig(blocks=4, verify=Verify.ESTIMATE)
        # Both engines once on a small corpus first: the workers import and warm up there.
        warm = planted(10_000)
        dedupe(warm, config)
        dask_engine.dedupe_corpus(cluster, warm, config)
        local_s, local = timed(lambda: dedupe(docs, config))
        dask_s, found = timed(lambda: dask_engine.dedupe_corpus(cluster, docs, config))
        rows.append(
            (
                f"dedupe {args.docs:,} fingerprints (4 blocks, estimate)",
                local_s,
                dask_s,
                same(local, found),
                f"{len(local.pairs):,} pairs",
            )
        )

        def kept_on_workers() -> DedupeResult:
            """The same with the pairs left on the workers (as past CLIENT_PAIRS): components
            in rounds, and the pairs read back in order as a writer reads them."""
            limit, dask_engine.CLIENT_PAIRS = dask_engine.CLIENT_PAIRS, 0
            try:
                result = dask_engine.dedupe_corpus(cluster, docs, config)
                merged = sorted_pairs(list(result.pairs.chunks(100_000)))
            finally:
                dask_engine.CLIENT_PAIRS = limit
            return dataclasses.replace(result, pairs=merged)

        streamed_s, streamed = timed(kept_on_workers)
        # Pairs left on the workers are not closed over their groups (the summary says so):
        # the local engine's answer without that closing.
        unclosed = dedupe(docs, dataclasses.replace(config, group_pairs=0))
        rows.append(
            (
                "the same, pairs kept on the workers (components in rounds, pairs merged back; "
                "not closed over their groups)",
                local_s,
                streamed_s,
                same(unclosed, streamed),
                f"{len(unclosed.pairs):,} pairs",
            )
        )
        with tempfile.TemporaryDirectory() as scratch:
            root = write_corpus(Path(scratch) / "c", make_texts(args.files, seed=1))
            paths = (str(root),)
            exact = DedupeConfig(verify=Verify.EXACT)

            def on_one() -> DedupeResult:
                return dedupe(
                    corpus_from_paths(paths, Settings(tokenizer=SHINGLES), jobs=WORKERS), exact
                )

            def on_dask() -> DedupeResult:
                return dask_engine.dedupe_paths(
                    cluster,
                    paths,
                    exact,
                    settings=Settings(tokenizer=SHINGLES),
                )

            local_s, local = timed(on_one)
            dask_s, found = timed(on_dask)
            rows.append(
                (
                    f"read and dedupe {args.files:,} text files (word 3-grams, auto scheme, exact)",
                    local_s,
                    dask_s,
                    same(local, found),
                    f"{len(local.pairs):,} pairs",
                )
            )
    write(args.out, rows, start_up)


# ---------------------------------------------------------------------------- whole processes

SIMHASH = str(Path(sys.executable).parent / "simhash")
CACHE = Path(__file__).resolve().parent / ".cache" / "dask"


def prose_records(n: int) -> Path:
    """bench/prose.py's records, ``n`` of them, made once and kept in bench/.cache."""
    path = CACHE / f"prose-{n}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        texts, _ = prose.make(n, seed=0)
        prose.write(texts, path)
    return path


def short_records(n: int) -> Path:
    """``n`` short texts: each prose record's first 30 words (copies cut as their originals
    are, so that near-duplicates stay near)."""
    path = CACHE / f"short-{n}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        texts, _ = prose.make(n, seed=1)
        prose.write([" ".join(text.split()[:30]) for text in texts], path)
    return path


def whole(command: list[str], out: Path) -> tuple[float, int]:
    """``command`` as a whole process, its records to ``out``: wall seconds and the peak of
    its process tree (a cluster's workers included) in kilobytes."""
    with out.open("wb") as sink:
        started = time.monotonic()
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        peak = 0
        while process.poll() is None:
            peak = max(peak, peak_rss.tree_rss(process.pid))
            time.sleep(0.25)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}")
    return time.monotonic() - started, peak


def whole_rows(sizes: list[int], short: int) -> list[str]:
    """``simhash dedupe --texts`` at the defaults, local (``--jobs 2``) against ``--engine
    dask --workers 2``, as whole processes; their outputs compared byte for byte."""
    inputs = [(f"{n:,} prose records", prose_records(n)) for n in sizes]
    if short:
        inputs.append((f"{short:,} short texts (30 words)", short_records(short)))
    lines = [
        "| input | local: wall, peak | dask: wall, peak (client and workers) | dask / local "
        "| same bytes | scheme |",
        "|---|---:|---:|---:|---|---|",
    ]
    for name, path in inputs:
        with tempfile.TemporaryDirectory() as scratch:
            here, there = Path(scratch) / "local.json", Path(scratch) / "dask.json"
            common = [SIMHASH, "dedupe", "--texts", str(path), "-f", "json", "-q"]
            local_s, local_kb = whole([*common, "--jobs", str(WORKERS)], here)
            dask_s, dask_kb = whole([*common, "--engine", "dask", "--workers", str(WORKERS)], there)
            equal = here.read_bytes() == there.read_bytes()
            scheme = json.loads(here.read_text())["summary"]["scheme"]
        lines.append(
            f"| {name} | {local_s:.1f} s, {local_kb / 1e6:.2f} GB | {dask_s:.1f} s, "
            f"{dask_kb / 1e6:.2f} GB | {dask_s / local_s:.2f}x | {'yes' if equal else 'NO'} "
            f"| {scheme} |"
        )
    return lines


def write(path: str, rows: list[tuple[str, float, float, bool, str]], start_up: float) -> None:
    lines = [
        "# The dask engine against the local engine",
        "",
        "Written by `make bench-dask` (bench/dask_bench.py); both engines in one run, on the",
        f"same machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}. The local engine uses {WORKERS} processes (`--jobs "
        f"{WORKERS}`), the dask engine a LocalCluster of {WORKERS} worker processes.",
        "",
        "| task | local | dask | dask / local | same result | |",
        "|---|---:|---:|---:|---|---|",
    ]
    for name, local_s, dask_s, equal, what in rows:
        lines.append(
            f"| {name} | {local_s:.2f} s | {dask_s:.2f} s | {dask_s / local_s:.2f}x | "
            f"{'yes' if equal else 'NO'} | {what} |"
        )
    lines += [
        "",
        f"Starting the local cluster took {start_up:.1f} s (not counted above).",
        "",
        "Below 1 the dask engine was faster, above 1 its machinery (a shuffle, pickling, task",
        "scheduling, vectors fetched to the client) cost more than it saved. By estimate the",
        "search is a shuffle of fingerprints on the workers; verified exactly, the client",
        "verifies the candidates with their documents' vectors, fetched from the workers (the",
        "local engine's answer to the bit, at the price of moving those vectors: many for word",
        "3-grams). The dask engine is for corpora that outgrow one machine (see docs/dask.md).",
    ]
    text = Path(path).read_text() if Path(path).exists() else ""
    kept = text[text.index(WHOLE_BEGIN) :] if WHOLE_BEGIN in text else ""
    Path(path).write_text("\n".join(lines) + "\n" + ("\n" + kept if kept else ""))
    print("\n".join(lines))


WHOLE_BEGIN, WHOLE_END = "<!-- whole: begin -->", "<!-- whole: end -->"


def write_whole(path: str, rows: list[str]) -> None:
    """The section of whole processes in ``path``, made again (appended the first time)."""
    lines = [
        WHOLE_BEGIN,
        "## Whole processes at the defaults",
        "",
        "Written by `python bench/dask_bench.py --parts whole`, in one run: `simhash dedupe "
        "--texts FILE -f json` at the defaults (the planner, its pilot, exact verification) "
        f"with `--jobs {WORKERS}`, and with `--engine dask --workers {WORKERS}` (a local "
        "cluster started for the run, its start counted); wall time, and the peak of the summed "
        "resident memory of the process tree (the client and the workers), polled every "
        "0.25 s. The outputs are compared byte for byte.",
        "",
        *rows,
        WHOLE_END,
    ]
    section = "\n".join(lines)
    text = Path(path).read_text() if Path(path).exists() else ""
    if WHOLE_BEGIN in text:
        text = (
            text[: text.index(WHOLE_BEGIN)]
            + section
            + text[text.index(WHOLE_END) + len(WHOLE_END) :]
        )
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    Path(path).write_text(text)
    print(section)


if __name__ == "__main__":
    main()
