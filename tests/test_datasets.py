"""``dedupe --texts FILE --kept OUT --dropped OUT``: the dataset without its near-duplicates.
Every kept record is its input line byte for byte (JSON Lines) or its row field for field
(Parquet); every dropped one has a kept near-duplicate at or above the threshold; kept +
dropped + skipped = read, in the summary and in the output's metadata."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.core.corpus import corpus_from_texts
from simhash_cli.core.verify.cosines import cosine_pairs
from simhash_cli.errors import ExitCode, InputError
from simhash_cli.io.sinks.dataset import Targets, copy_records, sidecar_of


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def dataset(n_families: int = 60, copies: int = 3, seed: int = 1) -> list[dict[str, object]]:
    """Families of near-copies (a word or two edited) among unrelated texts, shuffled."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(5_000)]
    records: list[dict[str, object]] = []
    for family in range(n_families):
        base = [words[i] for i in rng.integers(0, len(words), 80)]
        for copy in range(copies):
            text = list(base)
            for _ in range(copy):
                text[int(rng.integers(0, 80))] = f"edit{family}x{copy}"
            records.append({"text": " ".join(text), "quality": float(rng.random()),
                            "meta": {"family": family, "copy": copy, "é": "ü"}})  # fmt: skip
    for _ in range(40):
        records.append({"text": " ".join(words[i] for i in rng.integers(0, 5_000, 60))})
    order = rng.permutation(len(records))
    out = [records[i] for i in order]
    for k, record in enumerate(out):
        if k % 3:
            record["id"] = k if k % 2 else f"r{k}"  # integer and string ids, some missing
    return out


def jsonl_input(path: Path, records: list[dict[str, object]]) -> list[str]:
    """Lines with their own spacing, CRLF ends, blanks, malformed ones and an empty text."""
    lines = []
    for k, record in enumerate(records):
        text = json.dumps(record, ensure_ascii=k % 2 == 0, separators=(",", ":") if k % 5 else None)
        lines.append(text + ("\r\n" if k % 7 == 0 else "\n"))
        if k % 50 == 0:
            lines.append("{broken\n")
            lines.append("\n")
    lines.append(json.dumps({"id": "empty", "text": ""}) + "\n")
    lines.append(json.dumps({"id": "last", "text": "no line end after me"}))
    path.write_bytes("".join(lines).encode("utf-8"))
    return lines


def read_lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8").splitlines(keepends=True)


def check_dropped(
    dropped: list[dict[str, object]], kept_texts: dict[str, str], threshold: float
) -> None:
    """Each dropped record names a kept one whose text is within the threshold of its own."""
    for record in dropped:
        fate = record["simhash"]
        assert isinstance(fate, dict)
        other = kept_texts[str(fate["duplicate_of"])]
        docs = corpus_from_texts([str(record["text"]), other])
        assert docs.weights is not None
        cosine = float(cosine_pairs(docs.weights, np.array([[0, 1]]))[0])
        assert cosine >= threshold - 1e-9
        assert fate["cosine"] == pytest.approx(cosine, abs=1e-9)


