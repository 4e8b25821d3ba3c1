"""The choices of the command line that the application knows by name: what a command reads,
what a dedupe holds in memory, where the work runs. Declarations only, without the arrays that
act on them: a command's help reads them (:mod:`~simhash_cli.app.settings` builds on them)."""

from __future__ import annotations

from enum import Enum

__all__ = ["FINGERPRINT_SETTINGS", "EngineName", "Input", "Memory"]

FINGERPRINT_SETTINGS = ("bits", "seed", "ngram", "char_ngrams", "weighting")
"""The parameters that decide a fingerprint (an index, or fingerprint records, have their own)."""


class Input(str, Enum):
    """What a command reads."""

    PATHS = "paths"
    """Files, directories (read recursively) and ``-`` for standard input."""
    TEXTS = "texts"
    """JSON Lines (or Parquet) of ``{"id": ..., "text": ...}``."""
    VECTORS = "vectors"
    """JSON Lines (or Parquet) of ``{"id": ..., "features": {feature: weight}}``."""
    FINGERPRINTS = "fingerprints"
    """The JSON Lines of ``simhash fingerprint``."""


class Memory(str, Enum):
    """What ``dedupe --texts|--vectors FILE`` holds of each document (``--memory``)."""

    AUTO = "auto"
    """Fingerprints when the records' vectors could fill half the machine's memory."""
    VECTORS = "vectors"
    """Every document's vector: one reading."""
    FINGERPRINTS = "fingerprints"
    """Fingerprints (and MinHash signatures): the records read again for what needs vectors."""


class EngineName(str, Enum):
    """Where the work runs."""

    LOCAL = "local"
    """This machine's processes (``jobs``)."""
    DASK = "dask"
    """A Dask cluster: local workers on 127.0.0.1, or an existing scheduler's."""
