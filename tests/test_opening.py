"""Every file simhash reads is opened through one bounded, non-blocking opener
(:mod:`simhash_cli.io.opening`): FIFOs, devices and huge files found by a walk, named in an
ignore file's place or given as shards never hang a run or fill its memory."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.errors import ExitCode, NotAFile
from simhash_cli.io.opening import open_file, read_bounded
from simhash_cli.io.sources.files import read_documents
from simhash_cli.io.sources.selection import IGNORE_FILE_LIMIT

from conftest import ROOT

SIMHASH = [sys.executable, "-m", "simhash_cli"]
TEXT = "the quick brown fox jumps over the lazy dog near the river bank"


def record(name: str) -> str:
    return json.dumps({"id": name, "text": TEXT}) + "\n"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def real(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The installed command as a real process: a hang fails on the timeout, not forever."""
    return subprocess.run(
        [*SIMHASH, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def test_the_opener_refuses_what_is_not_a_regular_file_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotAFile, match="a FIFO"):
        open_file(str(fifo))
    with pytest.raises(NotAFile, match="a character device"):
        read_bounded("/dev/zero", 10)
    with pytest.raises(NotAFile, match="a directory"):
        open_file(str(tmp_path))
    # Named as input, a pipe waits for its writer, as cat does; it writes, then is done.
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"late words"), daemon=True)
    writer.start()
    with open_file(str(fifo), stream=True) as handle:
        assert handle.read() == b"late words"
    writer.join(timeout=10)


