"""Whole commands of an earlier commit and of this tree, side by side in one run.

    make bench-versions BASE=a285eb3          (or: python bench/versions.py --base REV)

Each side is installed into a venv of its own from a plain (not editable) install, the same
way, so that both import from site-packages; the commands run in fresh processes, the two
sides interleaved repeat by repeat, and the table gives medians, their ratio, and whether the
two printed the same bytes. For a change that means to keep behaviour and speed (a
refactoring), every row should read "yes" and a ratio near 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from corpus import make_texts, write_corpus

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "versions"
CASES = [
    ["--version"],
    ["fingerprint", "files", "-f", "jsonl"],
    ["fingerprint", "--texts", "texts.jsonl", "-f", "jsonl"],
    ["dedupe", "files", "--weighting", "tfidf", "-f", "jsonl"],
    ["dedupe", "--texts", "texts.jsonl", "--weighting", "tfidf", "-f", "jsonl"],
    ["plan", "files", "-f", "json"],
]


def install(name: str, source: Path) -> Path:
    """A venv at CACHE/name with ``source`` installed (not editable); its ``simhash``."""
    venv = CACHE / name
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    pip.append("--disable-pip-version-check")
    subprocess.run([*pip, str(source)], check=True)  # with what it needs
    # Both sides carry the same version number: without this, pip keeps the one it has.
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(source)], check=True)
    return venv / "bin" / "simhash"


def tree_of(rev: str) -> Path:
    """The files of ``rev``, unpacked beside the cache (once per commit; the repository is
    only read)."""
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run(
        [*git, "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = CACHE / f"tree-{commit[:12]}"
    if not tree.exists():
        tree.mkdir(parents=True)
        archive = subprocess.run([*git, "archive", commit], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def corpus(directory: Path, n_docs: int) -> Path:
    """``n_docs`` synthetic documents as files and as ``--texts`` records (bench/corpus.py)."""
    root = directory / f"corpus-{n_docs}"
    if not root.exists():
        texts = make_texts(n_docs, seed=1)
        write_corpus(root / "files", texts)
        with open(root / "texts.jsonl", "w", encoding="utf-8") as out:
            for number, text in enumerate(texts):
                out.write(json.dumps({"id": f"t{number}", "text": text}) + "\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--docs", type=int, default=20_000, help="documents in the corpus")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command per side")
    options = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    sides = {"base": install("base", tree_of(options.base)), "now": install("now", ROOT)}
    root = corpus(CACHE, options.docs)
    head = f"| command ({options.docs:,} documents) | {options.base} | now | now / base |"
    print(head + " same stdout |")
    print("|---|---:|---:|---:|---|")
    for args in CASES:
        times: dict[str, list[float]] = {side: [] for side in sides}
        outputs: dict[str, bytes] = {}
        for _ in range(options.repeats):
            for side, simhash in sides.items():
                start = time.perf_counter()
                done = subprocess.run(
                    [str(simhash), *args], cwd=root, capture_output=True, check=False
                )
                times[side].append(time.perf_counter() - start)
                if done.returncode != 0:
                    failed = done.stderr.decode(errors="replace")[-400:]
                    sys.exit(f"{side}: simhash {' '.join(args)} failed: {failed}")
                outputs[side] = done.stdout
        base, now = (statistics.median(times[side]) for side in sides)
        same = "yes" if outputs["base"] == outputs["now"] else "NO"
        command = "simhash " + " ".join(args)
        print(f"| {command} | {base:.2f} s | {now:.2f} s | {now / base:.2f}x | {same} |")


if __name__ == "__main__":
    main()
