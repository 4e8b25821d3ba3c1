"""``simhash explain`` and its stage: contributions that add up to the cosine, costs that add
up to a side's length, the blocks two fingerprints share, a word diff that gives back both
texts, and the command on files, records and vectors."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli.cli import main
from simhash_cli.core.explain import Segment, explain, shared_blocks, word_diff
from simhash_cli.errors import ExitCode
from simhash_cli.io.sinks.explain import diff_text

from conftest import SAMPLE
from terminal import on_a_terminal, screen_of


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


# ---------------------------------------------------------------- the stage


def test_contributions_of_vectors_built_by_hand_are_exact() -> None:
    # A = {x: 3, z: 4, q: 1}, B = {x: 3, y: 2, q: 1}: |A|^2 = 26, |B|^2 = 14, A.B = 10.
    weights = sp.csr_array(np.array([[3.0, 0.0, 4.0, 1.0], [3.0, 2.0, 0.0, 1.0]]))
    e = explain("A", "B", (0b1011, 0b0011), weights, ["x", "y", "z", "q"], bits=8)
    norm = math.sqrt(26 * 14)
    assert e.cosine == pytest.approx(10 / norm, abs=1e-15)
    assert [(c.feature, c.a, c.b) for c in e.carrying] == [("x", 3, 3), ("q", 1, 1)]
    assert [c.share for c in e.carrying] == pytest.approx([9 / norm, 1 / norm], abs=1e-15)
    assert sum(c.share for c in e.carrying) == pytest.approx(e.cosine, abs=1e-15)
    assert [(c.feature, c.a) for c in e.costing_a] == [("z", 4.0)]
    assert [c.share for c in e.costing_a] == pytest.approx([16 / 26])
    assert [(c.feature, c.b) for c in e.costing_b] == [("y", 2.0)]
    assert [c.share for c in e.costing_b] == pytest.approx([4 / 14])
    assert (e.shared_features, e.only_a, e.only_b, e.hamming) == (2, 1, 1, 1)
    assert e.estimated_cosine == pytest.approx(math.cos(math.pi / 8))


def test_listed_features_are_the_largest_and_the_rest_is_counted() -> None:
    rng = np.random.default_rng(0)
    dense = rng.integers(0, 4, (2, 300)).astype(np.float64)
    features = [f"f{k:03d}" for k in range(300)]
    e = explain("A", "B", (0, 0), sp.csr_array(dense), features, bits=64, top=5)
    both = (dense[0] > 0) & (dense[1] > 0)
    shares = dense[0] * dense[1] / (np.linalg.norm(dense[0]) * np.linalg.norm(dense[1]))
    assert e.shared_features == int(both.sum())
    assert [c.share for c in e.carrying] == pytest.approx(sorted(shares[both])[::-1][:5])
    only_a = (dense[0] > 0) & (dense[1] == 0)
    costs = dense[0][only_a] ** 2 / (dense[0] @ dense[0])
    assert e.only_a == int(only_a.sum())
    assert [c.share for c in e.costing_a] == pytest.approx(sorted(costs)[::-1][:5])


def test_shared_blocks_are_the_equal_ones_bit_zero_in_block_zero() -> None:
    a = 0xFFFF_0000_1234_ABCD
    b = a ^ (1 << 17) ^ (1 << 63)  # block 1 and block 3 of four 16-bit blocks differ
    match = shared_blocks(a, b, bits=64, blocks=4)
    assert (match.width, match.shared, match.candidate) == (16, (0, 2), True)
    assert not shared_blocks(a, b, bits=64, blocks=1).candidate
    assert shared_blocks(a, b, bits=64, blocks=8).shared == (0, 1, 3, 4, 5, 6)


words = st.lists(st.sampled_from(["a", "b", "cat", "dog", "\n", " ", "  ", "é", "x\ty"]))


@given(words, words)
def test_a_word_diff_gives_back_both_texts(first: list[str], second: list[str]) -> None:
    a, b = " ".join(first), "".join(second)
    diff = word_diff(a, b)
    assert "".join(s.a for s in diff) == a
    assert "".join(s.b for s in diff) == b
    for segment in diff:
        if segment.op == "equal":
            assert segment.a.split() == segment.b.split()
        else:
            assert segment.a.split() != segment.b.split()


def test_spaces_and_wrapping_are_no_change() -> None:
    diff = word_diff("the quick brown\nfox", "the  quick\nbrown fox")
    assert [s.op for s in diff] == ["equal"]


# ---------------------------------------------------------------- the command


def test_the_paraphrase_pair_names_the_words_that_differ() -> None:
    result = run(
        "explain", str(SAMPLE / "volcano-report.txt"), str(SAMPLE / "volcano-report-wire.txt"),
        "-f", "json", "--top", "100",
    )  # fmt: skip
    assert result.exit_code == ExitCode.OK, result.output
    record = json.loads(result.stdout)
    only_a = {c["feature"] for c in record["costing_a"]}
    only_b = {c["feature"] for c in record["costing_b"]}
    assert {"beneath", "morning", "overnight"} <= only_a
    assert {"under", "night", "rising"} <= only_b
    assert only_a.isdisjoint(only_b)
    assert {"op": "replace", "a": "beneath ", "b": "under "} in record["diff"]
    assert sum(c["share"] for c in record["carrying"]) == pytest.approx(record["cosine"], abs=1e-9)
    assert [m["blocks"] for m in record["blocks"]] == [1, 4, 8]
    text_a = (SAMPLE / "volcano-report.txt").read_text()
    assert "".join(s["a"] for s in record["diff"]) == text_a


def test_vectors_by_id_give_features_and_blocks_but_no_diff(tmp_path: Path) -> None:
    vectors = tmp_path / "v.jsonl"
    vectors.write_text(
        json.dumps({"id": "other", "features": {"k": 1}}) + "\n"
        + json.dumps({"id": "A", "features": {"x": 3, "z": 4, "q": 1}}) + "\n"
        + json.dumps({"id": 7, "features": {"x": 3, "y": 2, "q": 1}}) + "\n"
    )  # fmt: skip
    result = run("explain", "--vectors", str(vectors), "A", "7", "--blocks", "2", "-f", "json")
    assert result.exit_code == ExitCode.OK, result.output
    record = json.loads(result.stdout)
    assert record["cosine"] == pytest.approx(10 / math.sqrt(26 * 14))
    assert [c["feature"] for c in record["carrying"]] == ["x", "q"]
    assert record["diff"] is None and [m["blocks"] for m in record["blocks"]] == [2]


def test_texts_by_id_from_standard_input_match_the_files() -> None:
    names = ("volcano-report.txt", "volcano-report-wire.txt")
    lines = "".join(json.dumps({"id": n, "text": (SAMPLE / n).read_text()}) + "\n" for n in names)
    by_id = run("explain", "--texts", "-", *names, "-f", "json", input=lines)
    assert by_id.exit_code == ExitCode.OK, by_id.output
    files = run("explain", *(str(SAMPLE / n) for n in names), "-f", "json")
    keep = ("a", "b")
    record, of_files = json.loads(by_id.stdout), json.loads(files.stdout)
    assert {k: v for k, v in record.items() if k not in keep} == {
        k: v for k, v in of_files.items() if k not in keep
    }


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["--texts", "T", "--vectors", "T", "a", "b"], ExitCode.USAGE, "not both"),
        ([str(SAMPLE), "x"], ExitCode.USAGE, "is a directory"),
        (["--blocks", "5", "A", "B"], ExitCode.USAGE, "5 blocks do not divide 64 bits"),
        (["--texts", "T", "a", "missing"], ExitCode.ERROR, "has the id 'missing'"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(
    tmp_path: Path, arguments: list[str], code: ExitCode, message: str
) -> None:
    texts = tmp_path / "t.jsonl"
    texts.write_text(json.dumps({"id": "a", "text": "words here"}) + "\n")
    os.chdir(tmp_path)
    (tmp_path / "A").write_text("one two")
    (tmp_path / "B").write_text("one three")
    result = run("explain", *[str(texts) if a == "T" else a for a in arguments])
    assert result.exit_code == code
    assert message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1 or code == ExitCode.USAGE


def test_hostile_names_and_texts_reach_a_pipe_as_visible_escapes(tmp_path: Path) -> None:
    a = tmp_path / "evil\x1b]0;owned\x07.txt"
    b = tmp_path / "plain.txt"
    a.write_text("hello \x1b[2J world of words here")
    b.write_text("hello there world of words here")
    done = subprocess.run(
        [sys.executable, "-m", "simhash_cli", "explain", str(a), str(b), "-f", "table"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b]0;owned\\x07" in done.stdout and "\\x1b[2J" in done.stdout


def test_on_a_terminal_with_stdout_to_a_file_the_data_is_json_and_the_screen_clear(
    tmp_path: Path,
) -> None:
    """The installed command, stderr on a terminal and stdout to a file: the file holds the
    record (not a table drawn for the terminal), and the terminal nothing at all."""
    out = tmp_path / "out.json"
    with out.open("wb") as handle:
        code, shown = on_a_terminal(
            [
                "explain",
                str(SAMPLE / "volcano-report.txt"),
                str(SAMPLE / "volcano-report-wire.txt"),
            ],
            handle.fileno(),
        )
    assert code == ExitCode.OK
    assert screen_of(shown, 100) == []
    assert json.loads(out.read_text())["cosine"] == pytest.approx(0.984367462372)
    code, shown = on_a_terminal(
        ["explain", str(SAMPLE / "volcano-report.txt"), str(SAMPLE / "volcano-report-wire.txt")],
        None,
    )
    screen = " ".join(screen_of(shown, 100))
    assert code == ExitCode.OK and "Features that carry the cosine" in screen
    assert "Differences: A only, B only" in screen
    # Its numbers, never letters left to decode (it said cos(pi * h / b), share of its length²).
    assert "= cos(pi * 0 / 64), from the distance" in screen
    assert "share of A" in screen and "share of B" in screen and "length" not in screen


def test_the_diff_keeps_its_markers_without_colour_and_its_colours_on_a_terminal() -> None:
    """Into a pipe, -f table marks the changes as git's --word-diff=plain does; on a terminal
    they are struck through and underlined, with no markers to read past."""
    a, b = str(SAMPLE / "shipping-policy.txt"), str(SAMPLE / "shipping-policy-revised.txt")
    piped = run("explain", a, b, "-f", "table").stdout
    assert "[-usually -]{+normally +}" in piped and "\x1b[" not in piped
    code, shown = on_a_terminal(["explain", a, b], None, columns=100)
    assert code == 0
    assert "[-usually" not in " ".join(screen_of(shown, 100))
    assert b"\x1b[9" in shown  # struck through


@pytest.mark.parametrize(
    ("text", "flowed"),
    [
        ("a line\nits paragraph\n\nthe next\none", "a line its paragraph\n\nthe next one"),
        ("crlf\r\nlines\r\n\r\nend\r\n", "crlf lines\n\nend\n"),  # CR LF ends a line too
        ("a\n \nb", "a\n \nb"),  # a blank line of spaces ends a paragraph
        ("list:\n- one\n- two\nafter", "list:\n- one\n- two\nafter"),
        ("code:\n    x = 1\n    y = 2\nafter", "code:\n    x = 1\n    y = 2\nafter"),
        ("1. first\n2) second", "1. first\n2) second"),
    ],
)
def test_a_diff_flows_its_paragraphs_and_keeps_every_other_line(text: str, flowed: str) -> None:
    """On a terminal a paragraph's lines flow (wrapped once, at the terminal's width), but
    paragraphs of CR LF texts were merged, and so were lists and indented code."""
    shown = diff_text([Segment("equal", text, text)], reflow=True)
    assert shown.plain == flowed
