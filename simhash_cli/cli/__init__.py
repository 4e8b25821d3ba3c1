"""The ``simhash`` command line: click declarations only. Each command's body builds a typed
request, hands it to :mod:`simhash_cli.app`, and gives the result to :mod:`simhash_cli.io.sinks`.
The only room that imports click."""

from .commands import main

__all__ = ["main"]
