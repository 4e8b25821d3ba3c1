"""Distinct values and rows of integer arrays, sorted, by one sort.

``np.unique`` gives the same arrays, but since numpy 2.3 it finds distinct values through a hash
table before sorting them: on this project's arrays (candidate codes, rows, feature columns) it
took 0.40 s for 1,000,000 int64 where a sort takes 0.01 s, 7.8 s for 8,000,000, and with
``axis=0`` 2.8 s for 4,000,000 pairs against 0.3 s. Every distinct set the search makes goes
through here.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["distinct", "distinct_rows"]

T = TypeVar("T", bound=np.generic)


def distinct(values: NDArray[T]) -> NDArray[T]:
    """The distinct values of an integer array (flattened), in increasing order:
    ``np.unique``."""
    ordered: NDArray[T] = np.sort(values, axis=None)
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=np.bool_)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    found: NDArray[T] = ordered[keep]
    return found


def distinct_rows(rows: NDArray[T]) -> NDArray[T]:
    """The distinct rows of a 2-d integer array, in lexicographic order: ``np.unique(rows,
    axis=0)``."""
    if rows.shape[0] < 2:
        copied: NDArray[T] = rows.copy()
        return copied
    if rows.shape[1] == 2 and np.issubdtype(rows.dtype, np.integer):
        low, high = int(rows.min()), int(rows.max())
        if low >= 0 and (high + 1) ** 2 < 2**63:  # pairs of rows: one number each, one sort
            wide = rows.astype(np.int64)
            codes = distinct(wide[:, 0] * (high + 1) + wide[:, 1])
            pairs: NDArray[T] = np.column_stack([codes // (high + 1), codes % (high + 1)]).astype(
                rows.dtype
            )
            return pairs
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    keep = np.empty(ordered.shape[0], dtype=np.bool_)
    keep[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=keep[1:])
    return ordered[keep]
