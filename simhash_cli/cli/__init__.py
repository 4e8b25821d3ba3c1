"""The ``simhash`` command line: click declarations only. Each command's options collapse into
its typed request (:mod:`.options`); its body checks the request, hands it to its command's
slice of :mod:`simhash_cli.app` with an engine, and gives the result to
:mod:`simhash_cli.io.sinks`. The only room that imports click. The group (:mod:`.main`) names
each command by the module that declares it, imported when the command is asked for."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
