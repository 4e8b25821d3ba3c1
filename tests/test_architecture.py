"""The house's rules, checked on the code itself (see docs/architecture.md).

Rooms and what each may import: core < io < index < app < engines < cli (index, the SQLite
store, imports no application code; the index commands are a slice of app). Only cli imports click,
only io's sinks import Rich; engines and index never import each other; every exception class
lives in simhash_cli/errors.py. The face stays thin: no function in cli/ over 40 lines, no
command body over cyclomatic complexity 10, no options read back as a dict; no module of the
package over 600 lines.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "simhash_cli"
ROOMS = ("core", "io", "index", "app", "engines", "cli")
MAY_IMPORT = {
    "errors": set(),
    "core": {"errors", "core"},
    "io": {"errors", "core", "io"},
    "index": {"errors", "core", "io", "index"},
    "app": {"errors", "core", "io", "index", "app"},
    "engines": {"errors", "core", "io", "index", "app", "engines"},
    "cli": {"errors", "core", "io", "app", "engines", "index", "cli", "__version__"},
}
MAX_MODULE_LINES = 600
MAX_CLI_FUNCTION_LINES = 40
MAX_COMMAND_COMPLEXITY = 10


def modules() -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        yield name, path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def room(module: str) -> str:
    """``simhash_cli.core.sketch.fingerprint`` -> ``core``; the package's own files by their
    name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported(module: str, tree: ast.Module, is_package: bool) -> Iterator[tuple[str, int]]:
    """(absolute module imported, line) for every import, relative ones resolved."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield (f"{base}.{alias.name}" if node.module is None else base), node.lineno


def test_the_rooms_exist() -> None:
    for name in ROOMS:
        assert (PACKAGE / name / "__init__.py").is_file(), name


def test_each_room_imports_only_the_rooms_below_it() -> None:
    wrong = []
    for module, path, tree in modules():
        here = room(module)
        allowed = MAY_IMPORT.get(here)
        if allowed is None:  # the package's door (__init__, __main__) may use any room
            continue
        for target, line in imported(module, tree, path.name == "__init__.py"):
            if target.startswith("simhash_cli.") and room(target) not in allowed:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
            if target == "simhash_cli":
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports the package's door")
    assert wrong == []


def test_the_engines_do_not_import_each_other() -> None:
    wrong = []
    for module, path, tree in modules():
        if not module.startswith(("simhash_cli.engines.local", "simhash_cli.engines.dask")):
            continue
        mine = "local" if ".local" in module else "dask"
        other = "dask" if mine == "local" else "local"
        for target, line in imported(module, tree, path.name == "__init__.py"):
            if target.startswith(f"simhash_cli.engines.{other}"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []


# A command's slice of app/: its request, its run and what follows it. Every other module of
# app/ is shared below the slices (the keep rule, the plan document, loading, settings, ...).
SLICES = ("fingerprint", "compare", "explain", "schemes", "dedupe", "apply", "index")


def slice_of(module: str) -> str | None:
    """``simhash_cli.app.dedupe.run`` -> ``dedupe``; None outside the slices."""
    parts = module.split(".")
    if len(parts) > 2 and parts[:2] == ["simhash_cli", "app"] and parts[2] in SLICES:
        return parts[2]
    return None


def test_the_slices_stand_alone() -> None:
    """No slice imports another, no module shared below the slices imports one, and no
    engine imports one: what two slices share lives below them, so that a change to one
    command's slice stays in it."""
    wrong = []
    for module, path, tree in modules():
        if room(module) not in ("app", "engines"):
            continue
        mine = slice_of(module)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            single = ast.Module(body=[node], type_ignores=[])
            for target, line in imported(module, single, path.name == "__init__.py"):
                names = [target]
                if isinstance(node, ast.ImportFrom):  # from ..app import dedupe
                    names += [f"{target}.{alias.name}" for alias in node.names]
                for name in names:
                    other = slice_of(name)
                    if other is not None and other != mine:
                        wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert sorted(set(wrong)) == []


