"""``dedupe --texts|--vectors FILE --memory fingerprints``: the records held as fingerprints
(and MinHash signatures), read again for the planner's sample and the documents of candidate
pairs. The answer is the one of a run that held every vector, whatever the scheme, the
verification, the number of processes or the shape of the input: the same pairs, clusters,
summary and dataset, but for the hint about chance pairs, which needs every vector."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from simhash_cli.app.dedupe import request as dedupe_request
from simhash_cli.app.dedupe.rereading import placed_vectors
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
    # A scheme chosen without every vector is priced at the threshold (no pilot).
    unpiloted = [] if scheme else ["--no-pilot"]
    held = answer(run(*common, *unpiloted, "--memory", "vectors", "-j", "1"))
    assert held["clusters"]
    for jobs in ("1", "2"):
        reread = run(*common, "--memory", "fingerprints", "-j", jobs)
        assert answer(reread) == held
        if verify == "exact":
            assert "again (those of candidate pairs" in reread.stderr


def test_the_planner_chooses_as_it_would_and_minhash_is_signed_again(texts: Path) -> None:
    done = run("dedupe", "--texts", str(texts), "-f", "json", "--on-error", "skip",
               "--memory", "fingerprints")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "again (the planner's sample)" in done.stderr
    scheme = json.loads(done.stdout)["summary"]["scheme"]
    assert str(scheme).startswith("MinHash")  # the planner's choice on prose, as with vectors


def test_shards_and_vectors_are_read_again_too(tmp_path: Path) -> None:
    records = prose(n_families=60, seed=5)
    (tmp_path / "in").mkdir()
    for k in range(3):
        part = "".join(json.dumps(r) + "\n" for r in records[k::3])
        (tmp_path / "in" / f"part-{k}.jsonl.gz").write_bytes(gzip.compress(part.encode()))
    common = ["dedupe", "--texts", str(tmp_path / "in"), "-f", "json", "-qq"]
    assert answer(run(*common, "--memory", "fingerprints")) == answer(run(*common, "--no-pilot"))
    vectors = tmp_path / "v.jsonl"
    vectors.write_text("".join(
        json.dumps({"id": k, "features": {w: 1 + len(w) % 3 for w in str(r["text"]).split()}})
        + "\n" for k, r in enumerate(records)
    ))  # fmt: skip
    common = ["dedupe", "--vectors", str(vectors), "-f", "json", "-qq"]
    held = answer(run(*common, "--memory", "vectors", "--no-pilot"))
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
