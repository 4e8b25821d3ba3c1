"""``--text-field`` and ``--id-field``: the user's fields, as jq paths into nested records. A
dataset read through named fields gives what the same records written flat (``{"id", "text"}``)
give, on every reader: JSON Lines in one process and in several, Parquet with struct columns,
and the dask engine; and what is written back is the input's own records."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.errors import BadValueError, ExitCode
from simhash_cli.io.sources.fields import MISSING, FieldPath, Fields


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("text", ("text",)),
        (".text", ("text",)),
        ("meta.body", ("meta", "body")),
        (".sections[0].body", ("sections", 0, "body")),
        ('."a.b"', ("a.b",)),
        ('.["a.b"].c', ("a.b", "c")),
        ("turns[-1]", ("turns", -1)),
        ("x.y-z", ("x", "y-z")),
        ('."\\u00e9t\\u00e9"', ("été",)),
    ],
)
def test_paths_parse_as_jq_writes_them(text: str, steps: tuple[object, ...]) -> None:
    assert FieldPath.parse(text, "text_field").steps == steps


@pytest.mark.parametrize("text", ["", ".", "[0]", "a..b", "a b", ".a[x]", 'a"b', "a.", '."x'])
def test_what_is_not_a_path_is_refused(text: str) -> None:
    with pytest.raises(BadValueError):
        FieldPath.parse(text, "text_field")


def test_a_path_leads_to_its_value_or_nowhere() -> None:
    record = {"meta": {"ids": ["x", "y"], "n": None}, "t": "z"}
    assert FieldPath.parse(".meta.ids[1]", "p").get(record) == "y"
    assert FieldPath.parse(".meta.ids[-2]", "p").get(record) == "x"
    assert FieldPath.parse(".meta.n", "p").get(record) is None
    for missing in (".meta.ids[2]", ".meta.none", ".t.x", ".t[0]", ".meta[0]"):
        assert FieldPath.parse(missing, "p").get(record) is MISSING
    two = Fields.of(("title", "body"))
    assert two.text_of({"title": "T", "body": "B"}) == "T\nB"
    assert two.text_of({"title": None, "body": "B"}) == "B"
    assert two.text_of({"body": "B"}) == "B"
    assert two.text_of({"title": None}) is None
    assert two.text_of({"title": 3, "body": "B"}) is None  # not a string: malformed


def families(n: int = 40, seed: int = 3) -> list[tuple[str, str, str]]:
    """(id, title, body) of families of near-copies among unrelated records."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(3_000)]
    rows = []
    for family in range(n):
        base = [words[i] for i in rng.integers(0, len(words), 60)]
        for copy in range(3):
            body = list(base)
            body[int(rng.integers(0, 60))] = f"edit{family}x{copy}"
            rows.append((f"d{family}-{copy}", f"title {family}", " ".join(body)))
    order = rng.permutation(len(rows))
    return [rows[i] for i in order]


def nested(rows: list[tuple[str, str, str]]) -> list[dict[str, object]]:
    return [
        {"doc": {"ids": [doc_id, "other"], "score": k % 7}, "title": title, "body": body}
        for k, (doc_id, title, body) in enumerate(rows)
    ]


NAMED = ("--text-field", ".title", "--text-field", "body", "--id-field", ".doc.ids[0]")


def write_jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def test_named_fields_read_as_the_same_records_written_flat(tmp_path: Path) -> None:
    rows = families()
    flat = tmp_path / "flat.jsonl"
    write_jsonl(flat, [{"id": i, "text": f"{t}\n{b}"} for i, t, b in rows])
    deep = tmp_path / "deep.jsonl"
    write_jsonl(deep, nested(rows))
    table = tmp_path / "deep.parquet"
    pq.write_table(pa.Table.from_pylist(nested(rows)), table, row_group_size=25)
    assert pa.types.is_struct(pq.read_schema(table).field("doc").type)

    want = run("fingerprint", "--texts", str(flat), "-f", "jsonl", "-j", "1")
    assert want.exit_code == 0 and want.stdout.count("\n") == len(rows)
    for source in (deep, table):
        for jobs in ("1", "2"):
            got = run("fingerprint", "--texts", str(source), *NAMED, "-f", "jsonl", "-j", jobs)
            assert got.exit_code == 0, got.output
            assert got.stdout == want.stdout

    want = run("dedupe", "--texts", str(flat), "-f", "json", "-qq")
    assert want.exit_code == 0 and json.loads(want.stdout)["clusters"]
    for source, engine in ((deep, "local"), (table, "local"), (deep, "dask"), (table, "dask")):
        extra = ["--workers", "1"] if engine == "dask" else []
        got = run("dedupe", "--texts", str(source), *NAMED, "-f", "json", "-qq",
                  "--engine", engine, *extra)  # fmt: skip
        assert got.exit_code == 0, got.output
        assert json.loads(got.stdout)["clusters"] == json.loads(want.stdout)["clusters"]


