"""Datasets in shards, as they are kept: a directory or a glob of JSON Lines (plain, ``.gz``,
``.zst``) or Parquet files, read as one input and written back shard for shard.

A dataset cut into shards gives what the same records in one file give, on both engines; every
kept record of an output shard is a line (or a row) of its input shard, in order; and a run that
fails leaves no output directory behind."""

from __future__ import annotations

import glob
import gzip
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.errors import ExitCode, InputError, PathNotFoundError
from simhash_cli.io.sinks.dataset import Targets, copy_records
from simhash_cli.io.sources.shards import glob_matches, shards_of


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def records(n_families: int = 30, seed: int = 5) -> list[dict[str, object]]:
    """Families of three near-copies and unrelated records, shuffled, with ids."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(3_000)]
    out: list[dict[str, object]] = []
    for family in range(n_families):
        base = [words[i] for i in rng.integers(0, len(words), 60)]
        for copy in range(3):
            text = list(base)
            text[int(rng.integers(0, 60))] = f"edit{family}x{copy}"
            out.append({"text": " ".join(text), "n": copy})
    out += [{"text": " ".join(words[i] for i in rng.integers(0, 3_000, 50))} for _ in range(20)]
    shuffled = [out[i] for i in rng.permutation(len(out))]
    for k, record in enumerate(shuffled):
        record["id"] = f"r{k}"
    return shuffled


def packed(data: bytes, suffix: str) -> bytes:
    if suffix == ".gz":
        return gzip.compress(data)
    if suffix == ".zst":
        return zstandard.ZstdCompressor().compress(data)
    return data


def unpacked(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix == ".zst":
        return zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
    return data


def write_shards(directory: Path, rows: list[dict[str, object]], suffix: str, n: int = 3) -> None:
    """``rows`` cut into ``n`` shards named as the Hub names them, nested a level deep."""
    (directory / "data").mkdir(parents=True)
    for k in range(n):
        part = rows[k::n]
        name = directory / "data" / f"train-{k:05d}-of-{n:05d}"
        if suffix == ".parquet":
            pq.write_table(pa.Table.from_pylist(part), f"{name}.parquet", row_group_size=7)
        else:
            lines = "".join(
                json.dumps(r) + ("\r\n" if i % 4 == 0 else "\n") for i, r in enumerate(part)
            )
            Path(f"{name}.jsonl{suffix}").write_bytes(packed(lines.encode(), suffix))


def clusters(result: Result) -> list[object]:
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout)["clusters"])


def test_a_directory_is_walked_in_order_past_what_is_not_a_shard(tmp_path: Path) -> None:
    write_shards(tmp_path, records(n_families=2), ".gz")
    for name in (".hidden.jsonl", "_SUCCESS", "dataset_info.json", "README.md",
                 "train-00000-of-00003.jsonl.simhash.json"):  # fmt: skip
        (tmp_path / "data" / name).write_text("{}\n")
    (tmp_path / "data" / "_tmp").mkdir()
    (tmp_path / "data" / "_tmp" / "x.jsonl").write_text("{}\n")
    found = shards_of(str(tmp_path))
    assert [os.path.basename(p) for p in found] == [
        f"train-{k:05d}-of-00003.jsonl.gz" for k in range(3)
    ]
    pq.write_table(pa.table({"text": ["a"]}), tmp_path / "data" / "more.parquet")
    with pytest.raises(InputError, match="Parquet and JSON Lines"):
        shards_of(str(tmp_path))
    with pytest.raises(PathNotFoundError, match="no file matches"):
        shards_of(str(tmp_path / "*.nothing"))
    (tmp_path / "void").mkdir()
    with pytest.raises(InputError, match="holds no shards"):
        shards_of(str(tmp_path / "void"))


@pytest.mark.parametrize("suffix", ["", ".gz", ".zst", ".parquet"])
def test_shards_read_as_the_one_file_they_were_cut_from(tmp_path: Path, suffix: str) -> None:
    rows = records()
    whole = tmp_path / "whole.jsonl"  # the shards' records, in the shards' order
    whole.write_text("".join(json.dumps(r) + "\n" for k in range(3) for r in rows[k::3]))
    write_shards(tmp_path / "sharded", rows, suffix)
    want = clusters(run("dedupe", "--texts", str(whole), "-f", "json", "-qq"))
    assert len(want) == 30
    pattern = str(tmp_path / "sharded" / "data" / f"*{suffix or '.jsonl'}")
    for location in (str(tmp_path / "sharded"), pattern):
        for jobs in ("1", "2"):
            got = run("dedupe", "--texts", location, "-f", "json", "-qq", "-j", jobs)
            assert clusters(got) == want
    got = run("dedupe", "--texts", str(tmp_path / "sharded"), "-f", "json", "-qq",
              "--engine", "dask", "--workers", "1")  # fmt: skip
    assert clusters(got) == want


def test_ids_are_unique_across_shards_and_places_name_the_shard(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "one two"}\n{"id": "x", "text": "three"}\n')
    (tmp_path / "b.jsonl").write_text('{"text": "four five"}\n{"id": "x", "text": "six"}\n')
    for jobs in ("1", "2"):
        done = run("fingerprint", "--texts", str(tmp_path), "-f", "jsonl", "-j", jobs)
        assert done.exit_code == ExitCode.ERROR
        assert done.output.strip().splitlines()[-1] == (
            f"Error: {tmp_path}/b.jsonl:2: the id 'x' was already given at {tmp_path}/a.jsonl:2 "
            '(ids must be unique; leave "id" out to have FILE:LINE as the id)'
        )
    done = run("fingerprint", "--texts", str(tmp_path), "-f", "jsonl", "--on-error", "skip")
    ids = [json.loads(line)["id"] for line in done.stdout.splitlines()]
    assert ids == [f"{tmp_path}/a.jsonl:1", "x", f"{tmp_path}/b.jsonl:1"]


@pytest.mark.parametrize("suffix", [".gz", ".zst", ".parquet"])
def test_shards_are_written_back_shard_for_shard(tmp_path: Path, suffix: str) -> None:
    write_shards(tmp_path / "in", records(), suffix)
    kept, dropped = tmp_path / "kept", tmp_path / "dropped"
    done = run("dedupe", "--texts", str(tmp_path / "in"), "--kept", str(kept), "--dropped",
               str(dropped), "-qq")  # fmt: skip
    assert done.exit_code == 0, done.output
    inputs = sorted((tmp_path / "in").rglob("train-*"))
    assert sorted(p.relative_to(kept) for p in kept.rglob("train-*")) == [
        p.relative_to(tmp_path / "in") for p in inputs
    ]
    totals = {"kept": 0, "dropped": 0}
    for shard in inputs:
        relative = shard.relative_to(tmp_path / "in")
        if suffix == ".parquet":
            given = pq.read_table(shard).to_pylist()
            out = pq.read_table(kept / relative).to_pylist()
            assert pq.read_schema(kept / relative).names == pq.read_schema(shard).names
            assert b"simhash" in (pq.read_schema(kept / relative).metadata or {})
            gone = pq.read_table(dropped / relative).to_pylist()
            totals["dropped"] += len(gone)
            assert all(row["simhash_duplicate_of"] for row in gone)
        else:
            given = unpacked(shard).decode().splitlines(keepends=True)
            out = unpacked(kept / relative).decode().splitlines(keepends=True)
            totals["dropped"] += len(unpacked(dropped / relative).splitlines())
        assert out == [row for row in given if row in out]  # its own rows, in order
        totals["kept"] += len(out)
    assert totals == {"kept": 50, "dropped": 60}  # a record of each family, and the others
    if suffix != ".parquet":
        metadata = json.loads((tmp_path / "kept.simhash.json").read_text())
        assert metadata["counts"] == {"read": 110, "kept": 50, "dropped": 60, "skipped": 0,
                                      "malformed": 0, "unfingerprinted": 0}  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    again = run("dedupe", "--texts", str(tmp_path / "in"), "--kept", str(tmp_path / "k2"), "-qq",
                "--engine", "dask", "--workers", "1")  # fmt: skip
    assert again.exit_code == 0, again.output
    for shard in (tmp_path / "k2").rglob("train-*"):
        relative = shard.relative_to(tmp_path / "k2")
        if suffix == ".parquet":
            assert pq.read_table(shard).equals(pq.read_table(kept / relative))
        else:
            assert unpacked(shard) == unpacked(kept / relative)


def test_a_copy_of_shards_that_fails_leaves_no_directory(tmp_path: Path) -> None:
    write_shards(tmp_path / "in", records(n_families=2), ".gz")
    kept = tmp_path / "kept"
    with pytest.raises(InputError, match="changed while it was read"):
        copy_records(str(tmp_path / "in"), "texts", {"r0": None, "gone": None}, {},
                     Targets(str(kept), None), None)  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("in/data/out", "lies among the shards"),
        ("full", "holds files"),
        ("out.jsonl", "the input is shards"),
        ("file", "is a file"),
    ],
)
def test_where_shards_cannot_go_is_refused_before_any_work(
    tmp_path: Path, target: str, message: str
) -> None:
    write_shards(tmp_path / "in", records(n_families=2), "")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("mine")
    (tmp_path / "file").write_text("mine")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    done = run("dedupe", "--texts", str(tmp_path / "in"), "--kept", str(tmp_path / target))
    assert done.exit_code == ExitCode.USAGE, done.output
    assert message in done.stderr and "Traceback" not in done.output
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_a_glob_matches_what_glob_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check of where shards may go matches a path as glob would read it: ``*`` never
    crosses a ``/``, ``**`` crosses any number, relative and absolute alike."""
    monkeypatch.chdir(tmp_path)
    files = ["a.jsonl", "d/b.jsonl", "d/e/c.jsonl", "d/e/f/g.jsonl.gz", "x/d/h.jsonl"]
    for name in files:
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text("{}")
    patterns = ["*.jsonl", "d/*.jsonl", "d/*", "d/**", "d/**/*.jsonl", "**/*.jsonl", "**",
                "*/*.jsonl", "d/*/c.jsonl", "./d/**/*.gz", "d/e/[cf]*", "?/b.jsonl"]  # fmt: skip
    for pattern in patterns:
        read = {os.path.normpath(f) for f in glob.glob(pattern, recursive=True)}
        for name in files:
            assert glob_matches(name, pattern) == (name in read), (name, pattern)
            assert glob_matches(str(tmp_path / name), pattern) == (name in read), (name, pattern)
            assert glob_matches(name, str(tmp_path / pattern)) == (name in read), (name, pattern)


