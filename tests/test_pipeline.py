"""The pipeline API: corpus loading, compare, dedupe, audit."""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest

from simhash_cli import (
    DedupeConfig,
    ParameterError,
    Verify,
    Weighting,
    compare,
    corpus_from_paths,
    corpus_from_texts,
    corpus_from_vectors,
    dedupe,
)
from simhash_cli.app import batches as batches_module
from simhash_cli.app import parallel
from simhash_cli.app.batches import batches_of, iter_fingerprints
from simhash_cli.core.corpus import Settings, concatenate
from simhash_cli.core.events import Event, Skipped
from simhash_cli.core.verify import cosines as cosines_module
from simhash_cli.core.verify.cosines import sketch
from simhash_cli.errors import CandidateBudgetError


def test_corpus_from_paths_reports_and_drops_empty_documents(messy_dir: Path) -> None:
    events: list[Event] = []
    docs = corpus_from_paths([str(messy_dir)], on_event=events.append)
    assert len(docs) == 4
    assert docs.fingerprints.shape == (4, 1)
    assert docs.weights is not None and docs.weights.shape[0] == 4
    assert {s.reason for s in docs.skipped} == {
        "empty (no tokens)",
        "binary (NUL bytes, no byte-order mark)",
    }
    assert sum(isinstance(e, Skipped) for e in events) == 3