def test_kept_lines_are_the_input_lines_and_the_counts_add_up(tmp_path: Path) -> None:
    source, kept, dropped = (
        tmp_path / "in.jsonl",
        tmp_path / "kept.jsonl",
        tmp_path / "dropped.jsonl",
    )
    lines = jsonl_input(source, dataset())
    done = run("dedupe", "--texts", str(source), "--kept", str(kept), "--dropped", str(dropped),
               "--on-error", "skip", "-f", "json")  # fmt: skip
    assert done.exit_code == ExitCode.OK, done.output
    out = read_lines(kept)
    # Every kept line is an input line, byte for byte (line end included), in input order.
    at = [lines.index(line) for line in out]
    assert at == sorted(at) and len(set(at)) == len(at)
    assert out[-1] == lines[-1] and not out[-1].endswith("\n")  # the last, as it ended
    meta = json.loads(Path(sidecar_of(str(kept))).read_text())
    counts = meta["counts"]
    summary = json.loads(done.stdout)["summary"]
    assert counts["read"] == counts["kept"] + counts["dropped"] + counts["skipped"]
    malformed = len(range(0, len(dataset()), 50))
    assert counts["read"] == len(dataset()) + 2 + malformed  # and the empty one, the last
    # The empty text is kept (a dedupe pass never filters); the malformed lines go nowhere.
    assert (counts["skipped"], counts["malformed"]) == (malformed, malformed)
    assert counts["unfingerprinted"] == 1
    assert counts["kept"] == len(out) and counts["dropped"] == len(read_lines(dropped))
    assert summary["documents"] == counts["kept"] - 1 + counts["dropped"]
    assert counts["dropped"] == 60 * 2  # each family keeps one of its three
    kept_records = [json.loads(line) for line in out]
    ids = {str(r.get("id", f"{source}:{lines.index(line) + 1}")) for r, line in
           zip(kept_records, out, strict=True)}  # fmt: skip
    texts = {str(r.get("id")): str(r["text"]) for r in kept_records if "id" in r}
    dropped_records = [json.loads(line) for line in read_lines(dropped)]
    assert all(str(r["simhash"]["duplicate_of"]) in ids for r in dropped_records)
    check_dropped([r for r in dropped_records if str(r["simhash"]["duplicate_of"]) in texts],
                  texts, 0.9)  # fmt: skip
    assert "kept" in done.stderr and f"of {counts['read']:,} records" in done.stderr


def test_annotated_holds_every_record_with_its_fate(tmp_path: Path) -> None:
    source, kept, annotated = tmp_path / "in.jsonl", tmp_path / "k.jsonl", tmp_path / "a.jsonl"
    lines = jsonl_input(source, dataset(n_families=20, seed=5))
    done = run("dedupe", "--texts", str(source), "--kept", str(kept), "--annotated",
               str(annotated), "--on-error", "skip", "-qq")  # fmt: skip
    assert done.exit_code == ExitCode.OK, done.output
    every = [json.loads(line) for line in read_lines(annotated)]
    fates = [record.pop("simhash") for record in every]
    # The records themselves, in input order, the kept ones exactly those of --kept.
    originals = [json.loads(line) for line in lines if line.strip().startswith('{"')]
    assert every == [r for r in originals if r in every]
    assert [r for r, f in zip(every, fates, strict=True) if f["kept"]] == [
        json.loads(line) for line in read_lines(kept)
    ]
    dropped = [f for f in fates if not f["kept"]]
    assert len(dropped) == 40 and all(f["duplicate_of"] is not None for f in dropped)
    clusters = {f["cluster"] for f in fates if f["kept"] and f["cluster"] is not None}
    assert clusters == {f["cluster"] for f in dropped} and len(clusters) == 20


def test_parquet_rows_are_kept_field_for_field_with_the_schema(tmp_path: Path) -> None:
    records = dataset(seed=2)
    table = pa.table({
        "id": [f"p{k}" for k in range(len(records))],
        "text": [r["text"] for r in records],
        "quality": [r.get("quality") for r in records],
        "meta": [r.get("meta") for r in records],
    })  # fmt: skip
    source, kept, dropped = (
        tmp_path / "in.parquet",
        tmp_path / "kept.parquet",
        tmp_path / "d.parquet",
    )
    annotated = tmp_path / "a.parquet"
    pq.write_table(table, source, row_group_size=37)
    for jobs in ("1", "2"):
        done = run("dedupe", "--texts", str(source), "--kept", str(kept), "--dropped",
                   str(dropped), "--annotated", str(annotated), "-qq", "-j", jobs)  # fmt: skip
        assert done.exit_code == ExitCode.OK, done.output
        out = pq.read_table(kept)
        assert out.schema.remove_metadata() == table.schema.remove_metadata()
        rows = table.to_pylist()
        assert all(row in rows for row in out.to_pylist())
        positions = [rows.index(row) for row in out.to_pylist()]
        assert positions == sorted(positions)
        meta = json.loads(out.schema.metadata[b"simhash"])
        assert meta["counts"]["kept"] == out.num_rows and meta["counts"]["dropped"] == 120
        gone = pq.read_table(dropped)
        assert gone.num_rows == 120 and "simhash_duplicate_of" in gone.schema.names
        every = pq.read_table(annotated)
        assert every.num_rows == out.num_rows + 120
        assert every.schema.names == [
            *table.schema.names,
            "simhash_kept",
            "simhash_duplicate_of",
            "simhash_cosine",
            "simhash_cluster",
            "simhash_skipped",
        ]
        assert every.column("simhash_kept").to_pylist().count(True) == out.num_rows
        kept_ids = set(out.column("id").to_pylist())
        assert set(gone.column("simhash_duplicate_of").to_pylist()) <= kept_ids


