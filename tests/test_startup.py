"""Start-up: the package's door loads its names on first use, and a command imports what it
uses. What each command may not import is checked in a real process (the modules a command
loads are a fact of the process, not of a CliRunner sharing this one's imports); its time is
measured in bench/startup.py, never here."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys

import pytest

import simhash_cli

from conftest import ROOT, SAMPLE

DOOR = ROOT / "simhash_cli" / "__init__.py"


def _checked_names() -> dict[str, str]:
    """The names the door imports under TYPE_CHECKING, by the module they come from."""
    tree = ast.parse(DOOR.read_text(encoding="utf-8"))
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    for alias in inner.names:
                        names[alias.name] = "." * inner.level + (inner.module or "")
    return names


def test_the_door_loads_each_name_from_where_the_checker_reads_it() -> None:
    homes = simhash_cli._HOMES
    assert _checked_names() == homes
    assert set(simhash_cli.__all__) == {"__version__", *homes}
    for name, home in homes.items():
        module = importlib.import_module(home, "simhash_cli")
        assert getattr(simhash_cli, name) is getattr(module, name)
    assert sorted(dir(simhash_cli)) == sorted(simhash_cli.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        simhash_cli.nosuch  # noqa: B018


# Heavy modules only some paths need: clustering's graph search (with scipy.linalg), the
# binomial CDF of the exact gate, worker processes, and the extras.
NOT_AT_START = (
    "numpy",
    "scipy.sparse",
    "scipy.sparse.csgraph",
    "scipy.special",
    "concurrent.futures.process",
    "sklearn",
    "dask",
    "pyarrow",
    "jinja2",
)

_LOADED = """
import json, sys
from simhash_cli.cli import main
try:
    main(sys.argv[1:], prog_name="simhash")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _loaded(*args: str, env: dict[str, str] | None = None) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_completing_a_command_name_imports_no_command() -> None:
    """Each Tab of shell completion took 0.6 s: the group loaded every command to complete
    a name."""
    env = {"_SIMHASH_COMPLETE": "bash_complete", "COMP_WORDS": "simhash ded", "COMP_CWORD": "1"}
    loaded = _loaded(env=env)
    assert "click.shell_completion" in loaded
    assert sorted((set(NOT_AT_START) | {"simhash_cli.cli.dedupe"}) & loaded) == []
    done = subprocess.run(
        [sys.executable, "-c", _LOADED], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, **env}, check=False,
    )  # fmt: skip
    assert done.stdout.split() == ["plain,dedupe"]


# What compare A B does not do: walk a tree (the ignore files' patterns), search a corpus
# (the dedupe pipeline and its planner), explain a pair.
NOT_IN_COMPARE = (
    "pathspec",
    "simhash_cli.core.pipeline",
    "simhash_cli.core.search.planner",
    "simhash_cli.io.sinks.explain",
)


@pytest.mark.parametrize(
    ("args", "allowed", "also_not"),
    [
        (("--version",), (), ()),
        # Every command's summary line, from the group's own list: no command is imported
        # (each imports numpy and scipy: 0.6 s before the list was printed).
        (("--help",), (), ("simhash_cli.cli.dedupe", "simhash_cli.cli.index")),
        # A command's own help and its -h read its declarations alone: what runs it, and
        # numpy and scipy under that, are imported by the run (0.40 s, where 0.08 s now).
        (("dedupe", "--help"), (), ("simhash_cli.app.dedupe.run", "simhash_cli.core.pipeline")),
        (("dedupe", "-h"), (), ("simhash_cli.app.dedupe.run",)),
        (("index", "add", "--help"), (), ("simhash_cli.app.index.run",)),
        (("apply", "--help"), (), ("simhash_cli.app.apply.run",)),
        (("compare", "a.txt", "b.txt"), ("numpy", "scipy.sparse"), NOT_IN_COMPARE),
    ],
    ids=["version", "help", "dedupe-help", "dedupe-h", "index-add-help", "apply-help", "compare"],
)
def test_a_command_imports_only_what_it_uses(
    args: tuple[str, ...], allowed: tuple[str, ...], also_not: tuple[str, ...]
) -> None:
    named = [str(SAMPLE / arg) if arg.endswith(".txt") else arg for arg in args]
    if "compare" in args:
        named[1:] = [str(path) for path in sorted(SAMPLE.iterdir())[:2]]
    loaded = _loaded(*named)
    assert {"simhash_cli.cli.main", "click"} <= loaded
    assert sorted((set(NOT_AT_START) - set(allowed) | set(also_not)) & loaded) == []


def test_the_package_alone_imports_no_array_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, simhash_cli; print(sorted(sys.modules))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "numpy" not in done.stdout and "simhash_cli.core" not in done.stdout


@pytest.mark.parametrize("command", ["apply", "calibrate", "compare", "explain", "fingerprint",
                                     "index", "plan"])  # fmt: skip
def test_every_help_imports_no_array_library(command: str) -> None:
    loaded = _loaded(command, "--help")
    assert (
        "simhash_cli.cli." + ("schemes" if command in ("plan", "calibrate") else command) in loaded
    )
    assert sorted(set(NOT_AT_START) & loaded) == []


@pytest.mark.parametrize(
    "words", ["simhash dedupe --bl", "simhash dedupe --bits 64 -j 2 --weighting "]
)
def test_completing_an_option_imports_no_array_library(words: str) -> None:
    """A Tab after ``simhash dedupe --bl`` loads dedupe's declarations, not what runs it; nor
    does one after ``--bits 64 -j 2`` (their checks ran as the line was parsed: 0.35 s, found
    by review)."""
    env = {"_SIMHASH_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}  # fmt: skip
    loaded = _loaded(env=env)
    assert "simhash_cli.cli.dedupe" in loaded
    assert sorted(set(NOT_AT_START) & loaded) == []