def test_all_documents_empty(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("")
    (tmp_path / "b").write_text("...")
    docs = corpus_from_paths([str(tmp_path)])
    assert len(docs) == 0 and len(docs.skipped) == 2
    result = dedupe(docs)
    assert len(result.pairs) == 0 and result.clusters == []


def test_tfidf_and_shingles_change_fingerprints(tmp_path: Path) -> None:
    for i, text in enumerate(["red fish blue fish", "red fish green fish", "one two three"]):
        (tmp_path / f"{i}.txt").write_text(text)
    tf = corpus_from_paths([str(tmp_path)])
    tfidf = corpus_from_paths([str(tmp_path)], Settings(weighting=Weighting.TFIDF))
    assert tfidf.settings.weighting == "tfidf"
    assert not np.array_equal(tf.fingerprints, tfidf.fingerprints)


def test_compare_pair(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a b c d e f")
    (tmp_path / "b").write_text("a b c d e g")
    result = compare(
        corpus_from_paths([str(tmp_path / "a"), str(tmp_path / "b")], Settings(bits=256))
    )
    assert result.cosine == pytest.approx(5 / 6)
    assert result.hamming == (result.fingerprint_a ^ result.fingerprint_b).bit_count()


def test_exact_verification_needs_vectors(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    source.write_text('{"id": "a", "features": {"x": 1}}\n{"id": "b", "features": {"x": 2}}\n')
    docs = corpus_from_vectors(str(source))
    result = dedupe(docs, DedupeConfig(threshold=0.99))
    assert result.pairs.pairs.tolist() == [[0, 1]]
    assert result.pairs.cosine.tolist() == pytest.approx([1.0])
    docs.weights = None
    with pytest.raises(ParameterError, match="exact verification and audit need"):
        dedupe(docs)
    assert len(dedupe(docs, DedupeConfig(verify=Verify.ESTIMATE, threshold=0.99)).pairs) == 1


def test_budget_is_enforced_through_the_pipeline(tmp_path: Path) -> None:
    lines = "".join(json.dumps({"id": i, "features": {"same": 1}}) + "\n" for i in range(100))
    (tmp_path / "v.jsonl").write_text(lines)
    docs = corpus_from_vectors(str(tmp_path / "v.jsonl"))
    with pytest.raises(CandidateBudgetError):
        dedupe(docs, DedupeConfig(max_candidates=1000))
    assert len(dedupe(docs).clusters) == 1


def test_audit_counts_missed_and_false_candidates(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    base = {f"w{i}": float(rng.integers(1, 5)) for i in range(40)}
    lines = []
    for doc in range(30):
        features = dict(base) if doc < 15 else {f"z{doc}_{i}": 1.0 for i in range(40)}
        for key in rng.choice(list(features), size=6, replace=False):
            features[str(key)] += float(rng.integers(0, 3))
        lines.append(json.dumps({"id": doc, "features": features}))
    (tmp_path / "v.jsonl").write_text("\n".join(lines))
    docs = corpus_from_vectors(str(tmp_path / "v.jsonl"), Settings.of_vectors(bits=64))
    result = dedupe(docs, DedupeConfig(blocks=1, threshold=0.9, audit=True))
    audit = result.audit
    assert audit is not None
    assert audit.similar_pairs == 15 * 14 // 2
    assert audit.found + len(audit.missed) == audit.similar_pairs
    assert audit.recall == pytest.approx(audit.found / audit.similar_pairs)
    assert np.all(audit.missed.cosine >= 0.9)
    with pytest.raises(ParameterError, match="threshold above 0"):
        dedupe(docs, DedupeConfig(threshold=0.0, audit=True))


def test_vectors_without_a_non_zero_weight_are_skipped(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    source.write_text(
        '{"id": "z1", "features": {"a": 0}}\n{"id": "z2", "features": {"a": 0, "b": 0.0}}\n'
        '{"id": "e", "features": {}}\n{"id": "ok", "features": {"a": 0, "b": 2}}\n'
    )
    docs = corpus_from_vectors(str(source))
    assert docs.ids == ["ok"]
    assert [(s.id, s.reason) for s in docs.skipped] == [
        ("z1", "empty (no non-zero weight)"),
        ("z2", "empty (no non-zero weight)"),
        ("e", "empty (no non-zero weight)"),
    ]
    assert docs.n_features.tolist() == [2]


def test_max_distance_collapses_copies_and_respects_the_budget(tmp_path: Path) -> None:
    lines = "".join(json.dumps({"id": i, "features": {"same": 1}}) + "\n" for i in range(100))
    (tmp_path / "v.jsonl").write_text(lines)
    docs = corpus_from_vectors(str(tmp_path / "v.jsonl"))
    with pytest.raises(CandidateBudgetError, match="copies of the same fingerprints make more"):
        dedupe(docs, DedupeConfig(max_distance=0, max_candidates=1000))
    result = dedupe(docs, DedupeConfig(max_distance=0))
    assert len(result.pairs) == 4950 and len(result.clusters) == 1
    # One fingerprint, every document's: each pair was compared, whatever the scheme's
    # chance at the threshold, and nothing is left to suggest.
    assert result.expected_recall < 0.9
    assert result.measured_recall is not None and result.measured_recall.exact
    assert result.measured_recall.value == 1.0 and result.suggested_max_distance is None


def test_a_large_group_of_copies_is_paired_with_its_first_document(tmp_path: Path) -> None:
    # 2,000 copies of a boilerplate page: 1,999 pairs (each with the first), not 1,999,000;
    # the small group of 3 copies keeps all its pairs, with each other and with its partner.
    lines = [{"id": f"b{i}", "features": {"cookie": 1, "banner": 2}} for i in range(2000)]
    lines += [{"id": f"s{i}", "features": {"alpha": 3, "beta": 1}} for i in range(3)]
    lines += [{"id": "near", "features": {"alpha": 3, "beta": 1, "gamma": 0.1}}]
    source = tmp_path / "v.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    docs = corpus_from_vectors(str(source))
    result = dedupe(docs, DedupeConfig(threshold=0.95))
    pairs = {(docs.ids[i], docs.ids[j]) for i, j in result.pairs.pairs.tolist()}
    assert {p for p in pairs if p[0].startswith("b")} == {("b0", f"b{i}") for i in range(1, 2000)}
    small = ["s0", "s1", "s2", "near"]  # in input order, as pairs are
    assert {p for p in pairs if p[0] in small} == set(itertools.combinations(small, 2))
    assert sorted(len(c) for c in result.clusters) == [4, 2000]
    assert result.candidates < 2100


def test_jobs_give_the_same_corpus_and_events(messy_dir: Path) -> None:
    for i in range(40):
        (messy_dir / f"gen{i:02d}.txt").write_text(f"common words here and number {i % 7} " * 3)
    (messy_dir / "2nd.bin").write_bytes(b"\x00\x01")

    def load(jobs: int) -> tuple[object, list[Event]]:
        events: list[Event] = []
        docs = corpus_from_paths(
            [str(messy_dir)],
            Settings(weighting=Weighting.TFIDF),
            jobs=jobs,
            batch_files=7,
            on_event=events.append,
        )
        return docs, events

    (one, one_events), (two, two_events) = load(1), load(2)
    assert one_events == two_events and len(one_events) == 5
    assert one.ids == two.ids and one.features == two.features  # type: ignore[attr-defined]
    assert np.array_equal(one.fingerprints, two.fingerprints)  # type: ignore[attr-defined]
    assert np.array_equal(one.weights.toarray(), two.weights.toarray())  # type: ignore[attr-defined]
    assert np.array_equal(one.stamps, two.stamps)  # type: ignore[attr-defined]
    # Each document's stamp is its own file's, as it was read.
    inodes = [os.stat(doc_id).st_ino for doc_id in one.ids]  # type: ignore[attr-defined]
    assert one.stamps["inode"].tolist() == inodes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("batch_files", "jobs"), [(None, 1), (3, 1), (4, 2)])
def test_streamed_fingerprints_equal_the_whole_corpus(
    messy_dir: Path, batch_files: int | None, jobs: int
) -> None:
    for i in range(12):
        (messy_dir / f"gen{i:02d}.txt").write_text(f"some shared words and {i % 5} " * 4)
    os.mkfifo(messy_dir / "fifo")
    whole = corpus_from_paths([str(messy_dir)], Settings(weighting=Weighting.LOG))
    batches = list(
        iter_fingerprints(
            [str(messy_dir)], Settings(weighting=Weighting.LOG), batch_files=batch_files, jobs=jobs
        )
    )
    streamed = concatenate(batches)
    assert streamed.ids == whole.ids
    assert np.array_equal(streamed.fingerprints, whole.fingerprints)
    assert streamed.n_features.tolist() == whole.n_features.tolist()
    assert whole.stamps is not None and streamed.stamps is not None
    assert np.array_equal(streamed.stamps, whole.stamps)
    assert sorted(s.reason for s in streamed.skipped) == sorted(s.reason for s in whole.skipped)
    assert "not a regular file" in {s.reason for s in streamed.skipped}
    assert all(batch.weights is None for batch in batches)


def test_streaming_refuses_tfidf_and_handles_no_files(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="tfidf weights need the whole corpus"):
        next(iter_fingerprints([str(tmp_path)], Settings(weighting=Weighting.TFIDF)))
    (only,) = list(iter_fingerprints([str(tmp_path)]))
    assert len(only) == 0 and only.fingerprints.shape == (0, 1)


def test_the_hamming_gate_only_skips_hopeless_candidates(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(300)]
    texts: list[str] = []
    for doc in range(60):
        base = rng.choice(words, size=80)
        if doc % 3 == 0 and texts:
            base = np.array(texts[-1].split())
            base[rng.integers(0, base.size, 4)] = "edit"
        texts.append(" ".join(base))
    docs = corpus_from_texts(texts)
    gated = dedupe(docs, DedupeConfig(blocks=16, threshold=0.8))
    full = dedupe(docs, DedupeConfig(blocks=16, threshold=0.8, hamming_gate=False))
    assert gated.pairs.pairs.tolist() == full.pairs.pairs.tolist()
    assert gated.candidates == full.candidates and full.gated_out == 0
    assert gated.gated_out > 0


def test_the_wide_sketch_gate_only_skips_hopeless_candidates() -> None:
    # Blocks of one bit make every pair a candidate, and a small vocabulary makes unrelated
    # documents alike enough for the fingerprints' gate to pass far more than 16 pairs per
    # document: the 256-bit sketch must then keep every pair the full check keeps.
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(100)]
    texts: list[str] = []
    for doc in range(150):
        base = rng.choice(words, size=60)
        if doc % 2 and texts:
            base = np.array(texts[-1].split())
            base[rng.integers(0, base.size, 3)] = "edit"
        texts.append(" ".join(base))
    docs = corpus_from_texts(texts, Settings(weighting=Weighting.TFIDF))
    with mock.patch.object(cosines_module, "sketch", wraps=sketch) as spy:
        gated = dedupe(docs, DedupeConfig(blocks=64, threshold=0.85))
    full = dedupe(docs, DedupeConfig(blocks=64, threshold=0.85, hamming_gate=False))
    assert spy.call_count == 1 and gated.candidates == full.candidates == 150 * 149 // 2
    assert gated.pairs.pairs.tolist() == full.pairs.pairs.tolist() and len(full.pairs) == 75


def test_one_settings_value_makes_a_corpus_and_checks_its_width_once(tmp_path: Path) -> None:
    """The corpus constructors take one Settings; it refuses a bad width or seed when it is
    made, and the constructors refuse settings of the other kind of input."""
    wide = corpus_from_texts(["a cat sat", "a cat sat down"], Settings(bits=128, seed=7))
    assert wide.settings == Settings(bits=128, seed=7)
    assert wide.fingerprints.shape == (2, 2)
    with pytest.raises(ParameterError, match="bits"):
        Settings(bits=7)
    with pytest.raises(ParameterError, match="seed"):
        Settings(seed=-1)
    with pytest.raises(ParameterError, match="tokenizer"):
        corpus_from_texts(["a cat"], Settings.of_vectors())
    source = tmp_path / "v.jsonl"
    source.write_text('{"id": "a", "features": {"x": 1}}\n')
    with pytest.raises(ParameterError, match="of_vectors"):
        corpus_from_vectors(str(source), Settings())
    assert corpus_from_vectors(str(source), Settings.of_vectors(bits=32)).settings.bits == 32


def test_batches_are_cut_by_bytes_and_give_the_same_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number, words in enumerate([10, 500, 30, 30, 700, 5, 40]):
        text = " ".join(f"w{number}x{i % 97}" for i in range(words))
        (tmp_path / f"{number}.txt").write_text(text)
    files = sorted(str(path) for path in tmp_path.iterdir())
    size = {path: os.path.getsize(path) for path in files}
    limit = 2_000
    cut = batches_of(files, 3, limit)
    assert [path for batch in cut for path in batch] == files and len(cut) >= 4
    for batch in cut:
        assert len(batch) <= 3 and (len(batch) == 1 or sum(size[path] for path in batch) <= limit)
    # Where a stream of fingerprints is cut changes none of them.
    monkeypatch.setattr(batches_module, "MAX_BATCH_BYTES", limit)
    small = concatenate(iter_fingerprints([str(tmp_path)], batch_files=3))
    monkeypatch.setattr(batches_module, "MAX_BATCH_BYTES", 1 << 40)
    whole = concatenate(iter_fingerprints([str(tmp_path)]))
    assert small.ids == whole.ids
    assert np.array_equal(small.fingerprints, whole.fingerprints)
    assert np.array_equal(small.n_features, whole.n_features)


def _square(number: int, marker: str = "", parent: int = 0) -> tuple[int, int]:
    """``number`` squared, and who squared it. With a ``marker`` file: a worker leaves it, and
    this process (``parent``) takes 50 ms a number until a worker has left it, so that a
    worker surely starts before the work is done, and the test takes no longer than that."""
    if marker and os.getpid() != parent:
        Path(marker).touch()
    elif marker and not os.path.exists(marker):
        time.sleep(0.05)
    return number * number, os.getpid()


def test_workers_start_for_work_that_outlasts_their_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Work that ends before a worker could pay for its start is done here: a stream until it
    has lasted a while, a sequence while its pace says little is left. Work known to be long
    starts a worker at once, and hands it nothing while it starts; work that lasts is shared
    with it. Results in order each time."""
    quick = [(n,) for n in range(12)]
    alone = [(n * n, os.getpid()) for n in range(12)]
    monkeypatch.setattr(parallel, "WORKERS_AFTER", 60.0)
    monkeypatch.setattr(parallel, "WORKERS_PAY", 1.0)
    with mock.patch.object(parallel, "_worker_pool", side_effect=AssertionError("a pool")):
        assert list(parallel.ordered_map(_square, iter(quick), 2)) == alone
        assert list(parallel.ordered_map(_square, quick, 2, work=0.9)) == alone
    # A worker starts, but nothing waits for it: it is still starting when all is done.
    assert list(parallel.ordered_map(_square, quick, 2, work=1.1)) == alone
    lasting = [(n, str(tmp_path / "worked"), os.getpid()) for n in range(400)]
    # 50 ms a part, 400 parts: the pace says 20 s are left, a worker is worth it.
    shared = list(parallel.ordered_map(_square, lasting, 2))
    assert [square for square, _ in shared] == [n * n for n in range(400)]
    assert {pid for _, pid in shared} != {os.getpid()}  # a worker took some


def test_the_work_of_a_listing_is_told_to_the_mapper(tmp_path: Path) -> None:
    """The mapper hears how long the files would take one process, from their number and
    bytes: the local engine starts its workers at once for a long run, none for a short one."""
    for n in range(3):
        (tmp_path / f"{n}.txt").write_text("word " * 1000 * (n + 1))
    told: list[float | None] = []

    def mapper(function: Any, arguments: Any, jobs: int, /, *, work: float | None = None) -> Any:
        told.append(work)
        return batches_module.in_process(function, arguments, jobs)

    docs = concatenate(iter_fingerprints([str(tmp_path)], jobs=2, mapper=mapper))
    assert len(docs) == 3
    (work,) = told
    assert work == pytest.approx(batches_module.expected_work([5000, 10000, 15000]))
    assert work is not None and work > 3 * batches_module.SECONDS_PER_FILE