@pytest.mark.parametrize("rule", ["first", "longest", "quality:max", "quality:min"])
def test_each_cluster_keeps_the_record_its_rule_prefers(tmp_path: Path, rule: str) -> None:
    records = dataset(n_families=20, seed=3)
    source, kept, dropped = tmp_path / "in.jsonl", tmp_path / "k.jsonl", tmp_path / "d.jsonl"
    source.write_text(
        "".join(json.dumps({**r, "id": f"i{k}"}) + "\n" for k, r in enumerate(records))
    )
    keep = ["--keep-by", rule] if ":" in rule else ["--keep", rule]
    done = run("dedupe", "--texts", str(source), "--kept", str(kept), "--dropped", str(dropped),
               *keep, "-qq")  # fmt: skip
    assert done.exit_code == ExitCode.OK, done.output
    by_id = {f"i{k}": (k, r) for k, r in enumerate(records)}
    families: dict[str, list[str]] = {}
    for line in read_lines(dropped):
        record = json.loads(line)
        families.setdefault(str(record["simhash"]["duplicate_of"]), []).append(str(record["id"]))

    def key(doc_id: str) -> float:
        k, record = by_id[doc_id]
        if rule == "first":
            return k
        if rule == "longest":
            return -len(str(record["text"]))
        quality = float(record["quality"])  # type: ignore[arg-type]
        return -quality if rule.endswith("max") else quality

    assert len(families) == 20
    for kept_id, members in families.items():
        assert all(key(kept_id) <= key(m) for m in members), (kept_id, members)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["SAMPLE", "--kept", "K.jsonl"], "give --texts or --vectors FILE"),
        (["--texts", "-", "--kept", "K.jsonl"], "give --texts or --vectors FILE"),
        (["--texts", "IN", "--kept", "IN"], "kept"),
        (["--texts", "IN", "--kept", "K.parquet"], "in JSON Lines"),
        (["--texts", "IN", "--kept", "K.jsonl", "--keep", "oldest"], "compares the files read"),
        (["--texts", "IN", "--keep-by", "q:max", "--keep", "first"], "instead of --keep"),
        (["--texts", "-", "--keep-by", "q:max"], "read again for the field"),
        (["--vectors", "IN", "--keep", "longest"], "compares sizes"),
        (["--texts", "IN", "--kept", "K.jsonl", "--keep-by", "quality"], "FIELD:max"),
        (["--texts", "IN", "--kept", "K.jsonl", "--dropped", "K.jsonl"], "dropped"),
        (["--texts", "GLOB", "--kept", "K.jsonl"], "the input is shards"),
    ],
)
def test_what_cannot_be_written_is_refused_before_any_work(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "some words"}) + "\n")
    named = {
        "IN": str(source),
        "SAMPLE": str(tmp_path),
        "K.jsonl": str(tmp_path / "k.jsonl"),
        "K.parquet": str(tmp_path / "k.parquet"),
        "GLOB": str(tmp_path / "i*.jsonl"),
    }
    done = run("dedupe", *[named.get(a, a) for a in arguments])
    assert done.exit_code == ExitCode.USAGE, done.output
    assert message in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_a_sidecar_over_an_input_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "some words"}) + "\n")
    other = tmp_path / "k.jsonl.simhash.json"
    other.write_text(json.dumps({"id": "b", "text": "other words"}) + "\n")
    done = run("dedupe", "--texts", str(other), "--kept", str(tmp_path / "k.jsonl"))
    assert done.exit_code == ExitCode.USAGE and "metadata" in done.stderr
    assert other.read_text().startswith('{"id": "b"')


