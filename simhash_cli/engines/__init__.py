"""Where the stages run: :mod:`.local` (this machine's processes) or :mod:`.dask` (a Dask
cluster). Both map the same functions of the core and of :mod:`simhash_cli.app.batches`, and
give the same output; neither imports the other. :func:`open_engine` is the one place that
chooses between them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..app.engine import Engine, Need, refuse
from ..app.hooks import Hooks
from ..app.settings import EngineChoice, Source
from .local import LocalEngine

__all__ = ["open_engine"]


@contextmanager
def open_engine(
    choice: EngineChoice,
    hooks: Hooks,
    *,
    needs: Sequence[Need] = (),
    source: Source | None = None,
) -> Iterator[Engine]:
    """The engine ``choice`` names, open for the block: the local one, or a session on a Dask
    cluster (which ``source``'s record file, if any, must be readable by). A request that
    ``needs`` what the engine does not do is refused before anything starts."""
    if not choice.is_dask:
        refuse(choice.name.value, LocalEngine.refused, needs)
        yield LocalEngine()
        return
    # Imported here: the distributed extra is imported only by a cluster that starts.
    from .dask.engine import DaskEngine, session

    refuse(choice.name.value, DaskEngine.refused, needs)
    with session(choice, hooks, source) as engine:
        yield engine
