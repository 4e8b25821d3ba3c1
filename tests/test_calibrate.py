"""calibrate: the reference page's experiments on a corpus."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from simhash_cli import InputError, ParameterError, corpus_from_paths
from simhash_cli.core.search.calibrate import calibrate

from conftest import SAMPLE


def sample_weights() -> tuple[sp.csr_array, list[str]]:
    docs = corpus_from_paths([str(SAMPLE)])
    assert docs.weights is not None
    return docs.weights, docs.features


def test_the_page_experiments_on_the_sample_corpus() -> None:
    weights, features = sample_weights()
    result = calibrate(weights, features, seeds=30)
    assert result.documents == 8 and result.pairs == 28 and result.similar_pairs == 4
    errors = list(result.error_by_bits.values())
    assert list(result.error_by_bits) == [8, 16, 32, 64, 128, 256, 512]
    # More bits, a sharper estimate: 512 bits at least four times better than 8.
    assert errors[-1] * 4 < errors[0]
    assert all(e > 0 for e in errors)
    assert result.weighted_error is not None and result.unweighted_error is not None
    assert result.weighted_error < result.unweighted_error
    recalls = [s.recall for s in result.schemes]
    false_rates = [s.false_candidate_rate for s in result.schemes]
    assert [s.blocks for s in result.schemes] == [1, 4, 8]
    assert recalls == sorted(recalls) and false_rates == sorted(false_rates)
    assert all(0.0 <= s.expected_recall <= 1.0 for s in result.schemes)


def test_identical_documents_are_estimated_exactly() -> None:
    weights = sp.csr_array(np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0], [2.0, 4.0, 0.0]]))
    result = calibrate(weights, ["a", "b", "c"], seeds=3, bits_sweep=(8, 64))
    assert result.error_by_bits == pytest.approx({8: 0.0, 64: 0.0}, abs=1e-12)
    assert result.weighted_error == pytest.approx(0.0, abs=1e-12)
    assert all(s.recall == 1.0 for s in result.schemes)
    assert all(s.expected_recall == pytest.approx(1.0) for s in result.schemes)


def test_large_corpora_are_sampled() -> None:
    rng = np.random.default_rng(0)
    weights = sp.csr_array(rng.integers(0, 3, size=(50, 20)).astype(np.float64))
    weights = sp.csr_array(weights[np.diff(weights.indptr) > 0])
    result = calibrate(
        weights, [f"f{i}" for i in range(20)], seeds=1, max_docs=10, bits_sweep=(32,)
    )
    assert result.documents == 10 and result.pairs == 45


def test_bad_arguments() -> None:
    weights, features = sample_weights()
    with pytest.raises(ParameterError, match="at least one seed"):
        calibrate(weights, features, seeds=0)
    with pytest.raises(InputError, match="at least two documents"):
        calibrate(sp.csr_array(weights[:1]), features)