def test_an_input_that_changed_since_it_was_read_leaves_no_output(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "x"}) + "\n")
    kept = tmp_path / "k.jsonl"
    with pytest.raises(InputError, match="changed while it was read"):
        copy_records(
            str(source), "texts", {"a": None, "gone": None}, {}, Targets(str(kept), None), None
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_the_dask_engine_keeps_the_same_bytes(tmp_path: Path) -> None:
    """Kept and annotated, with a lone surrogate (valid JSON) in an id and a text."""
    source = tmp_path / "in.jsonl"
    records = dataset(n_families=15, seed=4)
    records[0] = {**records[0], "id": "\ud800"}
    records[2] = {**records[0], "id": "x", "text": f"{records[0]['text']} \udfff"}
    jsonl_input(source, records)
    outputs = []
    for engine in (["--engine", "local"], ["--engine", "dask", "--workers", "1"]):
        kept = tmp_path / f"kept-{engine[1]}.jsonl"
        annotated = tmp_path / f"annotated-{engine[1]}.jsonl"
        done = run("dedupe", "--texts", str(source), "--kept", str(kept), "--on-error", "skip",
                   "--annotated", str(annotated), "-qq", *engine)  # fmt: skip
        assert done.exit_code == ExitCode.OK, done.output
        outputs.append((kept.read_bytes(), annotated.read_bytes()))
        fates = [json.loads(line)["simhash"] for line in read_lines(annotated)]
        assert {"duplicate_of": "\ud800"}.items() <= fates[2].items()
    assert outputs[0] == outputs[1] and outputs[0][0].count(b"\n") > 40


def test_parquet_duplicates_are_named_with_the_type_of_the_id_column(tmp_path: Path) -> None:
    records = dataset(n_families=5, seed=4)
    table = pa.table({
        "id": pa.array(range(100, 100 + len(records)), pa.int64()),
        "text": [r["text"] for r in records],
    })  # fmt: skip
    source, dropped = tmp_path / "in.parquet", tmp_path / "d.parquet"
    pq.write_table(table, source)
    done = run("dedupe", "--texts", str(source), "--dropped", str(dropped), "-q")
    assert done.exit_code == ExitCode.OK, done.output
    gone = pq.read_table(dropped)
    assert gone.schema.field("simhash_duplicate_of").type == pa.int64()
    assert gone.num_rows and set(gone.column("simhash_duplicate_of").to_pylist()) <= set(
        table.column("id").to_pylist()
    )


@pytest.mark.parametrize("option", ["--annotated", "--dropped"])
def test_a_later_record_holding_the_annotation_key_is_refused_before_any_output(
    tmp_path: Path, option: str
) -> None:
    """Only the first record was checked before the run: a later one holding the key was
    refused after the whole run, the clusters already on standard output."""
    source = tmp_path / "records.jsonl"
    text = "the same words in both of these records"
    source.write_text(
        json.dumps({"id": "a", "text": text}) + "\n"
        + json.dumps({"id": "b", "text": text, "simhash": {"mine": True}}) + "\n"
    )  # fmt: skip
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(
        main, ["dedupe", "--texts", str(source), "-f", "jsonl", option, str(out)]
    )
    assert done.exit_code == ExitCode.ERROR
    assert done.stdout == "" and not out.exists()
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {source}:2: the records already have a key 'simhash', where their fate would "
        "go: name another with --annotation-field"
    )


