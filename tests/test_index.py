"""The persistent index: its look-ups against brute force, add/query/prune round trips, settings
and files that are not indexes, busy writers, concurrent writers and killed adds."""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_cli import TokenizerConfig, Weighting
from simhash_cli.cli import main
from simhash_cli.core.corpus import Settings
from simhash_cli.errors import ExitCode, InputError
from simhash_cli.index import store as index_module
from simhash_cli.index.reading import documents, find, ids_of, stats
from simhash_cli.index.schema import decode_id, encode_id
from simhash_cli.index.search import scan, scans, within
from simhash_cli.index.store import Store
from simhash_cli.index.writing import Writer
from simhash_cli.io.sources import pieces as pieces_module

from conftest import ROOT, SAMPLE, member_ids

WORDS = Settings(64, 12345, TokenizerConfig(), Weighting.TF)


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def lines(result: Result) -> list[dict[str, object]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


# ---------------------------------------------------------------- the store


@settings(max_examples=30)
@given(
    st.sampled_from([8, 16, 24, 40, 64, 72, 128]),
    st.integers(0, 12),
    st.integers(0, 2**32 - 1),
)
def test_search_finds_exactly_the_stored_fingerprints_within_k(
    bits: int, k: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    words = -(-bits // 64)
    n = 300
    stored = rng.integers(0, 2**64 - 1, (n, words), dtype=np.uint64, endpoint=True)
    # Queries near stored ones (a few bits flipped) and random ones.
    queries = stored[rng.integers(0, n, 40)].copy()
    for row in range(queries.shape[0]):
        flips = min(bits, int(rng.integers(0, 2 * k + 2)))
        for bit in rng.choice(bits, size=flips, replace=False):
            queries[row, bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    if bits % 64:
        mask = np.uint64((1 << (bits % 64)) - 1)
        stored[:, -1] &= mask
        queries[:, -1] &= mask
    k = min(k, bits - 1)
    path = f"/tmp/simhash-index-{os.getpid()}-{bits}-{seed}.db"
    try:
        with Writer.open(path, create=Settings(bits, 1, TokenizerConfig(), Weighting.TF)) as writer:
            writer.add([f"d{i}" for i in range(n)], stored, np.ones(n, np.int64))
            store = writer.store
            found = within(store, queries, k)
            look_up = functools.partial(store.lists.look_up, store.connection)
            methods = [functools.partial(scan, store)] + (
                [look_up] if store.lists.probes(k) <= 5000 else []
            )
            for method in methods:
                q, d, h = method(queries, k)
                assert set(zip(q.tolist(), d.tolist(), h.tolist(), strict=True)) == set(
                    zip(
                        found.query.tolist(),
                        found.doc.tolist(),
                        found.hamming.tolist(),
                        strict=True,
                    )
                )
        distance = np.bitwise_count(queries[:, None, :] ^ stored[None, :, :]).sum(axis=2)
        want = {(q, d + 1) for q, d in zip(*np.nonzero(distance <= k), strict=True)}
        assert set(zip(found.query.tolist(), found.doc.tolist(), strict=True)) == want
        assert np.all(np.diff(found.query) >= 0)  # by query, nearest first
    finally:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)


def test_a_bulk_add_cut_short_builds_its_tables_when_next_opened(tmp_path: Path) -> None:
    path = str(tmp_path / "bulk.db")
    rng = np.random.default_rng(3)
    fingerprints = rng.integers(0, 2**63, (1000, 1), dtype=np.uint64)
    writer = Writer.open(path, create=WORDS)
    store = writer.store
    writer.add(
        [f"d{i}" for i in range(1000)], fingerprints, np.ones(1000, np.int64), expected=10**6
    )
    listed = "SELECT count(*) FROM keys0"
    assert stats(store)["tables_built"] is False
    assert store.connection.execute(listed).fetchone()[0] == 0  # left for the end of the add
    assert within(store, fingerprints[:5], 0).doc.tolist() == [1, 2, 3, 4, 5]  # by a scan
    writer.close()  # killed before finish()
    with Store.open(path, readonly=True) as looked:  # a reader scans, and builds nothing
        assert stats(looked)["tables_built"] is False
        assert within(looked, fingerprints[:5], 0).doc.tolist() == [1, 2, 3, 4, 5]
    with Writer.open(path) as writer:  # the next writer builds the tables
        again = writer.store
        assert stats(again)["tables_built"] is True
        assert again.connection.execute(listed).fetchone()[0] > 900
        assert not scans(again, 5, 0)
        assert within(again, fingerprints[:5], 0).doc.tolist() == [1, 2, 3, 4, 5]


@settings(max_examples=20)
@given(st.integers(0, 2**32 - 1), st.sampled_from([16, 64, 128]))
def test_the_tables_follow_adds_updates_and_removals(seed: int, bits: int) -> None:
    rng = np.random.default_rng(seed)
    words = -(-bits // 64)
    path = f"/tmp/simhash-index-ops-{os.getpid()}-{seed}-{bits}.db"
    try:
        with Writer.open(path, create=Settings(bits, 1, TokenizerConfig(), Weighting.TF)) as writer:
            store = writer.store
            for _ in range(6):
                ids = [
                    f"d{i}" for i in rng.choice(60, size=int(rng.integers(1, 25)), replace=False)
                ]
                prints = rng.integers(0, 2**64 - 1, (len(ids), words), dtype=np.uint64)
                # Few distinct blocks, so that lists are shared and often emptied.
                prints &= np.uint64(0x0003000300030003)
                if rng.random() < 0.3:
                    writer.remove(ids)
                else:
                    writer.add(ids, prints, np.ones(len(ids), np.int64))
                queries = rng.integers(0, 2**64 - 1, (10, words), dtype=np.uint64)
                queries &= np.uint64(0x0003000300030003)
                for k in (0, 3):
                    looked = store.lists.look_up(store.connection, queries, k)
                    scanned = scan(store, queries, k)
                    assert [a.tolist() for a in looked] == [b.tolist() for b in scanned]
                entries = store.lists.entry.itemsize
                for j in range(len(store.blocks)):
                    total = store.connection.execute(
                        f"SELECT coalesce(sum(length(entries)), 0) FROM keys{j}"
                    ).fetchone()[0]
                    assert total == store.count() * entries  # every document once per table
    finally:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)


@pytest.mark.parametrize("empty", [True, False])
def test_a_bulk_add_keeps_the_last_of_a_path_given_twice(tmp_path: Path, empty: bool) -> None:
    # Into an empty index the add builds its tables from what it kept in memory; into one
    # holding documents, from what is stored.
    rng = np.random.default_rng(8)
    first = rng.integers(0, 2**63, (500, 1), dtype=np.uint64)
    second = rng.integers(0, 2**63, (500, 1), dtype=np.uint64)
    with Writer.open(str(tmp_path / "bulk.db"), create=WORDS) as writer:
        store = writer.store
        early = ["keep-me"] if not empty else []
        writer.add(early, first[: len(early)], np.ones(len(early), np.int64))
        if empty:
            writer.add(["keep-me"], first[:1], np.ones(1, np.int64), expected=10**6)
        ids = [f"d{i}" for i in range(500)]
        writer.add(ids, first, np.ones(500, np.int64), expected=10**6)
        writer.add([*ids[:100], "keep-me"], second[:101], np.ones(101, np.int64), expected=10**6)
        writer.finish()
        assert store.count() == 501
        found = find(store, [*ids, "keep-me"])
        assert len(found) == 501
        again = within(store, second[:101], 0)
        assert sorted(ids_of(store, again.doc).values()) == sorted([*ids[:100], "keep-me"])
        gone = within(store, first[:100], 0)  # the first fingerprints of those ids are gone
        assert len(gone.query) == 0
        for k in (0, 3):
            looked = store.lists.look_up(store.connection, second, k)
            scanned = scan(store, second, k)
            assert [a.tolist() for a in looked] == [b.tolist() for b in scanned]


def test_ids_survive_as_bytes() -> None:
    for name in ("plain.txt", "caf\udce9.txt", "lone \ud800 surrogate", "日本語"):
        assert decode_id(encode_id(name), "idx.db") == name


# ---------------------------------------------------------------- commands


def copy_of_sample(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    return corpus


def test_add_query_prune_round_trip(tmp_path: Path) -> None:
    corpus = copy_of_sample(tmp_path)
    db = str(tmp_path / "index.db")
    first = run("index", "add", db, str(corpus))
    assert first.exit_code == ExitCode.OK, first.stderr
    assert "8 new, 0 updated, 0 unchanged (not read)" in first.stderr
    again = run("index", "add", db, str(corpus))
    assert "0 new, 0 updated, 8 unchanged (not read)" in again.stderr
    # Changed: updated; emptied: no longer a document, removed.
    (corpus / "chess-openings.txt").write_text("a new opening: the volcano gambit")
    (corpus / "sourdough-bread.txt").write_text("   ")
    changed = run("index", "add", db, str(corpus))
    assert "0 new, 1 updated, 6 unchanged (not read), 1 removed" in changed.stderr
    query = run("index", "query", db, "-f", "jsonl", str(SAMPLE / "volcano-report.txt"))
    assert query.exit_code == ExitCode.OK, query.stderr
    assert [(r["match"], r["hamming"]) for r in lines(query)] == [
        (str(corpus / "volcano-report-wire.txt"), 0),
        (str(corpus / "volcano-report.txt"), 0),
    ]
    # A stored file is not its own match.
    own = run("index", "query", db, "-f", "jsonl", str(corpus / "volcano-report.txt"))
    assert [r["match"] for r in lines(own)] == [str(corpus / "volcano-report-wire.txt")]
    # One of one, one match: in the singular ("1 of 1 documents have", "1 matches" were).
    assert "1 of 1 document has stored documents" in own.stderr
    assert "; 1 match among 7 stored" in own.stderr
    (corpus / "volcano-report-wire.txt").unlink()
    pruned = run("index", "prune", db, "-f", "jsonl")
    assert lines(pruned) == [{"removed": str(corpus / "volcano-report-wire.txt")}]
    stats = json.loads(run("index", "stats", db, "-f", "json").stdout)
    assert stats["documents"] == 6 and stats["files"] == 6 and len(stats["tables"]) == 4
    assert stats["bits"] == 64 and stats["weighting"] == "tf"


def test_query_formats_threshold_and_check(tmp_path: Path) -> None:
    corpus = copy_of_sample(tmp_path)
    db = str(tmp_path / "index.db")
    assert run("index", "add", db, str(corpus)).exit_code == ExitCode.OK
    target = str(SAMPLE / "shipping-policy.txt")
    loose = lines(run("index", "query", db, "-f", "jsonl", "--threshold", "0.9", target))
    assert [r["hamming"] for r in loose] == [0, 0, 7]  # nearest first
    strict = lines(run("index", "query", db, "-f", "jsonl", "--max-distance", "3", target))
    assert [r["hamming"] for r in strict] == [0, 0]
    other = str(SAMPLE / "shipping-policy-copy.txt")
    nearest = lines(run("index", "query", db, "-f", "jsonl", "--limit", "2", target, other))
    assert [r["hamming"] for r in nearest] == [0, 0, 0, 0]  # the 2 nearest of each query
    csv = run("index", "query", db, "-f", "csv", target).stdout.splitlines()
    assert csv[0] == "query,match,hamming,estimated_cosine" and len(csv) == 4
    checked = run("index", "query", db, "--check", "-f", "jsonl", target)
    assert checked.exit_code == ExitCode.DUPLICATES_FOUND
    alone = run("index", "query", db, "--check", "-", input="an unrelated note about tax forms")
    assert alone.exit_code == ExitCode.OK and alone.stdout == ""


def test_index_dedupe_matches_dedupe(tmp_path: Path) -> None:
    corpus = copy_of_sample(tmp_path)
    db = str(tmp_path / "index.db")
    assert run("index", "add", db, str(corpus)).exit_code == ExitCode.OK
    direct = json.loads(run("dedupe", "-f", "json", str(corpus)).stdout)
    for verify in ("estimate", "exact"):
        stored = json.loads(run("index", "dedupe", db, "--verify", verify, "-f", "json").stdout)
        assert [[m["id"] for m in c["members"]] for c in stored["clusters"]] == [
            [m["id"] for m in c["members"]] for c in direct["clusters"]
        ]
    exact = json.loads(run("index", "dedupe", db, "--verify", "exact", "-f", "json").stdout)
    assert exact["pairs"] == direct["pairs"]


def test_records_from_vectors_and_fingerprints(tmp_path: Path) -> None:
    vectors = tmp_path / "v.jsonl"
    vectors.write_text(
        '{"id": "u1", "features": {"jazz": 3, "vinyl": 1}}\n'
        '{"id": "u2", "features": {"jazz": 3, "vinyl": 1.2}}\n'
    )
    db = str(tmp_path / "users.db")
    added = run("index", "add", db, "--vectors", str(vectors))
    assert added.exit_code == ExitCode.OK and "2 new" in added.stderr
    query = run("index", "query", db, "--vectors", "-", "-f", "jsonl",
                input='{"id": "u9", "features": {"jazz": 3, "vinyl": 1.1}}\n')  # fmt: skip
    assert {r["match"] for r in lines(query)} == {"u1", "u2"}
    assert run("index", "prune", db).stdout == ""  # records are never pruned
    fps = tmp_path / "fps.jsonl"
    fps.write_text(run("fingerprint", "-f", "jsonl", str(SAMPLE)).stdout)
    words = str(tmp_path / "words.db")
    assert run("index", "add", words, "--fingerprints", str(fps)).exit_code == ExitCode.OK
    assert json.loads(run("index", "stats", words, "-f", "json").stdout)["documents"] == 8


def test_other_settings_are_refused_naming_both(tmp_path: Path) -> None:
    corpus = copy_of_sample(tmp_path)
    db = str(tmp_path / "index.db")
    assert run("index", "add", db, str(corpus)).exit_code == ExitCode.OK
    wider = run("index", "add", db, "--bits", "128", str(corpus))
    assert wider.exit_code == ExitCode.ERROR
    assert "bits=64 seed=12345" in wider.stderr and "bits=128 seed=12345" in wider.stderr
    vectors = tmp_path / "v.jsonl"
    vectors.write_text('{"id": "u1", "features": {"a": 1}}\n')
    mixed = run("index", "add", db, "--vectors", str(vectors))
    assert mixed.exit_code == ExitCode.ERROR and "tokenizer=vectors" in mixed.stderr
    tfidf = run("index", "add", str(tmp_path / "new.db"), "--weighting", "tfidf", str(corpus))
    assert tfidf.exit_code == ExitCode.USAGE and "depend on their document alone" in tfidf.stderr
    assert not (tmp_path / "new.db").exists()


def _newer_schema(path: Path) -> None:
    assert run("index", "add", str(path), str(SAMPLE)).exit_code == ExitCode.OK
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version = 99")


def _other_database(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")


def _truncated(path: Path) -> None:
    assert run("index", "add", str(path), str(SAMPLE)).exit_code == ExitCode.OK
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p.write_text("my notes\n"), "not a simhash index (not an SQLite database)"),
        (lambda p: p.write_bytes(b""), "is an empty file, not an index"),
        (_other_database, "an SQLite database of another kind"),
        (_newer_schema, "made by a newer simhash (index schema 99"),
        (_truncated, "damaged"),
    ],
)
def test_a_file_that_is_not_an_index_is_refused_and_left_alone(
    tmp_path: Path, make: object, says: str
) -> None:
    path = tmp_path / "index.db"
    make(path)  # type: ignore[operator]
    before = path.read_bytes()
    for args in (
        ["add", str(path), str(SAMPLE)],
        ["query", str(path), str(SAMPLE)],
        ["stats", str(path)],
    ):
        result = run("index", *args)
        assert result.exit_code == ExitCode.ERROR, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
    assert path.read_bytes() == before


def test_no_index_for_query_and_over_128_bits(tmp_path: Path) -> None:
    missing = run("index", "query", str(tmp_path / "none.db"), str(SAMPLE))
    assert missing.exit_code == ExitCode.USAGE and "no index at" in missing.stderr
    piped = run("index", "add", str(tmp_path / "p.db"), "-", input="text")
    assert piped.exit_code == ExitCode.USAGE and "standard input has none" in piped.stderr
    assert not (tmp_path / "p.db").exists()
    wide = run("index", "add", str(tmp_path / "w.db"), "--bits", "256", str(SAMPLE))
    assert wide.exit_code == ExitCode.ERROR and "up to 128 bits" in wide.stderr


def test_a_second_writer_waits_then_is_told_the_index_is_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "index.db"
    assert run("index", "add", str(db), str(SAMPLE)).exit_code == ExitCode.OK
    monkeypatch.setattr(index_module, "BUSY_TIMEOUT", 0.3)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        (tmp_path / "new.txt").write_text("a document to add while another writer holds the index")
        started = time.monotonic()
        busy = run("index", "add", str(db), str(tmp_path / "new.txt"))
        assert time.monotonic() - started >= 0.3
        assert busy.exit_code == ExitCode.ERROR and "is busy" in busy.stderr
        reading = run("index", "query", str(db), str(SAMPLE / "volcano-report.txt"))
        assert reading.exit_code == ExitCode.OK  # readers never wait
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_non_utf8_file_names(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (SAMPLE / "volcano-report.txt").read_bytes()
    with open(os.fsencode(corpus) + b"/caf\xe9.txt", "wb") as handle:
        handle.write(text)
    (corpus / "plain.txt").write_bytes(text)
    db = str(tmp_path / "index.db")
    assert run("index", "add", db, str(corpus)).exit_code == ExitCode.OK
    found = lines(run("index", "query", db, "-f", "jsonl", str(SAMPLE / "volcano-report.txt")))
    assert sorted(str(r["match"]) for r in found) == sorted(
        [str(corpus / "caf\udce9.txt"), str(corpus / "plain.txt")]
    )
    os.remove(os.fsencode(corpus) + b"/caf\xe9.txt")
    assert lines(run("index", "prune", db, "-f", "jsonl")) == [
        {"removed": str(corpus / "caf\udce9.txt")}
    ]


# ---------------------------------------------------------------- processes


def write_documents(root: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5000)]
    root.mkdir(parents=True)
    for number in range(count):
        (root / f"doc{number:05}.txt").write_text(" ".join(rng.sample(words, 40)))


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "simhash_cli", *args]


def stored_rows(db: Path, root: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT path, size, w0 FROM docs ORDER BY path").fetchall()
    return [(os.fsdecode(path).removeprefix(str(root)), size, w0) for path, size, w0 in rows]


def test_four_writers_at_once(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    for part in range(4):
        write_documents(tmp_path / f"part{part}", 300, part)
    writers = [
        subprocess.Popen(
            _command("index", "add", "-qq", "-j", "1", str(db), str(tmp_path / f"part{part}")),
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        for part in range(4)
    ]
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert connection.execute("SELECT count(*) FROM docs").fetchone()[0] == 1200


def _stored(db: Path) -> int:
    """Documents committed so far (0 while the index is being made)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            return int(connection.execute("SELECT count(*) FROM docs").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_killed_add_resumes_to_the_state_of_an_uninterrupted_one(tmp_path: Path) -> None:
    calm, killed = tmp_path / "calm", tmp_path / "killed"
    write_documents(calm / "docs", 4000, 9)
    shutil.copytree(calm / "docs", killed / "docs")
    done = subprocess.run(
        _command("index", "add", "-qq", "-j", "1", str(calm / "db"), str(calm / "docs")),
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    add = _command("index", "add", "-qq", "-j", "1", str(killed / "db"), str(killed / "docs"))
    rng = random.Random(5)
    partial = []
    # Killed at random moments early on (listing, creating, the first batch), then just after
    # the first batch was committed, in the middle of the second.
    for moment in (rng.uniform(0.05, 0.6), rng.uniform(0.05, 0.6), None):
        process = subprocess.Popen(add, cwd=ROOT, stderr=subprocess.DEVNULL)
        if moment is None:
            while process.poll() is None and _stored(killed / "db") == 0:
                time.sleep(0.01)
        else:
            time.sleep(moment)
        process.send_signal(signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL, "the add finished before it was killed"
        if (killed / "db").exists():
            with sqlite3.connect(killed / "db") as connection:
                assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        partial.append(_stored(killed / "db"))
    assert 0 < partial[-1] < 4000  # the last kill came between batches, as meant
    resumed = subprocess.run(add, cwd=ROOT, capture_output=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert stored_rows(killed / "db", killed) == stored_rows(calm / "db", calm)
    assert len(stored_rows(calm / "db", calm)) == 4000


def test_open_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        Store.open(str(tmp_path))


def test_dedupe_through_an_index_reads_only_what_changed(tmp_path: Path) -> None:
    corpus = copy_of_sample(tmp_path)
    db = str(tmp_path / "cache.db")
    plain = json.loads(run("dedupe", "-f", "json", str(corpus)).stdout)
    first = run("dedupe", "--index", db, "-f", "json", str(corpus))
    assert first.exit_code == ExitCode.OK, first.stderr
    assert "8 new, 0 updated, 0 unchanged (not read)" in first.stderr
    assert json.loads(first.stdout)["pairs"] == plain["pairs"]  # exact, planned the same
    (corpus / "chess-openings.txt").write_text((corpus / "volcano-report.txt").read_text())
    second = run("dedupe", "--index", db, "-f", "json", str(corpus))
    assert "0 new, 1 updated, 7 unchanged (not read)" in second.stderr
    clusters = member_ids(json.loads(second.stdout)["clusters"])
    assert [str(corpus / "chess-openings.txt"), str(corpus / "volcano-report-wire.txt"),
            str(corpus / "volcano-report.txt")] in clusters  # fmt: skip
    refused = run("dedupe", "--index", db, "--audit", str(corpus))
    assert (
        refused.exit_code == ExitCode.USAGE
        and "--index goes without --audit, which needs every document's vector" in refused.stderr
    )


def near_copies(root: Path, families: int = 40, size: int = 5) -> Path:
    """Families of documents that differ in a word or a few, among unrelated ones."""
    rng = np.random.default_rng(11)
    words = [f"w{n}" for n in range(3000)]
    root.mkdir()
    for family in range(families):
        base = list(rng.choice(words, size=120))
        for member in range(size):
            text = list(base)
            for _ in range(member * 4):
                text[rng.integers(len(text))] = str(rng.choice(words))
            (root / f"f{family:02}-{member}.txt").write_text(" ".join(text))
    return root


@pytest.mark.parametrize("scheme", [[], ["--blocks", "8"], ["--max-distance", "12"]])
@pytest.mark.parametrize("verify", ["exact", "estimate"])
def test_a_cache_never_changes_the_answer(tmp_path: Path, verify: str, scheme: list[str]) -> None:
    """dedupe with --index reports what it reports without one (same scheme, same pairs,
    same ids, as given), on the first run and on the next, which reads only what it must."""
    corpus = near_copies(tmp_path / "docs")
    db = str(tmp_path / "cache.db")
    args = ["dedupe", *scheme, "--verify", verify, "-f", "json", "--threshold", "0.8"]
    # The planner's pilot too: made by reading the files again in pieces.
    plain = json.loads(run(*args, str(corpus)).stdout)
    for attempt in ("first", "again"):
        cached = run(*args, "--index", db, str(corpus))
        assert cached.exit_code == ExitCode.OK, cached.stderr
        document = json.loads(cached.stdout)
        assert document["pairs"] == plain["pairs"] and len(plain["pairs"]) > 100, attempt
        assert document["clusters"] == plain["clusters"]
        assert document["summary"] == plain["summary"]
        assert document["pairs"][0]["a"].startswith(str(corpus))  # as given, not resolved
    assert "0 new, 0 updated, 200 unchanged (not read)" in cached.stderr
    if verify == "exact":
        assert "files again for their vectors" in cached.stderr
    assert "deduplicated 200 documents" in cached.stderr


def test_a_full_disk_rolls_the_batch_back_and_says_what_to_do(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    with Writer.open(str(tmp_path / "full.db"), create=WORDS) as writer:
        store = writer.store
        writer.add(["first"], rng.integers(0, 2**63, (1, 1), dtype=np.uint64), np.ones(1, np.int64))
        pages = store.connection.execute("PRAGMA page_count").fetchone()[0]
        store.connection.execute(f"PRAGMA max_page_count = {pages + 2}")  # the disk fills up
        many = rng.integers(0, 2**63, (20_000, 1), dtype=np.uint64)
        with pytest.raises(InputError, match="is full: the index keeps every batch"):
            writer.add([f"d{i}" for i in range(20_000)], many, np.ones(20_000, np.int64))
        assert store.count() == 1
        assert store.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_texts_are_added_and_queried_as_their_files_are(tmp_path: Path) -> None:
    texts = tmp_path / "texts.jsonl"
    names = sorted(p.name for p in SAMPLE.iterdir())
    texts.write_text(
        "".join(
            json.dumps({"id": name, "text": (SAMPLE / name).read_text()}) + "\n" for name in names
        )
    )
    from_texts, from_files = str(tmp_path / "texts.db"), str(tmp_path / "files.db")
    assert run("index", "add", from_texts, "--texts", str(texts)).exit_code == ExitCode.OK
    assert run("index", "add", from_files, str(SAMPLE)).exit_code == ExitCode.OK
    query = ["-f", "jsonl", "--texts", str(texts)]
    by_text = lines(run("index", "query", from_texts, *query))
    by_file = lines(run("index", "query", from_files, *query))
    # A stored record is not its own match; the stored file of the same text is.
    assert by_text and all(r["query"] != r["match"] for r in by_text)
    assert [(r["query"], r["match"], r["hamming"]) for r in by_text] == [
        (r["query"], Path(str(r["match"])).name, r["hamming"])
        for r in by_file
        if Path(str(r["match"])).name != r["query"]
    ]


def test_records_are_added_piece_by_piece_on_any_jobs_as_fingerprint_makes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``index add --texts -j 2`` keeps no vector: its pieces are fingerprinted in processes,
    and what is stored is what ``fingerprint --texts`` writes, whatever the piece size."""
    monkeypatch.setattr(pieces_module, "LINES_PER_PIECE", 3)
    texts = tmp_path / "texts.jsonl"
    names = sorted(p.name for p in SAMPLE.iterdir())
    texts.write_text(
        "".join(json.dumps({"id": n, "text": (SAMPLE / n).read_text()}) + "\n" for n in names)
    )
    made = {r["id"]: r["fingerprint"] for r in lines(run("fingerprint", "--texts", str(texts)))}
    for jobs in ("1", "2"):
        db = str(tmp_path / f"texts-{jobs}.db")
        assert run("index", "add", db, "--texts", str(texts), "-j", jobs).exit_code == ExitCode.OK
        with Store.open(db, readonly=True) as store:
            _, ids, fingerprints, _ = documents(store)
        assert len(ids) == len(names) and len(made) == len(names)
        assert {i: f"{int(f[0]):016x}" for i, f in zip(ids, fingerprints, strict=True)} == made


def test_index_dedupe_takes_dedupes_scheme_check_and_plan(tmp_path: Path) -> None:
    corpus = copy_of_sample(tmp_path)
    db = str(tmp_path / "index.db")
    assert run("index", "add", db, str(corpus)).exit_code == ExitCode.OK
    stored = json.loads(run("index", "dedupe", db, "--blocks", "8", "-f", "json").stdout)
    assert stored["summary"]["scheme"] == "8 blocks of 8 bits"
    within = json.loads(run("index", "dedupe", db, "--max-distance", "3", "-f", "json").stdout)
    assert within["summary"]["max_distance"] == 3
    assert run("index", "dedupe", db, "--check").exit_code == ExitCode.DUPLICATES_FOUND
    plan = tmp_path / "plan.json"
    refused = run("index", "dedupe", db, "--plan", str(plan))
    assert refused.exit_code == ExitCode.USAGE and "add --verify exact" in refused.stderr
    rootless = run("index", "dedupe", db, "--verify", "exact", "--plan", str(plan))
    assert rootless.exit_code == ExitCode.USAGE and "needs --root DIR" in rootless.stderr
    planned = run(
        "index", "dedupe", db, "--verify", "exact", "--plan", str(plan), "--root", str(corpus),
        "-qq",
    )  # fmt: skip
    assert planned.exit_code == ExitCode.OK, planned.stderr
    clusters = json.loads(plan.read_text())["clusters"]
    assert len(clusters) == 2 and all(c["keep"] for c in clusters)
    over = run(
        "index", "dedupe", db, "--verify", "exact", "--plan", str(corpus / "chess-openings.txt"),
        "--root", str(corpus),
    )  # fmt: skip
    assert over.exit_code == ExitCode.USAGE  # a plan never replaces a stored file


def test_a_plan_of_a_shared_index_acts_only_inside_the_roots_named(tmp_path: Path) -> None:
    """A plan made from an index took every stored path as its own root: whoever could write
    a shared index added a file from outside the tree, and the user's own sealed plan deleted
    it. The plan's roots are the --root directories; a stored file outside them is skipped."""
    corpus = copy_of_sample(tmp_path)
    db = str(tmp_path / "index.db")
    assert run("index", "add", db, str(corpus)).exit_code == ExitCode.OK
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    victim = outside / "shipping-policy.txt"
    shutil.copy(corpus / "shipping-policy.txt", victim)  # added by another user of the index
    assert run("index", "add", db, str(victim)).exit_code == ExitCode.OK
    plan = tmp_path / "plan.json"
    made = run(
        "index", "dedupe", db, "--verify", "exact", "--plan", str(plan), "--root", str(corpus),
        "--keep", "first", "-qq",
    )  # fmt: skip
    assert made.exit_code == ExitCode.OK, made.stderr
    written = json.loads(plan.read_text())
    assert written["roots"] == [os.path.realpath(corpus)]
    files = {f["path"]: f for c in written["clusters"] for f in c["files"]}
    assert files[str(victim)]["action"] == "skip"
    applied = run("apply", str(plan), "--action", "delete", "--delete-near-duplicates", "--yes")
    assert applied.exit_code in (ExitCode.OK, ExitCode.INCOMPLETE), applied.stderr
    assert victim.exists()


@pytest.mark.parametrize("command", [["stats"], ["add", str(SAMPLE)]])
def test_an_index_path_that_is_a_device_or_a_pipe_is_named_so(
    tmp_path: Path, command: list[str]
) -> None:
    """An index path that was a device was called an empty file, with advice to remove it."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, kind in ((os.devnull, "a character device"), (str(fifo), "a FIFO")):
        sub, *rest = command
        done = CliRunner().invoke(main, ["index", sub, path, *rest])
        assert done.exit_code == 1
        assert done.stderr.strip() == f"Error: {path} is {kind}, not an index"
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


def test_commands_that_only_read_an_index_leave_nothing_beside_it(tmp_path: Path) -> None:
    """Read-only commands opened the index read-only, so the write-ahead log and the
    shared-memory file they made stayed beside it, and the next walk of that directory
    reported them as binary files; the bytes of the index are left as they were."""
    place = tmp_path / "docs"
    shutil.copytree(SAMPLE, place)
    db = place / "idx.db"
    assert run("index", "add", str(db), str(place), "-qq").exit_code == ExitCode.OK
    names = sorted(p.name for p in place.iterdir())
    stored = db.read_bytes()
    for args in (
        ["index", "stats", str(db)],
        ["index", "query", str(db), str(place / "volcano-report.txt")],
        ["index", "dedupe", str(db)],
        ["dedupe", "--against", str(db), str(place / "volcano-report.txt")],
    ):
        result = run(*args, "-f", "jsonl")
        assert result.exit_code in (ExitCode.OK, ExitCode.DUPLICATES_FOUND), result.stderr
        assert sorted(p.name for p in place.iterdir()) == names, args
    assert db.read_bytes() == stored
    walked = run("dedupe", "-f", "jsonl", str(place))
    assert "idx.db-shm" not in walked.stderr and "idx.db-wal" not in walked.stderr


def test_a_query_walks_its_directories_as_every_walk_does(tmp_path: Path) -> None:
    """index query had no --exclude (nor --include, --hidden, --no-ignore, --max-bytes): a
    directory looked up was walked with the defaults alone."""
    db = tmp_path / "idx.db"
    assert run("index", "add", str(db), str(SAMPLE), "-qq").exit_code == ExitCode.OK
    asked = tmp_path / "asked"
    (asked / "sub").mkdir(parents=True)
    shutil.copy(SAMPLE / "volcano-report.txt", asked / "volcano.txt")
    shutil.copy(SAMPLE / "volcano-report-wire.txt", asked / "sub" / "wire.txt")
    shutil.copy(SAMPLE / "chess-openings.txt", asked / "chess.log")
    (asked / ".ignore").write_text("volcano.txt\n")

    def queried(*options: str) -> set[str]:
        result = run("index", "query", str(db), str(asked), "-f", "jsonl", *options)
        assert result.exit_code == ExitCode.OK, result.stderr
        return {Path(json.loads(line)["query"]).name for line in result.stdout.splitlines()}

    assert queried() == {"wire.txt", "chess.log"}
    assert queried("--exclude", "sub/", "--exclude", "*.log") == set()
    assert queried("--include", "*.log") == {"chess.log"}
    assert queried("--no-ignore", "--exclude", "*.log") == {"volcano.txt", "wire.txt"}
