"""Which documents read are compared: those without a token are skipped as empty, and with
``--min-length N`` texts of fewer than N words (characters, for character n-grams) are skipped
as short, reported and counted, the same whichever way the texts were read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.core.corpus import Admission, Settings, corpus_from_texts, from_counts
from simhash_cli.core.events import Skipped
from simhash_cli.core.text.tokenizer import TokenizerConfig
from simhash_cli.core.text.vectorize import Weighting, count_matrix
from simhash_cli.errors import ExitCode

TEXTS = {
    "long-a": "the quick brown fox jumps over the lazy dog near the river bank today",
    "long-b": "the quick brown fox jumps over the lazy dog near the river bank again",
    "two": "hello world",
    "none": "!!!",
    "five": "one two three four five",
    "long-c": "an entirely different sentence about volcanoes and lava flows at night",
}


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


WORDS = TokenizerConfig()


def admitted(
    minimum: int, tokenizer: TokenizerConfig = WORDS, weighting: str = "tf"
) -> tuple[list[str], list[Skipped], np.ndarray]:
    settings = Settings(tokenizer=tokenizer, weighting=Weighting(weighting))
    ids = list(TEXTS)
    counts, features = count_matrix(TEXTS.values(), tokenizer)
    skipped: list[Skipped] = []
    docs = from_counts(
        ids, counts, features, settings, lambda event: None, skipped,
        admission=Admission(min_length=minimum),
    )  # fmt: skip
    return docs.ids, skipped, docs.fingerprints


def test_short_texts_are_skipped_by_their_words_and_empty_ones_stay_empty() -> None:
    ids, skipped, _ = admitted(5)
    assert ids == ["long-a", "long-b", "five", "long-c"]
    assert [(s.id, s.reason) for s in skipped] == [
        ("two", "short (2 words, fewer than 5)"),
        ("none", "empty (no tokens)"),
    ]
    assert [s.kind for s in skipped] == ["short", "empty"]
    # 0 and 1 leave out nothing but the empty.
    for minimum in (0, 1):
        assert [s.id for s in admitted(minimum)[1]] == ["none"]


@pytest.mark.parametrize(
    ("tokenizer", "minimum", "reasons"),
    [
        # 3-word shingles: 5 words make 3 shingles, still 5 words; 2 words make none (empty).
        (TokenizerConfig(ngram=3), 6, {"five": "short (5 words, fewer than 6)", "two": "empty"}),
        # Character 5-grams: "hello world" is 11 characters (7 grams).
        (TokenizerConfig(char_ngrams=5), 12, {"two": "short (11 characters, fewer than 12)"}),
    ],
)
def test_shingles_count_the_words_or_characters_they_span(
    tokenizer: TokenizerConfig, minimum: int, reasons: dict[str, str]
) -> None:
    _, skipped, _ = admitted(minimum, tokenizer)
    found = {s.id: s.reason for s in skipped if s.id != "none"}
    assert {k: v.split(" (")[0] if v.startswith("empty") else v for k, v in found.items()} == (
        reasons
    )


@pytest.mark.parametrize("weighting", ["tf", "tfidf"])
def test_the_rest_are_fingerprinted_as_a_corpus_of_them_alone(weighting: str) -> None:
    """Short texts are no documents of the corpus: tfidf's document frequencies are counted
    over the others, and their fingerprints are those of a corpus read without them."""
    ids, _, fingerprints = admitted(5, weighting=weighting)
    alone = corpus_from_texts(
        [TEXTS[i] for i in ids], Settings(weighting=Weighting(weighting)), ids=ids
    )
    assert np.array_equal(fingerprints, alone.fingerprints)


def _records(path: Path) -> Path:
    path.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in TEXTS.items()))
    return path


def test_every_way_of_reading_leaves_out_the_same_documents(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / f"{name}.txt").write_text(text)
    records = _records(tmp_path / "records.jsonl")
    short = ["fingerprint", "--min-length", "5", "-f", "jsonl"]
    runs = {
        "files": run(*short, str(folder)),
        "files, 2 processes": run(*short, "-j", "2", str(folder)),
        "records": run(*short, "--texts", str(records)),
        "records, standard input": run(*short, "--texts", "-", stdin=records.read_text()),
    }
    seen = {}
    for how, result in runs.items():
        assert result.exit_code == ExitCode.OK, (how, result.stderr)
        assert "(2 skipped: 1 empty, 1 short)" in result.stderr, (how, result.stderr)
        found = [json.loads(line) for line in result.stdout.splitlines()]
        seen[how] = sorted((Path(one["id"]).stem, one["fingerprint"]) for one in found)
    assert [name for name, _ in seen["files"]] == ["five", "long-a", "long-b", "long-c"]
    assert all(found == seen["files"] for found in seen.values())


@pytest.mark.parametrize("kind", ["files", "records"])
def test_dedupe_counts_them_in_the_summary_and_its_json(tmp_path: Path, kind: str) -> None:
    records = _records(tmp_path / "records.jsonl")
    folder = tmp_path / "two"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_text(text)
    source = [str(folder)] if kind == "files" else ["--texts", str(records)]
    result = run("dedupe", "--min-length", "5", *source, "-f", "json")
    assert result.exit_code == ExitCode.OK, result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["skipped_by_reason"] == {"empty": 1, "short": 1}
    assert summary["documents"] == 4
    assert "read 4 documents (2 skipped: 1 empty, 1 short)" in result.stderr.splitlines()
    # A log sums the short ones up (the user asked for them to be left out), -v names each.
    assert (
        "skipped two" not in result.stderr and "skipped " + str(folder / "two") not in result.stderr
    )
    verbose = run("dedupe", "-v", "--min-length", "5", *source, "-f", "json")
    assert "short (2 words, fewer than 5)" in verbose.stderr
    pairs = json.loads(result.stdout)["pairs"]
    assert [sorted(Path(p[k]).name for k in "ab") for p in pairs] == [["long-a", "long-b"]]


def test_a_dataset_passes_short_records_through_as_they_are(tmp_path: Path) -> None:
    records = _records(tmp_path / "records.jsonl")
    kept = tmp_path / "kept.jsonl"
    result = run("dedupe", "--min-length", "5", "--texts", str(records), "--kept", str(kept))
    assert result.exit_code == ExitCode.OK, result.stderr
    lines = result.stderr.splitlines()
    assert "read 4 documents (1 without a word, 1 short, passed through)" in lines
    assert any("(2 of them not compared, passed through)" in line for line in lines)
    ids = [json.loads(line)["id"] for line in kept.read_text().splitlines()]
    assert "two" in ids and "none" in ids


@pytest.mark.parametrize("kind", ["--vectors", "--fingerprints"])
def test_records_that_are_not_text_refuse_it(tmp_path: Path, kind: str) -> None:
    given = tmp_path / "given.jsonl"
    if kind == "--vectors":
        given.write_text('{"id": "a", "features": {"x": 1}}\n')
    else:
        given.write_text(
            run("fingerprint", "-f", "jsonl", "--texts", str(_records(tmp_path / "r.jsonl"))).stdout
        )
    result = run("dedupe", kind, str(given), "--min-length", "3")
    assert result.exit_code == ExitCode.USAGE
    assert "--min-length" in result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr
