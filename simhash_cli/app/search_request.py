"""The search a request asks for, and its rules: what ``dedupe`` and ``index dedupe`` share.

How candidates are found (``--blocks``, ``--max-distance``, ``--minhash``, the pilot), how they
are verified (``--threshold``, ``--verify``, the budgets) and how the pairs become clusters
(``--clustering``, ``--group-pairs``, ``--audit``). Which schemes go together, and which go
with what the search runs on (:class:`SearchPlace`), is checked here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..core.clusters.groups import Clustering
from ..core.config import (
    AUTO,
    DEFAULT_GROUP_PAIRS,
    DEFAULT_MAX_PAIRS,
    DEFAULT_THRESHOLD,
    DedupeConfig,
)
from ..core.search.blocking import DEFAULT_MAX_CANDIDATES
from ..core.verify.cosines import Verify
from ..errors import BadValueError, UsageError
from .choices import Input

__all__ = ["SearchPlace", "SearchRequest"]


@dataclass(frozen=True)
class SearchPlace:
    """What a search runs on, as far as its rules ask.

    Attributes:
        kind: the documents given: files (``PATHS``), texts, vectors or fingerprints.
        index: the files are read through an index (``dedupe --index``).
        stored: the documents are those an index stores (``index dedupe``): fingerprints, the
            files behind them read again only for ``--verify exact``.
        width: the fingerprints' width, when known before reading (None: the records or the
            index say it).
        fingerprints_only: nothing but fingerprints is at hand to verify with (the default
            verification is then the estimate).
    """

    kind: Input
    index: bool = False
    stored: bool = False
    width: int | None = None
    fingerprints_only: bool = False

    @property
    def has_vectors(self) -> bool:
        """Whether every document's vector is at hand to compare with every other: read here
        (files, texts, vectors), not fingerprints alone nor files read through an index."""
        return self.kind is not Input.FINGERPRINTS and not self.index and not self.stored


@dataclass(frozen=True)
class SearchRequest:
    """``--blocks`` and the options that go with it.

    Attributes:
        blocks: equal blocks per fingerprint, ``every`` pair, ``auto``, or None when not asked
            (auto).
        max_distance: instead of blocks, Manku's tables for pairs within this many bits.
        minhash: (bands, rows) of a MinHash signature of the feature sets; with a number of
            blocks or a distance, their candidates too.
        pilot: with auto, price the schemes on the corpus's own pairs and measure the recall.
        verify: how candidates are verified, or None for the place's default (exact where
            there are vectors, estimate where there are fingerprints alone).
        audit: also compute every pair's true cosine and report the blocks' recall.
    """

    blocks: int | Literal["auto", "every"] | None = None
    max_distance: int | None = None
    minhash: tuple[int, int] | None = None
    pilot: bool = True
    threshold: float = DEFAULT_THRESHOLD
    verify: Verify | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    max_pairs: int = DEFAULT_MAX_PAIRS
    clustering: Clustering = Clustering.REPRESENTATIVE
    group_pairs: int = DEFAULT_GROUP_PAIRS
    audit: bool = False

    def verification(self, place: SearchPlace) -> Verify:
        """The verification asked for, or the place's default: estimates where there are
        fingerprints alone."""
        if self.verify is not None:
            return self.verify
        return Verify.ESTIMATE if place.fingerprints_only else Verify.EXACT

    def config(self, place: SearchPlace) -> DedupeConfig:
        """The tuning of the search on ``place``."""
        return DedupeConfig(
            blocks=AUTO if self.blocks is None else self.blocks,
            max_distance=self.max_distance,
            minhash=self.minhash,
            pilot=self.pilot,
            threshold=self.threshold,
            verify=self.verification(place),
            max_candidates=self.max_candidates,
            max_pairs=self.max_pairs,
            clustering=self.clustering,
            group_pairs=self.group_pairs,
            audit=self.audit,
        )

    def check(self, place: SearchPlace) -> None:
        """Raises: UsageError, BadValueError: schemes that do not go together, or not with
        what the search runs on."""
        self._check_one_scheme()
        exact = self.verification(place) is Verify.EXACT
        if self.blocks == "every" and not (place.has_vectors and exact):
            raise _every_refused(place)
        if self.minhash is not None and (
            place.kind in (Input.VECTORS, Input.FINGERPRINTS) or place.index or place.stored
        ):
            raise UsageError(
                "{minhash} hashes the words of each document: give files or {texts} (not "
                "{vectors}, {fingerprints} or {index})",
                parameters=("minhash", "texts", "vectors", "fingerprints", "index"),
            )
        if self.minhash is not None and not exact:
            raise UsageError(
                "{minhash} candidates are checked by true cosine: leave out {verify} estimate",
                parameters=("minhash", "verify"),
            )
        self._check_width(place.width)

    def _check_one_scheme(self) -> None:
        named = {
            "blocks": self.blocks is not None,
            "max_distance": self.max_distance is not None,
            "minhash": self.minhash is not None,
        }
        chosen = [name for name, given in named.items() if given]
        # MinHash with one fingerprint scheme is a union of the two; any other two are not.
        union = chosen == ["blocks", "minhash"] and isinstance(self.blocks, int)
        union |= chosen == ["max_distance", "minhash"]
        if len(chosen) > 1 and not union:
            listed = " and ".join(f"{{{name}}}" for name in chosen)
            count = "two" if len(chosen) == 2 else "three"
            raise UsageError(f"{listed} are {count} schemes: choose one", parameters=tuple(chosen))

    def _check_width(self, width: int | None) -> None:
        """The schemes against the fingerprints' width, when it is known before reading."""
        if width is None:
            return
        if self.max_distance is not None and self.max_distance >= width:
            raise BadValueError(
                f"must be below the fingerprint width ({width})", parameter="max_distance"
            )
        if isinstance(self.blocks, int) and width % self.blocks:
            raise BadValueError(
                f"must divide the fingerprint width ({width}) evenly, not {self.blocks}",
                parameter="blocks",
            )


def _every_refused(place: SearchPlace) -> UsageError:
    """``--blocks every`` where there are no vectors to compare, or no exact verification."""
    if place.stored:
        return UsageError(
            "{blocks} every compares every pair's vectors, which an index does not hold: "
            "run simhash dedupe on the files",
            parameters=("blocks",),
        )
    return UsageError(
        "{blocks} every computes true cosines: give files, {texts} or {vectors} (not "
        "{fingerprints} or {index}), verified exactly",
        parameters=("blocks", "texts", "vectors", "fingerprints", "index"),
    )
