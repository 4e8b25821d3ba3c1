"""Weight vectors over 64-bit feature keys: rows that compare without a shared vocabulary.

A corpus numbers its columns by first occurrence; vectors made elsewhere (a worker of the dask
engine, a piece read again in another process) cannot share that numbering, so each entry
carries its feature's key (:func:`~simhash_cli.core.sketch.fingerprint.feature_keys`) and a matrix
of
them numbers its columns by key: the order every sum over a row takes on every engine
(:func:`~simhash_cli.core.verify.cosines.column_order`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..sketch.fingerprint import feature_keys

__all__ = ["Vectors"]


@dataclass(frozen=True)
class Vectors:
    """Weight vectors over 64-bit feature keys
    (:func:`~simhash_cli.core.sketch.fingerprint.feature_keys`),
    rows like a CSR matrix: vectors made on different workers compare without a shared
    vocabulary."""

    indptr: NDArray[np.int64]
    keys: NDArray[np.uint64]
    values: NDArray[np.floating[Any]]

    @classmethod
    def of(cls, weights: sp.csr_array, features: Sequence[str]) -> Vectors:
        """Rows of a weight matrix whose columns are named by ``features``."""
        csr = sp.csr_array(weights)
        # The weights' own type (float32 counts are not doubled in memory or on the wire).
        return cls(csr.indptr.astype(np.int64), feature_keys(features)[csr.indices], csr.data)

    def take(self, rows: NDArray[np.int64]) -> Vectors:
        """The vectors of ``rows``, in that order."""
        sizes = np.diff(self.indptr)[rows]
        indptr = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        entries = np.repeat(self.indptr[rows] - indptr[:-1], sizes) + np.arange(indptr[-1])
        return Vectors(indptr, self.keys[entries], self.values[entries])

    @staticmethod
    def join(parts: Sequence[Vectors]) -> Vectors:
        """The rows of all parts, in order."""
        sizes = np.concatenate([np.diff(part.indptr) for part in parts])
        indptr = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        return Vectors(
            indptr,
            np.concatenate([part.keys for part in parts]),
            np.concatenate([part.values for part in parts]),
        )

    def matrix(self) -> sp.csr_array:
        """A CSR matrix whose columns are the distinct keys of these rows."""
        return self.keyed()[0]

    def keyed(self) -> tuple[sp.csr_array, NDArray[np.uint64]]:
        """:meth:`matrix`, and the key of each of its columns."""
        keys, columns = np.unique(self.keys, return_inverse=True)
        matrix = sp.csr_array(
            (self.values, columns.ravel(), self.indptr),
            shape=(self.indptr.size - 1, keys.size),
        )
        return matrix, keys

    @staticmethod
    def empty() -> Vectors:
        """No rows."""
        return Vectors(np.zeros(1, np.int64), np.zeros(0, np.uint64), np.zeros(0))
