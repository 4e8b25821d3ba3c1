"""``dedupe --against REF``: decontamination. Exactly the documents within the threshold of a
reference document are flagged (brute force over every pair says which), on both engines and
by either verification; with ``--kept``/``--dropped`` those are dropped, each naming the
reference record it matches best, and the reference's own records are never written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simhash_cli.cli import main
from simhash_cli.core.against import against
from simhash_cli.core.config import DedupeConfig
from simhash_cli.core.corpus import Corpus, corpus_from_texts
from simhash_cli.core.sketch.fingerprint import estimate_cosine_rows, hamming_rows
from simhash_cli.core.verify.cosines import THRESHOLD_TOLERANCE, Verify, cosine_pairs
from simhash_cli.errors import ExitCode

from conftest import SAMPLE
from terminal import on_a_terminal, screen_of

WORDS = [f"w{k}" for k in range(40)]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def brute_force(
    texts: list[str], refs: list[str], threshold: float, verify: Verify
) -> dict[int, float]:
    """Each document at or above the threshold of some reference text, with its best value."""
    both = corpus_from_texts(texts + refs)
    n, m = len(texts), len(refs)
    pairs = np.array([(i, n + j) for i in range(n) for j in range(m)], dtype=np.int64)
    if verify is Verify.EXACT:
        assert both.weights is not None
        value = cosine_pairs(both.weights, pairs)
    else:
        fps = both.fingerprints
        value = estimate_cosine_rows(hamming_rows(fps[pairs[:, 0]], fps[pairs[:, 1]]), 64)
    best = value.reshape(n, m).max(axis=1)
    # At the threshold within the tolerance the rest of the tool allows (two copies must not
    # be lost because one sum came out as 0.9999999999999998).
    return {i: float(best[i]) for i in range(n) if best[i] >= threshold - THRESHOLD_TOLERANCE}


def texts_of(seed: int, n: int, m: int) -> tuple[list[str], list[str]]:
    """``n`` documents and ``m`` reference texts over few words: some documents are copies of
    a reference text with an edit or two, the rest are random, so cosines spread widely."""
    rng = np.random.default_rng(seed)
    refs = [" ".join(rng.choice(WORDS, int(rng.integers(5, 30)))) for _ in range(m)]
    texts = []
    for _ in range(n):
        if refs and rng.random() < 0.4:
            words = refs[int(rng.integers(m))].split()
            for _ in range(int(rng.integers(0, 4))):
                words[int(rng.integers(len(words)))] = str(rng.choice(WORDS))
            texts.append(" ".join(words))
        else:
            texts.append(" ".join(rng.choice(WORDS, int(rng.integers(3, 30)))))
    return texts, refs


def corpora(texts: list[str], refs: list[str]) -> tuple[Corpus, Corpus]:
    return (
        corpus_from_texts(texts, ids=[f"d{k}" for k in range(len(texts))]),
        corpus_from_texts(refs, ids=[f"r{k}" for k in range(len(refs))]),
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    m=st.integers(1, 15),
    threshold=st.floats(-0.5, 1.0),
    verify=st.sampled_from([Verify.EXACT, Verify.ESTIMATE]),
)
# A copy of a reference text at threshold 1, whose cosine sums to 0.9999999999999999 in one
# order of its columns and 1.0 in another: flagged either way.
@example(seed=11, n=7, m=1, threshold=1.0, verify=Verify.EXACT)
def test_exactly_the_documents_within_the_threshold_are_flagged(
    seed: int, n: int, m: int, threshold: float, verify: Verify
) -> None:
    texts, refs = texts_of(seed, n, m)
    docs, reference = corpora(texts, refs)
    result = against(docs, reference, DedupeConfig(threshold=threshold, verify=verify))
    want = brute_force(texts, refs, threshold, verify)
    assert result.scheme.kind == "every" and result.candidates == n * m
    assert set(result.flagged.tolist()) == set(want)
    for row in result.flagged.tolist():
        assert result.cosine[row] == pytest.approx(want[row], abs=1e-12)
    # Every flagged pair reaches the threshold, and is one of a document and a reference.
    value = result.pairs.cosine if verify is Verify.EXACT else result.pairs.estimated_cosine
    assert np.all(value >= threshold - THRESHOLD_TOLERANCE)
    assert np.all(result.pairs.pairs[:, 0] < n) and np.all(result.pairs.pairs[:, 1] < m)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), blocks=st.sampled_from([2, 4, 8, 16]))
def test_blocks_find_a_part_of_them_and_every_copy(seed: int, blocks: int) -> None:
    texts, refs = texts_of(seed, 40, 10)
    texts += refs[:3]  # copies: their fingerprints share every block
    docs, reference = corpora(texts, refs)
    config = DedupeConfig(threshold=0.8, blocks=blocks)
    result = against(docs, reference, config, every_pair=0)
    assert result.scheme.kind == "blocks" and result.scheme.blocks == blocks
    want = brute_force(texts, refs, 0.8, Verify.EXACT)
    assert set(result.flagged.tolist()) <= set(want)
    assert {40, 41, 42} <= set(result.flagged.tolist())


def write_texts(path: Path, texts: list[str], prefix: str) -> None:
    path.write_text("".join(json.dumps({"id": f"{prefix}{k}", "text": t}) + "\n"
                            for k, t in enumerate(texts)))  # fmt: skip


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_the_command_flags_and_drops_exactly_those_on_both_engines(
    tmp_path: Path, engine: str
) -> None:
    texts, refs = texts_of(11, 300, 40)
    source, reference = tmp_path / "train.jsonl", tmp_path / "eval.jsonl"
    write_texts(source, texts, "d")
    write_texts(reference, refs, "r")
    before = reference.read_bytes()
    kept, dropped = tmp_path / "kept.jsonl", tmp_path / "dropped.jsonl"
    extra = ["--workers", "1"] if engine == "dask" else []
    done = run("dedupe", "--texts", str(source), "--against", str(reference), "--threshold",
               "0.7", "--kept", str(kept), "--dropped", str(dropped), "-f", "json",
               "--engine", engine, *extra)  # fmt: skip
    assert done.exit_code == 0, done.output
    want = brute_force(texts, refs, 0.7, Verify.EXACT)
    assert 30 < len(want) < 270
    document = json.loads(done.stdout)
    assert {r["id"] for r in document["matched"]} == {f"d{i}" for i in want}
    assert document["summary"]["flagged_documents"] == len(want)
    lines = source.read_text().splitlines(keepends=True)
    assert kept.read_text().splitlines(keepends=True) == [
        line for k, line in enumerate(lines) if k not in want
    ]
    both = corpus_from_texts(texts + refs)
    assert both.weights is not None
    for line in dropped.read_text().splitlines():
        record = json.loads(line)
        row, match = int(record["id"][1:]), int(record["simhash"]["duplicate_of"][1:])
        assert record["simhash"]["cluster"] is None
        cosine = cosine_pairs(both.weights, np.array([[row, len(texts) + match]]))[0]
        assert cosine == pytest.approx(want[row], abs=1e-9)  # the best match
    assert reference.read_bytes() == before
    metadata = json.loads((tmp_path / "kept.jsonl.simhash.json").read_text())
    assert metadata["against"] == str(reference)
    assert metadata["counts"]["dropped"] == len(want)


def test_files_against_files_and_against_an_index(tmp_path: Path) -> None:
    sample = SAMPLE
    ref = tmp_path / "ref"
    ref.mkdir()
    for name in ("shipping-policy.txt", "volcano-report.txt"):
        (ref / name).write_bytes((sample / name).read_bytes())
    done = run("dedupe", str(sample), "--against", str(ref), "-f", "json", "--check")
    assert done.exit_code == ExitCode.DUPLICATES_FOUND, done.output
    flagged = {Path(r["id"]).name for r in json.loads(done.stdout)["matched"]}
    assert flagged == {"shipping-policy.txt", "shipping-policy-copy.txt",
                       "shipping-policy-revised.txt", "volcano-report.txt",
                       "volcano-report-wire.txt"}  # fmt: skip
    db = tmp_path / "ref.db"
    assert run("index", "add", str(db), str(ref), "-q").exit_code == 0
    by_index = run("dedupe", str(sample), "--against", str(db), "--verify", "estimate",
                   "-f", "jsonl")  # fmt: skip
    by_files = run("dedupe", str(sample), "--against", str(ref), "--verify", "estimate",
                   "-f", "jsonl")  # fmt: skip
    assert by_index.exit_code == by_files.exit_code == 0, by_index.output
    strip = [
        {**json.loads(line), "b": Path(json.loads(line)["b"]).name}
        for line in by_index.stdout.splitlines()
    ]
    assert strip == [
        {**json.loads(line), "b": Path(json.loads(line)["b"]).name}
        for line in by_files.stdout.splitlines()
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--plan", "{tmp}/p.json"], "without --plan"),
        (["--report", "{tmp}/r.html"], "without --report"),
        (["--keep-by", "q:max", "--kept", "{tmp}/k.jsonl"], "without --keep-by"),
        (["--minhash", "4x4"], "without --minhash"),
        (["--weighting", "tfidf"], "tfidf"),
        (["-f", "groups"], "not clusters"),
        (["--kept", "{ref}"], "is also an input"),
        (["-o", "{ref}"], "is also an input"),
    ],
)
def test_what_does_not_go_with_against_is_refused(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    source, reference = tmp_path / "in.jsonl", tmp_path / "ref.jsonl"
    write_texts(source, ["one two three"], "d")
    write_texts(reference, ["one two three"], "r")
    before = sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir())
    named = [a.replace("{tmp}", str(tmp_path)).replace("{ref}", str(reference)) for a in extra]
    done = run("dedupe", "--texts", str(source), "--against", str(reference), *named)
    assert done.exit_code == ExitCode.USAGE, done.output
    assert message in done.stderr and "Traceback" not in done.output
    assert sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir()) == before


def test_an_index_is_compared_by_estimate_only(tmp_path: Path) -> None:
    db = tmp_path / "ref.db"
    (tmp_path / "a.txt").write_text("some words of a text")
    assert run("index", "add", str(db), str(tmp_path / "a.txt"), "-q").exit_code == 0
    done = run("dedupe", str(tmp_path / "a.txt"), "--against", str(db), "-f", "jsonl")
    assert done.exit_code == ExitCode.OK, done.stderr  # estimates chosen, not asked for
    (pair,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert pair["cosine"] is None and pair["estimated_cosine"] == 1.0
    assert "within estimate cosine 0.9" in done.stderr
    exact = run("dedupe", str(tmp_path / "a.txt"), "--against", str(db), "--verify", "exact")
    assert exact.exit_code == ExitCode.USAGE and "leave out --verify exact" in exact.stderr


def test_an_index_made_with_other_settings_reads_the_documents_with_its_own(
    tmp_path: Path,
) -> None:
    """As ``index query`` does: the documents are read with the index's settings, and a
    setting named that is not the index's is refused before anything is read or written."""
    ref = tmp_path / "ref"
    ref.mkdir()
    for name in ("shipping-policy.txt", "volcano-report.txt"):
        (ref / name).write_bytes((SAMPLE / name).read_bytes())
    db = tmp_path / "ref.db"
    made = ["--bits", "128", "--seed", "7", "--ngram", "2"]
    assert run("index", "add", str(db), str(ref), *made, "-q").exit_code == 0
    estimate = ["--verify", "estimate", "-f", "jsonl"]
    by_index = run("dedupe", str(SAMPLE), "--against", str(db), *estimate)
    by_files = run("dedupe", str(SAMPLE), "--against", str(ref), *made, *estimate)
    assert by_index.exit_code == by_files.exit_code == 0, by_index.output
    assert "settings of the index: bits=128 seed=7" in by_index.stderr
    pairs = [json.loads(line) for line in by_index.stdout.splitlines()]
    assert len(pairs) >= 5 and all(pair["hamming"] < 128 for pair in pairs)
    assert [(p["a"], Path(p["b"]).name, p["hamming"]) for p in pairs] == [
        (p["a"], Path(p["b"]).name, p["hamming"])
        for p in map(json.loads, by_files.stdout.splitlines())
    ]
    before = sorted(p.name for p in tmp_path.iterdir())
    for named in (["--seed", "3"], ["--bits", "64"]):
        out = tmp_path / "out.jsonl"
        done = run("dedupe", str(SAMPLE), "--against", str(db), *estimate, *named, "-o", str(out))
        assert done.exit_code == ExitCode.ERROR, done.output
        assert "was made with bits=128 seed=7" in done.stderr and "Traceback" not in done.output
        assert not out.exists()
    texts = tmp_path / "v.jsonl"
    texts.write_text(json.dumps({"id": "v", "features": {"a": 1.0}}) + "\n")
    done = run("dedupe", "--vectors", str(texts), "--against", str(db), *estimate)
    assert done.exit_code == ExitCode.ERROR and "do not compare" in done.stderr, done.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "v.jsonl") == before


