"""Recall at every seed, on corpora with large families of similar documents, and what the
clusters hold: into docs/benchmarks-seeds.md.

A scheme's expected recall is a chance per pair over seeds; in one run the misses of a family
of similar documents come together. For ten seeds, ``dedupe`` (defaults: tf, 0.9, exact, the
planner's scheme) runs twice on the same fingerprints: on its candidates alone
(``--group-pairs 0``, as before the pairs inside found groups were checked) and with the
default, which also checks the pairs inside the groups the candidates found. Truth is every
pair at exact cosine >= 0.9 under the run's weighting (all pairs, by one sparse product). Time
is the search's own (the documents are read and fingerprinted once per seed, outside it),
median of the ten seeds.

Then the clusters of the default run at the default seed: how many members sit below the
threshold with the member a cluster keeps, for representative clustering (the default) and
components.

    python bench/seeds.py
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import prose  # noqa: E402

from simhash_cli.core.clusters.groups import Clustering, Groups  # noqa: E402
from simhash_cli.core.config import DEFAULT_GROUP_PAIRS, DedupeConfig  # noqa: E402
from simhash_cli.core.corpus import Corpus, Settings, corpus_from_texts  # noqa: E402
from simhash_cli.core.pipeline import dedupe, group_pairs_of  # noqa: E402
from simhash_cli.core.result import DedupeResult  # noqa: E402
from simhash_cli.core.text.vectorize import Weighting  # noqa: E402
from simhash_cli.core.verify.cosines import ScoredPairs, cosine_pairs  # noqa: E402

THRESHOLD = 0.9
SEEDS = (12345, *range(1, 10))  # the default seed first, then nine others
OUT = HERE.parent / "docs" / "benchmarks-seeds.md"


def family(
    original: str, size: int, rng: np.random.Generator, words: NDArray[np.object_]
) -> list[str]:
    """``size`` copies of ``original``, each edited on its own: one to three of prose.py's
    edits, and always a few words replaced (so that no two are the same words: many copies
    of one fingerprint are listed through the first of them, which is another matter)."""
    copies = []
    for _ in range(size):
        text = prose.edited(original, rng, words).split()
        for at in rng.integers(0, len(text), int(rng.integers(1, 5))):
            text[at] = str(words[rng.integers(0, words.size)])
        copies.append(" ".join(text))
    return copies


def families_corpus(n_background: int, n_families: int, size: int, seed: int) -> list[str]:
    """Background prose (with its own small planted families) and ``n_families`` families of
    ``size`` edited copies of one document, shuffled together."""
    rng = np.random.default_rng(seed)
    background, _ = prose.make(n_background, seed=seed)
    chain = prose.Chain(prose.stdlib_prose())
    originals = prose.documents(chain, rng, n_families)
    texts = list(background)
    for original in originals:
        texts += [original, *family(original, size - 1, rng, chain.words)]
    order = rng.permutation(len(texts))
    return [texts[k] for k in order.tolist()]


def licences() -> list[str]:
    """Debian's copyright files, where the machine has them (licence texts, many alike)."""
    texts, seen = [], set()
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        try:
            info = os.stat(path)
            if (info.st_dev, info.st_ino) in seen:
                continue  # one file under two names, as simhash dedupe reads it once
            seen.add((info.st_dev, info.st_ino))
            texts.append(Path(path).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return texts


def as_set(pairs: NDArray[np.int64]) -> set[tuple[int, int]]:
    return set(map(tuple, pairs.tolist()))


@dataclass
class Measured:
    """One corpus: its size and truth, per seed the recall, precision and time of both runs,
    and what the clusters of the default run at seed 0 hold."""

    documents: int
    pairs: int
    seeds: dict[str, list[float]]
    clusters: dict[Clustering, tuple[int, int, int, int]]


def run(texts: list[str], weighting: Weighting = Weighting.TF) -> Measured:
    truth = as_set(prose.all_pairs_truth(texts, THRESHOLD, weighting))
    rows: dict[str, list[float]] = {
        k: [] for k in ("recall_before", "recall_after", "precision", "t_before", "t_after")
    }
    first: DedupeResult | None = None
    for seed in SEEDS:
        docs = corpus_from_texts(texts, Settings(seed=seed, weighting=weighting))
        timed = {}
        # In turn, one first then the other, so that neither always runs warm.
        for name in ("before", "after") if seed % 2 else ("after", "before"):
            config = DedupeConfig(
                threshold=THRESHOLD, group_pairs=0 if name == "before" else DEFAULT_GROUP_PAIRS
            )
            start = time.perf_counter()
            timed[name] = dedupe(docs, config)
            rows[f"t_{name}"].append(time.perf_counter() - start)
        before, after = timed["before"], timed["after"]
        found_before, found_after = as_set(before.pairs.pairs), as_set(after.pairs.pairs)
        rows["recall_before"].append(len(found_before & truth) / max(len(truth), 1))
        rows["recall_after"].append(len(found_after & truth) / max(len(truth), 1))
        rows["precision"].append(len(found_after & truth) / max(len(found_after), 1))
        first = first or after  # the default seed's
    assert first is not None
    return Measured(
        len(texts),
        len(truth),
        rows,
        {kind: below(first.corpus, first.pairs, kind) for kind in Clustering},
    )


def below(docs: Corpus, pairs: ScoredPairs, kind: Clustering) -> tuple[int, int, int, int]:
    """(clusters, the largest, members below the threshold with the one kept, members)."""
    groups: Groups = group_pairs_of(pairs, len(docs), DedupeConfig(clustering=kind))
    assert docs.weights is not None
    low = members = 0
    for number, these in enumerate(groups.clusters):
        kept = int(groups.representative[number])
        others = these[these != kept]
        pair = np.stack((np.full(others.size, kept), others), axis=1)
        low += int((cosine_pairs(docs.weights, pair) < THRESHOLD - 1e-9).sum())
        members += int(others.size)
    largest = max((c.size for c in groups.clusters), default=0)
    return len(groups.clusters), int(largest), low, members


def table(results: dict[str, Measured]) -> str:
    lines = [
        "| corpus | documents | pairs >= 0.9 | candidates only: recall, worst / median of 10 "
        "seeds | + pairs inside groups: recall, worst / median | precision, worst | time, "
        "median (before → after) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        rb, ra = r.seeds["recall_before"], r.seeds["recall_after"]
        tb, ta = statistics.median(r.seeds["t_before"]), statistics.median(r.seeds["t_after"])
        lines.append(
            f"| {name} | {r.documents:,} | {r.pairs:,} | {min(rb):.3f} / "
            f"{statistics.median(rb):.3f} | {min(ra):.3f} / {statistics.median(ra):.3f} | "
            f"{min(r.seeds['precision']):.3f} | {tb:.2f} s → {ta:.2f} s ({ta / tb:.2f}x) |"
        )
    lines += [
        "",
        "Clusters of the default run at the default seed: members whose cosine with the member "
        "their cluster keeps is below 0.9.",
        "",
        "| corpus | clustering | clusters | largest | members below 0.9 with the one kept |",
        "|---|---|---:|---:|---:|",
    ]
    for name, r in results.items():
        for kind, (n, largest, low, members) in r.clusters.items():
            lines.append(
                f"| {name} | {kind.value} | {n:,} | {largest:,} | {low:,} of {members:,} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    corpora = {
        "one family of 400 edited copies among 5,000 documents": families_corpus(
            5_000, 1, 400, seed=1
        ),
        "40 families of 40 among 5,000": families_corpus(5_000, 40, 40, seed=2),
    }
    weighted = {name: Weighting.TF for name in corpora}
    found = licences()
    if found:
        name = f"Debian's copyright files on this machine ({len(found):,} distinct)"
        corpora[name] = corpora[name + ", --weighting tfidf"] = found
        weighted[name], weighted[name + ", --weighting tfidf"] = Weighting.TF, Weighting.TFIDF
    results: dict[str, Measured] = {}
    for name, texts in corpora.items():
        print(f"{name}: {len(texts):,} documents", file=sys.stderr)
        results[name] = run(texts, weighted[name])
    text = "\n".join(
        [
            "# Recall at every seed, and what a cluster holds",
            "",
            "Written by `make bench-seeds` (`python bench/seeds.py`), on this machine, in one "
            "run. " + " ".join(__doc__.split("\n\n")[1].split()),
            "",
            table(results),
            "",
        ]
    )
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
