"""Recall on every kind of text: the defaults against all-pairs truth, beside MinHash peers.

For each corpus of bench/kinds.py (copyright files, manual pages, Python sources, short texts,
templated pages, scripts without spaces), and each weighting (tf, tfidf): the truth is every
pair at exact cosine >= 0.9 by an all-pairs product of the tool's own term counts. Then
``simhash dedupe DIR -f json`` runs at its defaults as a whole process (its scheme, wall
time, recall, precision, and the recall its summary states), and rensa and datasketch run on
the same files' word sets (MinHash LSH at Jaccard 0.7 and 0.8, every candidate verified by
the same exact cosine; their time includes reading and verifying).

    python bench/matrix.py                 # every kind, variant 0, into docs/benchmarks-recall.md
    python bench/matrix.py --variant 1 --kinds manpages short --no-write
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import kinds  # noqa: E402
import peers  # noqa: E402
from prose import all_pairs_truth, cosines  # noqa: E402

from simhash_cli.core.vectorize import Weighting, apply_weighting, count_matrix  # noqa: E402

CACHE = HERE / ".cache" / "kinds"
DOCS = HERE.parent / "docs" / "benchmarks-recall.md"
BEGIN, END = "<!-- kinds: begin -->", "<!-- kinds: end -->"
THRESHOLD = 0.9
SIMHASH = str(Path(sys.executable).parent / "simhash")
WORD = re.compile(r"\w+")


def texts_of(directory: Path) -> list[str]:
    """The corpus's texts, in the order of their file names (00000.txt is row 0)."""
    return [p.read_text(encoding="utf-8") for p in sorted(directory.glob("*.txt"))]


def row_of(path: str) -> int:
    return int(Path(path).stem)