def test_a_copy_of_shards_onto_a_link_is_refused_before_the_run(tmp_path: Path) -> None:
    """--kept onto a link to an empty directory passed the check and failed after the whole
    run ("cannot write link: Not a directory"), leaving its sidecar behind."""
    shards = tmp_path / "shards"
    shards.mkdir()
    text = "the same words in both of these records"
    (shards / "a.jsonl").write_text(
        json.dumps({"id": "a", "text": text}) + "\n" + json.dumps({"id": "b", "text": text}) + "\n"
    )
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    done = CliRunner().invoke(
        main, ["dedupe", "--texts", str(shards), "-q", "--kept", str(tmp_path / "link")]
    )
    assert done.exit_code == ExitCode.USAGE and done.stdout == ""
    assert "is a symbolic link: name the directory itself" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "link", "shards"]


def test_a_directory_swapped_between_the_digest_and_the_reading_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dataset's digest was taken by path: its directory renamed away after the digest,
    another in its place for the first reading, and back before the copy, went unseen (exit
    0, unique records dropped). Each reading's descriptor is checked against the digest."""
    import simhash_cli.app.dedupe.run as run
    import simhash_cli.cli.dedupe as command

    data = tmp_path / "data"
    data.mkdir()
    words = [" ".join(f"w{k}x{i}" for i in range(30)) for k in range(10)]
    records = data / "records.jsonl"
    records.write_text("".join(json.dumps({"id": f"r{k}", "text": words[k]}) + "\n"
                               for k in range(10)))  # fmt: skip
    real_before, real_report = run.before_run, command.report

    def before_then_swapped(*args: Any, **kwargs: Any) -> Any:
        taken = real_before(*args, **kwargs)
        data.rename(tmp_path / "away")
        data.mkdir()  # the same ids, one text: every record a near-duplicate of the first
        records.write_text("".join(json.dumps({"id": f"r{k}", "text": words[0]}) + "\n"
                                   for k in range(10)))  # fmt: skip
        return taken

    def swapped_back(*args: Any, **kwargs: Any) -> Any:
        data.rename(tmp_path / "other")
        (tmp_path / "away").rename(data)
        return real_report(*args, **kwargs)

    monkeypatch.setattr(run, "before_run", before_then_swapped)
    monkeypatch.setattr(command, "report", swapped_back)
    kept = tmp_path / "kept.jsonl"
    done = CliRunner().invoke(
        main, ["dedupe", "--texts", str(records), "-q", "-o", os.devnull, "--kept", str(kept)]
    )
    assert done.exit_code == ExitCode.ERROR
    assert "as read is not the file digested before the run" in done.stderr
    assert not kept.exists()


def test_records_without_a_word_are_said_passed_through_on_every_line(tmp_path: Path) -> None:
    """A dataset run passes records without a word through to the kept records: the line of
    what was read said they were skipped ("2 skipped: 2 empty") two lines above the line that
    counted them kept, and a warning named each as skipped. A run without a dataset skips
    them, and says so."""
    source = tmp_path / "in.jsonl"
    texts = ["alpha beta gamma delta", "alpha beta gamma delta", "", "  ", "other words here"]
    source.write_text(
        "".join(
            json.dumps({"id": k, "text": t}) + "\n" for k, t in zip("abcde", texts, strict=True)
        )
    )
    kept = tmp_path / "kept.jsonl"
    run = CliRunner().invoke(main, ["dedupe", "--texts", str(source), "--kept", str(kept)])
    assert run.exit_code == ExitCode.OK, run.stderr
    lines = run.stderr.splitlines()
    assert "read 3 documents (2 without a word, passed through)" in lines
    assert any(line.startswith("kept 4 of 5 records") and "0 skipped" in line for line in lines)
    assert "note: c: empty (no tokens), passed through as it is" in lines
    assert not any("skipped c" in line or "2 empty" in line for line in lines)
    assert len(kept.read_text().splitlines()) == 4
    plain = CliRunner().invoke(main, ["dedupe", "--texts", str(source)])
    assert "read 3 documents (2 skipped: 2 empty)" in plain.stderr.splitlines()
    assert "warning: skipped c: empty (no tokens)" in plain.stderr.splitlines()
