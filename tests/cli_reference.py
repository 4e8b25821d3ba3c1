"""docs/cli.md: every command's ``--help``, as the installed command prints it into a file (no
colour, 100 columns), made from the commands themselves. ``tests/test_readme.py`` checks that the
page is what the commands print today; a change to an option writes it again with

    .venv/bin/python tests/cli_reference.py --write
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

from simhash_cli.cli.main import main

PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = 100

HEAD = """# Command-line reference

Every command's `--help`, as it prints it (this page is written from the commands themselves by
`tests/cli_reference.py --write`, and the test suite checks that it still matches them). The
[README](../README.md) and [usage.md](usage.md) show the same commands by example.
"""


def help_of(path: list[str]) -> str:
    """What ``simhash PATH... --help`` prints, without colour, at :data:`WIDTH` columns."""
    made = CliRunner().invoke(
        main,
        [*path, "--help"],
        prog_name="simhash",
        terminal_width=WIDTH,
        color=False,
        env={"NO_COLOR": "1"},
    )
    if made.exit_code != 0:
        raise SystemExit(f"simhash {' '.join(path)} --help failed: {made.output}")
    return made.output.rstrip() + "\n"


def commands(group: click.Group, prefix: list[str]) -> list[list[str]]:
    """Every command under ``group``, a group before its commands, in the order help lists
    them."""
    found: list[list[str]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        found.append([*prefix, name])
        if isinstance(command, click.Group):
            found.extend(commands(command, [*prefix, name]))
    return found


def page() -> str:
    """The whole page."""
    parts = [HEAD, "## simhash\n", "```text\n" + help_of([]) + "```\n"]
    for path in commands(main, []):
        parts.append(f"## simhash {' '.join(path)}\n")
        parts.append("```text\n" + help_of(path) + "```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PAGE.write_text(page(), encoding="utf-8")
    else:
        sys.stdout.write(page())
