"""A corpus of realistic prose with planted near-duplicates, for recall at scale.

Documents of 80-400 words are drawn from a word trigram chain trained on real English found on
every machine that runs the bench: the docstrings of Python's standard library (about 1.7 MB
of prose for Python 3.11). A share of the originals (5% by default) gets 1-4 copies, each made
by one to three of the edits people make: a few words replaced or inserted, a sentence dropped,
a header added, the case changed. The truth is every pair inside a family (an original and its
copies) whose exact cosine, as ``simhash dedupe`` computes it, clears the threshold; that no
other pair does is checked against all pairs on a sample (``--check``).

Deterministic for a seed and a Python version. The chain runs for every document at once (one
numpy step per word position), so a million documents take about a minute.

    python bench/prose.py 100000 corpus.jsonl truth.npy --check 20000
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simhash_cli.core.text.vectorize import Weighting, apply_weighting, count_matrix

# Tests, and the codecs' generated docstrings (hundreds of one sentence with another name:
# a chain stuck in them writes documents that are near-duplicates by chance).
_SKIPPED_PARTS = {"test", "tests", "idle_test", "site-packages", "lib2to3", "encodings"}


def stdlib_prose() -> list[str]:
    """The words of the standard library's docstrings (modules, classes and functions), each
    docstring once, in file order, punctuation kept on the words."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        path
        for path in root.rglob("*.py")
        if not _SKIPPED_PARTS.intersection(path.relative_to(root).parts)
    )
    docstrings: dict[str, None] = {}  # each once, in order (overrides repeat their base's)
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, kinds) and (doc := ast.get_docstring(node)):
                docstrings[doc] = None
    return [word for doc in docstrings for word in doc.split() if re.search(r"[A-Za-z]", word)]


RESTART = 0.05
"""The chance that a walk starts again at a random place, at each word."""


class Chain:
    """A word trigram chain: the next word drawn among the words that followed the last two
    in the training text, as often as they did."""

    def __init__(self, words: list[str]) -> None:
        vocabulary, ids = np.unique(np.array(words, dtype=object), return_inverse=True)
        self.words = vocabulary
        self.ids = ids.astype(np.int64)
        # A state is a position p of the text (its last two words are ids[p - 1], ids[p]);
        # positions are grouped by those two words, so that a step moves to a random position
        # of the same group and emits the word after it.
        context = self.ids[:-2] * len(vocabulary) + self.ids[1:-1]
        self.order = np.argsort(context, kind="stable") + 1  # positions 1 .. n - 2
        sorted_context = context[self.order - 1]
        starts = np.flatnonzero(np.r_[True, sorted_context[1:] != sorted_context[:-1]])
        sizes = np.diff(np.r_[starts, sorted_context.size])
        group = np.repeat(np.arange(starts.size), sizes)
        self.group_start = np.empty(self.ids.size, dtype=np.int64)
        self.group_size = np.empty(self.ids.size, dtype=np.int64)
        self.group_start[self.order] = starts[group]
        self.group_size[self.order] = sizes[group]

    def walk(self, rng: np.random.Generator, n: int, length: int) -> NDArray[np.int64]:
        """``n`` walks of ``length`` words each, as word ids, shape (n, length)."""
        out = np.empty((n, length), dtype=np.int64)
        state = self.order[rng.integers(0, self.order.size, n)]
        for step in range(length):
            pick = self.group_start[state] + (rng.random(n) * self.group_size[state]).astype(
                np.int64
            )
            state = self.order[pick] + 1
            # The end of the text has no group: start again anywhere; and now and then start
            # again anyway, or a walk caught in a list that repeats itself stays there.
            ended = (state >= self.ids.size - 1) | (rng.random(n) < RESTART)
            state[ended] = self.order[rng.integers(0, self.order.size, int(ended.sum()))]
            out[:, step] = self.ids[state]
        return out


TOPIC_WORDS = 8
TOPIC_SHARE = 0.12


