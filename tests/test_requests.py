"""The requests of dedupe and index dedupe: built from typed parts, each option in the part
that owns it, and a rule between options stated once, in that part, for both commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from simhash_cli.app.dedupe.request import DedupeRequest, dedupe_request
from simhash_cli.app.index.request import IndexDedupeRequest, index_dedupe_request
from simhash_cli.app.keep import Keep
from simhash_cli.app.keep.request import KeepRequest
from simhash_cli.app.search_request import SearchPlace, SearchRequest
from simhash_cli.app.settings import Input, Source
from simhash_cli.cli import main
from simhash_cli.core.verify.cosines import Verify
from simhash_cli.errors import BadValueError, ExitCode, UsageError

from conftest import SAMPLE

FILES = Source(Input.PATHS, (str(SAMPLE),))


def test_each_option_lands_in_the_part_that_owns_it() -> None:
    request = dedupe_request(
        source=FILES,
        blocks=4,
        threshold=0.8,
        keep=Keep.FIRST,
        kept="kept.jsonl",
        annotation_field="fate",
        against="reference/",
        against_id_field="key",
        check_pairs=True,
    )
    assert request.search == SearchRequest(blocks=4, threshold=0.8)
    assert request.keeping == KeepRequest(keep=Keep.FIRST)
    assert (request.dataset_files.kept, request.dataset_files.annotation) == (
        "kept.jsonl",
        "fate",
    )
    assert request.against is not None
    assert (request.against.reference, request.against.id_field) == ("reference/", "key")
    assert request.check_pairs and request.config.blocks == 4
    stored = index_dedupe_request(db="x.db", blocks=4, threshold=0.8, keep=Keep.FIRST)
    assert stored.search == request.search and stored.keeping == request.keeping


def test_an_option_no_part_has_is_refused() -> None:
    with pytest.raises(TypeError):
        dedupe_request(source=FILES, bands=4)
    with pytest.raises(TypeError):
        index_dedupe_request(db="x.db", minhash_rows=4)


def test_the_default_verification_is_the_places() -> None:
    search = SearchRequest()
    assert dedupe_request(source=FILES).config.verify is Verify.EXACT
    prints = Source(Input.FINGERPRINTS, (), "fps.jsonl")
    assert dedupe_request(source=prints).config.verify is Verify.ESTIMATE
    assert IndexDedupeRequest("x.db").config.verify is Verify.ESTIMATE
    assert not IndexDedupeRequest("x.db").exact
    exact = IndexDedupeRequest("x.db", SearchRequest(verify=Verify.EXACT))
    assert exact.exact and exact.config.verify is Verify.EXACT
    assert search.verification(SearchPlace(Input.TEXTS)) is Verify.EXACT


@pytest.mark.parametrize(
    ("search", "error"),
    [
        (SearchRequest(blocks=4, max_distance=3), "blocks and max_distance are two schemes"),
        (SearchRequest(blocks="every", minhash=(4, 2)), "blocks and minhash are two schemes"),
        (SearchRequest(blocks=4, max_distance=3, minhash=(4, 2)), "are three schemes: choose"),
    ],
)
def test_a_rule_of_the_search_is_the_same_on_both_commands(
    search: SearchRequest, error: str
) -> None:
    for request in (DedupeRequest(FILES, search=search), IndexDedupeRequest("x.db", search)):
        with pytest.raises(UsageError, match=error):
            request.check()


def test_every_pair_is_refused_in_the_words_of_where_it_was_asked() -> None:
    every = SearchRequest(blocks="every")
    with pytest.raises(UsageError, match="which an index does not hold"):
        every.check(IndexDedupeRequest.PLACE)
    with pytest.raises(UsageError, match="computes true cosines"):
        every.check(SearchPlace(Input.FINGERPRINTS, fingerprints_only=True))
    with pytest.raises(UsageError, match="computes true cosines"):
        every.check(SearchPlace(Input.PATHS, index=True))
    every.check(SearchPlace(Input.TEXTS, width=64))  # vectors, verified exactly


def test_the_width_is_checked_where_it_is_known_before_reading() -> None:
    with pytest.raises(BadValueError, match="must divide the fingerprint width"):
        SearchRequest(blocks=5).check(SearchPlace(Input.TEXTS, width=64))
    with pytest.raises(BadValueError, match="must be below the fingerprint width"):
        SearchRequest(max_distance=64).check(SearchPlace(Input.TEXTS, width=64))
    SearchRequest(blocks=5).check(IndexDedupeRequest.PLACE)  # the index says its width


@pytest.mark.parametrize("blocks", ["4", "auto"])
def test_index_dedupe_refuses_two_schemes_where_it_took_one(tmp_path: Path, blocks: str) -> None:
    """It ran --blocks 4 --max-distance 3 with one of them, silently (its own check had no
    such rule: dedupe's was its own); --blocks auto named with a distance, as dedupe does."""
    db = str(tmp_path / "x.db")
    assert CliRunner().invoke(main, ["index", "add", "-qq", db, str(SAMPLE)]).exit_code == 0
    both = CliRunner().invoke(
        main, ["index", "dedupe", db, "--blocks", blocks, "--max-distance", "3"]
    )
    assert both.exit_code == ExitCode.USAGE, both.output
    assert "Error: --blocks and --max-distance are two schemes: choose one" in both.stderr


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (  # silently ignored: there was no REF to read them from
            ["--against-text-field", "question", str(SAMPLE)],
            "--against-text-field and --against-id-field name the fields of REF's records: they "
            "go with --against REF",
        ),
        (  # said "leave out --verify estimate", which no one gave
            ["--against", "{db}", "--minhash", "16x4", str(SAMPLE)],
            "--against goes without --minhash: candidates against a reference are every pair",
        ),
        (  # spoke of --audit, which no one gave
            ["--index", "{db}", "--texts", "{texts}"],
            "--index keeps the fingerprints of files: give PATHs, not --texts, --vectors or "
            "--fingerprints",
        ),
    ],
)
def test_a_refusal_names_what_was_given(tmp_path: Path, args: list[str], error: str) -> None:
    db, texts = tmp_path / "x.db", tmp_path / "texts.jsonl"
    texts.write_text('{"id": "a", "text": "a few words"}\n')
    assert CliRunner().invoke(main, ["index", "add", "-qq", str(db), str(SAMPLE)]).exit_code == 0
    given = [arg.format(db=db, texts=texts) for arg in args]
    refused = CliRunner().invoke(main, ["dedupe", *given])
    assert refused.exit_code == ExitCode.USAGE, refused.output
    assert f"Error: {error}" in refused.stderr


def test_index_dedupe_checks_the_schemes_against_the_width_the_index_says(tmp_path: Path) -> None:
    """It said ``blocks must divide bits (64) evenly`` from the search, where dedupe names the
    option (the width is known once the index is open)."""
    db = str(tmp_path / "x.db")
    assert CliRunner().invoke(main, ["index", "add", "-qq", db, str(SAMPLE)]).exit_code == 0
    five = CliRunner().invoke(main, ["index", "dedupe", db, "--blocks", "5"])
    assert five.exit_code == ExitCode.USAGE, five.output
    error = "Error: Invalid value for --blocks: must divide the fingerprint width (64) evenly"
    assert error in five.stderr
