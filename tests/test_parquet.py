"""Parquet inputs (``--texts``/``--vectors`` FILE.parquet) against the same records as JSON
Lines: the same documents, the same checks, rows named FILE:ROW."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simhash_cli.app.records import corpus_from_text_records, corpus_from_vectors
from simhash_cli.errors import InputError, MalformedLineError, PathNotFoundError
from simhash_cli.io.sources import parquet

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
