"""An unsealed plan's pairs checked on the files: a file is removed in favour of its kept file
only when the two are near-duplicates now, by their own bytes.

A sealed plan was written by this user's ``dedupe --plan`` and is unchanged (:mod:`.seal`): its
clusters are the run's. Any other plan is a file anyone could have written, and its clusters
are claims: with ``--root`` and ``--delete-near-duplicates`` an unsealed plan that paired two
unrelated files deleted one of them. So before a step of an unsealed plan acts, both files (the
very files the plan recorded: their SHA-256 was checked) are read through their directories and
their term-count cosine, with the plan's tokenizer, must reach the plan's threshold (0.9 for a
plan that does not say). Under tf-idf, whose weights depend on the whole corpus, term counts
stand in: a pair that reaches the threshold only under tf-idf is refused, never removed.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

from ...core.config import DEFAULT_THRESHOLD
from ...core.corpus import Settings, corpus_from_texts
from ...core.text.vectorize import Weighting
from ...core.verify.cosines import THRESHOLD_TOLERANCE, cosine_pairs
from ...errors import ParameterError
from ...io.sources.files import DEFAULT_MAX_BYTES, decode_text
from .checks import Spots
from .steps import Step
from .tree import Spot

__all__ = ["Nearness"]


class Nearness:
    """The check of an unsealed plan's steps, with the plan's settings.

    Args:
        settings: the plan's ``settings`` (bits, seed, tokenizer, weighting, threshold), as
            written; what is missing or not understood takes the defaults.
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        threshold = settings.get("threshold", DEFAULT_THRESHOLD)
        valid = isinstance(threshold, int | float) and -1.0 <= float(threshold) <= 1.0
        self.threshold = float(threshold) if valid else DEFAULT_THRESHOLD
        try:
            chosen = Settings.from_names(
                int(settings["bits"]), int(settings["seed"]),
                str(settings["tokenizer"]), str(settings["weighting"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, ParameterError):
            chosen = Settings()
        if chosen.corpus_wide:
            chosen = dataclasses.replace(chosen, weighting=Weighting.TF)
        self.settings = chosen

    def refusal(self, step: Step, spots: Spots) -> str | None:
        """Why the file may not go in favour of its kept file (they are not near now, or
        cannot be compared), or None."""
        texts = []
        for what, spot in (("the file", spots.target), ("the kept file", spots.kept)):
            text = _text(spot)
            if text is None:
                return f"{what} is not text: an unsealed plan's pair cannot be checked"
            texts.append(text)
        docs = corpus_from_texts(texts, self.settings)
        if docs.weights is None or docs.weights.shape[0] != 2:
            return "an unsealed plan's pair cannot be checked (a file holds no words)"
        cosine = float(cosine_pairs(docs.weights, np.array([[0, 1]]), docs.unit.order)[0])
        if not cosine >= self.threshold - THRESHOLD_TOLERANCE:
            return (
                f"not a near-duplicate of its kept file {step.kept.path} (term-count cosine "
                f"{cosine:.3f}, below the plan's threshold {self.threshold:g}): an unsealed "
                "plan's pairs are checked on the files"
            )
        return None


def _text(spot: Spot) -> str | None:
    """The text of the regular file at ``spot``, as the reader decodes it (None: binary)."""
    descriptor = spot.open_read()
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(DEFAULT_MAX_BYTES)
    decoded = decode_text(data)
    return None if decoded is None else decoded[0]
