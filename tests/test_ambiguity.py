"""Advice when unrelated documents come near the threshold: measured on the corpus's own chance
pairs, under the run's weighting and under tf-idf."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import scipy.sparse as sp
from click.testing import CliRunner

from simhash_cli.cli import main
from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import corpus_from_texts
from simhash_cli.core.pipeline import dedupe
from simhash_cli.core.text.vectorize import Weighting
from simhash_cli.core.verify.ambiguity import AMBIGUOUS_SHARE, NEAR, ambiguity
from simhash_cli.core.verify.cosines import cosine_pairs

COMMON = [f"common{k}" for k in range(12)]


def texts(n: int, seed: int, common_share: float) -> list[str]:
    """Documents of ``common_share`` common words (every document has them, as prose has its
    function words) and words of their own."""
    rng = np.random.default_rng(seed)
    made = []
    for doc in range(n):
        words = [
            COMMON[int(rng.integers(0, len(COMMON)))]
            if rng.random() < common_share
            else f"topic{doc}w{int(rng.integers(0, 40))}"
            for _ in range(200)
        ]
        made.append(" ".join(words))
    return made


def test_documents_alike_through_common_words_are_named_with_the_figures() -> None:
    docs = corpus_from_texts(texts(200, seed=1, common_share=0.85))
    result = dedupe(docs, DedupeConfig(threshold=0.9))
    found = result.ambiguity
    assert found is not None and found.instead is not None
    assert found.now.weighting is Weighting.TF and found.instead.weighting is Weighting.TFIDF
    assert found.now.near + found.now.above >= AMBIGUOUS_SHARE
    # tf-idf discounts the common words: the same chance pairs fall far from the threshold.
    assert found.instead.median < found.now.median - 0.3
    assert found.instead.near + found.instead.above < found.now.near + found.now.above
    # The figures are the true cosines of random pairs under each weighting.
    assert docs.weights is not None
    first, second = np.triu_indices(len(docs), 1)
    tf = cosine_pairs(docs.weights, np.stack((first, second), axis=1))
    assert abs(float(np.median(tf)) - found.now.median) < 0.05
    assert found.flagged == len(result.pairs)
    assert found.instead.flagged is not None and found.instead.flagged <= found.flagged


def test_documents_apart_give_no_advice() -> None:
    docs = corpus_from_texts(texts(200, seed=2, common_share=0.3))
    assert dedupe(docs, DedupeConfig(threshold=0.9)).ambiguity is None


def test_without_every_vector_there_is_nothing_to_measure() -> None:
    docs = corpus_from_texts(texts(200, seed=1, common_share=0.85))
    pairs = dedupe(docs).pairs
    assert ambiguity(docs, pairs, 0.9) is not None
    assert ambiguity(dataclasses.replace(docs, weights=None), pairs, 0.9) is None
    assert docs.weights is not None
    # Vectors of some rows only (what the index reads again): not a sample of the corpus.
    some = sp.csr_array(docs.weights.multiply(np.arange(len(docs))[:, None] % 2).tocsr())
    some.eliminate_zeros()
    assert ambiguity(dataclasses.replace(docs, weights=some), pairs, 0.9) is None


def test_the_summary_says_so_and_the_json_holds_it() -> None:
    records = "".join(
        json.dumps({"id": k, "text": text}) + "\n"
        for k, text in enumerate(texts(120, seed=3, common_share=0.85))
    )
    short = CliRunner().invoke(main, ["dedupe", "--texts", "-", "-f", "json"], input=records)
    assert short.stderr.splitlines()[-1] == (
        "hint: unrelated documents come near cosine 0.9 here; try --weighting tfidf (-v)"
    )
    done = CliRunner().invoke(main, ["dedupe", "-v", "--texts", "-", "-f", "json"], input=records)
    assert "hint: unrelated documents come near the threshold here" in done.stderr
    assert "with --weighting tfidf the same pairs sit at median" in done.stderr
    chance = json.loads(done.stdout)["summary"]["chance_pairs"]
    assert chance["near_below"] == NEAR
    assert chance["now"]["weighting"] == "tf" and chance["instead"]["weighting"] == "tfidf"
    assert chance["instead"]["median"] < chance["now"]["median"]