def test_ref_has_fields_of_its_own(tmp_path: Path) -> None:
    source, reference = tmp_path / "train.jsonl", tmp_path / "eval.jsonl"
    rows = [{"m": {"uid": "a"}, "body": "the same few words here"},
            {"m": {"uid": "b"}, "body": "other words entirely"}]  # fmt: skip
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    reference.write_text(json.dumps({"qid": 7, "question": "the same few words here"}) + "\n")
    fields = ["--text-field", "body", "--id-field", "m.uid"]
    own = ["--against-text-field", "question", "--against-id-field", "qid"]
    done = run("dedupe", "--texts", str(source), *fields, "--against", str(reference), *own,
               "-f", "jsonl")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [(p["a"], p["b"]) for p in map(json.loads, done.stdout.splitlines())] == [("a", 7)]
    as_input = run("dedupe", "--texts", str(source), *fields, "--against", str(reference))
    assert as_input.exit_code == ExitCode.ERROR  # REF read with the input's fields has none
    assert "eval.jsonl:1: no text at body (--text-field)" in as_input.output
    for_files = run("dedupe", str(source), "--against", str(reference),
                    "--against-id-field", "qid")  # fmt: skip
    assert for_files.exit_code == ExitCode.USAGE and "files have none" in for_files.stderr