def ours(
    directory: Path, weighting: Weighting
) -> tuple[float, NDArray[np.int64], dict[str, object]]:
    """(wall seconds, pairs as rows, the summary) of ``simhash dedupe`` at its defaults."""
    # --no-ignore: bench/.cache is in the repository's .gitignore, which a walk honours.
    command = [SIMHASH, "dedupe", str(directory), "--no-ignore", "-f", "json", "-qq"]
    if weighting is Weighting.TFIDF:
        command += ["--weighting", "tfidf"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise RuntimeError(done.stderr.decode())
    result = json.loads(done.stdout)
    pairs = [sorted((row_of(p["a"]), row_of(p["b"]))) for p in result["pairs"]]
    return seconds, np.array(pairs, dtype=np.int64).reshape(-1, 2), result["summary"]


def rensa_pairs(texts: list[str], threshold: float) -> list[tuple[int, int]]:
    from rensa import RMinHash, RMinHashLSH

    # Bands and rows whose S-curve is steepest near the threshold: (1/b)^(1/r) ~ t.
    perms, bands = (128, 16) if threshold <= 0.7 else (120, 10)
    lsh = RMinHashLSH(threshold=threshold, num_perm=perms, num_bands=bands)
    signatures = []
    for i, text in enumerate(texts):
        signature = RMinHash(num_perm=perms, seed=42)
        signature.update(list(set(WORD.findall(text.lower()))))
        lsh.insert(i, signature)
        signatures.append(signature)
    return peers.lsh_pairs(lsh, signatures)


PEERS: dict[str, Callable[[list[str], float], list[tuple[int, int]]]] = {
    "rensa": rensa_pairs,
    "datasketch": peers.dedupe_datasketch,
}


def verified(unit: sp.csr_array, candidates: list[tuple[int, int]]) -> NDArray[np.int64]:
    """The candidates at exact cosine >= the threshold."""
    if not candidates:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.array(candidates, dtype=np.int64)
    keep = cosines(unit, pairs[:, 0], pairs[:, 1]) >= THRESHOLD - 1e-9
    return pairs[keep]


def measure(
    found: NDArray[np.int64], truth: set[tuple[int, int]], exact: NDArray[np.float64]
) -> tuple[float, float]:
    """(recall, precision): ``exact`` holds each found pair's true cosine."""
    found_set = {tuple(p) for p in found.tolist()}
    recall = len(found_set & truth) / len(truth) if truth else 1.0
    precision = float((exact >= THRESHOLD - 1e-6).mean()) if exact.size else 1.0
    return recall, precision


def rows_for(kind: str, variant: int, weighting: Weighting, with_peers: bool = True) -> list[str]:
    directory = kinds.build(kind, CACHE / f"{kind}-{variant}", variant)
    texts = texts_of(directory)
    counts, _ = count_matrix(texts)
    weights = apply_weighting(counts, weighting)
    truth_pairs = all_pairs_truth(texts, THRESHOLD, weighting)
    truth = {tuple(p) for p in truth_pairs.tolist()}
    seconds, found, summary = ours(directory, weighting)
    exact = cosines(weights, found[:, 0], found[:, 1]) if found.size else np.zeros(0)
    recall, precision = measure(found, truth, exact)
    stated = summary["estimated_recall"]
    name = f"{kind}{'' if not variant else f' (variant {variant})'}"
    size = f"{len(texts):,} files, {len(truth):,} pairs"
    rows = [
        f"| {name} | {weighting.value} | {size} | simhash dedupe (defaults): {summary['scheme']} "
        f"| {seconds:.1f} s | {recall:.3f} | {'-' if stated is None else f'{stated:.3f}'} "
        f"| {precision:.3f} |"
    ]
    for peer, run in PEERS.items() if with_peers else ():
        for at in (0.7, 0.8):
            start = time.perf_counter()
            pairs = verified(weights, run(texts, at))
            took = time.perf_counter() - start
            peer_recall, _ = measure(pairs, truth, np.ones(len(pairs)))
            rows.append(
                f"| {name} | {weighting.value} | {size} | {peer}, word sets, LSH at {at} "
                f"| {took:.1f} s | {peer_recall:.3f} | - | 1.000 |"
            )
    print("\n".join(rows), flush=True)
    return rows


def write(rows: list[str]) -> None:
    section = "\n".join([
        BEGIN,
        "## Every kind of text: the defaults against all-pairs truth",
        "",
        "Written by `make bench-recall` (`python bench/matrix.py`): the corpora of "
        "`bench/kinds.py`, made from what the machine has (copyright files, manual pages "
        "rendered by man(1), Python sources of the machine's interpreters, sentences of 10-40 "
        "words with edited copies, pages of one template around distinct bodies, text in "
        "Chinese, Japanese and Thai without spaces). Truth: every pair at exact cosine >= 0.9 "
        "of the tool's own term counts (tf) or their tf-idf, by an all-pairs product. "
        "simhash-cli runs as a whole process at its defaults; recall and precision are "
        "measured against the truth, and the stated recall is the summary's "
        "`estimated_recall`. The peers hash the files' word sets (MinHash, LSH at Jaccard 0.7 "
        "and 0.8) and every candidate is verified by the same exact cosine; their time covers "
        "hashing, the LSH and the verification, not reading the files. One run, this machine "
        "(2 cores).",
        "",
        "| corpus | weighting | size | tool | wall | recall | stated recall | precision |",
        "|---|---|---|---|---:|---:|---:|---:|",
        *rows,
        END,
    ])  # fmt: skip
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else ""
    if BEGIN in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    DOCS.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", choices=kinds.KINDS, default=list(kinds.KINDS))
    parser.add_argument("--variant", type=int, default=0)
    parser.add_argument("--weightings", nargs="+", default=["tf", "tfidf"])
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args()
    rows = [
        row
        for kind in args.kinds
        for weighting in args.weightings
        for row in rows_for(kind, args.variant, Weighting(weighting), not args.no_peers)
    ]
    if not args.no_write:
        write(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
