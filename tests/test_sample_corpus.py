"""The sample corpus, shaped like the reference page's eight documents: two paraphrase pairs,
one exact repeat, unrelated topics. `simhash dedupe sample_corpus/` flags exactly the similar
pairs, which is what the README shows."""

from __future__ import annotations

import itertools

import pytest

from simhash_cli import DedupeConfig, Settings, corpus_from_paths, dedupe
from simhash_cli.core.verify.cosines import cosine_pairs

from conftest import SAMPLE

SIMILAR = {
    ("shipping-policy-copy.txt", "shipping-policy-revised.txt"),
    ("shipping-policy-copy.txt", "shipping-policy.txt"),
    ("shipping-policy-revised.txt", "shipping-policy.txt"),
    ("volcano-report-wire.txt", "volcano-report.txt"),
}


def names(ids: list[str], pairs: list[list[int]]) -> set[tuple[str, str]]:
    short = [i.rsplit("/", 1)[-1] for i in ids]
    return {(short[i], short[j]) for i, j in pairs}


def test_default_dedupe_flags_exactly_the_similar_pairs() -> None:
    docs = corpus_from_paths([str(SAMPLE)])
    result = dedupe(docs)
    assert len(docs) == 8 and docs.skipped == []
    assert names(docs.ids, result.pairs.pairs.tolist()) == SIMILAR
    assert [len(c) for c in result.clusters] == [3, 2]


def test_true_cosines_separate_similar_from_unrelated() -> None:
    docs = corpus_from_paths([str(SAMPLE)])
    assert docs.weights is not None
    import numpy as np

    every = np.array(list(itertools.combinations(range(len(docs)), 2)), dtype=np.int64)
    cosines = cosine_pairs(docs.weights, every)
    similar = names(docs.ids, every[cosines >= 0.9].tolist())
    assert similar == SIMILAR
    assert cosines[cosines < 0.9].max() < 0.75


@pytest.mark.parametrize("blocks", [1, 4, 8])
def test_page_schemes_never_flag_an_unrelated_pair(blocks: int) -> None:
    docs = corpus_from_paths([str(SAMPLE)], Settings(bits=32))
    result = dedupe(docs, DedupeConfig(blocks=blocks, audit=True))
    assert names(docs.ids, result.pairs.pairs.tolist()) <= SIMILAR
    assert result.audit is not None and result.audit.similar_pairs == 4
