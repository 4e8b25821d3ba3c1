"""``dedupe --texts|--vectors FILE --memory fingerprints``: the records held as fingerprints
(and MinHash signatures), read again for the pilot, the planner's sample and the documents of
candidate pairs. The answer is the one of a run that held every vector, whatever the scheme, the
verification, the number of processes or the shape of the input: the same pairs, clusters,
summary and dataset, but for the hint about chance pairs, which needs every vector."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from simhash_cli.app.dedupe import request as dedupe_request
from simhash_cli.app.from_fingerprints import placed_vectors
from simhash_cli.cli import main
from simhash_cli.core.corpus import corpus_from_texts
from simhash_cli.errors import ExitCode, InputError


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def answer(result: Result) -> dict[str, object]:
    """The JSON of a dedupe, without the hint that needs every vector."""
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert isinstance(document, dict)
    document["summary"].pop("chance_pairs")
    return document


def prose(n_families: int = 150, seed: int = 2) -> list[dict[str, object]]:
    """Families of near-copies (a word or three edited, a sentence dropped) among unrelated
    documents of a few hundred words from a skewed vocabulary, as prose is."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{k}" for k in range(4_000)]
    weights = 1 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()

    def text(length: int) -> list[str]:
        return [str(word) for word in rng.choice(vocabulary, length, p=weights)]

    records: list[dict[str, object]] = []
    for family in range(n_families):
        base = text(int(rng.integers(80, 300)))
        for copy in range(int(rng.integers(2, 4))):
            words = list(base)
            for _ in range(copy * 2):
                words[int(rng.integers(len(words)))] = f"e{family}x{copy}"
            if copy == 2:
                del words[:10]
            records.append({"text": " ".join(words)})
    records += [{"text": " ".join(text(int(rng.integers(80, 300))))} for _ in range(600)]
    shuffled = [records[i] for i in rng.permutation(len(records))]
    for k, record in enumerate(shuffled):
        if k % 4:
            record["id"] = f"r{k}"  # some named by their place
    return shuffled


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rereading") / "texts.jsonl"
    records = prose()
    lines = [json.dumps(record) + "\n" for record in records]
    lines.insert(17, "{broken\n")
    lines.insert(40, json.dumps({"id": "empty", "text": "..."}) + "\n")
    path.write_text("".join(lines))
    return path


SCHEMES = [[], ["--blocks", "4"], ["--max-distance", "3"], ["--minhash", "12x6"]]
RUNS = [(verify, scheme) for verify in ("exact", "estimate") for scheme in SCHEMES][:-1]
# (MinHash candidates are checked by true cosine only.)


@pytest.mark.parametrize(("verify", "scheme"), RUNS, ids=lambda v: " ".join(v) if v else "auto")
def test_the_answer_is_the_one_of_a_run_holding_every_vector(
    texts: Path, scheme: list[str], verify: str
) -> None:
    common = ["dedupe", "--texts", str(texts), "-f", "json", "--on-error", "skip",
              "--verify", verify, *scheme]  # fmt: skip
    # The planner's pilot too: made in two passes over the records read again.
    held = answer(run(*common, "--memory", "vectors", "-j", "1"))
    assert held["clusters"]
    for jobs in ("1", "2"):
        reread = run(*common, "--memory", "fingerprints", "-j", jobs)
        assert answer(reread) == held
        if verify == "exact":
            assert "records again (those of " in reread.stderr  # candidates, or the pilot's


def test_the_planner_chooses_as_it_would_and_minhash_is_signed_again(texts: Path) -> None:
    common = ["dedupe", "--texts", str(texts), "-f", "json", "--on-error", "skip", "-v"]
    for pilot in ("--pilot", "--no-pilot"):
        done = run(*common, pilot, "--memory", "fingerprints")
        assert done.exit_code == 0, done.output
        assert "again (the planner's sample)" in done.stderr
        assert ("pilot's anchors" in done.stderr) == (pilot == "--pilot")
        scheme = json.loads(done.stdout)["summary"]["scheme"]
        held = json.loads(run(*common, pilot, "--memory", "vectors").stdout)["summary"]["scheme"]
        assert scheme == held  # the planner's choice, as with every vector
    # Priced at the threshold (--no-pilot), the word sets' overlap is unknown: no MinHash.
    assert not str(scheme).startswith("MinHash")


def test_shards_and_vectors_are_read_again_too(tmp_path: Path) -> None:
    records = prose(n_families=60, seed=5)
    (tmp_path / "in").mkdir()
    for k in range(3):
        part = "".join(json.dumps(r) + "\n" for r in records[k::3])
        (tmp_path / "in" / f"part-{k}.jsonl.gz").write_bytes(gzip.compress(part.encode()))
    common = ["dedupe", "--texts", str(tmp_path / "in"), "-f", "json", "-qq"]
    assert answer(run(*common, "--memory", "fingerprints")) == answer(run(*common))
    vectors = tmp_path / "v.jsonl"
    vectors.write_text("".join(
        json.dumps({"id": k, "features": {w: 1 + len(w) % 3 for w in str(r["text"]).split()}})
        + "\n" for k, r in enumerate(records)
    ))  # fmt: skip
    common = ["dedupe", "--vectors", str(vectors), "-f", "json", "-qq"]
    held = answer(run(*common, "--memory", "vectors"))
    assert held["clusters"]
    assert answer(run(*common, "--memory", "fingerprints")) == held


