"""``fingerprint --texts`` and ``--vectors`` piece by piece, and ``dedupe --texts`` counted
piece by piece: the output of the whole input read at once, for any number of jobs and any
piece size, JSON Lines and Parquet alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simhash_cli.app import loading as run_module
from simhash_cli.app.batches import SECONDS_PER_BYTE
from simhash_cli.app.hooks import Silent
from simhash_cli.app.loading import counted_records, stream_records
from simhash_cli.app.records import corpus_from_text_records, corpus_from_vectors
from simhash_cli.app.settings import Input, Reading, Source
from simhash_cli.core.corpus import Admission, Corpus, Settings, concatenate
from simhash_cli.core.events import Event
from simhash_cli.core.text.vectorize import Weighting
from simhash_cli.errors import MalformedLineError
from simhash_cli.io.sources import pieces as pieces_module
from simhash_cli.io.sources import records as records_module
from simhash_cli.io.sources.records import reject_constant


class Collected(Silent):
    """Hooks that keep the events."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)


def text_lines(n: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    lines = []
    for k in range(n):
        words = " ".join(f"w{w}" for w in rng.integers(0, 300, int(rng.integers(0, 40))))
        record: dict[str, object] = {"text": words if k % 13 else ""}  # some empty
        if k % 5:
            record["id"] = k if k % 2 else f"doc-{k}"  # integer and string ids, some missing
        lines.append(json.dumps(record))
        if k % 97 == 0:
            lines.append("{not json")  # malformed, skipped with --skip-bad-lines
        if k % 71 == 0:
            lines.append("")  # blank
    return lines


def streamed(
    source: str, kind: Input, *, jobs: int, skip: bool = True, empty: bool = False
) -> tuple[Corpus, list[Event]]:
    hooks = Collected()
    reading = Reading(jobs=jobs, admission=Admission(include_empty=empty))
    found = list(stream_records(Source(kind, location=source, skip_bad_lines=skip), reading, hooks))
    return concatenate(found), hooks.events


def same(a: Corpus, b: Corpus) -> None:
    assert a.ids == b.ids
    assert [type(i) for i in a.ids] == [type(i) for i in b.ids]
    assert np.array_equal(a.fingerprints, b.fingerprints)
    assert np.array_equal(a.n_features, b.n_features)


@pytest.mark.parametrize("piece", [1, 7, 500, 2_000])
@pytest.mark.parametrize("jobs", [1, 2])
def test_texts_piece_by_piece_are_the_whole_input_read_at_once(
    tmp_path: Path, piece: int, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "texts.jsonl"
    source.write_text("\n".join(text_lines(1_500)) + "\n")
    whole = corpus_from_text_records(str(source), skip_bad_lines=True)
    monkeypatch.setattr(pieces_module, "LINES_PER_PIECE", piece)
    docs, events = streamed(str(source), Input.TEXTS, jobs=jobs)
    same(docs, whole)
    assert sorted(str(e) for e in events) == sorted(str(s) for s in whole.skipped)


def test_vectors_piece_by_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    lines = [
        json.dumps({"id": f"v{k}", "features": {f"f{f}": float(rng.random()) for f in
                                              rng.integers(0, 50, 6).tolist()}})
        for k in range(600)
    ]  # fmt: skip
    source = tmp_path / "vectors.jsonl"
    source.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(pieces_module, "LINES_PER_PIECE", 50)
    docs, _ = streamed(str(source), Input.VECTORS, jobs=2)
    same(docs, corpus_from_vectors(str(source)))


def test_parquet_row_groups_piece_by_piece(tmp_path: Path) -> None:
    texts = [json.loads(line) for line in text_lines(900) if line.startswith('{"')]
    table = pa.table(
        {
            "id": [f"r{k}" for k in range(len(texts))],
            "text": [record["text"] for record in texts],
        }
    )
    source = tmp_path / "texts.parquet"
    pq.write_table(table, source, row_group_size=64)
    assert pq.ParquetFile(source).metadata.num_row_groups > 10
    whole = corpus_from_text_records(str(source))
    for jobs in (1, 2):
        docs, _ = streamed(str(source), Input.TEXTS, jobs=jobs)
        same(docs, whole)


def test_an_id_given_in_two_pieces_is_refused_naming_both_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [json.dumps({"id": f"d{k}", "text": f"text {k}"}) for k in range(30)]
    lines[25] = json.dumps({"id": "d3", "text": "again"})
    source = tmp_path / "texts.jsonl"
    source.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(pieces_module, "LINES_PER_PIECE", 10)
    with pytest.raises(MalformedLineError, match=r"texts\.jsonl:26: the id 'd3' was already "
                       r"given at .*texts\.jsonl:4"):  # fmt: skip
        streamed(str(source), Input.TEXTS, jobs=1, skip=False)
    docs, events = streamed(str(source), Input.TEXTS, jobs=1)
    assert len(docs) == 29 and docs.ids.count("d3") == 1
    assert any("texts.jsonl:26" in str(event) for event in events)
    # Counted with the run's other skips, as the summary reports them.
    assert [skip.kind for skip in docs.skipped] == ["malformed"]


def test_the_command_writes_the_same_bytes_for_any_jobs(tmp_path: Path) -> None:
    source = tmp_path / "texts.jsonl"
    source.write_text("\n".join(text_lines(6_000)) + "\n")
    outputs = [
        subprocess.run(
            [sys.executable, "-m", "simhash_cli", "fingerprint", "--texts", str(source),
             "--on-error", "skip", "-qq", "--jobs", str(jobs)],
            capture_output=True, check=True,
        ).stdout
        for jobs in (1, 2)
    ]  # fmt: skip
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") > 5_000


def test_pieces_are_drawn_as_the_work_needs_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory follows a few pieces, not the input: when the first batch comes out, only the
    pieces the workers hold and one or two more have been read."""
    drawn = []

    def endless(source: str, max_line: int | None, **_: object) -> Iterator[pieces_module.Piece]:
        for number in range(10_000):
            drawn.append(number)
            lines: list[str | None] = [
                json.dumps({"id": f"{number}-{k}", "text": f"w{k} w{number}"}) for k in range(5)
            ]
            yield pieces_module.LinePiece("<endless>", 1 + 5 * number, lines)

    monkeypatch.setattr(run_module, "pieces", endless)
    for jobs in (1, 2):
        drawn.clear()
        batches = stream_records(Source(Input.TEXTS, location="x"), Reading(jobs=jobs), Silent())
        first = next(batches)
        assert len(first) == 5
        assert len(drawn) <= 2 + 2 * 2 * (jobs - 1) + 1
        batches.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("weighting", [Weighting.TF, Weighting.TFIDF])
@pytest.mark.parametrize(("piece", "jobs"), [(7, 1), (500, 2), (2_000, 2)])
def test_texts_counted_piece_by_piece_are_the_whole_input_with_its_vectors(
    tmp_path: Path, piece: int, jobs: int, weighting: Weighting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``dedupe --texts -j N`` searches: the same vectors, features, fingerprints and
    skips as the input counted in one process (tfidf's frequencies from every piece)."""
    lines = text_lines(1_500)
    lines[1_200] = json.dumps({"id": "doc-12", "text": "w1 w2 w3"})  # an id of piece one
    source = tmp_path / "texts.jsonl"
    source.write_text("\n".join(lines) + "\n")
    whole = corpus_from_text_records(
        str(source), Settings(weighting=weighting), skip_bad_lines=True
    )
    monkeypatch.setattr(pieces_module, "LINES_PER_PIECE", piece)
    hooks = Collected()
    docs = counted_records(
        Source(Input.TEXTS, location=str(source), skip_bad_lines=True),
        Reading(Settings(weighting=weighting), jobs=jobs),
        hooks,
    )
    same(docs, whole)
    assert docs.weights is not None and whole.weights is not None
    assert docs.features == whole.features
    assert np.array_equal(docs.weights.indptr, whole.weights.indptr)
    assert np.array_equal(docs.weights.indices, whole.weights.indices)
    assert np.array_equal(docs.weights.data, whole.weights.data)
    assert sorted(map(str, docs.skipped)) == sorted(map(str, whole.skipped))
    assert any("the id 'doc-12' was already given" in s.reason for s in docs.skipped)
    assert sorted(map(str, hooks.events)) == sorted(map(str, whole.skipped))


def run_cli(*arguments: str) -> bytes:
    return subprocess.run(
        [sys.executable, "-m", "simhash_cli", *arguments], capture_output=True, check=True
    ).stdout


def test_dedupe_writes_the_same_bytes_for_any_jobs(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    base = [" ".join(f"w{w}" for w in rng.integers(0, 3_000, 80)) for _ in range(300)]
    lines = []
    for k in range(5_000):
        words = base[k % 300].split()
        words[int(rng.integers(0, 80))] = f"edit{k}"  # near-copies of 300 texts
        lines.append(json.dumps({"id": f"d{k}", "text": " ".join(words)}))
    source = tmp_path / "texts.jsonl"
    source.write_text("\n".join(lines) + "\n")
    outputs = [run_cli("dedupe", "--texts", str(source), "-f", "json", "-qq", "-j", j)
               for j in ("1", "2")]  # fmt: skip
    assert outputs[0] == outputs[1]
    assert len(json.loads(outputs[0])["clusters"]) == 300


def test_vectors_for_an_estimate_stream_and_an_empty_input_is_no_document(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    base = [{f"f{f}": float(rng.random()) for f in rng.integers(0, 400, 30).tolist()}
            for _ in range(50)]  # fmt: skip
    source = tmp_path / "vectors.jsonl"
    source.write_text("".join(json.dumps({"id": f"v{k}", "features": base[k % 50]}) + "\n"
                              for k in range(3_000)))  # fmt: skip
    arguments = ("dedupe", "--vectors", str(source), "--verify", "estimate", "-f", "json", "-qq")
    outputs = [run_cli(*arguments, "-j", j) for j in ("1", "2")]
    assert outputs[0] == outputs[1] and len(json.loads(outputs[0])["clusters"]) == 50
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    summary = json.loads(run_cli("dedupe", "--vectors", str(empty), "--verify", "estimate",
                                 "-f", "json", "-qq"))["summary"]  # fmt: skip
    assert summary["documents"] == 0


def test_a_large_file_of_records_starts_its_workers_at_once(tmp_path: Path) -> None:
    """The size of a file of records tells the mapper its work, as files' sizes do, so that
    on a large one the workers start with the reading (not after this process's first
    pieces); a stream, a FIFO or what cannot be looked at leave it to the work's pace."""
    records = tmp_path / "records.jsonl"
    records.write_text('{"id": "a", "text": "x y"}\n' * 1000, encoding="utf-8")
    size = records.stat().st_size
    assert run_module.records_work(str(records)) == pytest.approx(size * SECONDS_PER_BYTE)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert run_module.records_work(str(fifo)) is None
    assert run_module.records_work("-") is None
    assert run_module.records_work(str(tmp_path / "missing")) is None


@pytest.mark.parametrize(
    "line",
    ['{"id": "a", "text": "x"}', '\ufeff{"id": "a"}', '{"w": NaN}', '{"id": ', "[1, 2]\n", "{}"],
)
def test_each_line_is_parsed_as_json_loads_parses_it(line: str) -> None:
    """One decoder for every line: the values, and the messages of what it refuses (a
    byte-order mark, NaN, a cut line), are json.loads's."""
    try:
        expected: object = json.loads(line, parse_constant=reject_constant)
    except ValueError as exc:
        expected = f"invalid JSON: {exc}"
    try:
        got: object = records_module._json_value("f", 1, line, None)
    except MalformedLineError as exc:
        got = exc.detail
    assert got == expected
