"""Fuzz targets (`make fuzz`, not part of `make test`): arbitrary input must end in a result or
in a SimhashError (a one-line message and an exit code), never in any other exception.

Run longer with FUZZ_EXAMPLES=100000 make fuzz.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simhash_cli import SimhashError, tokenize
from simhash_cli.app.records import corpus_from_fingerprints, corpus_from_vectors
from simhash_cli.core.corpus import corpus_from_texts
from simhash_cli.core.tokenizer import word_tokens

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "2000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# JSON-ish lines: real records, their broken pieces, and plain noise.
json_fragments = st.sampled_from(
    [
        '{"id": 1, "features": {"a": 1}}',
        '{"id": "x", "features": {}}',
        '{"features": {"a": -2.5, "b": 1e308}}',
        '{"id": true, "features": {"a": 1}}',
        '{"id": 1, "features": []}',
        '{"id": 1, "features": {"a": "1"}}',
        '{"id": 1, "features": {"a": NaN}}',
        '{"id": 1, "features": {"a": 1e999}}',
        '{"id": 1, "features": {"\\ud800": 1}}',
        "[1, 2, 3]",
        "null",
        "{",
        "}",
        '"',
        "\ufeff",
        "\r",
        "",
    ]
)
lines = st.lists(st.one_of(json_fragments, st.text(max_size=40)), max_size=8)


@FUZZ
@given(lines, st.booleans(), st.binary(max_size=16))
def test_vector_reader_only_raises_simhash_errors(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str], skip: bool, tail: bytes
) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz.jsonl"
    path.write_bytes("\n".join(parts).encode("utf-8", "surrogatepass") + tail)
    # Only the documented error type may escape: anything else fails the target.
    with contextlib.suppress(SimhashError):
        corpus_from_vectors(str(path), skip_bad_lines=skip)
    with contextlib.suppress(SimhashError):
        corpus_from_fingerprints(str(path), skip_bad_lines=skip)


@FUZZ
@given(st.lists(st.text(), max_size=5))
def test_bulk_tokenizer_equals_the_reference_tokenizer(texts: list[str]) -> None:
    tokens = word_tokens(texts)
    found: list[list[str]] = [[] for _ in texts]
    for doc, start, stop in zip(tokens.doc, tokens.start, tokens.stop, strict=True):
        found[int(doc)].append(tokens.text[int(start) : int(stop)])
    assert found == [tokenize(text) for text in texts]
    words: dict[tuple[int, int], str] = {}
    for key, check, start, stop in zip(
        tokens.key.tolist(), tokens.check.tolist(), tokens.start, tokens.stop, strict=True
    ):
        word = tokens.text[int(start) : int(stop)]
        assert words.setdefault((key, check), word) == word


@FUZZ
@given(st.lists(st.text(), min_size=1, max_size=5))
def test_any_text_fingerprints_or_is_reported_empty(texts: list[str]) -> None:
    skipped: list[object] = []
    docs = corpus_from_texts(texts, on_event=skipped.append)
    assert len(docs) + len(skipped) == len(texts)