def documents(chain: Chain, rng: np.random.Generator, n: int, batch: int = 50_000) -> list[str]:
    """``n`` texts of 80 to 400 words. Real documents are about something: their content
    words come back (burstiness), which is what keeps unrelated documents apart. So each
    document has a few topic words of its own (drawn from the text's words longer than five
    letters, as often as they occur), and about one word in eight is one of them."""
    content = chain.ids[np.char.str_len(chain.words[chain.ids].astype(str)) > 5]
    texts: list[str] = []
    for lo in range(0, n, batch):
        size = min(batch, n - lo)
        walks = chain.walk(rng, size, 400)
        topics = content[rng.integers(0, content.size, (size, TOPIC_WORDS))]
        chosen = topics[np.arange(size)[:, None], rng.integers(0, TOPIC_WORDS, walks.shape)]
        walks = np.where(rng.random(walks.shape) < TOPIC_SHARE, chosen, walks)
        lengths = rng.integers(80, 401, size)
        words = chain.words[walks]
        texts.extend(" ".join(row[:k]) for row, k in zip(words, lengths, strict=True))
    return texts


_HEADERS = ("Subject: {}", "From: {}", "Re: {}", "Fwd: {}", "Title: {}")


def edited(text: str, rng: np.random.Generator, vocabulary: NDArray[np.object_]) -> str:
    """``text`` with one to three of the edits people make."""
    words = text.split()
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(0, 5))
        if kind == 0:  # a few words replaced
            for at in rng.integers(0, len(words), int(rng.integers(1, 5))):
                words[at] = str(vocabulary[rng.integers(0, vocabulary.size)])
        elif kind == 1:  # a few words inserted
            for _ in range(int(rng.integers(1, 5))):
                word = str(vocabulary[rng.integers(0, vocabulary.size)])
                words.insert(int(rng.integers(0, len(words) + 1)), word)
        elif kind == 2 and len(words) > 60:  # a sentence dropped
            ends = [i for i, word in enumerate(words) if word.endswith(".")]
            if len(ends) > 2:
                k = int(rng.integers(0, len(ends) - 1))
                del words[ends[k] + 1 : ends[k + 1] + 1]
        elif kind == 3:  # a header added
            title = " ".join(str(w) for w in vocabulary[rng.integers(0, vocabulary.size, 3)])
            words = _HEADERS[int(rng.integers(0, len(_HEADERS)))].format(title).split() + words
        else:  # the case changed
            words = [w.upper() if rng.random() < 0.5 else w.lower() for w in words]
    return " ".join(words)


def make(n: int, *, seed: int = 0, share: float = 0.05) -> tuple[list[str], NDArray[np.int64]]:
    """``n`` texts and, for each, the index of the text it was copied from (-1 for none)."""
    rng = np.random.default_rng(seed)
    chain = Chain(stdlib_prose())
    # ``share`` of the originals have copies, 2.5 on average: n = originals * (1 + 2.5 share).
    n_families = round(n * share / (1 + 2.5 * share))
    copies = rng.integers(1, 5, n_families)
    originals = n - int(copies.sum())
    texts = documents(chain, rng, originals)
    family = rng.choice(originals, n_families, replace=False)
    made = [
        edited(texts[original], rng, chain.words)
        for original, count in zip(family, copies, strict=True)
        for _ in range(count)
    ]
    made_from = np.repeat(family, copies)
    # Copies placed at random among the originals: item k of (originals, copies) goes to
    # place[k], and its parent with it.
    place = rng.permutation(n)
    shuffled = np.empty(n, dtype=object)
    shuffled[place] = texts + made
    parent = np.full(n, -1, dtype=np.int64)
    parent[place[originals:]] = place[made_from]
    return shuffled.tolist(), parent