def test_the_dataset_written_is_the_same(texts: Path, tmp_path: Path) -> None:
    written = []
    for memory in ("vectors", "fingerprints"):
        kept, dropped = tmp_path / f"k-{memory}.jsonl", tmp_path / f"d-{memory}.jsonl"
        outputs = ["--kept", str(kept), "--dropped", str(dropped), "--keep", "longest"]
        done = run("dedupe", "--texts", str(texts), "--on-error", "skip", "--memory", memory,
                   "--no-pilot", *outputs, "-qq")  # fmt: skip
        assert done.exit_code == 0, done.output
        written.append((kept.read_bytes(), dropped.read_bytes()))
    assert written[0] == written[1]


def test_auto_holds_fingerprints_when_vectors_would_fill_half_the_memory(
    texts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dedupe_request, "physical_memory", lambda: 3 * texts.stat().st_size)
    done = run("dedupe", "--texts", str(texts), "-f", "json", "--on-error", "skip")
    assert done.exit_code == 0 and "records again" in done.stderr
    monkeypatch.setattr(dedupe_request, "physical_memory", lambda: 5 * texts.stat().st_size)
    done = run("dedupe", "--texts", str(texts), "-f", "json", "--on-error", "skip")
    assert done.exit_code == 0 and "records again" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--texts", "-"],
        ["--texts", "{f}", "--weighting", "tfidf"],
        ["--texts", "{f}", "--engine", "dask"],
        ["--texts", "{f}", "--audit"],
        ["{f}"],
    ],
)
def test_what_cannot_be_read_again_is_refused(texts: Path, args: list[str]) -> None:
    named = [arg.replace("{f}", str(texts)) for arg in args]
    done = run("dedupe", *named, "--memory", "fingerprints")
    assert done.exit_code == ExitCode.USAGE, done.output
    assert "--memory fingerprints reads the records again" in done.stderr


def test_a_document_that_changed_is_refused() -> None:
    docs = corpus_from_texts(["a b c", "d e f"], ids=["x", "y"])
    changed = corpus_from_texts(["a b z"], ids=["x"])
    with pytest.raises(InputError, match="changed while it was deduplicated"):
        placed_vectors(docs, np.array([0]), changed)


def test_licences_alike_in_counts_not_in_words_are_found_as_with_every_vector(
    tmp_path: Path,
) -> None:
    """Texts sharing a long common part but words of their own (licences with one name
    changed): the pilot, made in pieces, shows the planner that their word sets overlap too
    little for MinHash, as when every vector is held (priced at the threshold instead, the
    planner chose MinHash and found a quarter of the pairs while saying it found them all)."""
    rng = np.random.default_rng(4)
    common = " ".join(f"c{k}" for k in rng.integers(0, 300, 800))
    records = [
        {"id": f"l{k}", "text": common + " " + " ".join(f"n{k}x{j}" for j in range(120))}
        for k in range(40)
    ] + [{"id": f"u{k}", "text": " ".join(f"u{k}x{j}" for j in range(300))} for k in range(40)]
    path = tmp_path / "licences.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    held = run("dedupe", "--texts", str(path), "-f", "json", "--memory", "vectors")
    reread = run("dedupe", "--texts", str(path), "-f", "json", "--memory", "fingerprints")
    assert held.exit_code == reread.exit_code == 0, reread.output
    assert reread.stdout == held.stdout  # every byte, the hint about chance pairs included
    assert len(json.loads(held.stdout)["pairs"]) == 40 * 39 // 2


def test_a_boilerplate_pages_copies_are_counted_as_the_run_pairs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pilot made in pieces counts the pairs of 150 copies of one page as the run pairs
    them (each with the first: 149), as the pilot of a run holding every vector does; it
    held all 11,175 (20,000 copies took 152 s and 4.8 GB)."""
    from simhash_cli.app.dedupe import rereading
    from simhash_cli.core.search.pilot import Pilot

    made: list[Pilot | str] = []
    pilot_in_pieces = rereading.pilot_in_pieces  # type: ignore[attr-defined]

    def kept(*args: Any, **kwargs: Any) -> Pilot | str:
        made.append(pilot_in_pieces(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(rereading, "pilot_in_pieces", kept)
    source = tmp_path / "boiler.jsonl"
    page = "cookie banner accept all cookies to continue reading this site"
    lines = [{"id": f"b{i}", "text": page} for i in range(150)]
    lines += [{"id": f"a{n}", "text": f"article {n} on its subject {n} {n * 7}"} for n in range(30)]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    whole = run("dedupe", "--texts", str(source), "-f", "json")
    pieces = run("dedupe", "--texts", str(source), "--memory", "fingerprints", "-f", "json")
    assert whole.exit_code == pieces.exit_code == ExitCode.OK, pieces.stderr
    assert whole.stdout == pieces.stdout
    (pilot,) = made
    assert isinstance(pilot, Pilot) and len(pilot.pairs) == 149
