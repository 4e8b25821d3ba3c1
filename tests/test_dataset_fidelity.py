"""A dataset written as given: the records decided on are the records copied (the input's
bytes digested before the first reading and checked before anything is renamed into place),
each dropped or annotated record is its input line with one member added and nothing else
changed, a record that already has that member is refused, and a record without a word is
kept, never filtered out."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

import simhash_cli.app.dedupe.run as dedupe_run
from simhash_cli.app.keep.rule import kept as kept_by_rule
from simhash_cli.cli import main
from simhash_cli.errors import ExitCode

BASE = "the quick brown fox jumps over the lazy dog near the river bank on a summer day"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def lines_of(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8").splitlines(keepends=True)


def test_an_input_replaced_after_its_first_reading_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same ids with other texts, swapped in (renamed over, or written in place with its
    modification time put back) once the first reading closed the file: refused, no output."""
    given = tmp_path / "in.jsonl"
    records = [{"id": k, "text": f"{BASE} {k % 5}" if k < 20 else f"unique{k} words"}
               for k in range(40)]  # fmt: skip
    given.write_text("".join(json.dumps(r) + "\n" for r in records))
    other = "".join(json.dumps({"id": r["id"], "text": f"other{r['id']}"}) + "\n" for r in records)
    decide = kept_by_rule

    for how in ("rename", "in place"):

        def swapped(*args: object, how: str = how) -> object:
            info = given.stat()
            if how == "rename":
                (tmp_path / "new").write_text(other)
                os.replace(tmp_path / "new", given)
            else:
                given.write_text(other.replace("other", "otheR"))
                os.utime(given, ns=(info.st_atime_ns, info.st_mtime_ns))
            return decide(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(dedupe_run, "kept", swapped)
        kept, dropped = tmp_path / f"k-{how}.jsonl", tmp_path / f"d-{how}.jsonl"
        result = run("dedupe", "-q", "--texts", str(given), "--kept", str(kept),
                     "--dropped", str(dropped), "-f", "json")  # fmt: skip
        assert result.exit_code == ExitCode.ERROR, (how, result.output)
        assert "changed since it was first read" in result.stderr
        assert not kept.exists() and not dropped.exists()
        assert not (tmp_path / f"k-{how}.jsonl.simhash.json").exists()
        given.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_dropped_and_annotated_records_keep_every_byte_and_add_one_member(tmp_path: Path) -> None:
    given = tmp_path / "in.jsonl"
    lines = [
        '{"id": "a", "text": "' + BASE + '", "score": 1.10, "big": 1e400}\n',
        '{"id":"b","text":"' + BASE + ' too","dup":1,"dup":2}\r\n',
        '{"id": "\\ud800", "text": "' + BASE + ' as well" }  \n',
        '{"id": "d", "text": "nothing like the others, not at all"}\n',
    ]
    given.write_text("".join(lines))
    dropped, annotated = tmp_path / "d.jsonl", tmp_path / "a.jsonl"
    result = run("dedupe", "-q", "--texts", str(given), "--threshold", "0.8", "--dropped",
                 str(dropped), "--annotated", str(annotated), "-f", "json")  # fmt: skip
    assert result.exit_code == ExitCode.OK, result.output
    every = lines_of(annotated)
    assert len(every) == 4
    for line, written in zip(lines, every, strict=True):
        # The line as it was, up to its closing brace, then one member, then its line end.
        body = line.rstrip("\r\n").rstrip()
        assert written.startswith(body[:-1] + ', "simhash": {"kept": ')
        assert written.endswith("}" + line[len(body) :])
        json.loads(written)  # (valid JSON: the lone surrogate stays an escape)
    assert '"big": 1e400' in every[0] and '"score": 1.10' in every[0]
    assert '"dup":1,"dup":2' in every[1]
    fates = [json.loads(line)["simhash"] for line in lines_of(dropped)]
    assert [f["duplicate_of"] for f in fates] == ["a", "a"]


def test_a_record_that_already_has_the_member_is_refused_before_any_work(tmp_path: Path) -> None:
    given = tmp_path / "in.jsonl"
    given.write_text(
        json.dumps({"id": 1, "text": BASE, "simhash": {"mine": True}})
        + "\n"
        + json.dumps({"id": 2, "text": BASE + " too"})
        + "\n"
    )
    out = tmp_path / "a.jsonl"
    result = run("dedupe", "--texts", str(given), "--annotated", str(out))
    assert result.exit_code == ExitCode.USAGE
    assert "already have a key 'simhash'" in result.stderr and "--annotation-field" in result.stderr
    assert not out.exists()
    result = run("dedupe", "-q", "--texts", str(given), "--annotated", str(out),
                 "--annotation-field", "fate", "-f", "json")  # fmt: skip
    assert result.exit_code == ExitCode.OK, result.output
    first = json.loads(lines_of(out)[0])
    assert first["simhash"] == {"mine": True} and first["fate"]["kept"] is True
    # A later record that has it is found as it is copied: nothing is written.
    given.write_text(
        json.dumps({"id": 1, "text": BASE})
        + "\n"
        + json.dumps({"id": 2, "text": BASE + " too", "fate": 0})
        + "\n"
    )
    out.unlink()
    result = run("dedupe", "-q", "--texts", str(given), "--annotated", str(out),
                 "--annotation-field", "fate")  # fmt: skip
    assert result.exit_code == ExitCode.ERROR
    assert f"{given}:2: the records already have a key 'fate'" in result.stderr
    assert not out.exists()


def test_parquet_with_the_columns_is_refused_and_outputs_follow_the_umask(tmp_path: Path) -> None:
    given = tmp_path / "in.parquet"
    table = pa.table(
        {"id": [1, 2, 3], "text": [BASE, BASE + " too", "else"], "simhash_kept": [1, 2, 3]}
    )
    pq.write_table(table, given)
    out = tmp_path / "a.parquet"
    result = run("dedupe", "--texts", str(given), "--annotated", str(out))
    assert result.exit_code == ExitCode.USAGE
    assert "a column 'simhash_kept'" in result.stderr and not out.exists()
    kept = tmp_path / "k.parquet"
    for umask, mode in ((0o022, 0o644), (0o077, 0o600)):
        old = os.umask(umask)
        try:
            result = run("dedupe", "-q", "--texts", str(given), "--annotated", str(out), "--kept",
                         str(kept), "--annotation-field", "fate", "-f", "json")  # fmt: skip
        finally:
            os.umask(old)
        assert result.exit_code == ExitCode.OK, result.output
        assert (out.stat().st_mode & 0o777, kept.stat().st_mode & 0o777) == (mode, mode)
        read = pq.read_table(out)
        assert read.column("simhash_kept").to_pylist() == [1, 2, 3]
        assert read.column("fate_kept").to_pylist().count(True) == 2
        out.unlink()
        kept.unlink()


def test_records_without_a_word_are_kept_and_annotated(tmp_path: Path) -> None:
    given = tmp_path / "in.jsonl"
    records = [
        {"id": "a", "text": BASE},
        {"id": "b", "text": BASE + " too"},
        {"id": 4, "text": ""},
        {"id": 5, "text": "!!!"},
    ]
    given.write_text("".join(json.dumps(r) + "\n" for r in records))
    kept, annotated = tmp_path / "k.jsonl", tmp_path / "a.jsonl"
    result = run("dedupe", "--texts", str(given), "--threshold", "0.8", "--kept", str(kept),
                 "--annotated", str(annotated), "-f", "json")  # fmt: skip
    assert result.exit_code == ExitCode.OK, result.output
    assert [json.loads(line)["id"] for line in lines_of(kept)] == ["a", 4, 5]
    fates = {json.loads(line)["id"]: json.loads(line)["simhash"] for line in lines_of(annotated)}
    assert fates[4] == fates[5] == {"kept": True, "duplicate_of": None, "cosine": None,
                                    "cluster": None, "skipped": "empty (no tokens)"}  # fmt: skip
    assert fates["b"]["duplicate_of"] == "a"
    counts = json.loads((tmp_path / "k.jsonl.simhash.json").read_text())["counts"]
    assert counts["read"] == counts["kept"] + counts["dropped"] + counts["skipped"] == 4
    assert (counts["kept"], counts["unfingerprinted"], counts["skipped"]) == (3, 2, 0)
    # An id that reads as a number is quoted: "'4' has no word", not four things; passed
    # through to the kept records, not skipped.
    assert "note: '4': empty (no tokens), passed through as it is" in result.stderr
