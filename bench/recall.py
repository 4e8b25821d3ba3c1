"""Recall at scale: every tool end to end on one JSON Lines file of realistic prose
(bench/prose.py), side by side in one run, into docs/benchmarks-recall.md.

Truth is pooled: the planted pairs at exact term-count cosine >= 0.9, and every pair at >= 0.9
(checked exactly) that any tool of the run reports. Recall is the share of it a tool reports;
precision the share of its reported pairs whose exact cosine clears 0.9. Wall
time and the peak resident memory of the whole process tree are measured around each tool's
own process, which reads the file itself.

    python bench/recall.py --sizes 100000 1000000
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Collection
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import peers  # noqa: E402
import prose  # noqa: E402
from peak_rss import tree_rss  # noqa: E402

from simhash_cli.core.text.vectorize import count_matrix  # noqa: E402

CACHE = HERE / ".cache" / "prose"
THRESHOLD = 0.9
WORD = re.compile(r"\w+")
# The summary's line of recall: "recall about 0.99 (0.97 to 1.00), measured on a random
# sample", "recall 1.00, measured on every pair: ...", or "recall not measured: why".
STATED = re.compile(r"^recall (?:about )?([0-9.]+)(?:[ ,(]+([0-9.]+) to ([0-9.]+))?", re.M)
UNMEASURED = re.compile(r"^recall not measured", re.MULTILINE)
SIMHASH = [str(Path(sys.executable).parent / "simhash")]
# Our dedupe's pairs a line each (without --list, JSON Lines lists the clusters).
PAIRS = [*SIMHASH, "dedupe", "-f", "jsonl", "--list", "pairs"]


def corpus(n: int, seed: int) -> tuple[Path, Path]:
    """The corpus of ``n`` documents and its truth, made once and kept in bench/.cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    texts, truth = CACHE / f"prose-{n}-{seed}.jsonl", CACHE / f"prose-{n}-{seed}.npy"
    if not (texts.exists() and truth.exists()):
        subprocess.run(
            [sys.executable, str(HERE / "prose.py"), str(n), str(texts), str(truth),
             "--seed", str(seed), "--check", "20000"],
            check=True,
        )  # fmt: skip
    return texts, truth


def measured(command: list[str], stdout: Path, stderr: Path) -> tuple[float, float]:
    """Run ``command`` with its output to ``stdout`` and ``stderr``: (wall seconds, peak GB of
    the tree)."""
    start = time.monotonic()
    with stdout.open("wb") as out, stderr.open("wb") as messages:
        process = subprocess.Popen(command, stdout=out, stderr=messages)
        peak = 0
        while process.poll() is None:
            peak = max(peak, tree_rss(process.pid))
            time.sleep(0.2)
    if process.returncode:
        sys.stderr.write(stderr.read_text(encoding="utf-8", errors="replace"))
        raise SystemExit(f"{command[0]} failed ({process.returncode})")
    return time.monotonic() - start, peak / 1e6


def read_texts(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["text"] for line in handle]


def verified(texts: list[str], candidates: Collection[tuple[int, int]]) -> list[tuple[int, int]]:
    """The candidate pairs whose exact term-count cosine clears the threshold."""
    if not candidates:
        return []
    pairs = np.array(sorted(candidates), dtype=np.int64)
    rows = np.unique(pairs)
    weights, _ = count_matrix(texts[i] for i in rows.tolist())
    local = np.searchsorted(rows, pairs)
    keep = prose.cosines(weights, local[:, 0], local[:, 1]) >= THRESHOLD - 1e-12
    return [tuple(p) for p in pairs[keep].tolist()]


def minhash_rensa(texts: list[str]) -> list[tuple[int, int]]:
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=0.7, num_perm=128, num_bands=16)
    signatures = []
    for i, text in enumerate(texts):
        signature = RMinHash(num_perm=128, seed=42)
        signature.update(list(set(WORD.findall(text.lower()))))
        lsh.insert(i, signature)
        signatures.append(signature)
    return peers.lsh_pairs(lsh, signatures)


def minhash_datasketch(texts: list[str]) -> list[tuple[int, int]]:
    return peers.dedupe_datasketch(texts, threshold=0.7)