def test_the_slices_are_the_commands() -> None:
    """Each slice of :data:`SLICES` is a module or package of app/ (a slice added to app/
    without a place here would escape the test above)."""
    app = PACKAGE / "app"
    assert all((app / name).is_dir() or (app / f"{name}.py").is_file() for name in SLICES)
    runs = {slice_of(module) for module in SLICE_RUNS}
    assert runs == set(SLICES)


@pytest.mark.parametrize(("library", "rooms"), [("click", {"cli"}), ("rich", {"io.sinks"})])
def test_only_the_face_knows_click_and_only_the_sinks_draw(library: str, rooms: set[str]) -> None:
    wrong = []
    for module, path, tree in modules():
        inside = any(module.startswith(f"simhash_cli.{place}") for place in rooms)
        for target, line in imported(module, tree, path.name == "__init__.py"):
            if target.split(".")[0] == library and not inside:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []


# The package's door imports its names on first use (PEP 562); the same names under
# TYPE_CHECKING are its face for type checkers, not a circle (tests/test_startup.py keeps them
# the names the door loads).
TYPE_ONLY_ALLOWED = {"simhash_cli.__init__"}


def test_no_import_of_the_package_hides_under_type_checking() -> None:
    """A type imported only for the checker is a circle the runtime does not see: the type
    belongs below the code that needs it (core/config.py, core/result.py). The face is the
    top room, where no circle can close: its commands import what runs them when they run,
    so that their help imports no array library, and name its types for the checker."""
    hidden = []
    for name, _, tree in modules():
        for node in ast.walk(tree):
            guarded = isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
            if not guarded or name in TYPE_ONLY_ALLOWED or room(name) == "cli":
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (
                    inner.level or "simhash_cli" in (inner.module or "")
                ):
                    hidden.append(f"{name}: {ast.unparse(inner)}")
    assert hidden == []


# The modules of app/ a command's body may call: each slice's run. Types and constants may come
# from anywhere in app/ and core/ (a request, an enum, a default), work only from here.
SLICE_RUNS = {
    "simhash_cli.app.fingerprint",
    "simhash_cli.app.compare",
    "simhash_cli.app.explain",
    "simhash_cli.app.schemes",
    "simhash_cli.app.dedupe.run",
    "simhash_cli.app.dedupe.against",
    "simhash_cli.app.apply.run",
    "simhash_cli.app.index.run",
}
# Functions that check or bound an option's value as click parses it (a usage error exits 2
# before any request exists): the rule stays in its room, the face only applies it.
OPTION_CHECKS = {
    "simhash_cli.core.sketch.fingerprint.validate_bits",  # --bits
    "simhash_cli.app.settings.capped_jobs",  # --jobs above the cores, the person told
    # The process made ready for a command's work (its allocator), before the request is.
    "simhash_cli.app.memory.keep_freed_memory",
}


def test_the_face_does_no_application_work() -> None:
    """cli/ declares, builds a request, calls its slice and hands the result to io: every
    function it takes from app/ is a slice's run, and from core/ it takes only types and
    constants, never a stage (an option's value checked as click parses it aside)."""
    wrong = []
    for module, path, tree in modules():
        if room(module) != "cli":
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            target = "simhash_cli." + (node.module or "")
            if room(target) not in ("app", "core"):
                continue
            imported_module = importlib.import_module(target)
            for alias in node.names:
                value = getattr(imported_module, alias.name, None)
                if value is None:  # a module of the package that nothing imported yet
                    value = importlib.import_module(f"{target}.{alias.name}")
                if inspect.ismodule(value):
                    value_module = value.__name__
                    if value_module not in SLICE_RUNS:
                        wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} {value_module}")
                    continue
                if not inspect.isfunction(value) or f"{target}.{alias.name}" in OPTION_CHECKS:
                    continue  # a class, an enum, a constant
                if room(target) == "core" or target not in SLICE_RUNS:
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} {target}.{alias.name}")
    assert wrong == []


def test_the_store_imports_no_application_code() -> None:
    """index/ is the SQLite store alone: the commands that use it are the slice app/index/."""
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for module, path, tree in modules()
        if room(module) == "index"
        for target, line in imported(module, tree, path.name == "__init__.py")
        if room(target) in ("app", "engines", "cli")
    ]
    assert wrong == []


