"""simhash-cli: near-duplicate detection with SimHash fingerprints.

The core operations of the reference page, under the same names::

    >>> from simhash_cli import fingerprint, hamming, estimate_cosine, candidates
    >>> a = fingerprint({"the": 2, "cat": 1}, bits=32, seed=12345)
    >>> b = fingerprint({"the": 2, "cat": 1, "sat": 1}, bits=32, seed=12345)
    >>> hamming(a, a), round(estimate_cosine(a, a, 32), 3)
    (0, 1.0)

For a corpus, :func:`vectorize` builds the sparse weight matrix and :func:`fingerprint_matrix`
fingerprints every row in one vectorized pass, bit-identical to :func:`fingerprint`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

# Where each name lives, imported on first use (PEP 562): a command that needs no array pays
# nothing for numpy and scipy, and ``import simhash_cli`` is only this file. The imports under
# TYPE_CHECKING give type checkers the same names; a test keeps the two lists one.
_HOMES = {
    "Corpus": ".core.corpus",
    "DedupeConfig": ".core.config",
    "DedupeResult": ".core.result",
    "ExitCode": ".errors",
    "InputError": ".errors",
    "ParameterError": ".errors",
    "PathNotFoundError": ".errors",
    "Settings": ".core.corpus",
    "SettingsMismatchError": ".errors",
    "SimhashError": ".errors",
    "TokenizerConfig": ".core.text.tokenizer",
    "Verify": ".core.verify.cosines",
    "Weighting": ".core.text.vectorize",
    "candidate_probability": ".core.search.blocking",
    "candidates": ".core.search.blocking",
    "cluster_labels": ".core.clusters.cluster",
    "clusters": ".core.clusters.cluster",
    "compare": ".core.comparison",
    "corpus_from_fingerprints": ".app.records",
    "corpus_from_paths": ".app.files",
    "corpus_from_texts": ".core.corpus",
    "corpus_from_vectors": ".app.records",
    "cosine_pairs": ".core.verify.cosines",
    "dedupe": ".core.pipeline",
    "estimate_cosine": ".core.sketch.fingerprint",
    "feature_signs": ".core.sketch.fingerprint",
    "fingerprint": ".core.sketch.fingerprint",
    "fingerprint_matrix": ".core.sketch.fingerprint",
    "fnv1a": ".core.sketch.fingerprint",
    "from_hex": ".core.sketch.fingerprint",
    "from_mappings": ".core.text.vectorize",
    "hamming": ".core.sketch.fingerprint",
    "hamming_rows": ".core.sketch.fingerprint",
    "pairs_within": ".core.search.tables",
    "score_pairs": ".core.verify.cosines",
    "to_hex": ".core.sketch.fingerprint",
    "to_int": ".core.sketch.fingerprint",
    "tokenize": ".core.text.tokenizer",
    "vectorize": ".core.text.vectorize",
    "within_probability": ".core.search.tables",
}

if TYPE_CHECKING:
    from .app.files import corpus_from_paths
    from .app.records import corpus_from_fingerprints, corpus_from_vectors
    from .core.clusters.cluster import cluster_labels, clusters
    from .core.comparison import compare
    from .core.config import DedupeConfig
    from .core.corpus import Corpus, Settings, corpus_from_texts
    from .core.pipeline import dedupe
    from .core.result import DedupeResult
    from .core.search.blocking import candidate_probability, candidates
    from .core.search.tables import pairs_within, within_probability
    from .core.sketch.fingerprint import (
        estimate_cosine,
        feature_signs,
        fingerprint,
        fingerprint_matrix,
        fnv1a,
        from_hex,
        hamming,
        hamming_rows,
        to_hex,
        to_int,
    )
    from .core.text.tokenizer import TokenizerConfig, tokenize
    from .core.text.vectorize import Weighting, from_mappings, vectorize
    from .core.verify.cosines import Verify, cosine_pairs, score_pairs
    from .errors import (
        ExitCode,
        InputError,
        ParameterError,
        PathNotFoundError,
        SettingsMismatchError,
        SimhashError,
    )

__all__ = [
    "Corpus",
    "DedupeConfig",
    "DedupeResult",
    "ExitCode",
    "InputError",
    "ParameterError",
    "PathNotFoundError",
    "Settings",
    "SettingsMismatchError",
    "SimhashError",
    "TokenizerConfig",
    "Verify",
    "Weighting",
    "__version__",
    "candidate_probability",
    "candidates",
    "cluster_labels",
    "clusters",
    "compare",
    "corpus_from_fingerprints",
    "corpus_from_paths",
    "corpus_from_texts",
    "corpus_from_vectors",
    "cosine_pairs",
    "dedupe",
    "estimate_cosine",
    "feature_signs",
    "fingerprint",
    "fingerprint_matrix",
    "fnv1a",
    "from_hex",
    "from_mappings",
    "hamming",
    "hamming_rows",
    "pairs_within",
    "score_pairs",
    "to_hex",
    "to_int",
    "tokenize",
    "vectorize",
    "within_probability",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
