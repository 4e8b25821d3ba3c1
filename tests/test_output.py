"""Output: every format carries the same records; fingerprints survive a round trip."""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from simhash_cli import DedupeConfig, Verify, corpus_from_vectors, dedupe
from simhash_cli.core.corpus import Corpus, Settings
from simhash_cli.core.events import Skipped, Warned
from simhash_cli.core.result import DedupeResult
from simhash_cli.errors import InputError
from simhash_cli.io.sinks import records as sink_records
from simhash_cli.io.sinks.dedupe import emit_dedupe
from simhash_cli.io.sinks.formats import (
    Format,
    Listing,
    RecordWriter,
    default_format,
    member_item,
    to_json,
)
from simhash_cli.io.sinks.messages import Messages
from simhash_cli.io.sinks.paths import elide
from simhash_cli.io.sinks.records import dedupe_document, fingerprint_records, pair_records
from simhash_cli.io.sinks.tables import emit_fingerprints
from simhash_cli.io.sources.fingerprints import read_fingerprints

from conftest import SAMPLE

ids = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=12)


def make_corpus(tmp: Path, names: list[str], bits: int) -> Corpus:
    source = tmp / "v.jsonl"
    lines = [
        json.dumps({"id": name, "features": {"shared": 5, f"own{i % 3}": 1}})
        for i, name in enumerate(names)
    ]
    source.write_text("\n".join(lines), encoding="utf-8")
    return corpus_from_vectors(str(source), Settings.of_vectors(bits=bits))


def render(fmt: Format, emit: object, value: object) -> str:
    out = io.StringIO()
    emit(value, fmt, out)  # type: ignore[operator]
    return out.getvalue()


def emit_pairs(result: DedupeResult, fmt: Format, out: IO[str]) -> None:
    emit_dedupe(result, fmt, out, Listing.PAIRS)


@given(names=st.lists(ids, min_size=1, max_size=6, unique=True), bits=st.sampled_from([8, 64, 136]))
def test_fingerprint_formats_round_trip(
    tmp_path_factory: object, names: list[str], bits: int
) -> None:
    tmp = tmp_path_factory.mktemp("o")  # type: ignore[attr-defined]
    docs = make_corpus(tmp, names, bits)
    records = fingerprint_records(docs)
    as_json = json.loads(render(Format.JSON, emit_fingerprints, docs))
    as_jsonl = [
        json.loads(line) for line in render(Format.JSONL, emit_fingerprints, docs).splitlines()
    ]
    as_csv = list(csv.DictReader(io.StringIO(render(Format.CSV, emit_fingerprints, docs))))
    assert as_json == as_jsonl == records
    assert [r["id"] for r in as_csv] == [r["id"] for r in records]
    assert [r["fingerprint"] for r in as_csv] == [r["fingerprint"] for r in records]
    for fmt in (Format.JSONL, Format.JSON, Format.CSV):  # each read back as it was written
        written = tmp / f"f.{fmt.value}"
        with open(written, "w", encoding="utf-8", newline="") as handle:
            emit_fingerprints(docs, fmt, handle)
        back = list(read_fingerprints(str(written)))
        assert [r.id for r in back] == [r["id"] for r in records]
        assert [format(r.fingerprint, f"0{bits // 4}x") for r in back] == [
            r["fingerprint"] for r in records
        ]
        assert [r.features for r in back] == [r["features"] for r in records]
        assert {r.settings for r in back} == {docs.settings}


