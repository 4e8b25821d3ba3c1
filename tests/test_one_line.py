"""One line, not a traceback: values no program can hold, paths that are not there, a disk that
fills, more workers than cores. Each test fails on the code before its fix (issue: nothing
lost, round three)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.errors import ExitCode

from conftest import SAMPLE, read_only_again, small_filesystem

TEXT = "the quick brown fox jumps over the lazy dog and keeps running far away"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def one_line_error(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert lines and lines[-1].startswith("Error: "), result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return lines[-1]


def test_an_integer_beyond_any_float_sorts_beyond_them_all(tmp_path: Path) -> None:
    """``--keep-by q:max`` over a 400-digit ``q`` was an OverflowError."""
    given = tmp_path / "in.jsonl"
    huge = "9" * 400
    given.write_text(
        json.dumps({"id": "small", "text": TEXT, "q": 5}) + "\n"
        f'{{"id": "huge", "text": "{TEXT}", "q": {huge}}}\n'
        f'{{"id": "low", "text": "{TEXT}", "q": -{huge}}}\n'
    )
    kept = tmp_path / "kept.jsonl"
    result = run("dedupe", "--texts", str(given), "--kept", str(kept), "--keep-by", "q:max", "-qq")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert kept.read_text() == given.read_text().splitlines(keepends=True)[1]


@pytest.mark.parametrize("size", ["99999999999999999999", "99999999999G", "２K"])
def test_a_size_no_file_holds_is_refused_as_usage(size: str) -> None:
    """``--max-bytes 99999999999999999999`` was an OverflowError; digits of other scripts were
    read as numbers by ``str.isdigit``."""
    result = run("fingerprint", "--max-bytes", size, str(SAMPLE))
    assert result.exit_code == ExitCode.USAGE
    line = one_line_error(result)
    assert "--max-bytes" in line and repr(size) in line


def test_explain_of_a_missing_path_says_so_as_usage(tmp_path: Path) -> None:
    """It said "not a text document", exit 1."""
    there = tmp_path / "a.txt"
    there.write_text(TEXT)
    result = run("explain", str(there), str(tmp_path / "nosuch.txt"))
    assert result.exit_code == ExitCode.USAGE
    assert one_line_error(result) == f"Error: no such file or directory: {tmp_path}/nosuch.txt"


@pytest.mark.parametrize("given", ["--texts", "--vectors", "--fingerprints"])
def test_a_missing_records_file_makes_nothing(tmp_path: Path, given: str) -> None:
    """``index add x.db --texts nosuch.jsonl`` left an empty x.db behind; ``dedupe --texts
    nosuch.jsonl`` was a traceback."""
    missing = str(tmp_path / "nosuch.jsonl")
    db = tmp_path / "x.db"
    added = run("index", "add", str(db), given, missing)
    assert added.exit_code == ExitCode.USAGE
    assert one_line_error(added) == f"Error: no such file or directory: {missing}"
    assert not db.exists() and sorted(os.listdir(tmp_path)) == []
    deduped = run("dedupe", given, missing)
    assert deduped.exit_code == ExitCode.USAGE
    assert one_line_error(deduped) == f"Error: no such file or directory: {missing}"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    with small_filesystem(tmp_path / "full", "256k") as where:
        yield where


def test_a_full_disk_under_a_parquet_output_names_that_file(
    tmp_path: Path, full_disk: Path
) -> None:
    """It said "cannot write standard output"; nothing half-written is left."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    given = tmp_path / "in.parquet"
    texts = [f"{TEXT} {i} " + os.urandom(400).hex() for i in range(1000)]
    pq.write_table(pa.table({"id": list(range(1000)), "text": texts}), given)
    kept = full_disk / "kept.parquet"
    result = run("dedupe", "--texts", str(given), "--kept", str(kept), "-qq")
    assert result.exit_code == ExitCode.ERROR
    line = one_line_error(result)
    assert line.startswith(f"Error: cannot write {kept}: ") and "No space left" in line
    assert os.listdir(full_disk) == []