PEERS: dict[str, Callable[[list[str]], list[tuple[int, int]]]] = {
    "rensa": minhash_rensa,
    "datasketch": minhash_datasketch,
}
PEER_LABELS = {
    "rensa": "rensa (Rust MinHash, 128 perms, word sets, LSH at Jaccard 0.7, verified)",
    "datasketch": "datasketch MinHash + MinHashLSH, same settings",
}


def run_peer(name: str, source: Path) -> int:
    """In a process of its own: a peer's pairs (verified) as JSON Lines of row numbers."""
    texts = read_texts(source)
    for a, b in verified(texts, PEERS[name](texts)):
        sys.stdout.write(f"[{a}, {b}]\n")
    return 0


def pairs_of(output: Path, ours: bool) -> NDArray[np.int64]:
    """Rows of the reported pairs (ids d0000123 are row 123)."""
    found = []
    with output.open() as handle:
        for line in handle:
            value = json.loads(line)
            a, b = (int(value["a"][1:]), int(value["b"][1:])) if ours else value
            found.append((min(a, b), max(a, b)))
    return np.array(found, dtype=np.int64).reshape(-1, 2)


def scored(
    found: NDArray[np.int64], near: set[tuple[int, int]], truth: set[tuple[int, int]]
) -> tuple[float, float]:
    """(recall against the pooled ``truth``, precision: the share of the pairs ``found``
    that are ``near``, at exact cosine >= 0.9)."""
    found_set = {tuple(p) for p in found.tolist()}
    recall = len(truth & found_set) / max(len(truth), 1)
    return recall, (len(near) / len(found_set) if found_set else 1.0)


def tools(n: int) -> list[tuple[str, list[str], bool]]:
    """(label, command after the corpus path is appended, whether its output is ours)."""
    listed = [
        ("simhash dedupe --texts (defaults: tf, 0.9, exact)",
         [*PAIRS, "--texts"], True),
        ("same, --weighting tfidf",
         [*PAIRS, "--weighting", "tfidf", "--texts"], True),
        ("same as the first, the dataset written (--kept, --dropped)",
         [*PAIRS, "--kept", str(CACHE / "kept.jsonl"),
          "--dropped", str(CACHE / "dropped.jsonl"), "--texts"], True),
        ("same as the first, held as fingerprints and read again (--memory fingerprints)",
         [*PAIRS, "--memory", "fingerprints", "--texts"], True),
        (PEER_LABELS["rensa"], [sys.executable, __file__, "--peer", "rensa"], False),
    ]  # fmt: skip
    if n <= 100_000:  # datasketch's Python loop takes minutes at a million
        listed.append(
            (PEER_LABELS["datasketch"], [sys.executable, __file__, "--peer", "datasketch"], False)
        )
    return listed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs" / "benchmarks-recall.md")
    parser.add_argument("--peer", choices=sorted(PEERS))
    parser.add_argument("source", nargs="?", type=Path)
    args = parser.parse_args()
    if args.peer:
        return run_peer(args.peer, args.source)
    rows = []
    for n in args.sizes:
        source, truth_path = corpus(n, args.seed)
        texts = read_texts(source)
        runs = []
        for label, command, ours in tools(n):
            output, messages = CACHE / "pairs.jsonl", CACHE / "messages.txt"
            wall, peak = measured([*command, str(source)], output, messages)
            found = pairs_of(output, ours)
            near = set(verified(texts, {tuple(p) for p in found.tolist()}))
            runs.append(
                (label, wall, peak, found, near, messages.read_text(encoding="utf-8"), ours)
            )
        # Pooled truth: the planted pairs and every pair at the threshold any tool found
        # (a pair at cosine 0.9 that nothing planted is a pair all the same).
        truth = {tuple(p) for p in np.load(truth_path).tolist()}
        for *_, near, _, _ in runs:
            truth |= near
        for label, wall, peak, found, near, said, ours in runs:
            recall, precision = scored(found, near, truth)
            stated = stated_cells(said, recall) if ours else "- | -"
            row = (
                f"| {n:,} | {label} | {wall:.1f} s | {peak:.1f} GB | {recall:.3f} "
                f"| {stated} | {precision:.3f} |"
            )
            print(row, flush=True)
            rows.append(row)
        del texts
    write(args.out, rows, args.seed)
    write_section(DOCS, rows, args.out)
    return 0


