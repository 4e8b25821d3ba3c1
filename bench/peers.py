"""One measurement in a fresh process: ``python peers.py TOOL TASK INPUT``.

Each tool runs in the interpreter that has it installed (the pip ``simhash`` package and
``simhash-pybind`` both install a module named ``simhash``, so they cannot share a venv).
Prints one JSON object: the seconds the timed part took and a digest of its result, so the
orchestrator can check that tools which should agree do.

Tasks:
  fingerprint  INPUT is a JSON list of texts; tokenize and fingerprint every text.
  floor        INPUT is a JSON list of texts; only re.findall(r"\\w+", text.lower()).
  pairs        INPUT is a JSON object {"fingerprints": [...], "max_distance": k}; all pairs of
               64-bit fingerprints within k bits.
  dedupe       INPUT is a JSON list of texts; the near-duplicate pairs each tool reports as a
               user would run it (ours: tfidf, threshold 0.9, exact verification, planned
               scheme; datasketch: MinHash 128 + MinHashLSH at Jaccard 0.8; simhash-pybind:
               fingerprints within 3 bits).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

WORD = re.compile(r"\w+")


def fingerprint_ours(texts: list[str]) -> list[int]:
    from simhash_cli import fingerprint_matrix, vectorize

    weights, features = vectorize(texts)
    return [int(v) for v in fingerprint_matrix(weights, features, bits=64)[:, 0]]


def fingerprint_pybind(texts: list[str]) -> list[int]:
    import simhash
    import xxhash

    hash64 = xxhash.xxh3_64_intdigest
    return [
        simhash.compute([hash64(t.encode()) for t in WORD.findall(text.lower())]) for text in texts
    ]


def fingerprint_pip_simhash(texts: list[str]) -> list[int]:
    from simhash import Simhash

    return [Simhash(WORD.findall(text.lower())).value for text in texts]


def fingerprint_datasketch(texts: list[str]) -> list[int]:
    from datasketch import MinHash

    sets = [[t.encode() for t in set(WORD.findall(text.lower()))] for text in texts]
    signatures = MinHash.bulk(sets, num_perm=128)
    return [int(m.hashvalues[0]) for m in signatures]


def floor(texts: list[str]) -> list[int]:
    return [len(WORD.findall(text.lower())) for text in texts]


def pairs_ours(fps: list[int], k: int) -> list[tuple[int, int]]:
    import numpy as np

    from simhash_cli import pairs_within

    found = pairs_within(np.array(fps, dtype=np.uint64), k)
    return sorted({tuple(sorted((fps[i], fps[j]))) for i, j in found.tolist()})


def pairs_ours_array(fps: Any, k: int) -> list[tuple[int, int]]:
    """The same search on a uint64 array, as a numpy user holds fingerprints."""
    import numpy as np

    from simhash_cli import pairs_within

    found = pairs_within(fps, k)
    values = fps[found]
    return sorted({(int(a), int(b)) for a, b in np.sort(values, axis=1).tolist()})


def pairs_pybind(fps: list[int], k: int) -> list[tuple[int, int]]:
    import simhash

    return sorted({tuple(sorted(p)) for p in simhash.find_all(fps, k + 1, k)})


def pairs_pip_simhash(fps: list[int], k: int) -> list[tuple[int, int]]:
    from simhash import Simhash, SimhashIndex

    index = SimhashIndex([(str(i), Simhash(v)) for i, v in enumerate(fps)], k=k)
    found = set()
    for i, v in enumerate(fps):
        for j in index.get_near_dups(Simhash(v)):
            if int(j) != i:
                low, high = sorted((v, fps[int(j)]))
                found.add((low, high))
    return sorted(found)


def dedupe_ours(texts: list[str], max_candidates: int | None = None) -> list[tuple[int, int]]:
    from simhash_cli import DedupeConfig, Settings, Weighting, corpus_from_texts, dedupe

    docs = corpus_from_texts(texts, Settings(weighting=Weighting.TFIDF))
    config = DedupeConfig(threshold=THRESHOLD)
    if max_candidates is not None:
        config = DedupeConfig(threshold=THRESHOLD, max_candidates=max_candidates)
    result = dedupe(docs, config)
    ids = [int(i) for i in docs.ids]
    return [(ids[i], ids[j]) for i, j in result.pairs.pairs.tolist()]


LARGE_BUDGET = 500_000_000


def dedupe_ours_large_budget(texts: list[str]) -> list[tuple[int, int]]:
    """With --max-candidates 500000000: room for 8 blocks of 8 bits at 100,000 documents."""
    return dedupe_ours(texts, max_candidates=LARGE_BUDGET)


def dedupe_datasketch(texts: list[str], threshold: float = 0.8) -> list[tuple[int, int]]:
    from datasketch import MinHash, MinHashLSH

    sets = [[t.encode() for t in set(WORD.findall(text.lower()))] for text in texts]
    signatures = MinHash.bulk(sets, num_perm=128)
    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    for i, signature in enumerate(signatures):
        lsh.insert(i, signature)
    return lsh_pairs(lsh, signatures)


def lsh_pairs(lsh: Any, signatures: list[Any]) -> list[tuple[int, int]]:
    """Every pair (i < j) an LSH index (keys 0..n-1) gives for its own signatures."""
    pairs = {
        (min(i, j), max(i, j))
        for i, signature in enumerate(signatures)
        for j in lsh.query(signature)
        if j != i
    }
    return sorted(pairs)


def dedupe_pybind(texts: list[str]) -> list[tuple[int, int]]:
    import simhash
    import xxhash

    hash64 = xxhash.xxh3_64_intdigest
    fps = [
        simhash.compute([hash64(t.encode()) for t in WORD.findall(text.lower())]) for text in texts
    ]
    owners: dict[int, list[int]] = {}
    for i, fp in enumerate(fps):
        owners.setdefault(fp, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for group in owners.values():
        pairs.update((a, b) for k, a in enumerate(group) for b in group[k + 1 :])
    for a, b in simhash.find_all(fps, 4, 3):
        pairs.update((min(i, j), max(i, j)) for i in owners[a] for j in owners[b] if i != j)
    return sorted(pairs)


THRESHOLD = 0.9

TASKS: dict[tuple[str, str], Callable[..., Any]] = {
    ("ours", "fingerprint"): fingerprint_ours,
    ("simhash-pybind", "fingerprint"): fingerprint_pybind,
    ("simhash", "fingerprint"): fingerprint_pip_simhash,
    ("datasketch", "fingerprint"): fingerprint_datasketch,
    ("re.findall", "floor"): floor,
    ("ours", "pairs"): pairs_ours,
    ("ours", "pairs-npy"): pairs_ours_array,
    ("simhash-pybind", "pairs"): pairs_pybind,
    ("simhash", "pairs"): pairs_pip_simhash,
    ("ours", "dedupe"): dedupe_ours,
    ("ours", "dedupe-large-budget"): dedupe_ours_large_budget,
    ("datasketch", "dedupe"): dedupe_datasketch,
    ("simhash-pybind", "dedupe"): dedupe_pybind,
}


# Imported before the clock starts: start-up cost is not what is measured here.
IMPORTS = {
    "ours": ["simhash_cli"],
    "simhash-pybind": ["simhash", "xxhash"],
    "simhash": ["simhash"],
    "datasketch": ["datasketch"],
    "re.findall": [],
}


def peak_megabytes() -> float:
    """This process's peak resident memory. VmHWM belongs to the address space made at exec,
    unlike ru_maxrss, which Linux carries over from the forking parent."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    tool, task, path = sys.argv[1:4]
    for module in IMPORTS[tool]:
        importlib.import_module(module)
    function = TASKS[(tool, task)]
    if task == "pairs-npy":
        # 10,000,000 fingerprints: a JSON list of Python ints would weigh more than our run.
        import numpy as np

        with np.load(path) as stored:
            args: tuple[Any, ...] = (stored["fingerprints"], int(stored["max_distance"]))
    else:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        args = (data["fingerprints"], data["max_distance"]) if task == "pairs" else (data,)
    start = time.perf_counter()
    result = function(*args)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(json.dumps(result).encode()).hexdigest()[:16]
    peak_mb = peak_megabytes()
    outcome = {"seconds": seconds, "digest": digest, "count": len(result), "peak_mb": peak_mb}
    if task.startswith("dedupe"):
        outcome["pairs"] = result
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