def test_local_dask_workers_beyond_the_cores_are_capped_and_said(tmp_path: Path) -> None:
    """``--workers 64`` on 2 cores started 64 workers (6.4 GB to do the work of 2). Here the
    process may run on one core, and asks for three workers."""
    pytest.importorskip("distributed")
    done = subprocess.run(
        [sys.executable, "-m", "simhash_cli", "dedupe", "--engine", "dask", "--workers", "3",
         "--blocks", "16", str(SAMPLE)],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    assert "note: 3 workers asked, 1 core here: 1 worker used" in done.stderr
    assert "dask: local cluster of 1 worker" in done.stderr


def test_a_healthy_read_only_index_is_called_read_only_not_damaged(tmp_path: Path) -> None:
    """It said "damaged or truncated ... restore it from a copy" of a good file."""
    new = tmp_path / "new.txt"
    new.write_text(TEXT)
    with small_filesystem(tmp_path / "ro", "4m") as where:
        db = where / "x.db"
        assert run("index", "add", str(db), str(SAMPLE), "-qq").exit_code == ExitCode.OK
        before = db.read_bytes()
        read_only_again(where)
        for command in (["add", str(db), str(new)], ["prune", str(db)]):
            refused = run("index", *command)
            assert refused.exit_code == ExitCode.ERROR
            line = one_line_error(refused)
            assert line.startswith(f"Error: the index {db} is read-only: its file system is")
            assert "damaged" not in line
        queried = run("index", "query", str(db), str(new), "-qq")
        assert queried.exit_code == ExitCode.OK, queried.stderr
        assert db.read_bytes() == before


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE docs SET path = 42 WHERE id = 1",
        "UPDATE docs SET w0 = 'abc' WHERE id = 1",
        "UPDATE docs SET w0 = 1.5 WHERE id = 1",
        "UPDATE docs SET features = 'x' WHERE id = 2",
    ],
)
def test_a_wrongly_typed_cell_in_an_index_says_damaged(tmp_path: Path, edit: str) -> None:
    """An integer where a name is stored, text or a real where a number is: AttributeError
    and ValueError in index dedupe, index query and --against."""
    db = tmp_path / "x.db"
    assert run("index", "add", str(db), str(SAMPLE), "-qq").exit_code == ExitCode.OK
    with sqlite3.connect(db) as connection:
        connection.execute(edit)
    connection.close()
    one = str(next(SAMPLE.glob("*.txt")))
    commands = [["index", "dedupe", str(db)], ["dedupe", one, "--against", str(db), "--verify",
                "estimate"]]  # fmt: skip
    if "features" not in edit:  # a query reads names and fingerprints only
        commands.append(["index", "query", str(db), one])
    for command in commands:
        result = run(*command)
        assert result.exit_code == ExitCode.ERROR, (command, result.stderr)
        line = one_line_error(result)
        assert line.startswith(f"Error: the index {db} is damaged ("), line


_LIMITED = """
import os, resource, sys
import simhash_cli.cli  # imported before the limit: the limit is for the work
import simhash_cli.cli.dedupe  # the command, imported when asked for, and what runs it
import simhash_cli.app.dedupe.request, simhash_cli.app.dedupe.run, simhash_cli.engines
import simhash_cli.io.sinks.dedupe, simhash_cli.io.sinks.messages, simhash_cli.io.sources.snapshot
if __name__ == "__main__":
    with open("/proc/self/statm") as statm:  # its first number: the address space, in pages
        size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") + (20 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (size, size))
    sys.argv = ["simhash", *sys.argv[1:]]
    simhash_cli.cli.main()
"""


def test_memory_that_runs_out_is_one_line_naming_the_step(tmp_path: Path) -> None:
    """Under ``ulimit -v`` a MemoryError was a traceback. Here the process may use 20 MiB more
    than its imports took, and reads 8 MB of texts."""
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("the address space is read from Linux's /proc")
    given = tmp_path / "in.jsonl"
    words = [f"w{i}" for i in range(50_000)]
    rng = np.random.default_rng(2)
    with given.open("w") as out:
        for i, row in enumerate(rng.integers(0, len(words), (20_000, 60))):
            out.write(json.dumps({"id": i, "text": " ".join(words[w] for w in row)}) + "\n")
    done = subprocess.run(
        [sys.executable, "-c", _LIMITED, "dedupe", "--texts", str(given), "-j1"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == ExitCode.ERROR, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr, done.stderr
    line = done.stderr.splitlines()[-1]
    assert line.startswith(f"Error: out of memory while reading the records of {given} ("), line
    assert "give it more, or fewer documents per run" in line
