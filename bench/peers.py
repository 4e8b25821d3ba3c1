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
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
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
                found.add(tuple(sorted((v, fps[int(j)]))))
    return sorted(found)


TASKS: dict[tuple[str, str], Callable[..., Any]] = {
    ("ours", "fingerprint"): fingerprint_ours,
    ("simhash-pybind", "fingerprint"): fingerprint_pybind,
    ("simhash", "fingerprint"): fingerprint_pip_simhash,
    ("datasketch", "fingerprint"): fingerprint_datasketch,
    ("re.findall", "floor"): floor,
    ("ours", "pairs"): pairs_ours,
    ("simhash-pybind", "pairs"): pairs_pybind,
    ("simhash", "pairs"): pairs_pip_simhash,
}


# Imported before the clock starts: start-up cost is not what is measured here.
IMPORTS = {
    "ours": ["simhash_cli"],
    "simhash-pybind": ["simhash", "xxhash"],
    "simhash": ["simhash"],
    "datasketch": ["datasketch"],
    "re.findall": [],
}


def main() -> None:
    tool, task, path = sys.argv[1:4]
    for module in IMPORTS[tool]:
        importlib.import_module(module)
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    function = TASKS[(tool, task)]
    args = (data["fingerprints"], data["max_distance"]) if task == "pairs" else (data,)
    start = time.perf_counter()
    result = function(*args)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(json.dumps(result).encode()).hexdigest()[:16]
    print(json.dumps({"seconds": seconds, "digest": digest, "count": len(result)}))


if __name__ == "__main__":
    main()