READERS = ("simhash_cli.index.store", "simhash_cli.index.reading", "simhash_cli.index.search")
WRITES = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP)\b", re.IGNORECASE)


def _writes(node: ast.AST, module: str) -> bool:
    """A statement that changes an index, in a module that reads it; or a call of the block
    tables' writes outside the writer."""
    if module in READERS:
        return (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and WRITES.match(node.value) is not None
        )
    return (
        module not in ("simhash_cli.index.writing", "simhash_cli.index.lists")
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("write", "change")
        and ast.unparse(node.func.value).endswith("lists")
    )


def test_the_index_is_read_apart_from_where_it_is_written() -> None:
    """index/writing.py alone changes what an index holds: the open file, its reading and its
    query neither import it nor hold a statement that writes, and the block tables' writes
    (:mod:`.lists`) are called from the writer alone."""
    wrong = [
        f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)} {ast.unparse(node)[:40]}"
        for module, path, tree in modules()
        for node in ast.walk(tree)
        if _writes(node, module)
    ]
    wrong += [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for module, path, tree in modules()
        if module in READERS
        for target, line in imported(module, tree, False)
        if target == "simhash_cli.index.writing"
    ]
    assert wrong == []


EXECUTOR_USES = {"simhash_cli.app.batches", "simhash_cli.app.engine", "simhash_cli.app.parallel"}


def test_the_local_engine_is_an_executor() -> None:
    """The local engine runs batches and nothing else: what is read and searched on this
    machine is the slice's, so an option's walk never returns from engines/ to app/."""
    path = PACKAGE / "engines" / "local.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    uses = {
        target
        for target, _ in imported("simhash_cli.engines.local", tree, False)
        if target.startswith("simhash_cli.")
    }
    assert uses <= EXECUTOR_USES
    assert importlib.import_module("simhash_cli.engines.local").LocalEngine().remote is None


def test_every_exception_class_lives_in_the_errors_module() -> None:
    wrong = []
    for module, path, tree in modules():
        if module == "simhash_cli.errors":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base) for base in node.bases]
                if any(base.endswith(("Error", "Exception")) for base in bases):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} class {node.name}")
    assert wrong == []


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for _, path, _ in modules()
    }
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def functions(tree: ast.AST) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node


def test_no_function_of_the_face_is_over_40_lines() -> None:
    long = []
    for module, path, tree in modules():
        if room(module) != "cli":
            continue
        for function in functions(tree):
            assert function.end_lineno is not None
            lines = function.end_lineno - function.lineno + 1
            if lines > MAX_CLI_FUNCTION_LINES:
                long.append(f"{path.relative_to(ROOT)}:{function.lineno} {function.name}: {lines}")
    assert long == []


def _own_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of ``function`` outside the functions nested in it (counted on their own)."""
    stack: list[ast.AST] = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def complexity(function: ast.FunctionDef) -> int:
    """McCabe's number as radon counts it: one, plus one per decision (a comprehension
    counts its loop and each of its conditions)."""
    count = 1
    for node in _own_nodes(function):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.IfExp, ast.ExceptHandler)):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        elif isinstance(node, ast.match_case):
            count += 1
    return count


def test_the_complexity_of_the_counter_is_that_of_mccabe() -> None:
    source = "def f(a, b):\n    if a and b:\n        return [x for x in a if x]\n    return 0\n"
    tree = ast.parse(source)
    (function,) = functions(tree)
    assert complexity(function) == 5  # 1 + if + and + for + if


def test_no_command_body_is_over_complexity_10() -> None:
    high = []
    for module, path, tree in modules():
        if room(module) != "cli":
            continue
        for function in functions(tree):
            if complexity(function) > MAX_COMMAND_COMPLEXITY:
                high.append(f"{path.relative_to(ROOT)}:{function.lineno} {function.name}")
    assert high == []


def test_options_are_never_read_back_as_a_dict() -> None:
    wrong = []
    for _, path, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "params":
                value = ast.unparse(node.value)
                if "ctx" in value or "context" in value:
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}")
    assert wrong == []
