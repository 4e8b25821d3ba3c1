"""One peer of bench/whole.py as a whole process: ``python whole_peer.py TOOL KIND PATH``.

TOOL is ``floor`` (read, lower-case and ``re.findall(r"\\w+")``, one core) or ``pybind``
(the same words hashed with xxh3 and fingerprinted by simhash-pybind's ``compute``). KIND is
``files`` (PATH a directory, walked in sorted order), ``jsonl`` (``--texts`` records) or
``parquet`` (a ``text`` column). Prints one line per document, as a fingerprinter would.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator

WORD = re.compile(r"\w+")


def texts(kind: str, path: str) -> Iterator[str]:
    if kind == "files":
        for root, dirs, names in os.walk(path):
            dirs.sort()
            for name in sorted(names):
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                    yield f.read()
    elif kind == "jsonl":
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)["text"]
    else:
        import pyarrow.parquet as pq

        file = pq.ParquetFile(path)
        for group in range(file.metadata.num_row_groups):
            yield from file.read_row_group(group, ["text"]).column("text").to_pylist()


def main(tool: str, kind: str, path: str) -> int:
    out = sys.stdout
    if tool == "floor":
        for text in texts(kind, path):
            out.write(f"{len(WORD.findall(text.lower()))}\n")
        return 0
    import simhash
    import xxhash

    hash64 = xxhash.xxh3_64_intdigest
    for text in texts(kind, path):
        words = WORD.findall(text.lower())
        out.write(f"{simhash.compute([hash64(w.encode()) for w in words]):016x}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