def test_on_a_terminal_the_pairs_go_to_a_file_and_a_table_to_the_screen(tmp_path: Path) -> None:
    """The installed command, stderr on a terminal and stdout to a file: the file holds JSON
    Lines (not a table drawn for the terminal), the screen the summary; with stdout on the
    terminal, the table of the flagged documents and their matches."""
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "wire.txt").write_bytes((SAMPLE / "volcano-report-wire.txt").read_bytes())
    out = tmp_path / "out.jsonl"
    with out.open("wb") as handle:
        code, shown = on_a_terminal(["dedupe", str(SAMPLE), "--against", str(ref)], handle.fileno())
    assert code == ExitCode.OK
    pairs = [json.loads(line) for line in out.read_text().splitlines()]
    assert {Path(p["a"]).name for p in pairs} == {"volcano-report.txt", "volcano-report-wire.txt"}
    screen = " ".join(screen_of(shown, 100))
    assert "compared 8 documents with 1 reference document, every pair (8)" in screen
    code, shown = on_a_terminal(["dedupe", str(SAMPLE), "--against", str(ref)], None)
    screen = " ".join(screen_of(shown, 100))
    assert code == ExitCode.OK and "2 documents within cosine 0.9 of a reference" in screen
    assert "volcano-report-wire.txt" in screen and "nearest reference document" in screen


