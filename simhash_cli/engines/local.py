"""The local engine: this machine's processes (``--jobs``) run the batches, in order, this
process taking its share (:func:`~simhash_cli.app.parallel.ordered_map`: spawned workers that
ignore Ctrl-C). It is an executor only: what is read and searched, and where, is the slice's
(a dedupe on this machine reads through :mod:`simhash_cli.app.loading` and searches here)."""

from __future__ import annotations

from typing import ClassVar

from ..app.batches import Mapper
from ..app.engine import Need, RemoteSearch
from ..app.parallel import ordered_map

__all__ = ["LocalEngine"]


class LocalEngine:
    """This machine's processes, a batch per process. It does everything a request may need,
    and searches nowhere but here (:attr:`remote` is None)."""

    refused: ClassVar[frozenset[Need]] = frozenset()

    @property
    def mapper(self) -> Mapper:
        """Batches spread over ``jobs`` processes, in order (:func:`ordered_map`)."""
        return ordered_map

    @property
    def remote(self) -> RemoteSearch | None:
        """None: the documents are read into this process and searched here."""
        return None
