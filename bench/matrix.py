"""Recall on every kind of text: the defaults and named schemes against all-pairs truth,
beside MinHash peers.

For each corpus of bench/kinds.py (copyright files, manual pages, Python sources, short texts,
templated pages, scripts without spaces), each sample draw (``--variants``) and each weighting
(tf, tfidf): the truth is every pair at exact cosine >= 0.9 by an all-pairs product of the
tool's own term counts. Then ``simhash dedupe DIR -f json`` runs as a whole process at its
defaults and with each named scheme (``--schemes``), at each hash seed (``--seeds``): its
scheme, wall time, the share of the truth it found, precision, and the recall its summary
states with its interval, and whether that interval holds the share found. rensa and
datasketch run on the same files' word sets (MinHash LSH at Jaccard 0.7 and 0.8, every
candidate verified by the same exact cosine; their time includes reading and verifying).

    python bench/matrix.py                 # every kind, into docs/benchmarks-recall.md
    python bench/matrix.py --variants 1 --kinds manpages short --seeds 0 1 --no-write
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
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import kinds  # noqa: E402
import peers  # noqa: E402
from prose import all_pairs_truth, cosines  # noqa: E402

from simhash_cli.core.text.vectorize import Weighting, apply_weighting, count_matrix  # noqa: E402
from simhash_cli.core.verify.verifier import COPIES_PAIRED  # noqa: E402

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


SCHEMES = ("", "--blocks 4", "--blocks 8", "--minhash 16x8", "--max-distance 3")
"""The defaults (""), then the schemes a user names."""


def ours(
    directory: Path, weighting: Weighting, scheme: str = "", seed: int = 0
) -> tuple[float, NDArray[np.int64], dict[str, Any]]:
    """(wall seconds, pairs as rows, the summary) of ``simhash dedupe`` with ``scheme``
    named (its defaults: "") at hash ``seed``."""
    # --no-ignore: bench/.cache is in the repository's .gitignore, which a walk honours.
    command = [SIMHASH, "dedupe", str(directory), "--no-ignore", "-f", "json", "-qq"]
    command += ["--seed", str(seed), *scheme.split()]
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


def copy_groups(counts: sp.csr_array) -> NDArray[np.int64]:
    """Each row's stand-in: the first row of its group of identical rows when the group
    holds more than COPIES_PAIRED (boilerplate, which simhash-cli reports through its first
    document: its other members are paired with that one, and all of them are one cluster),
    else the row itself."""
    csr = sp.csr_array(counts)
    csr.sort_indices()
    groups: dict[bytes, list[int]] = {}
    for row in range(csr.shape[0]):
        lo, hi = csr.indptr[row], csr.indptr[row + 1]
        key = csr.indices[lo:hi].tobytes() + b"|" + csr.data[lo:hi].tobytes()
        groups.setdefault(key, []).append(row)
    canon = np.arange(csr.shape[0], dtype=np.int64)
    for members in groups.values():
        if len(members) > COPIES_PAIRED:
            canon[members] = members[0]
    return canon


def measure(
    found: NDArray[np.int64],
    truth: set[tuple[int, int]],
    exact: NDArray[np.float64],
    canon: NDArray[np.int64] | None = None,
) -> tuple[float, float]:
    """(recall, precision): ``exact`` holds each found pair's true cosine. With ``canon``
    (:func:`copy_groups`), a pair of the truth within a boilerplate group, or between two
    groups, is found when their stand-ins are."""
    found_set = {tuple(p) for p in found.tolist()}
    if canon is not None and truth:
        held = {tuple(sorted(p)) for p in canon[found].tolist()} if found.size else set()
        rows = np.array(sorted(truth), dtype=np.int64)
        stand = np.sort(canon[rows], axis=1)
        hit = [a == b or (a, b) in held for a, b in stand.tolist()]
        recall = float(np.mean(hit))
        precision = float((exact >= THRESHOLD - 1e-6).mean()) if exact.size else 1.0
        return recall, precision
    recall = len(found_set & truth) / len(truth) if truth else 1.0
    precision = float((exact >= THRESHOLD - 1e-6).mean()) if exact.size else 1.0
    return recall, precision


def stated_cells(summary: dict[str, Any], found: float) -> tuple[str, str, str]:
    """(stated recall, its interval, whether the interval holds ``found``) of a summary: "not
    measured" where it says so, never a number in its place."""
    measured = summary["measured_recall"]
    if measured is None:
        return "not measured", "-", "-"
    low, high = measured["low"], measured["high"]
    holds = low - 1e-9 <= found <= high + 1e-9
    interval = "exact" if measured["exact"] else f"{low:.3f}-{high:.3f}"
    return f"{measured['recall']:.3f}", interval, "yes" if holds else "**no**"