# ---------------------------------------------------------------- choosing the scheme


def _alike(n: int, m: int) -> tuple[Corpus, Corpus]:
    """Texts that share most of their words (a template and three words of their own): at
    cosine 0.9 the fewest blocks that reach the recall are 16 of 4 bits, and they pair nearly
    every document with every reference text."""
    rng = np.random.default_rng(3)
    base = "dear customer thank you for contacting support we have your request regards"
    own = [f"x{k}" for k in range(300)]

    def text() -> str:
        return f"{base} {' '.join(rng.choice(own, 3, replace=False))}"

    return corpora([text() for _ in range(n)], [text() for _ in range(m)])


def test_blocks_that_would_make_more_candidates_than_pairs_give_way_to_every_pair() -> None:
    """2,000 records against 200,000 references built and sorted candidates for 100 s before
    the budget refused them; every pair, compared by one product, took 6 s on 20,000."""
    docs, reference = _alike(60, 400)
    auto = against(docs, reference, DedupeConfig(threshold=0.9), every_pair=0)
    assert auto.scheme.kind == "every" and auto.candidates == 60 * 400
    assert auto.scheme.why.startswith("16 blocks of 4 bits would make up to ")
    assert auto.scheme.why.endswith("candidates, which costs more")
    forced = against(docs, reference, DedupeConfig(threshold=0.9, blocks=16), every_pair=0)
    assert forced.scheme.kind == "blocks"
    assert np.array_equal(forced.pairs.pairs, auto.pairs.pairs)
    assert np.array_equal(forced.pairs.cosine, auto.pairs.cosine)