def cosines(
    weights: sp.csr_array, a: NDArray[np.int64], b: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Exact cosine of the rows ``a[k]``, ``b[k]``."""
    norms = np.sqrt(np.asarray(weights.multiply(weights).sum(axis=1)).ravel())
    dots = np.asarray(weights[a].multiply(weights[b]).sum(axis=1)).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        result: NDArray[np.float64] = np.nan_to_num(dots / (norms[a] * norms[b]))
    return result


def planted_truth(
    texts: list[str], parent: NDArray[np.int64], threshold: float
) -> NDArray[np.int64]:
    """Every pair (i < j) of one family whose exact term-count cosine is >= ``threshold``."""
    root = np.where(parent >= 0, parent, np.arange(parent.size))
    members = np.flatnonzero(np.bincount(root, minlength=parent.size)[root] > 1)
    by_family = members[np.argsort(root[members], kind="stable")]
    family_of = root[by_family]
    starts = np.flatnonzero(np.r_[True, family_of[1:] != family_of[:-1]])
    pairs = [
        (x, y)
        for lo, hi in zip(starts, np.r_[starts[1:], by_family.size], strict=True)
        for k, x in enumerate(by_family[lo:hi].tolist())
        for y in by_family[lo + k + 1 : hi].tolist()
    ]
    if not pairs:
        return np.zeros((0, 2), dtype=np.int64)
    candidate = np.sort(np.array(pairs, dtype=np.int64), axis=1)
    # Only the families' texts are counted: their row in the matrix is their rank in members.
    weights, _ = count_matrix(texts[i] for i in members.tolist())
    rows = np.searchsorted(members, candidate)
    keep = cosines(weights, rows[:, 0], rows[:, 1]) >= threshold - 1e-12
    return candidate[keep]


def all_pairs_truth(
    texts: list[str],
    threshold: float,
    weighting: Weighting = Weighting.TF,
    block: int = 1_000,
) -> NDArray[np.int64]:
    """Every pair (i < j) of ``texts`` whose exact cosine (term counts, or ``weighting``) is
    >= ``threshold``."""
    weights, _ = count_matrix(texts)
    # In float64: norms summed in the counts' float32 put a pair at 0.89999986 above 0.9.
    weights = sp.csr_array(apply_weighting(weights, weighting)).astype(np.float64)
    norms = np.sqrt(np.asarray(weights.multiply(weights).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    unit = sp.csr_array(sp.diags(1.0 / norms) @ weights)
    found = []
    for lo in range(0, unit.shape[0], block):
        product = (unit[lo : lo + block] @ unit.T).toarray()
        rows, cols = np.nonzero(product >= threshold - 1e-12)
        rows += lo
        keep = rows < cols
        found.append(np.stack((rows[keep], cols[keep]), axis=1))
    return np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)


def write(texts: list[str], path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i, text in enumerate(texts):
            out.write(json.dumps({"id": f"d{i:07d}", "text": text}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("truth", type=Path, help="the true pairs, as a (k, 2) .npy of rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--check", type=int, default=0, help="check the truth on N documents")
    args = parser.parse_args()
    start = time.perf_counter()
    texts, parent = make(args.n, seed=args.seed)
    truth = planted_truth(texts, parent, args.threshold)
    write(texts, args.corpus)
    np.save(args.truth, truth)
    print(
        f"{args.n:,} documents, {int((parent >= 0).sum()):,} copies, {len(truth):,} true pairs "
        f"at cosine >= {args.threshold} ({time.perf_counter() - start:.1f} s)"
    )
    if args.check:
        sample, sample_parent = make(args.check, seed=args.seed)
        planted = {tuple(p) for p in planted_truth(sample, sample_parent, args.threshold).tolist()}
        every = {tuple(p) for p in all_pairs_truth(sample, args.threshold).tolist()}
        print(
            f"check on {args.check:,}: {len(every):,} pairs by all pairs, {len(planted):,} "
            f"planted; {len(every - planted):,} not planted, {len(planted - every):,} missing"
        )
        if planted - every:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