def test_a_copy_beside_a_globs_shards_is_written_and_one_it_would_read_is_refused(
    tmp_path: Path,
) -> None:
    write_shards(tmp_path / "in", records(n_families=2), ".gz")
    data = tmp_path / "in" / "data"
    flat = run("dedupe", "--texts", str(data / "*.jsonl.gz"), "--kept", str(data / "out"), "-qq")
    assert flat.exit_code == 0, flat.output
    assert sorted(p.name for p in (data / "out").iterdir()) == [
        f"train-{k:05d}-of-00003.jsonl.gz" for k in range(3)
    ]
    deep = run("dedupe", "--texts", str(data / "**" / "*.jsonl.gz"), "--kept", str(data / "o2"))
    assert deep.exit_code == ExitCode.USAGE and "lies among the shards" in deep.stderr
    assert not (data / "o2").exists()


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_corrupt_compressed_shard_is_one_line_of_error(tmp_path: Path, suffix: str) -> None:
    data = packed(b'{"id": 1, "text": "some words here"}\n' * 2000, suffix)
    source = tmp_path / f"bad.jsonl{suffix}"
    source.write_bytes(data[: len(data) // 2])  # truncated
    for engine in (["--engine", "local"], ["--engine", "dask", "--workers", "1"]):
        done = run("dedupe", "--texts", str(source), *engine)
        assert done.exit_code == ExitCode.ERROR, done.output
        assert "Traceback" not in done.output
        assert done.output.strip().splitlines()[-1].startswith(f"Error: cannot read {source}")


def test_zstd_frames_read_one_after_another(tmp_path: Path) -> None:
    lines = [json.dumps({"id": k, "text": f"words {k}"}).encode() + b"\n" for k in range(5_000)]
    frames = [zstandard.ZstdCompressor().compress(b"".join(lines[k::2])) for k in (0, 1)]
    source = tmp_path / "two.jsonl.zst"
    source.write_bytes(b"".join(frames))  # as `cat a.zst b.zst` makes it
    done = run("fingerprint", "--texts", str(source), "-f", "jsonl")
    assert done.exit_code == 0, done.output
    ids = [json.loads(line)["id"] for line in done.stdout.splitlines()]
    assert ids == [*range(0, 5_000, 2), *range(1, 5_000, 2)]
