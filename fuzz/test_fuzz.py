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
from simhash_cli.core.text.words import word_tokens

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


# A plan: one that dedupe wrote, then mangled (values swapped for others of any JSON type,
# keys dropped, paths respelled); and a journal: its header, then lines of any shape.
_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
_PATHS = st.sampled_from(
    ["/a/b", "/a/./b", "a/b", "/a/../b", "//a", "/a\x00b", "", "/", "/a/b/", "\udcff"]
)


def _mangled(plan: dict, data: st.DataObject) -> dict:  # type: ignore[type-arg]
    for cluster in plan["clusters"]:
        for entry in cluster["files"]:
            for key in list(entry):
                choice = data.draw(st.integers(0, 6))
                if choice == 0:
                    del entry[key]
                elif choice == 1:
                    entry[key] = data.draw(_ANY_JSON)
                elif choice == 2 and key == "path":
                    entry[key] = data.draw(_PATHS)
    if data.draw(st.booleans()):
        plan[data.draw(st.sampled_from(["roots", "protect", "version", "clusters"]))] = data.draw(
            _ANY_JSON
        )
    return plan


@FUZZ
@given(st.data())
def test_plan_and_journal_readers_only_raise_simhash_errors(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    import json

    from simhash_cli.app.apply.apply import apply, load_plan
    from simhash_cli.app.apply.journal import Journal
    from simhash_cli.app.apply.steps import Action

    base = tmp_path_factory.getbasetemp()
    plan_path = base / "fuzz-plan.json"
    template = {
        "version": 3,
        "roots": [str(base)],
        "protect": [],
        "clusters": [
            {
                "keep": f"{base}/k.txt",
                "files": [
                    {"path": f"{base}/k.txt", "action": "keep", "device": 1, "inode": 1,
                     "size": 1, "mtime_ns": 1, "sha256": "0" * 64},
                    {"path": f"{base}/r.txt", "action": "remove", "device": 1, "inode": 2,
                     "size": 1, "mtime_ns": 1, "sha256": "0" * 64},
                ],
            }
        ],
    }  # fmt: skip
    plan_path.write_text(json.dumps(_mangled(template, data)))
    with contextlib.suppress(SimhashError):
        plan = load_plan(str(plan_path))
        list(apply(plan, data.draw(st.sampled_from(list(Action))), destination=str(base / "d")))
    journal_path = base / "fuzz.journal"
    header = {"journal": 1, "plan": "p", "plan_sha256": "0" * 64, "action": "delete"}
    lines = data.draw(st.lists(st.one_of(_ANY_JSON.map(json.dumps), st.text(max_size=20))))
    journal_path.write_text(
        "\n".join([json.dumps(header), *lines]) + data.draw(st.sampled_from(["", "\n"]))
    )
    journal = Journal(str(journal_path), header, steps=3)
    with contextlib.suppress(SimhashError):
        journal.open()
    journal.close()