def test_blocks_past_the_budget_are_counted_and_refused_before_any_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from simhash_cli.core import against as against_module
    from simhash_cli.errors import CandidateBudgetError

    docs, reference = _alike(60, 400)
    made = against_module._candidates

    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("candidates were made")

    monkeypatch.setattr(against_module, "_candidates", never)
    given = DedupeConfig(threshold=0.9, blocks=16, max_candidates=1000)
    with pytest.raises(CandidateBudgetError, match=r"16 blocks of 4 bits would give up to "):
        against(docs, reference, given, every_pair=0)
    # Not asked for, where blocks cost less than every pair but pass the budget: every pair,
    # and why.
    monkeypatch.setattr(against_module, "_candidates", made)
    rng = np.random.default_rng(7)
    many = [f"v{k}" for k in range(5000)]
    docs, reference = corpora(
        *([" ".join(rng.choice(many, 20)) for _ in range(size)] for size in (60, 400))
    )
    cheap = against(docs, reference, DedupeConfig(threshold=0.97), every_pair=0)
    assert cheap.scheme.kind == "blocks" and 0 < cheap.candidates < 60 * 400 // 16
    budget = DedupeConfig(threshold=0.97, max_candidates=cheap.candidates // 2)
    auto = against(docs, reference, budget, every_pair=0)
    assert auto.scheme.kind == "every"
    assert auto.scheme.why.endswith(f"more than the budget ({cheap.candidates // 2:,})")


def test_the_count_of_candidates_is_each_block_shared_by_a_pair() -> None:
    from simhash_cli.core.against import count_candidates
    from simhash_cli.core.search import blocking

    rng = np.random.default_rng(5)
    fa = rng.integers(0, 2**64, (50, 1), dtype=np.uint64) & np.uint64(0x0F0F)
    fr = rng.integers(0, 2**64, (70, 1), dtype=np.uint64) & np.uint64(0x0F0F)
    for blocks in (1, 4, 16):
        expected = 0
        for start, width in blocking.block_bounds(64, blocks):
            a = blocking.bit_slice(fa, start, width)[:, 0]
            r = blocking.bit_slice(fr, start, width)[:, 0]
            expected += int((a[:, None] == r[None, :]).sum())
        assert count_candidates(fa, fr, 64, blocks) == expected