def rows_for(
    kind: str,
    variant: int,
    weighting: Weighting,
    *,
    schemes: tuple[str, ...] = SCHEMES,
    seeds: tuple[int, ...] = (0,),
    with_peers: bool = True,
) -> list[str]:
    directory = kinds.build(kind, CACHE / f"{kind}-{variant}", variant)
    texts = texts_of(directory)
    counts, _ = count_matrix(texts)
    weights = apply_weighting(counts, weighting)
    truth_pairs = all_pairs_truth(texts, THRESHOLD, weighting)
    truth = {tuple(p) for p in truth_pairs.tolist()}
    canon = copy_groups(counts)
    name = f"{kind}{'' if not variant else f' (variant {variant})'}"
    size = f"{len(texts):,} files, {len(truth):,} pairs"
    rows = []
    for scheme in schemes:
        for seed in seeds:
            seconds, found, summary = ours(directory, weighting, scheme, seed)
            exact = cosines(weights, found[:, 0], found[:, 1]) if found.size else np.zeros(0)
            recall, precision = measure(found, truth, exact, canon)
            stated, interval, holds = stated_cells(summary, recall)
            asked = scheme or "defaults"
            rows.append(
                f"| {name} | {weighting.value} | {size} | {asked} | {seed} | {summary['scheme']} "
                f"| {seconds:.1f} s | {recall:.3f} | {stated} | {interval} | {holds} "
                f"| {precision:.3f} |"
            )
            print(rows[-1], flush=True)
    for peer, run in PEERS.items() if with_peers else ():
        for at in (0.7, 0.8):
            start = time.perf_counter()
            pairs = verified(weights, run(texts, at))
            took = time.perf_counter() - start
            peer_recall, _ = measure(pairs, truth, np.ones(len(pairs)))
            rows.append(
                f"| {name} | {weighting.value} | {size} | {peer}, word sets, LSH at {at} | - | - "
                f"| {took:.1f} s | {peer_recall:.3f} | - | - | - | 1.000 |"
            )
            print(rows[-1], flush=True)
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
        "simhash-cli runs as a whole process at its defaults and with each scheme a user "
        "names, at several hash seeds; found and precision are measured against the truth; "
        "stated is the summary's measured recall (`measured_recall.recall`, or \"not "
        "measured\"), with its 95% interval (\"exact\" where the pilot compared every "
        "pair), and holds says whether that interval holds the share found. The peers hash "
        "the files' word sets (MinHash, LSH at Jaccard 0.7 "
        "and 0.8) and every candidate is verified by the same exact cosine; their time covers "
        "hashing, the LSH and the verification, not reading the files. One run, this machine "
        "(2 cores).",
        "",
        "| corpus | weighting | size | asked | seed | scheme | wall | found | stated "
        "| interval | holds | precision |",
        "|---|---|---|---|---:|---|---:|---:|---:|---|---|---:|",
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
    parser.add_argument("--variants", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    parser.add_argument(
        "--schemes", nargs="+", default=list(SCHEMES), help='named schemes ("" the defaults)'
    )
    parser.add_argument("--weightings", nargs="+", default=["tf", "tfidf"])
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args()
    rows = [
        row
        for kind in args.kinds
        for variant in args.variants
        for weighting in args.weightings
        for row in rows_for(
            kind,
            variant,
            Weighting(weighting),
            schemes=tuple(args.schemes),
            seeds=tuple(args.seeds),
            with_peers=not args.no_peers,
        )
    ]
    if not args.no_write:
        write(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