def test_vectors_take_their_id_from_the_named_field(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    write_jsonl(source, [{"key": {"k": "a"}, "features": {"x": 1, "y": 2}},
                         {"key": {"k": "b"}, "features": {"x": 1, "y": 2}}])  # fmt: skip
    done = run(
        "dedupe", "--list", "pairs", "--vectors", str(source), "--id-field", "key.k", "-f", "jsonl"
    )
    assert done.exit_code == 0, done.output
    pair = json.loads(done.stdout.splitlines()[0])
    assert (pair["a"], pair["b"]) == ("a", "b")


def test_a_record_without_its_named_id_is_malformed(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    ids: list[dict[str, object]] = [{"id": "a"}, {}, {"id": None}, {"id": True}]
    write_jsonl(source, [{"m": m, "text": f"text {k}"} for k, m in enumerate(ids)])
    done = run("fingerprint", "--texts", str(source), "--id-field", "m.id", "-f", "jsonl")
    assert done.exit_code == ExitCode.ERROR
    assert done.output.strip().splitlines()[-1] == f"Error: {source}:2: no id at m.id (--id-field)"
    done = run("fingerprint", "--texts", str(source), "--id-field", "m.id", "--on-error", "skip",
               "-f", "jsonl")  # fmt: skip
    assert done.exit_code == 0, done.output
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["id"] for r in records] == ["a"]
    assert "m.id (--id-field) must be a string or an integer" in done.output


def test_a_record_without_its_named_text_is_malformed(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    write_jsonl(source, [{"id": 1, "body": "words"}, {"id": 2, "text": "words"}])
    done = run("fingerprint", "--texts", str(source), "--text-field", "body", "-f", "jsonl")
    assert done.exit_code == ExitCode.ERROR
    assert done.output.strip().splitlines()[-1] == (
        f"Error: {source}:2: no text at body (--text-field): a string was expected; it has the "
        'keys "id", "text" (--text-field names the one to read)'
    )
    plain = run("fingerprint", "--texts", str(source), "-f", "jsonl")
    assert plain.output.strip().splitlines()[-1] == (
        f'Error: {source}:1: expected {{"id": ..., "text": "..."}}; it has the keys "id", '
        '"body" (--text-field names the one to read)'
    )


def test_a_missing_parquet_column_is_named(tmp_path: Path) -> None:
    table = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": ["a"], "body": ["words"]}), table)
    done = run("fingerprint", "--texts", str(table), "--text-field", "content")
    assert done.exit_code == ExitCode.ERROR
    assert "needs a 'content' column (it has: id, body)" in done.output


@pytest.mark.parametrize(
    "args",
    [
        ["--vectors", "{f}", "--text-field", "body"],
        ["--fingerprints", "{f}", "--id-field", "x"],
        ["{f}", "--id-field", "x"],
        ["--texts", "{f}", "--text-field", "a..b"],
        ["--texts", "{f}", "--id-field", "[0]"],
    ],
)
def test_fields_go_with_their_inputs(tmp_path: Path, args: list[str]) -> None:
    source = tmp_path / "in.jsonl"
    write_jsonl(source, [{"id": 1, "text": "a"}])
    done = run("dedupe", *(arg.replace("{f}", str(source)) for arg in args))
    assert done.exit_code == ExitCode.USAGE
    assert "Traceback" not in done.output and done.output.count("Error:") == 1


def test_the_dataset_written_back_is_the_input_read_through_its_fields(tmp_path: Path) -> None:
    rows = families(n=20)
    source = tmp_path / "deep.jsonl"
    records = nested(rows)
    write_jsonl(source, records)
    kept, dropped = tmp_path / "kept.jsonl", tmp_path / "dropped.jsonl"
    done = run("dedupe", "--texts", str(source), *NAMED, "--kept", str(kept), "--dropped",
               str(dropped), "--keep-by", ".doc.score:max", "-qq")  # fmt: skip
    assert done.exit_code == 0, done.output
    lines = source.read_text().splitlines(keepends=True)
    kept_lines = kept.read_text().splitlines(keepends=True)
    assert set(kept_lines) <= set(lines) and len(kept_lines) == 20 + 0  # a record per family
    by_id = {json.loads(line)["doc"]["ids"][0]: json.loads(line) for line in lines}
    for line in dropped.read_text().splitlines():
        record = json.loads(line)
        keeper = by_id[record["simhash"]["duplicate_of"]]
        assert keeper["title"] == record["title"]  # the same family
        assert keeper["doc"]["score"] >= record["doc"]["score"]
    metadata = json.loads((tmp_path / "kept.jsonl.simhash.json").read_text())
    assert metadata["text_fields"] == [".title", "body"]
    assert metadata["id_field"] == ".doc.ids[0]"
    assert metadata["keep"] == ".doc.score:max"


def test_explain_finds_records_by_their_named_ids(tmp_path: Path) -> None:
    rows = families(n=2)
    source = tmp_path / "deep.jsonl"
    write_jsonl(source, nested(rows))
    a, b = sorted(doc_id for doc_id, _, _ in rows)[:2]
    done = run("explain", "--texts", str(source), *NAMED, a, b, "-f", "json")
    assert done.exit_code == 0, done.output
    explained = json.loads(done.stdout)
    joined = "".join(segment["a"] for segment in explained["diff"] if segment["a"] is not None)
    texts = {doc_id: f"{t}\n{body}" for doc_id, t, body in rows}
    assert joined.split() == texts[a].split()
