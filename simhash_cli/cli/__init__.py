"""The ``simhash`` command line: click declarations only. Each command's options collapse into
its typed request (:mod:`.options`); its body checks the request, hands it to its command's
slice of :mod:`simhash_cli.app` with an engine, and gives the result to
:mod:`simhash_cli.io.sinks`. The only room that imports click."""

from __future__ import annotations

from .apply import apply_command
from .dedupe import dedupe_command
from .documents import compare_command, explain_command, fingerprint_command
from .index import index_group
from .main import main
from .schemes import calibrate_command, plan_command

__all__ = ["main"]

for _command in (
    fingerprint_command,
    compare_command,
    explain_command,
    dedupe_command,
    apply_command,
    plan_command,
    calibrate_command,
    index_group,
):
    main.add_command(_command)