def stated_cells(messages: str, recall: float) -> str:
    """``stated (interval) | holds`` from a summary: the recall it measured and whether its
    interval holds the ``recall`` found; "not measured" where it says so."""
    if UNMEASURED.search(messages):
        return "not measured | -"
    said = STATED.search(messages)
    if said is None:
        return "- | -"
    value = float(said.group(1))
    low, high = (float(said.group(2)), float(said.group(3))) if said.group(2) else (value, value)
    # The summary rounds to 2 decimals: an interval holds what rounds into it.
    holds = low - 0.005 <= recall <= high + 0.005
    interval = f" ({low:.2f} to {high:.2f})" if said.group(2) else " (exact)"
    return f"{value:.2f}{interval} | {'yes' if holds else '**no**'}"


DOCS = HERE.parent / "docs" / "benchmarks.md"
BEGIN, END = "<!-- recall: begin -->", "<!-- recall: end -->"


def write_section(docs: Path, rows: list[str], full: Path) -> None:
    """The rows of a million records (the dataset job at scale) as a section of
    docs/benchmarks.md, replaced in place on every run; every size is in ``full``."""
    big = [row for row in rows if row.startswith("| 1,000,000 ")] or rows
    section = "\n".join([
        BEGIN,
        "## Deduplicating a dataset: a million records end to end",
        "",
        "Written by `make bench-recall` (`python bench/recall.py`), in one run with the other "
        f"sizes of [{full.name}]({full.name}), where the corpus, the truth and the measures "
        "are described: bench/prose.py's prose with planted near-duplicates, as one JSON Lines "
        "file; recall against the pooled truth (the planted pairs and every pair at exact cosine "
        ">= 0.9 that any tool found); wall time and peak "
        "memory of each whole process tree, on this machine (2 cores).",
        "",
        "| N | tool, settings | wall | peak RSS | recall | stated | holds | precision |",
        "|---|---|---:|---:|---:|---:|---|---:|",
        *big,
        END,
    ])  # fmt: skip
    text = docs.read_text(encoding="utf-8")
    if BEGIN in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    docs.write_text(text, encoding="utf-8")


KINDS_BEGIN = "<!-- kinds: begin -->"


def write(path: Path, rows: list[str], seed: int) -> None:
    python = ".".join(map(str, sys.version_info[:2]))
    # bench/matrix.py's section (every kind of text) is kept as it was.
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    kinds = "\n" + before[before.index(KINDS_BEGIN) :] if KINDS_BEGIN in before else ""
    path.write_text(
        "# Recall at scale\n\n"
        "Written by `make bench-recall` (`python bench/recall.py`): every tool end to end on one "
        f"JSON Lines file made by `bench/prose.py` (seed {seed}, Python {python}'s docstrings "
        "as the prose): documents of 80-400 words from a word trigram chain, 5% of the "
        "originals with 1-4 near-duplicate copies (words replaced or inserted, a sentence "
        "dropped, a header added, case changed). Truth, pooled: the planted pairs whose exact "
        "term-count cosine is >= 0.9, and every pair at exact cosine >= 0.9 that any tool of "
        "the run reports (on 20,000 documents, `prose.py --check` finds all pairs at >= 0.9 "
        "to be planted but for about one in a thousand). Recall: the share of the "
        "truth a tool reports; stated: the recall simhash-cli's summary says it measured, with "
        'its 95% interval (see docs/schemes.md, "What a run found"), and holds: whether that '
        "interval holds the recall found; precision: the share of its pairs at exact "
        "cosine >= 0.9. Wall time and peak resident memory of each tool's whole process "
        "tree, on this machine (2 cores), in one run.\n\n"
        "| N | tool, settings | wall | peak RSS | recall | stated | holds | precision |\n"
        "|---|---|---:|---:|---:|---:|---|---:|\n" + "\n".join(rows) + "\n" + kinds
    )


if __name__ == "__main__":
    sys.exit(main())
