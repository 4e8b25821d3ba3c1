"""Golden outputs: every command, in every format, on a generated corpus of a few hundred files.

The digests in ``tests/golden/digests.json`` were recorded before the package was reorganised
into its rooms; ``tests/test_golden.py`` checks that today's code prints the same bytes, on
stdout and stderr, with the same exit code. A change that means to alter an output re-records
them, and says so in its commit::

    .venv/bin/python tests/golden.py --write           # re-record the digests
    .venv/bin/python tests/golden.py --dump DIR        # every output in full, to diff by hand
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner

from simhash_cli.cli import main

DIGESTS = Path(__file__).resolve().parent / "golden" / "digests.json"
FORMATS = ("table", "json", "jsonl", "csv")
ROOT_MARK = "<ROOT>"


def make_corpus(root: Path, *, n_docs: int = 300, seed: int = 7) -> None:
    """Documents from a small vocabulary with planted near-duplicates, plus the awkward files
    a real tree has: empty, blank, binary, Latin-1, nested directories; and the same documents
    as --texts and --vectors records."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(1500)
    ]
    common = vocabulary[:40]
    texts: list[str] = []
    for number in range(n_docs):
        if number % 10 in (3, 7) and texts:
            words = rng.choice(texts).split()
            for _ in range(rng.randint(1, 4)):
                words[rng.randrange(len(words))] = rng.choice(vocabulary)
            if number % 20 == 3:
                del words[rng.randrange(len(words))]
            texts.append(" ".join(words))
        else:
            size = rng.randint(20, 160)
            words = [rng.choice(common if rng.random() < 0.4 else vocabulary) for _ in range(size)]
            texts.append(" ".join(words))
    docs = root / "docs"
    for number, text in enumerate(texts):
        folder = docs / f"part{number % 4}" / ("deep" if number % 9 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc{number:03d}.txt").write_text(text + "\n", encoding="utf-8")
    (docs / "empty.txt").write_text("")
    (docs / "blank.txt").write_text("  \n\t ... !!! \n")
    (docs / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    (docs / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e recette".encode("latin-1"))
    with open(root / "texts.jsonl", "w", encoding="utf-8") as out:
        for number, text in enumerate(texts[:120]):
            out.write(json.dumps({"id": f"t{number}", "text": text}) + "\n")
    with open(root / "vectors.jsonl", "w", encoding="utf-8") as out:
        for number, text in enumerate(texts[:120]):
            counts: dict[str, float] = {}
            for word in text.split():
                counts[word] = counts.get(word, 0) + 1.5
            out.write(json.dumps({"id": f"v{number}", "features": counts}) + "\n")


def cases() -> list[list[str]]:
    """Command lines, each run from the corpus's root in order (later ones read what earlier
    ones wrote: fps.jsonl, the index, the plan)."""
    runs: list[list[str]] = []
    for fmt in FORMATS:
        runs += [
            ["fingerprint", "docs", "-f", fmt],
            ["fingerprint", "--texts", "texts.jsonl", "-f", fmt],
            ["fingerprint", "--vectors", "vectors.jsonl", "--bits", "32", "-f", fmt],
            ["dedupe", "docs", "-f", fmt],
            ["dedupe", "docs", "--blocks", "4", "--bits", "32", "--threshold", "0.8", "-f", fmt],
            ["dedupe", "--texts", "texts.jsonl", "-f", fmt],
            ["dedupe", "--vectors", "vectors.jsonl", "--verify", "estimate", "-f", fmt],
            ["compare", "docs/part0/deep/doc000.txt", "docs/part3/doc003.txt", "-f", fmt],
            ["plan", "--threshold", "0.9", "--docs", "1000000", "-f", fmt],
            ["plan", "--threshold", "0.85", "docs", "-f", fmt],
            ["calibrate", "docs", "--seeds", "3", "--max-docs", "80", "-f", fmt],
        ]
    runs += [
        ["fingerprint", "docs", "--ngram", "2", "--bits", "128", "--seed", "99"],
        ["fingerprint", "docs", "--char-ngrams", "4", "--weighting", "binary"],
        ["fingerprint", "docs", "--weighting", "tfidf", "--include-empty"],
        ["fingerprint", "docs", "--weighting", "log", "-j", "1"],
        ["fingerprint", "docs", "--max-bytes", "600", "--strict-encoding"],
        ["fingerprint", "docs/part1", "-o", "fps.jsonl"],
        ["dedupe", "--fingerprints", "fps.jsonl"],
        ["dedupe", "--fingerprints", "fps.jsonl", "--max-distance", "6", "-f", "json"],
        ["dedupe", "docs", "--blocks", "1", "--bits", "32"],
        ["dedupe", "docs", "--blocks", "8", "--bits", "32", "--audit", "-f", "json"],
        ["dedupe", "docs", "--max-distance", "4", "--verify", "estimate"],
        ["dedupe", "docs", "--weighting", "tfidf", "--threshold", "0.7", "-f", "json"],
        ["dedupe", "docs", "--include-empty", "--ngram", "2", "-f", "csv"],
        ["dedupe", "docs", "--check", "-qq"],
        ["dedupe", "docs", "--max-candidates", "10"],
        ["dedupe", "docs", "--max-pairs", "3"],
        ["dedupe", "docs", "--blocks", "7"],
        ["dedupe", "docs", "--blocks", "4", "--max-distance", "3"],
        ["dedupe", "docs", "--plan", "plan.json", "--keep", "shortest-path", "-f", "json"],
        ["apply", "plan.json", "--action", "move-to", "moved", "-f", "json"],
        ["apply", "plan.json", "--action", "delete"],
        ["apply", "plan.json", "--action", "delete", "--yes"],
        ["index", "add", "shelf.db", "docs/part2", "docs/part3"],
        ["index", "add", "shelf.db", "docs/part2"],
        ["index", "query", "shelf.db", "docs/part0", "-f", "json"],
        ["index", "query", "shelf.db", "docs/part0", "--max-distance", "3", "-f", "csv"],
        ["index", "dedupe", "shelf.db", "-f", "json"],
        ["index", "dedupe", "shelf.db", "--verify", "exact"],
        ["index", "stats", "shelf.db", "-f", "json"],
        ["dedupe", "--index", "shelf.db", "docs/part2", "docs/part1", "-f", "jsonl"],
        ["index", "prune", "shelf.db", "-f", "json"],
        ["index", "add", "vec.db", "--vectors", "vectors.jsonl", "--bits", "32"],
        ["index", "query", "vec.db", "--vectors", "vectors.jsonl", "-f", "jsonl"],
        ["fingerprint", "--vectors", "vectors.jsonl", "--ngram", "2"],
        ["dedupe", "--texts", "texts.jsonl", "docs"],
        ["compare", "docs", "docs/part1/doc001.txt"],
        ["plan"],
        ["nope"],
    ]
    return runs


@contextmanager
def _inside(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run_all(root: Path) -> Iterator[tuple[str, int, str, str]]:
    """(command line, exit code, stdout, stderr) of each case, the root's path masked."""
    runner = CliRunner()
    env = {"COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    with _inside(root):
        for args in cases():
            result = runner.invoke(main, args, env=env)
            mask = str(root.resolve())
            yield (
                " ".join(args),
                result.exit_code,
                result.stdout.replace(mask, ROOT_MARK),
                result.stderr.replace(mask, ROOT_MARK),
            )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


@contextmanager
def scratch() -> Iterator[Path]:
    """An empty directory whose absolute path always has the same length: the index stores
    absolute paths, so its size on disk (``index stats``) depends on it."""
    with tempfile.TemporaryDirectory(prefix="simhash-golden-") as path:
        yield Path(path)


def digests() -> dict[str, list[object]]:
    """{command line: [exit code, digest of stdout, digest of stderr]} of every case."""
    with scratch() as root:
        make_corpus(root)
        return {line: [code, _digest(out), _digest(err)] for line, code, out, err in run_all(root)}


def main_script() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="re-record tests/golden/digests.json")
    parser.add_argument("--dump", metavar="DIR", help="write every output in full to DIR")
    options = parser.parse_args()
    if options.dump:
        dump = Path(options.dump)
        dump.mkdir(parents=True, exist_ok=True)
        with scratch() as root:
            make_corpus(root)
            for number, (line, code, out, err) in enumerate(run_all(root)):
                text = f"$ simhash {line}\n# exit {code}\n# stdout\n{out}# stderr\n{err}"
                (dump / f"{number:03d}.txt").write_text(text, encoding="utf-8", errors="replace")
        return
    recorded = digests()
    if options.write:
        DIGESTS.parent.mkdir(exist_ok=True)
        DIGESTS.write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")
        print(f"{len(recorded)} cases recorded in {DIGESTS}", file=sys.stderr)
    else:
        json.dump(recorded, sys.stdout, indent=1)


if __name__ == "__main__":
    main_script()