@given(names=st.lists(ids, min_size=2, max_size=6, unique=True))
def test_dedupe_formats_agree(tmp_path_factory: object, names: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("o")  # type: ignore[attr-defined]
    result = dedupe(make_corpus(tmp, names, 64), DedupeConfig(blocks=8, threshold=0.5))
    pairs = pair_records(result)
    document = json.loads(render(Format.JSON, emit_pairs, result))
    lines = [json.loads(line) for line in render(Format.JSONL, emit_pairs, result).splitlines()]
    rows = list(csv.DictReader(io.StringIO(render(Format.CSV, emit_pairs, result))))
    assert document["pairs"] == lines == pairs
    assert [(r["a"], r["b"], int(r["hamming"])) for r in rows] == [
        (p["a"], p["b"], p["hamming"]) for p in pairs
    ]
    assert document["summary"]["pairs"] == len(pairs)


def test_null_cosine_in_json_and_empty_cell_in_csv(tmp_path: Path) -> None:
    result = dedupe(
        make_corpus(tmp_path, ["a", "b"], 64), DedupeConfig(verify=Verify.ESTIMATE, threshold=0.5)
    )
    assert json.loads(render(Format.JSON, emit_pairs, result))["pairs"][0]["cosine"] is None
    assert next(csv.DictReader(io.StringIO(render(Format.CSV, emit_pairs, result))))["cosine"] == ""


def test_paths_are_never_read_as_markup(tmp_path: Path) -> None:
    docs = make_corpus(tmp_path, ["[bold]x[/bold]", "[red]"], 64)
    table = render(Format.TABLE, emit_fingerprints, docs)
    assert "[bold]x[/bold]" in table and "[red]" in table
    err = io.StringIO()
    Messages(err).event(docs.skipped[0] if docs.skipped else _skip("[bold]y"))
    assert "[bold]y" in err.getvalue()


def _skip(name: str) -> Skipped:
    return Skipped(name, "empty (no tokens)")


def test_default_format_follows_the_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert default_format(Tty()) is Format.TABLE
    assert default_format(io.StringIO()) is Format.JSONL


@pytest.mark.parametrize("size", [0, 1, 3])
def test_streamed_json_is_the_same_bytes_as_one_dump(size: int) -> None:
    records = [{"id": f"d{i}", "fingerprint": "00ff", "text": "é\u2028"} for i in range(size)]
    out = io.StringIO()
    writer = RecordWriter(Format.JSON, out)
    writer.write(records[:1])
    writer.write(records[1:])
    writer.close()
    expected = json.dumps(records, ensure_ascii=False, indent=2).replace("\u2028", "\\u2028")
    assert out.getvalue() == expected + "\n"


@pytest.mark.parametrize("chunk", [1, 2, 3, 1000])
def test_dedupe_output_written_in_chunks_is_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Pairs and clusters are written a chunk at a time; the JSON document is still exactly
    what one json.dumps of it writes, and JSON Lines the records in order."""
    names = [f"doc{i}" for i in range(9)]
    result = dedupe(make_corpus(tmp_path, names, 64), DedupeConfig(blocks=8, threshold=0.5))
    assert len(result.pairs) > 3 and len(result.clusters) >= 1
    monkeypatch.setattr(sink_records, "PAIR_CHUNK", chunk)
    document = dedupe_document(result)
    assert render(Format.JSON, emit_pairs, result) == json.dumps(document, indent=2) + "\n"
    lines = render(Format.JSONL, emit_pairs, result).splitlines()
    assert [json.loads(line) for line in lines] == document["pairs"]
    empty = dedupe(make_corpus(tmp_path, ["a", "b"], 64), DedupeConfig(blocks=8, threshold=1.0))
    assert len(empty.pairs) == 0
    expected = json.dumps(dedupe_document(empty), indent=2) + "\n"
    assert render(Format.JSON, emit_pairs, empty) == expected


# A file name never holds NUL, which ends a name in the -0 groups format.
names_of_files = ids.filter(lambda name: "\0" not in name)


@given(names=st.lists(names_of_files, min_size=2, max_size=7, unique=True))
def test_clusters_agree_in_every_format(tmp_path_factory: object, names: list[str]) -> None:
    """JSON's clusters, the JSON Lines and CSV cluster listings and the groups format hold the
    same members; each cluster's representative is one of them, at cosine 1 to itself, and
    every other member names it as what it is a duplicate of."""
    tmp = tmp_path_factory.mktemp("o")  # type: ignore[attr-defined]
    result = dedupe(make_corpus(tmp, names, 64), DedupeConfig(blocks=8, threshold=0.5))

    def emitted(fmt: Format, *, null: bool = False) -> str:
        out = io.StringIO()
        emit_dedupe(result, fmt, out, Listing.CLUSTERS, null=null)
        return out.getvalue()

    clusters = json.loads(emitted(Format.JSON))["clusters"]
    assert [json.loads(line) for line in emitted(Format.JSONL).splitlines()] == clusters
    rows = list(csv.DictReader(io.StringIO(emitted(Format.CSV))))
    assert len(rows) == sum(c["size"] for c in clusters)
    groups = emitted(Format.GROUPS, null=True).split("\0\0")[:-1]
    assert len(groups) == len(clusters)
    for cluster, group in zip(clusters, groups, strict=True):
        kept, *others = cluster["members"]  # the one kept first, as in every format
        assert set(cluster) == {"cluster", "size", "representative", "members"}
        assert kept == {"id": cluster["representative"], "duplicate_of": None, "cosine": 1.0}
        assert len(cluster["members"]) == cluster["size"]
        for member in others:
            assert set(member) == {"id", "duplicate_of", "cosine"}
            assert member["duplicate_of"] == kept["id"]
            assert member["cosine"] >= 0.5 - 1e-9  # each within the threshold of the one kept
        mine = [r for r in rows if int(r["cluster"]) == cluster["cluster"]]
        assert [(r["id"], r["duplicate_of"] or None) for r in mine] == [
            (m["id"], m["duplicate_of"]) for m in cluster["members"]
        ]
        assert group.split("\0") == [r["id"] for r in mine]


def test_groups_are_blank_line_separated_or_nul_ended(tmp_path: Path) -> None:
    names = ["a b", "c\nd", "e"]
    result = dedupe(make_corpus(tmp_path, ["x", "y"], 64), DedupeConfig(blocks=8, threshold=0.5))
    lines = io.StringIO()
    emit_dedupe(result, Format.GROUPS, lines, Listing.CLUSTERS)
    assert lines.getvalue() in ("x\ny\n\n", "y\nx\n\n")
    result = dedupe(make_corpus(tmp_path, names, 64), DedupeConfig(blocks=8, threshold=0.5))
    out = io.StringIO()
    emit_dedupe(result, Format.GROUPS, out, Listing.CLUSTERS, null=True)
    written = out.getvalue()
    assert written.endswith("\0\0")
    groups = written[:-2].split("\0\0")
    assert [sorted(g.split("\0")) for g in groups] == [sorted(names)]


def test_a_fingerprint_table_is_refused_by_name(tmp_path: Path) -> None:
    docs = make_corpus(tmp_path, ["a", "b"], 64)
    table = tmp_path / "fps.txt"
    table.write_text(render(Format.TABLE, emit_fingerprints, docs), encoding="utf-8")
    with pytest.raises(InputError, match=r"table of 'simhash fingerprint'.*-f jsonl"):
        list(read_fingerprints(str(table)))


def test_csv_names_are_their_bytes_never_an_escape_a_name_could_forge(tmp_path: Path) -> None:
    """``bad\\xff.txt`` was written as the six characters ``\\udcff``, the same as a file really
    named so, and the row read as a file paired with itself."""
    text = b"the quick brown fox jumps over the lazy dog and keeps running far away from home"
    names = [b"bad\xff.txt", b"bad\\udcff.txt", b"ok.txt"]
    for name in names:
        (tmp_path / os.fsdecode(name)).write_bytes(text)
    simhash = [sys.executable, "-m", "simhash_cli"]
    pairs = subprocess.run(
        [*simhash, "dedupe", "-f", "csv", "--list", "pairs", "-qq", "."],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    assert pairs.returncode == 0, pairs.stderr
    rows = list(csv.DictReader(io.StringIO(pairs.stdout.decode("utf-8", "surrogateescape"))))
    found = {frozenset((row["a"], row["b"])) for row in rows}
    every = [f"./{os.fsdecode(name)}" for name in names]
    assert found == {frozenset(p) for p in itertools.combinations(every, 2)}
    assert b"./bad\xff.txt" in pairs.stdout  # the name's own byte
    # fingerprint -f csv, read back: the same names, each its own file.
    written = tmp_path / "fps.csv"
    made = subprocess.run(
        [*simhash, "fingerprint", "-f", "csv", "-o", str(written), "-qq", "."],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    back = [record.id for record in read_fingerprints(str(written))]
    assert sorted(back) == sorted(every)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)


@given(
    st.dictionaries(st.text(), st.one_of(scalars, st.lists(scalars, max_size=3)), min_size=1),
    st.booleans(),
)
def test_an_array_item_is_what_json_writes_there(
    record: dict[str, object], ascii_only: bool
) -> None:
    """A record written as an item of a top-level member array is what json.dumps(indent=2)
    writes there, scalars alone (by the C encoder) or not."""
    document = {"pairs": [record]}
    expected = to_json(document, ascii_only=ascii_only, indent=2)
    written = '{\n  "pairs": [\n' + member_item(record, ascii_only=ascii_only) + "\n  ]\n}"
    assert written == expected


def test_csv_writes_booleans_as_json_does() -> None:
    """CSV wrote Python's True/False; a reader of the JSON and of the CSV sees one word."""
    simhash = [str(Path(sys.executable).parent / "simhash")]
    pair = [str(SAMPLE / name) for name in ("shipping-policy.txt", "chess-openings.txt")]
    done = subprocess.run(
        [*simhash, "compare", "-f", "csv", "-qq", *pair], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    row = next(csv.DictReader(io.StringIO(done.stdout)))
    assert row["near_duplicate"] == "false"


# ---------------------------------------------------------------------------- into what is there
#
# Every output was renamed over whatever was at its path: as root `dedupe -o /dev/null`
# replaced the null device with a regular file, a named pipe became a file while its reader
# waited for ever, and `-o >(cmd)` failed after the whole run. A pipe or a character device is
# written into, as the shell's `>` does; nothing else that is not a file is replaced.


def _read_fifo(fifo: Path, got: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(fifo, "rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def test_outputs_into_a_named_pipe_are_written_into_it(tmp_path: Path) -> None:
    from terminal import SIMHASH

    records = tmp_path / "records.jsonl"
    records.write_text(
        '{"id": "a", "text": "the same words here"}\n'
        '{"id": "b", "text": "the same words here"}\n'
        '{"id": "c", "text": "something else"}\n'
    )
    fifos = {name: tmp_path / name for name in ("out", "kept", "dropped")}
    for fifo in fifos.values():
        os.mkfifo(fifo)
    got: dict[str, list[bytes]] = {name: [] for name in fifos}
    readers = [_read_fifo(fifo, got[name]) for name, fifo in fifos.items()]
    done = subprocess.run(
        [SIMHASH, "dedupe", "--texts", str(records), "-f", "json", "-q",
         "-o", str(fifos["out"]), "--kept", str(fifos["kept"]),
         "--dropped", str(fifos["dropped"])],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    for reader in readers:
        reader.join(timeout=10)
    assert done.returncode == 0, done.stderr
    for fifo in fifos.values():
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a pipe, never a file
    assert json.loads(got["out"][0])["summary"]["documents"] == 3
    assert [json.loads(line)["id"] for line in got["kept"][0].splitlines()] == ["a", "c"]
    assert [json.loads(line)["id"] for line in got["dropped"][0].splitlines()] == ["b"]


def test_an_output_to_a_descriptor_of_a_pipe_is_written_into_it() -> None:
    """``-o >(cmd)``: the shell names a pipe ``/dev/fd/N``, in a directory no one writes."""
    from terminal import SIMHASH

    read, write = os.pipe()
    with subprocess.Popen(
        [SIMHASH, "fingerprint", str(SAMPLE), "-q", "-f", "jsonl", "-o", f"/dev/fd/{write}"],
        pass_fds=(write,), stderr=subprocess.PIPE,
    ) as process:  # fmt: skip
        os.close(write)
        with open(read, "rb") as pipe:
            sent = pipe.read()
        assert process.wait(timeout=60) == 0, process.stderr and process.stderr.read()
    assert len(sent.splitlines()) == len(list(SAMPLE.iterdir()))


def test_a_socket_at_an_output_path_is_refused_and_stays() -> None:
    from terminal import SIMHASH

    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # a socket's path is short
        path = os.path.join(short, "out")
        with socket.socket(socket.AF_UNIX) as listening:
            listening.bind(path)
            done = subprocess.run(
                [SIMHASH, "fingerprint", str(SAMPLE), "-q", "-o", path],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert done.returncode != 0
            assert done.stderr.strip().splitlines()[-1].endswith("it is a socket, not a file")
            assert "Traceback" not in done.stderr
            assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_a_name_too_long_for_its_cell_keeps_its_start_and_its_end() -> None:
    """A dry run at 80 columns showed ``…ping-policy-revised.txt``: the start of a name is what
    tells it from its neighbours (``shipping-policy.txt``, ``shipping-policy-copy.txt``)."""
    short = elide("shipping-policy-revised.txt", 24)
    assert short == "shipping…icy-revised.txt" and cell_len(short) == 24
    assert elide("文档" * 10 + ".txt", 12) == "文档…档.txt"  # wide characters: two cells each
    assert elide("corpus/a.txt", 24) == "corpus/a.txt"  # whole where it fits
    assert elide("a rather long directory/volcano.txt", 24) == "a rather…ory/volcano.txt"
    # A path whose name alone does not fit says something was cut before it: never a name
    # that would read as a file of the directory the table is under.
    assert elide("a/b/c/d/e/f/g/h/longername.txt", 12) == "…gername.txt"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_warning_summed_up_reads_as_what_happened_then_how_often_and_where() -> None:
    """Summed by its text: '1 bytes that are not valid text', and an ignore file's warning
    read '... (a directory) in 1 file', where the count went in front of a sentence."""
    err = _Terminal()
    messages = Messages(err)
    messages.event(Warned("ig/sub/.gitignore", "ignore file not read: not a regular file"))
    for name in ("a.txt", "b.txt"):
        messages.event(Warned(name, "bytes that are not valid text were replaced"))
    messages.event_summary()
    shown = " ".join(err.getvalue().split())
    assert "warning: bytes that are not valid text were replaced (2 files: a.txt, b.txt)" in shown
    assert "ignore file not read: not a regular file (1 file: ig/sub/.gitignore)" in shown