def test_an_interrupt_while_the_file_object_is_made_stays_an_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C inside ``os.fdopen``, after the file object took the descriptor (io.open closes
    it as it fails): the interrupt goes on, never an EBADF from a second close that a reader
    would take for an unreadable file and carry on (a run that exits 0 with a file left out)."""
    path = tmp_path / "a.txt"
    path.write_text("some words")
    real = os.fdopen

    def interrupted(descriptor: int, mode: str = "r") -> object:
        real(descriptor, mode).close()  # what io.open does with a raw file it fails to wrap
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", interrupted)
    with pytest.raises(KeyboardInterrupt):
        open_file(str(path))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # a stream named as input is read through a file object
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that has written: no wait
    os.write(writer, b"some words")
    skipped: list[object] = []
    try:
        with pytest.raises(KeyboardInterrupt):
            list(read_documents([str(fifo)], skipped.append))
    finally:
        os.close(writer)
    assert skipped == []
    # A regular file is read from its descriptor: Ctrl-C in a read is an interrupt too.
    monkeypatch.setattr(os, "read", mock.Mock(side_effect=KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        list(read_documents([str(path)], skipped.append))
    assert skipped == []


def test_fifos_and_devices_in_a_walk_never_hang_it(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text(TEXT)
    os.mkfifo(tree / ".gitignore")
    (tree / ".ignore").symlink_to("/dev/zero")
    files = real("dedupe", "-f", "json", str(tree))
    assert files.returncode == ExitCode.OK, files.stderr
    assert "ignore file not read: not a regular file (a FIFO)" in files.stderr
    assert "ignore file not read: not a regular file (a character device)" in files.stderr

    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text(record("a"))
    os.mkfifo(shards / "b.jsonl")
    (shards / "c.jsonl").symlink_to("/dev/zero")
    records = real("dedupe", "-v", "-f", "json", "--texts", str(shards))
    assert records.returncode == ExitCode.OK, records.stderr
    assert f"left out {shards / 'b.jsonl'} (not a regular file)" in records.stderr
    assert f"left out {shards / 'c.jsonl'} (not a regular file)" in records.stderr


def test_no_limit_on_an_endless_device_stops_at_its_first_binary_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    done = real("dedupe", "--max-bytes", "0", "-f", "json", "/dev/zero", str(tmp_path / "a.txt"))
    assert done.returncode == ExitCode.OK, done.stderr
    assert "skipped files: 1 binary (/dev/zero)" in done.stderr  # binary files are summed


def test_an_ignore_file_past_its_bound_is_passed_over_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "b.log").write_text(TEXT)
    with open(tmp_path / ".gitignore", "wb") as handle:
        handle.write(b"*.log\n")
        handle.truncate(IGNORE_FILE_LIMIT + 1)  # sparse: no time, no disk
    result = run("dedupe", "-f", "json", str(tmp_path))
    assert result.exit_code == ExitCode.OK, result.stderr
    assert "ignore file of more than 1,048,576 bytes: not read" in result.stderr
    assert "read 2 documents" in result.stderr  # not honoured: b.log is read


def test_a_line_of_an_ignore_file_that_is_no_pattern_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "b.log").write_text(TEXT)
    (tmp_path / ".gitignore").write_bytes(b"[z-a]\n*.log\n")
    result = run("dedupe", "-f", "json", str(tmp_path))
    assert result.exit_code == ExitCode.OK, result.stderr
    assert "line 1 of the ignore file: not a pattern, passed over" in result.stderr
    assert "read 1 document" in result.stderr  # *.log still honoured


def test_a_name_with_glob_characters_that_exists_is_that_file(tmp_path: Path) -> None:
    (tmp_path / "train[v2].jsonl").write_text(record("mine"))
    (tmp_path / "train2.jsonl").write_text(record("other"))
    result = run("fingerprint", "-f", "jsonl", "--texts", str(tmp_path / "train[v2].jsonl"))
    assert result.exit_code == ExitCode.OK, result.stderr
    assert [line.split('"')[3] for line in result.stdout.splitlines()] == ["mine"]


def test_the_shard_walker_says_what_it_passed_over(tmp_path: Path) -> None:
    (tmp_path / "part-0.jsonl").write_text(record("a"))
    (tmp_path / "info.json").write_text("{}")
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".hidden.jsonl").write_text(record("h"))
    result = run("dedupe", "-v", "-f", "json", "--texts", str(tmp_path))
    assert result.exit_code == ExitCode.OK, result.stderr
    for name, why in (
        ("info.json", "plain .json: name such shards with a glob"),
        ("_SUCCESS", "a name starting with _"),
        (".hidden.jsonl", "hidden"),
    ):
        assert f"left out {tmp_path / name} ({why})" in result.stderr
    quiet = run("dedupe", "-f", "json", "--texts", str(tmp_path))
    assert "left out 3 paths" in quiet.stderr


# What may open a path without the opener, and why: each writes a file this run made (or
# fsyncs a directory), or hands a path the opener has read already to a library.
_ALLOWED = {
    ("io/opening.py", "open_descriptor"): "the opener itself",
    ("io/sinks/atomic.py", "write_bytes"): "writes a temporary file this run made",
    ("app/apply/apply.py", "sync_directory"): "fsyncs a directory",
    ("app/apply/apply.py", "copy_file"): "writes a copy this run made (O_EXCL, via tree)",
    ("app/apply/tree.py", "spot_in"): "a root's directory, never a file",
    ("app/apply/tree.py", "spot_under"): "DIR's directory, never a file",
    ("app/apply/tree.py", "_down"): "directories without following a link",
    ("app/apply/tree.py", "open_read"): "a file in a held directory, O_NOFOLLOW, checked regular",
    ("app/apply/tree.py", "create"): "creates a new file (O_EXCL | O_NOFOLLOW)",
    ("io/sinks/atomic.py", "written_into"): "an output that is a pipe or a device, written into",
    ("io/sinks/dataset.py", "_parquet_writer"): "a descriptor written_into opened",
    ("app/apply/journal.py", "open"): "appends to a journal read and checked through the opener",
    ("app/apply/journal.py", "_create"): "writes a journal this run made",
    ("app/plans/seal.py", "_create_key"): "writes a key this run made",
    ("cli/main.py", "_drop_stdout"): "opens /dev/null for writing",
    ("app/memory.py", "_memory_bounded"): "reads the kernel's overcommit mode under /proc",
    ("index/schema.py", "connect"): "SQLite, once the index's header was read by the opener",
    ("index/schema.py", "create_file"): "SQLite, on a database this run made",
    ("index/schema.py", "expected_schema"): "SQLite in memory",
    ("engines/dask/blocks.py", "read_block"): "a URL (a local path goes to the opener)",
    ("io/sources/parquet.py", "_opened"): "a URL, or a file the opener opened",
    ("io/sinks/dataset.py", "_copy_parquet"): "a file the opener opened",
}


def _opens(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "open"
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        if func.attr == "open" and owner in {"os", "io", "fsspec", "gzip", "builtins"}:
            return True
        return func.attr in {"connect", "ParquetFile", "read_table"} and owner in {
            "sqlite3",
            "pq",
            "parquet",
        }
    return False


def test_no_code_opens_a_path_but_through_the_opener() -> None:
    package = ROOT / "simhash_cli"
    found = set()
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and _opens(node):
                    found.add((str(path.relative_to(package)), function.name))
    assert found - set(_ALLOWED) == set()
    assert set(_ALLOWED) - found == set()  # an entry no longer needed goes
