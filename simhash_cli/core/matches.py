"""Stored documents near each query: the index query's result."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Matches"]


@dataclass(frozen=True)
class Matches:
    """Stored documents near each query: row k is query ``query[k]`` and stored row ``doc[k]``
    at ``hamming[k]`` bits, sorted by query, then distance, then stored row."""

    query: NDArray[np.int64]
    doc: NDArray[np.int64]
    hamming: NDArray[np.int64]

    def nearest(self, limit: int | None) -> Matches:
        """At most ``limit`` matches per query, the nearest (None: all)."""
        if limit is None or not len(self.query):
            return self
        first = np.searchsorted(self.query, self.query, side="left")
        keep = np.arange(self.query.size) - first < limit
        return Matches(self.query[keep], self.doc[keep], self.hamming[keep])
