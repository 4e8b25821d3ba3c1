"""Parquet inputs (``--texts``/``--vectors`` FILE.parquet) against the same records as JSON
Lines: the same documents, the same checks, rows named FILE:ROW."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simhash_cli.app.records import corpus_from_text_records, corpus_from_vectors
from simhash_cli.errors import InputError, MalformedLineError, PathNotFoundError
from simhash_cli.io.sources import parquet
from simhash_cli.io.sources.pieces import pieces

from conftest import SAMPLE


def texts_table() -> pa.Table:
    files = sorted(SAMPLE.iterdir())
    return pa.table({"id": [p.name for p in files], "text": [p.read_text() for p in files]})


def write_jsonl(path: Path, table: pa.Table) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in table.to_pylist()))
    return path


def test_text_rows_give_the_documents_of_the_same_json_lines(tmp_path: Path) -> None:
    table = texts_table()
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=3)
    from_parquet = corpus_from_text_records(str(tmp_path / "t.parquet"))
    from_lines = corpus_from_text_records(str(write_jsonl(tmp_path / "t.jsonl", table)))
    assert from_parquet.ids == from_lines.ids == table.column("id").to_pylist()
    assert np.array_equal(from_parquet.fingerprints, from_lines.fingerprints)
    assert parquet.row_groups(str(tmp_path / "t.parquet")) == [3, 3, 2]


@pytest.mark.parametrize("layout", ["map", "structs"])
def test_feature_rows_give_the_vectors_of_the_same_json_lines(tmp_path: Path, layout: str) -> None:
    rows: list[dict[str, Any]] = [
        {"id": f"u{i}", "features": {f"t{i % 7}": 1.0 + i % 3, "common": 0.5}} for i in range(40)
    ]
    pairs = [list(row["features"].items()) for row in rows]
    if layout == "map":
        features = pa.array(pairs, type=pa.map_(pa.string(), pa.float64()))
    else:
        features = pa.array([[{"key": k, "value": v} for k, v in p] for p in pairs])
    pq.write_table(
        pa.table({"id": [r["id"] for r in rows], "features": features}), tmp_path / "v.parquet"
    )
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    a = corpus_from_vectors(str(tmp_path / "v.parquet"))
    b = corpus_from_vectors(str(tmp_path / "v.jsonl"))
    assert a.ids == b.ids and np.array_equal(a.fingerprints, b.fingerprints)


def test_rows_without_an_id_are_named_by_file_and_row(tmp_path: Path) -> None:
    table = pa.table({"id": ["a", None, "c"], "text": ["one text", "two texts", "three"]})
    pq.write_table(table, tmp_path / "t.parquet")
    docs = corpus_from_text_records(str(tmp_path / "t.parquet"))
    assert docs.ids == ["a", f"{tmp_path / 't.parquet'}:2", "c"]
    pq.write_table(pa.table({"id": [5, 6], "text": ["one", "two"]}), tmp_path / "n.parquet")
    assert corpus_from_text_records(str(tmp_path / "n.parquet")).ids == ["5", "6"]


def test_bad_rows_are_named_and_can_be_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "c"], "text": ["fine text", None, "more"]}), path)
    with pytest.raises(MalformedLineError, match=r"t.parquet:2: expected"):
        corpus_from_text_records(str(path))
    events: list[Any] = []
    docs = corpus_from_text_records(str(path), skip_bad_lines=True, on_event=events.append)
    assert docs.ids == ["a", "c"] and [e.id for e in events] == [f"{path}:2"]
    weights = pa.array([[("x", float("nan"))]], type=pa.map_(pa.string(), pa.float64()))
    pq.write_table(pa.table({"features": weights}), tmp_path / "v.parquet")
    with pytest.raises(MalformedLineError, match="not finite"):
        corpus_from_vectors(str(tmp_path / "v.parquet"))


def test_what_is_not_a_parquet_input_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.parquet").write_text("not parquet at all")
    with pytest.raises(InputError, match=r"cannot read .* as Parquet"):
        corpus_from_text_records(str(tmp_path / "x.parquet"))
    pq.write_table(pa.table({"body": ["a"]}), tmp_path / "y.parquet")
    with pytest.raises(InputError, match=r"needs a 'text' column \(it has: body\)"):
        corpus_from_text_records(str(tmp_path / "y.parquet"))
    with pytest.raises(PathNotFoundError):
        corpus_from_text_records(str(tmp_path / "missing.parquet"))


def test_a_text_cell_past_max_bytes_is_refused_as_a_line_that_long(tmp_path: Path) -> None:
    """A 5 MB cell passed ``--max-bytes 1M``; the same record in JSON Lines was refused."""
    table = pa.table({"id": ["a", "b", "c"], "text": ["short one", "x " * 600_000, "two words"]})
    pq.write_table(table, tmp_path / "t.parquet")
    write_jsonl(tmp_path / "t.jsonl", table)
    for name in ("t.parquet", "t.jsonl"):
        source = str(tmp_path / name)
        with pytest.raises(MalformedLineError) as refused:
            corpus_from_text_records(source, max_line=1 << 20)
        assert str(refused.value) == f"{source}:2: longer than 1,048,576 characters (--max-bytes)"
        events: list[Any] = []
        docs = corpus_from_text_records(
            source, max_line=1 << 20, skip_bad_lines=True, on_event=events.append
        )
        assert docs.ids == ["a", "c"]
        assert [(e.id, e.reason) for e in events] == [
            (f"{source}:2", "malformed: longer than 1,048,576 characters (--max-bytes)")
        ]


def test_a_row_group_of_many_rows_is_read_a_batch_at_a_time(tmp_path: Path) -> None:
    """A row group was held whole (3,000,000 rows in one group took 2.6 GB, in 60 groups
    0.6 GB): the pieces and the records of one large group come a batch at a time."""
    rows = 2 * parquet.ROWS_PER_BATCH + 5
    table = pa.table({"id": np.arange(rows), "text": [f"word{i % 97} other" for i in range(rows)]})
    path = str(tmp_path / "one.parquet")
    pq.write_table(table, path, row_group_size=rows)
    assert parquet.row_groups(path) == [rows]
    listed = list(pieces(path, None, kind="texts"))
    assert [piece.batch.num_rows for piece in listed] == [  # type: ignore[union-attr]
        parquet.ROWS_PER_BATCH, parquet.ROWS_PER_BATCH, 5,
    ]  # fmt: skip
    assert [piece.first_row for piece in listed] == [  # type: ignore[union-attr]
        1, 1 + parquet.ROWS_PER_BATCH, 1 + 2 * parquet.ROWS_PER_BATCH,
    ]  # fmt: skip
    records = parquet.iter_records(path, "texts")
    assert next(records).id == "0"  # the first batch decoded, not the group
    assert sum(1 for _ in records) == rows - 1


def _peak_kib(command: list[str]) -> int:
    """The peak resident memory of a real process (its own, from wait4)."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return int(usage.ru_maxrss)


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="the peak of a child, from wait4")
def test_one_large_row_group_costs_the_memory_of_many_small_ones(tmp_path: Path) -> None:
    """Measured in real processes: 200,000 rows in one group took 1.7x the peak of the same
    rows in 20 groups."""
    rng = np.random.default_rng(1)
    words = np.array([f"w{i}" for i in range(3000)])
    texts = [" ".join(row) for row in words[rng.integers(0, 3000, (200_000, 12))]]
    table = pa.table({"id": np.arange(200_000), "text": texts})
    peaks = {}
    for groups in (1, 20):
        path = tmp_path / f"g{groups}.parquet"
        pq.write_table(table, path, row_group_size=200_000 // groups)
        command = [sys.executable, "-m", "simhash_cli", "fingerprint", "--texts", str(path)]
        peaks[groups] = _peak_kib([*command, "-j1", "-qq"])
    assert peaks[1] < 1.25 * peaks[20], peaks


def test_uint64_ids_past_int64_are_named_in_their_own_type(tmp_path: Path) -> None:
    """Parquet uint64 ids of 2**63 and more crashed --dropped and --annotated with a
    traceback: what a record duplicates was written as int64."""
    from click.testing import CliRunner

    from simhash_cli.cli import main

    big = 2**63 + 1
    source = tmp_path / "in.parquet"
    text = "the same words in both of these records"
    pq.write_table(
        pa.table({"id": pa.array([big, big + 1, 5], pa.uint64()),
                  "text": [text, text, "another record entirely"]}),
        source,
    )  # fmt: skip
    dropped, annotated = tmp_path / "dropped.parquet", tmp_path / "annotated.parquet"
    done = CliRunner().invoke(
        main, ["dedupe", "--texts", str(source), "-q", "-o", os.devnull,
               "--dropped", str(dropped), "--annotated", str(annotated)],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert pq.read_table(dropped).to_pylist() == [
        {"id": big + 1, "text": text, "simhash_duplicate_of": big,
         "simhash_cosine": 1.0, "simhash_cluster": 0}
    ]  # fmt: skip
    assert pq.read_schema(annotated).field("simhash_duplicate_of").type == pa.uint64()


def test_a_text_column_that_is_not_strings_is_named_as_such(tmp_path: Path) -> None:
    """A text column of numbers was reported as a missing text ("it has the keys "text",
    "id""): it says what the text is instead."""
    source = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": pa.array([1, 2])}), source)
    with pytest.raises(MalformedLineError, match="its text is a number, not a string"):
        corpus_from_text_records(str(source))
