"""Synthetic corpora for the benchmarks: Zipf-distributed words, planted near-duplicates.

Deterministic for a given seed, so every tool in a run sees exactly the same documents.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


def make_texts(n_docs: int, **options: Any) -> list[str]:
    """The texts of :func:`make_corpus` (same options), without their sources."""
    return make_corpus(n_docs, **options)[0]


def make_corpus(
    n_docs: int,
    *,
    words_per_doc: int = 250,
    vocabulary: int = 50_000,
    near_dup_rate: float = 0.1,
    seed: int = 0,
) -> tuple[list[str], np.ndarray]:
    """``n_docs`` texts, a ``near_dup_rate`` share of them copies of an earlier one with ~5%
    of their words replaced; and for each, the text it is a copy of (-1 for an original)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(vocabulary)])
    ranks = np.arange(1, vocabulary + 1, dtype=np.float64)
    weights = 1.0 / ranks
    weights /= weights.sum()
    lengths = rng.integers(words_per_doc // 2, words_per_doc * 3 // 2, size=n_docs)
    tokens = rng.choice(vocabulary, size=int(lengths.sum()), p=weights)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    docs: list[np.ndarray] = [tokens[bounds[i] : bounds[i + 1]] for i in range(n_docs)]
    source = np.full(n_docs, -1, dtype=np.int64)
    for i in np.flatnonzero(rng.random(n_docs) < near_dup_rate):
        if i == 0:
            continue
        source[i] = int(rng.integers(0, i))
        copy = docs[int(source[i])].copy()
        edits = rng.random(copy.size) < 0.05
        copy[edits] = rng.choice(vocabulary, size=int(edits.sum()), p=weights)
        docs[i] = copy
    return [" ".join(vocab[d]) for d in docs], source


def write_corpus(directory: Path, texts: list[str]) -> Path:
    """One file per text, 1,000 files per sub-directory."""
    for i, text in enumerate(texts):
        sub = directory / f"{i // 1000:04d}"
        if i % 1000 == 0:
            os.makedirs(sub, exist_ok=True)
        (sub / f"doc{i:07d}.txt").write_text(text, encoding="utf-8")
    return directory
