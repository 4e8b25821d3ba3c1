"""The command line, end to end through click's CliRunner (and a real process where it matters)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from simhash_cli import fingerprint, tokenize
from simhash_cli.cli import main
from simhash_cli.errors import ExitCode
from simhash_cli.io.sinks import schemes as schemes_sink

from conftest import SAMPLE, interruptible

FINGERPRINT_KEYS = {"id", "fingerprint", "bits", "seed", "features", "tokenizer", "weighting"}
PAIR_KEYS = {"a", "b", "hamming", "estimated_cosine", "cosine", "cluster"}


def run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# ---------------------------------------------------------------- help and version


@pytest.mark.parametrize("command", [[], ["fingerprint"], ["compare"], ["explain"], ["dedupe"]])
def test_help(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert "Usage: " in result.stdout
    assert "Example" in result.stdout


EVERY_COMMAND = [
    [],
    ["fingerprint"],
    ["compare"],
    ["explain"],
    ["dedupe"],
    ["apply"],
    ["plan"],
    ["calibrate"],
    ["index"],
    *(["index", name] for name in ("add", "query", "dedupe", "stats", "prune")),
]


@pytest.mark.parametrize("command", EVERY_COMMAND, ids=" ".join)
def test_every_help_fits_a_terminal_of_80_columns(command: list[str]) -> None:
    """Click wraps the prose of a help to the terminal, but not an example (a line of it cut
    by the terminal is a command that no longer runs when copied)."""
    for flag in ("--help", "-h"):
        shown = CliRunner().invoke(main, [*command, flag], terminal_width=80)
        assert shown.exit_code == 0, shown.output
        assert [line for line in shown.output.splitlines() if len(line) > 80] == []


def test_help_is_in_sections_the_first_hour_first() -> None:
    """--help's first screen is what -h shows, the first hour's options in their sections;
    then the others, in the same order of sections."""
    full = run("dedupe", "--help").stdout
    titles = [
        line[:-1] for line in full.splitlines() if line and line[0] != " " and line[-1] == ":"
    ]
    assert titles[:4] == ["Input", "Search", "Output", "Plan and apply"]
    assert {"More input", "More search", "Files", "Fingerprints", "Engine"} <= set(titles)
    assert titles.index("Engine") < titles.index("More input") < titles.index("More search")
    assert "Options" not in titles  # no option is left unplaced
    short = run("dedupe", "-h").stdout
    first = short[: short.rindex("\n\n")]  # all but the line saying how many more
    assert full.startswith(first)
    assert full.index("--threshold") < full.index("--max-candidates")
    # What the README's first hour uses or names is on -h's screen (a walk found them not).
    for option in ("--plan", "--report", "--keep", "--protect", "--kept", "--dropped"):
        assert option in first, option


@pytest.mark.parametrize(
    ("command", "rare"),
    [
        ("dedupe", "--seed"),
        ("fingerprint", "--char-ngrams"),
        ("apply", "--journal"),
        ("index add", "--char-ngrams"),
        ("plan", "--max-candidates"),
    ],
)
def test_dash_h_is_the_short_help_and_names_what_it_leaves_out(command: str, rare: str) -> None:
    words = command.split()
    short, full = run(*words, "-h"), run(*words, "--help")
    assert short.exit_code == full.exit_code == 0
    assert short.stdout.startswith(full.stdout.split("\n\n", 1)[0])  # the same usage line
    assert len(short.stdout.splitlines()) < len(full.stdout.splitlines())
    more = short.stdout.strip().splitlines()[-1]
    assert "more options: " in more and more.endswith(f" {command} --help"), more
    assert rare in full.stdout and rare not in short.stdout
    if command == "dedupe":  # what a walk reads is chosen in the first hour
        assert all(f in short.stdout for f in ("--exclude", "--include", "--hidden", "--no-ignore"))


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.startswith("simhash, version ")


def test_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "simhash_cli", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "Usage: simhash" in done.stdout


# ---------------------------------------------------------------- fingerprint


def test_fingerprint_jsonl_by_default_when_piped() -> None:
    result = run("fingerprint", str(SAMPLE))
    assert result.exit_code == 0, result.stderr
    records = jsonl(result.stdout)
    assert len(records) == 8
    assert all(set(r) == FINGERPRINT_KEYS for r in records)
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)
    first = records[0]
    assert first["bits"] == 64 and first["seed"] == 12345
    assert first["tokenizer"] == "unicode-word" and first["weighting"] == "tf"
    text = Path(first["id"]).read_text(encoding="utf-8")
    counts: dict[str, float] = {}
    for token in tokenize(text):
        counts[token] = counts.get(token, 0) + 1
    assert int(first["fingerprint"], 16) == fingerprint(counts, bits=64, seed=12345)
    assert first["features"] == len(counts)
    assert "fingerprinted 8 documents" in result.stderr


def test_fingerprint_ids_are_paths_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_text("hello world")
    monkeypatch.chdir(tmp_path)
    assert jsonl(run("fingerprint", "d/").stdout)[0]["id"] == "d/x.txt"
    assert jsonl(run("fingerprint", "d").stdout)[0]["id"] == "d/x.txt"
    assert jsonl(run("fingerprint", "d/x.txt").stdout)[0]["id"] == "d/x.txt"


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "table"])
def test_fingerprint_every_format(fmt: str) -> None:
    result = run("fingerprint", "-f", fmt, "--bits", "128", "--seed", "7", str(SAMPLE))
    assert result.exit_code == 0, result.stderr
    reference = jsonl(run("fingerprint", "--bits", "128", "--seed", "7", str(SAMPLE)).stdout)
    if fmt == "json":
        assert json.loads(result.stdout) == reference
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        assert [r["fingerprint"] for r in rows] == [r["fingerprint"] for r in reference]
        assert set(rows[0]) == FINGERPRINT_KEYS
    elif fmt == "table":
        assert all(r["fingerprint"] in result.stdout for r in reference)
    assert all(len(r["fingerprint"]) == 32 for r in reference)


def test_fingerprint_stdin() -> None:
    result = run("fingerprint", "-", input="The cat sat. The cat!")
    record = jsonl(result.stdout)[0]
    assert record["id"] == "-"
    assert int(record["fingerprint"], 16) == fingerprint({"the": 2, "cat": 2, "sat": 1})


def test_fingerprint_vectors_exactly_as_given() -> None:
    lines = [
        '{"id": "u1", "features": {"jazz": 3, "vinyl": 1.5, "10": -0.25}}',
        '{"id": "u2", "features": {"😀": 1e-3}}',
    ]
    result = run("fingerprint", "--vectors", "-", "--bits", "32", input="\n".join(lines))
    assert result.exit_code == 0, result.stderr
    records = jsonl(result.stdout)
    assert records[0]["fingerprint"] == format(
        fingerprint({"jazz": 3, "vinyl": 1.5, "10": -0.25}, bits=32), "08x"
    )
    assert records[1]["fingerprint"] == format(fingerprint({"😀": 1e-3}, bits=32), "08x")
    assert records[0]["tokenizer"] == "vectors" and records[0]["weighting"] == "given"


def test_vectors_with_an_empty_feature_object_are_skipped_not_zero() -> None:
    result = run("fingerprint", "--vectors", "-", input='{"id": "e", "features": {}}\n')
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "warning: skipped e: empty (no non-zero weight)" in result.stderr


def test_bad_vectors_line_is_one_line_error() -> None:
    result = run("fingerprint", "--vectors", "-", input='{"id": 1, "features": {"a": NaN}}\n')
    assert result.exit_code == ExitCode.ERROR
    assert (
        result.stderr
        == "Error: <stdin>:1: invalid JSON: NaN is not a number (weights must be finite)\n"
    )
    assert result.stdout == ""


# ---------------------------------------------------------------- errors


def test_missing_path_exits_2_before_any_work() -> None:
    result = run("dedupe", str(SAMPLE), "nope.txt")
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr == "Error: no such file or directory: nope.txt\n"
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["fingerprint"],
            "no input: give PATH... (- for standard input) or --texts FILE / --vectors FILE",
        ),
        (["fingerprint", "--bits", "7", "x"], "bits must be a multiple of 8 from 8 to 4096, not 7"),
        (["fingerprint", "--seed", "-1", "x"], "-1 is not in the range 0<=x<=4294967295"),
        (
            ["dedupe", "--blocks", "5", str(SAMPLE)],
            "--blocks: must divide the fingerprint width (64) evenly, not 5",
        ),
        (
            ["dedupe", "--threshold", "2", str(SAMPLE)],
            "a threshold is a cosine from -1 to 1, like 0.9\n",  # (2 is no percentage)
        ),
        (["dedupe", "--ngram", "2", "--char-ngrams", "3", str(SAMPLE)], "cannot be used together"),
        (["fingerprint", "--vectors", "-", "--weighting", "tfidf"], "exactly as given"),
        (["compare", str(SAMPLE), str(SAMPLE)], "is a directory"),
        (["fingerprint", "-f", "xml", str(SAMPLE)], "'xml' is not one of"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == ExitCode.USAGE
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_traceback_flag_shows_the_real_exception() -> None:
    result = run("--traceback", "fingerprint", "nope")
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "PathNotFoundError"


def test_messy_directory_warns_and_goes_on(messy_dir: Path) -> None:
    result = run("dedupe", "-f", "json", str(messy_dir))
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert sorted(warnings) == sorted(
        [
            f"warning: skipped {messy_dir}/blank.txt: empty (no tokens)",
            f"warning: skipped {messy_dir}/empty.txt: empty (no tokens)",
            # Binary files, which a walk expects to meet, are summed up in a log too (a
            # folder of documentation wrote a line for each of 211): -v lists each.
            f"warning: skipped files: 1 binary ({messy_dir}/image.png)",
            f"warning: {messy_dir}/latin1.txt: bytes that are not valid text were replaced",
        ]
    )
    verbose = run("dedupe", "-f", "json", "-v", str(messy_dir)).stderr
    assert f"warning: skipped {messy_dir}/image.png: binary (NUL bytes" in verbose
    assert out["summary"]["documents"] == 4
    assert out["summary"]["skipped"] == 3
    assert out["summary"]["skipped_by_reason"] == {"empty": 2, "binary": 1}
    assert [(Path(p["a"]).name, Path(p["b"]).name) for p in out["pairs"]] == [("a.txt", "b.txt")]
    assert "Traceback" not in result.stderr


def test_quiet_silences_all_but_errors(messy_dir: Path) -> None:
    loud = run("dedupe", str(messy_dir))
    assert "read 4 documents (3 skipped: 1 binary, 2 empty)" in loud.stderr.splitlines()
    for flags in (["-q"], ["-qq"]):
        quiet = run("dedupe", *flags, str(messy_dir))
        assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == loud.stdout
    failed = run("dedupe", "-q", str(messy_dir / "nope"))
    assert failed.exit_code == ExitCode.USAGE and "no such file" in failed.stderr


def test_skips_are_counted_by_kind_never_by_path(tmp_path: Path) -> None:
    """``skipped_by_reason`` keys are kinds of reason: a path in the reason is not a key."""
    (tmp_path / "a.txt").write_text("one two three four")
    os.link(tmp_path / "a.txt", tmp_path / "b.txt")
    (tmp_path / "c.txt").write_text("five six seven eight")
    result = run("dedupe", "-f", "json", str(tmp_path))
    assert json.loads(result.stdout)["summary"]["skipped_by_reason"] == {"same file": 1}


# ---------------------------------------------------------------- compare


def test_compare_json() -> None:
    a, b = SAMPLE / "volcano-report.txt", SAMPLE / "volcano-report-wire.txt"
    result = run("compare", "-f", "json", "--bits", "32", str(a), str(b))
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    assert {"hamming", "bits", "estimated_cosine", "cosine"} <= set(record)
    fa, fb = int(record["fingerprint_a"], 16), int(record["fingerprint_b"], 16)
    assert record["hamming"] == (fa ^ fb).bit_count()
    assert record["bits"] == 32 and 0.9 < record["cosine"] < 1.0


def test_compare_a_file_with_itself() -> None:
    path = str(SAMPLE / "chess-openings.txt")
    record = jsonl(run("compare", path, path).stdout)[0]
    assert record["hamming"] == 0 and record["cosine"] == pytest.approx(1.0)


def test_compare_table_shows_both_fingerprints_bit_by_bit() -> None:
    a, b = SAMPLE / "shipping-policy.txt", SAMPLE / "shipping-policy-revised.txt"
    result = run("compare", "-f", "table", "--bits", "32", str(a), str(b))
    assert result.exit_code == 0
    record = json.loads(run("compare", "-f", "json", "--bits", "32", str(a), str(b)).stdout)
    slots = "".join(str(int(record["fingerprint_a"], 16) >> i & 1) for i in range(16))
    assert " ".join(slots[i : i + 4] for i in range(0, 16, 4)) in result.stdout
    assert f"{record['hamming']} of 32 bits" in result.stdout


def test_compare_with_a_binary_file_is_an_error(messy_dir: Path) -> None:
    result = run("compare", str(messy_dir / "a.txt"), str(messy_dir / "image.png"))
    assert result.exit_code == ExitCode.ERROR
    assert result.stderr.splitlines()[-1] == (
        f"Error: compare needs A and a B with features "
        f"({messy_dir}/image.png: binary (NUL bytes, no byte-order mark))"
    )


# ---------------------------------------------------------------- dedupe


def test_dedupe_json_document() -> None:
    result = run("dedupe", "-f", "json", str(SAMPLE))
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert set(out) == {"pairs", "clusters", "summary"}
    assert all(set(p) == PAIR_KEYS for p in out["pairs"])
    summary = out["summary"]
    for key in [
        "documents",
        "candidates",
        "pairs",
        "clusters",
        "expected_recall",
        "bits",
        "seed",
        "blocks",
        "threshold",
        "verify",
    ]:
        assert key in summary
    assert summary["pairs"] == len(out["pairs"])
    assert [c["size"] for c in out["clusters"]] == [3, 2]


def test_dedupe_jsonl_is_one_pair_per_line_and_csv_matches() -> None:
    lines = jsonl(run("dedupe", "--list", "pairs", str(SAMPLE)).stdout)
    rows = list(
        csv.DictReader(
            io.StringIO(run("dedupe", "--list", "pairs", "-f", "csv", str(SAMPLE)).stdout)
        )
    )
    assert len(lines) == len(rows) == 4
    assert [(r["a"], r["b"]) for r in rows] == [(p["a"], p["b"]) for p in lines]
    assert [float(r["cosine"]) for r in rows] == [p["cosine"] for p in lines]


def test_dedupe_estimate_leaves_cosine_null() -> None:
    lines = jsonl(
        run(
            "dedupe", "--list", "pairs", "--verify", "estimate", "--threshold", "0.8", str(SAMPLE)
        ).stdout
    )
    assert lines and all(p["cosine"] is None for p in lines)
    assert all(p["estimated_cosine"] >= 0.8 for p in lines)


def test_dedupe_check_exit_codes(messy_dir: Path) -> None:
    assert run("dedupe", "--check", str(SAMPLE)).exit_code == ExitCode.DUPLICATES_FOUND
    alone = messy_dir / "c.txt"
    assert run("dedupe", "--check", str(alone)).exit_code == ExitCode.OK


def test_dedupe_fingerprints_round_trip(tmp_path: Path) -> None:
    fps = run("fingerprint", str(SAMPLE)).stdout
    via_file = run("dedupe", "--fingerprints", "-", "--threshold", "0.8", input=fps)
    direct = run("dedupe", "--verify", "estimate", "--threshold", "0.8", str(SAMPLE))
    assert via_file.exit_code == 0, via_file.stderr
    assert via_file.stdout == direct.stdout
    json_array = run("fingerprint", "-f", "json", str(SAMPLE)).stdout
    assert run("dedupe", "--fingerprints", "-", input=json_array).exit_code == ExitCode.ERROR


def test_dedupe_fingerprints_refuses_mixed_settings() -> None:
    a = run("fingerprint", str(SAMPLE / "chess-openings.txt")).stdout
    b = run("fingerprint", "--seed", "1", str(SAMPLE / "sourdough-bread.txt")).stdout
    result = run("dedupe", "--fingerprints", "-", input=a + b)
    assert result.exit_code == ExitCode.ERROR
    assert result.stderr == (
        "Error: fingerprints made with different settings cannot be compared: "
        f"'{SAMPLE}/chess-openings.txt' has bits=64 seed=12345 tokenizer=unicode-word "
        f"weighting=tf, '{SAMPLE}/sourdough-bread.txt' has bits=64 seed=1 "
        "tokenizer=unicode-word weighting=tf\n"
    )


def test_fingerprints_of_the_earlier_tokenizer_are_never_compared_with_new_ones() -> None:
    new = run("fingerprint", str(SAMPLE / "chess-openings.txt")).stdout
    old = run("fingerprint", str(SAMPLE / "sourdough-bread.txt")).stdout.replace(
        '"tokenizer": "unicode-word"', '"tokenizer": "word"'
    )
    assert '"tokenizer": "word"' in old
    result = run("dedupe", "--fingerprints", "-", input=new + old)
    assert result.exit_code == ExitCode.ERROR
    assert "tokenizer=unicode-word" in result.stderr and "tokenizer=word " in result.stderr
    # Alone, the earlier ones are still read.
    assert run("dedupe", "--fingerprints", "-", input=old).exit_code == 0


def test_dedupe_fingerprints_refuses_exact_verification_and_other_bits() -> None:
    fps = run("fingerprint", str(SAMPLE)).stdout
    exact = run("dedupe", "--fingerprints", "-", "--verify", "exact", input=fps)
    assert exact.exit_code == ExitCode.USAGE and "--verify estimate" in exact.stderr
    bits = run("dedupe", "--fingerprints", "-", "--bits", "32", input=fps)
    assert bits.exit_code == ExitCode.USAGE
    assert "--bits 32 does not match the fingerprints' 64" in bits.stderr


def test_dedupe_audit_reports_recall() -> None:
    out = json.loads(run("dedupe", "--audit", "-f", "json", str(SAMPLE)).stdout)
    audit = out["summary"]["audit"]
    assert audit["similar_pairs"] == 4 and audit["found"] == 4 and audit["recall"] == 1.0
    assert audit["missed"] == []


def test_a_named_scheme_states_the_recall_it_measured() -> None:
    """--blocks 1 finds 2 of the sample's 4 pairs: the pilot, which compares every pair of 8
    documents, says so, where the chance at the threshold is no measure of this run."""
    short = run("dedupe", "--blocks", "1", str(SAMPLE)).stderr.splitlines()
    assert short[-2:] == [
        "recall 0.50: measured on every pair, 2 pairs missed",
        "hint: --blocks every would raise recall to 1.00",
    ]
    result = run("dedupe", "-v", "--blocks", "1", str(SAMPLE))
    assert "this run found 2 of the 4 pairs at cosine >= 0.9" in result.stderr
    assert "recall 0.50; it missed 2 pairs" in result.stderr
    assert "hint: --blocks every would find 1.00 of the pilot's pairs" in result.stderr
    # --blocks 4 has chance 0.30 at the threshold, and found every pair here: no hint.
    four = run("dedupe", "--blocks", "4", str(SAMPLE)).stderr.splitlines()
    assert four[-1] == "recall 1.00: measured on every pair, none was missed"


def test_documents_that_share_one_fingerprint_were_each_compared_and_it_says_so() -> None:
    """Two reports of one story share their 64-bit fingerprint: the pair was checked and
    found, and the recall line said "not measured: the documents have fewer than two
    distinct fingerprints" (found by a newcomer's walk)."""
    pair = [str(SAMPLE / "volcano-report.txt"), str(SAMPLE / "volcano-report-wire.txt")]
    result = run("dedupe", "--list", "pairs", "-f", "jsonl", *pair)
    assert result.exit_code == ExitCode.OK, result.stderr
    assert len(result.stdout.splitlines()) == 1
    assert result.stderr.splitlines()[-1] == "recall 1.00: measured on every pair, none was missed"
    told = " ".join(run("dedupe", "-v", *pair).stderr.split())
    assert "the documents share one fingerprint: each pair of them was compared" in told
    assert "the pilot compared" not in told  # (no pilot ran)


def test_dedupe_of_vectors(tmp_path: Path) -> None:
    lines = [
        json.dumps(
            {
                "id": f"user{i}",
                "features": {"jazz": 5, "rock": 1 + (i % 2) * 0.1, f"rare{i // 2}": 0.5},
            }
        )
        for i in range(6)
    ]
    result = run(
        "dedupe", "--vectors", "-", "--threshold", "0.95", "-f", "json", input="\n".join(lines)
    )
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["summary"]["tokenizer"] == "vectors"
    assert all(p["cosine"] >= 0.95 for p in out["pairs"])


# ---------------------------------------------------------------- a real process


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_broken_pipe_is_quiet(tmp_path: Path, unbuffered: str) -> None:
    # PYTHONUNBUFFERED=1 (common in containers) once made a short write to the pipe vanish.
    source = tmp_path / "many.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": i, "features": {f"w{i}": 1, "x": 2}}) + "\n" for i in range(20000)
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "simhash_cli", "fingerprint", "--vectors", str(source)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": unbuffered},
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == ExitCode.BROKEN_PIPE
    assert json.loads(first)["id"] == 0  # an integer id stays one
    assert "Traceback" not in stderr and "Exception ignored" not in stderr


def test_a_locale_that_cannot_encode_the_ids(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    source.write_text(
        '{"id": "caf\\u00e9 \\ud800 \\ud83d\\ude00", "features": {"x": 1}}\n'
        '{"id": "b", "features": {"x": 1}}\n'
    )
    for fmt in ["jsonl", "table", "csv"]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "simhash_cli",
                "dedupe",
                "--list",
                "pairs",
                "--vectors",
                str(source),
                "--threshold",
                "0.5",
                "-f",
                fmt,
            ],
            capture_output=True,
            env={**os.environ, "PYTHONIOENCODING": "ascii"},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert b"Traceback" not in done.stderr
        if fmt == "jsonl":
            pair = json.loads(done.stdout)
            assert pair["a"] == "café \ud800 😀"


def test_candidate_budget_is_a_one_line_error() -> None:
    # Copies of one fingerprint are compared once: 8 documents, 6 distinct fingerprints.
    result = run("dedupe", "--blocks", "8", "--max-candidates", "1", str(SAMPLE))
    assert result.exit_code == ExitCode.ERROR
    assert result.stderr.startswith(
        "Error: 8 blocks of 8 bits would give up to 7 candidate pairs among 6 fingerprints "
        "(budget 1)."
    )
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_compare_line_formats(fmt: str) -> None:
    a, b = str(SAMPLE / "volcano-report.txt"), str(SAMPLE / "volcano-report-wire.txt")
    reference = json.loads(run("compare", "-f", "json", a, b).stdout)
    result = run("compare", "-f", fmt, a, b)
    assert result.exit_code == 0
    if fmt == "jsonl":
        assert jsonl(result.stdout) == [reference]
    else:
        row = next(csv.DictReader(io.StringIO(result.stdout)))
        assert row["fingerprint_a"] == reference["fingerprint_a"]
        assert int(row["hamming"]) == reference["hamming"]


def test_ctrl_c_exits_130_without_a_traceback() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "simhash_cli", "fingerprint", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=interruptible,
    )
    assert process.stdin is not None and process.stderr is not None
    process.stdin.write(b"waiting for more text")
    process.stdin.flush()
    deadline = time.monotonic() + 30
    # Interrupt once the command is blocked reading stdin (after its imports).
    while time.monotonic() < deadline and not _reading_stdin(process.pid):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == ExitCode.INTERRUPTED
    stderr = process.stderr.read().decode()
    process.stdin.close()
    assert stderr == "Error: interrupted\n"


def _reading_stdin(pid: int) -> bool:
    """The process sleeps in the kernel's pipe read: it got past its imports to read stdin."""
    try:
        return "pipe" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def test_dedupe_max_distance_finds_exactly_the_close_pairs() -> None:
    fps = jsonl(run("fingerprint", str(SAMPLE)).stdout)
    values = [int(r["fingerprint"], 16) for r in fps]
    ids = [r["id"] for r in fps]
    for k in (0, 7, 20):
        out = json.loads(
            run(
                "dedupe",
                "--max-distance",
                str(k),
                "--verify",
                "estimate",
                "--threshold",
                "-1",
                "--group-pairs",
                "0",
                "-f",
                "json",
                str(SAMPLE),
            ).stdout
        )
        got = {(p["a"], p["b"]) for p in out["pairs"]}
        expected = {
            (ids[i], ids[j])
            for i in range(len(ids))
            for j in range(i + 1, len(ids))
            if (values[i] ^ values[j]).bit_count() <= k
        }
        assert got == expected
        assert out["summary"]["max_distance"] == k and out["summary"]["blocks"] is None


def test_max_distance_and_blocks_are_exclusive() -> None:
    result = run("dedupe", "--max-distance", "3", "--blocks", "4", str(SAMPLE))
    assert result.exit_code == ExitCode.USAGE
    assert "--blocks and --max-distance are two schemes: choose one" in result.stderr
    wide = run("dedupe", "--max-distance", "64", str(SAMPLE))
    assert wide.exit_code == ExitCode.USAGE
    assert "must be below the fingerprint width (64)" in wide.stderr


def test_max_distance_hint() -> None:
    result = run("dedupe", "-v", "--max-distance", "3", str(SAMPLE))
    assert "from 4 Manku tables for pairs within 3 bits (as asked)" in result.stderr
    assert "this run found 2 of the 4 pairs at cosine >= 0.9" in result.stderr
    assert "hint: --blocks every would find 1.00 of the pilot's pairs" in result.stderr


def test_plan_command() -> None:
    result = run("plan", "--docs", "10000", "--threshold", "0.95", "-f", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["chosen"]["recall"] >= 0.95
    assert {s["scheme"] for s in out["schemes"]} >= {
        "1 block of 64 bits",
        "4 blocks of 16 bits",
        "8 blocks of 8 bits",
    }
    assert all(len(s["curve"]) == 11 for s in out["schemes"])
    table = run("plan", "--docs", "10000", "--threshold", "0.95", "-f", "table")
    assert "* chosen: " in table.stdout and "cosine 0.5..1" in table.stdout


def test_plan_says_when_nothing_reaches_the_target() -> None:
    result = run("plan", "--docs", "1000000", "--threshold", "0.9", "-f", "table")
    assert "No scheme at 64 bits reaches recall 0.95 at cosine 0.9" in result.stdout
    out = json.loads(run("plan", "--docs", "1000000", "-f", "json").stdout)
    assert out["chosen"] is None
    # ... but one does at a larger budget, and the advice names a budget large enough for it.
    beyond = out["over_budget"]
    assert beyond["recall"] >= 0.95 and not beyond["in_budget"]
    advice = result.stdout[result.stdout.index("No scheme at") :]
    budget = int(advice.split("--max-candidates ")[1].split(")")[0])
    assert beyond["expected_candidates"] <= budget <= 1.1 * beyond["expected_candidates"]
    again = run("plan", "--docs", "1000000", "--max-candidates", str(budget), "-f", "json")
    assert json.loads(again.stdout)["chosen"]["scheme"] == beyond["scheme"]


def test_plan_on_a_corpus_is_the_plan_dedupe_makes() -> None:
    planned = run("plan", "--bits", "128", "--threshold", "0.8", "-f", "json", str(SAMPLE))
    assert planned.exit_code == 0, planned.stderr
    out = json.loads(planned.stdout)
    deduped = run("dedupe", "--bits", "128", "--threshold", "0.8", "-f", "json", str(SAMPLE))
    summary = json.loads(deduped.stdout)["summary"]
    assert out["chosen"]["scheme"] == summary["scheme"] and summary["planned"] is True
    # Planned over distinct fingerprints: shipping-policy-copy is shipping-policy again.
    assert out["docs"] == 7 and out["documents"] == 8 and out["bits"] == 128
    assert all(s["expected_pairs"] <= 21 for s in out["schemes"])  # 7 distinct: 21 pairs
    table = run("plan", "--threshold", "0.8", "-f", "table", str(SAMPLE)).stdout
    assert "among 8 documents (6 distinct fingerprints)" in table
    assert "of the 15 pairs of distinct fingerprints" in table


def test_plan_needs_a_corpus_or_its_size() -> None:
    assert run("plan").exit_code == ExitCode.USAGE
    both = run("plan", "--docs", "5", str(SAMPLE))
    assert both.exit_code == ExitCode.USAGE and "--docs and --background" in both.stderr


def test_dedupe_auto_is_the_default_and_says_so() -> None:
    result = run("dedupe", "-v", "-f", "json", str(SAMPLE))
    summary = json.loads(result.stdout)["summary"]
    assert summary["planned"] is True and summary["expected_recall"] >= 0.95
    assert "(chosen by the planner)" in result.stderr
    assert run("dedupe", "--blocks", "five", str(SAMPLE)).exit_code == ExitCode.USAGE


def test_calibrate_command() -> None:
    result = run("calibrate", "--seeds", "5", "-f", "json", str(SAMPLE))
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert [e["bits"] for e in out["error_by_bits"]] == [8, 16, 32, 64, 128, 256, 512]
    assert out["similar_pairs"] == 4 and len(out["schemes"]) == 3
    table = run("calibrate", "--seeds", "5", "-f", "table", str(SAMPLE))
    assert "mean absolute error" in table.stdout and "unweighted (a set)" in table.stdout
    alone = run("calibrate", str(SAMPLE / "chess-openings.txt"))
    assert alone.exit_code == ExitCode.ERROR
    assert alone.stderr == "Error: calibrate needs at least two documents with features\n"


def test_minhash_scheme_on_the_command_line(tmp_path: Path) -> None:
    result = run("dedupe", "-v", "--minhash", "16x8", "-f", "json", str(SAMPLE))
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["kind"] == "minhash" and summary["minhash"] == {"bands": 16, "rows": 8}
    assert summary["blocks"] is None and summary["max_distance"] is None
    assert summary["pairs"] == 4 and summary["planned"] is False
    assert summary["estimated_recall"] == summary["measured_recall"]["recall"] == 1.0
    assert summary["measured_recall"]["exact"] and summary["recall_not_measured"] is None
    assert "from MinHash of feature sets, 16 bands of 8 bins (as asked)" in result.stderr
    assert "Jaccard 0.81" in result.stderr  # what the expected recall is about
    texts = tmp_path / "texts.jsonl"
    texts.write_text(
        "".join(
            json.dumps({"id": path.name, "text": path.read_text(encoding="utf-8")}) + "\n"
            for path in sorted(SAMPLE.glob("*.txt"))
        ),
        encoding="utf-8",
    )
    records = run("dedupe", "--minhash", "16x8", "-f", "json", "--texts", str(texts))
    assert json.loads(records.stdout)["summary"]["pairs"] == 4, records.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--minhash", "16"], "'16' is not BANDSxROWS (for example 16x8)"),
        (["--minhash", "0x8"], "bands and rows from 1, at most 256 bins in all"),
        (["--minhash", "64x8"], "bands and rows from 1, at most 256 bins in all"),
        (["--minhash", "16x8", "--blocks", "every"], "--blocks and --minhash are two schemes"),
        (
            ["--minhash", "16x8", "--blocks", "4", "--max-distance", "3"],
            "--blocks and --max-distance and --minhash are three schemes",
        ),
        (["--minhash", "16x8", "--verify", "estimate"], "leave out --verify estimate"),
    ],
)
def test_minhash_options_that_do_not_go(args: list[str], message: str) -> None:
    result = run("dedupe", *args, str(SAMPLE))
    assert result.exit_code == ExitCode.USAGE
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_minhash_needs_words(tmp_path: Path) -> None:
    fps = tmp_path / "fps.jsonl"
    fps.write_text(run("fingerprint", str(SAMPLE)).stdout, encoding="utf-8")
    result = run("dedupe", "--minhash", "16x8", "--fingerprints", str(fps))
    assert result.exit_code == ExitCode.USAGE
    assert "--minhash hashes the words of each document" in result.stderr


@pytest.mark.parametrize(
    "args", [["--vectors", "-"], ["--texts", "-"], ["--fingerprints", "-"], ["EMPTY"]]
)
def test_an_empty_input_is_no_error_and_says_so(tmp_path: Path, args: list[str]) -> None:
    args = [str(tmp_path) if arg == "EMPTY" else arg for arg in args]
    result = run("dedupe", "-f", "json", *args, input="")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["pairs"] == []
    assert "note: no document was read: none was found" in result.stderr


def test_nothing_read_says_where_what_was_skipped_is_counted(tmp_path: Path) -> None:
    """Every record too short: the note said '(see above)', where a terminal shows no line of
    skips (short ones are counted, not warned of), only the count on the line above."""
    texts = tmp_path / "t.jsonl"
    texts.write_text(
        "".join(json.dumps({"id": str(n), "text": "a few words"}) + "\n" for n in range(3))
    )
    result = run("dedupe", "--texts", str(texts), "--min-length", "50")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "read 0 documents (3 skipped: 3 short)" in lines
    note = "note: no document was read: each was skipped or left out, as counted above"
    assert lines[lines.index("read 0 documents (3 skipped: 3 short)") + 1] == note


@pytest.mark.parametrize("command", ["plan", "calibrate"])
def test_texts_are_read_by_every_command_that_reads_documents(tmp_path: Path, command: str) -> None:
    texts = tmp_path / "texts.jsonl"
    texts.write_text(
        "".join(
            json.dumps({"id": p.name, "text": p.read_text()}) + "\n"
            for p in sorted(SAMPLE.iterdir())
        )
    )
    from_texts = json.loads(run(command, "-f", "json", "--texts", str(texts)).stdout)
    from_files = json.loads(run(command, "-f", "json", str(SAMPLE)).stdout)
    assert from_texts == from_files


def test_compare_one_with_many_and_check() -> None:
    a = str(SAMPLE / "shipping-policy.txt")
    others = [str(SAMPLE / name) for name in ("chess-openings.txt", "shipping-policy-revised.txt")]
    result = run("compare", "--check", "-f", "jsonl", a, *others)
    assert result.exit_code == ExitCode.DUPLICATES_FOUND, result.stderr
    records = jsonl(result.stdout)
    assert [r["b"] for r in records] == others[::-1]  # the most similar first
    assert [r["near_duplicate"] for r in records] == [True, False]
    assert records[0]["cosine"] == pytest.approx(0.975, abs=1e-3)
    unrelated = run("compare", "--check", "-f", "jsonl", a, others[0])
    assert unrelated.exit_code == ExitCode.OK
    strict = run("compare", "--threshold", "0.99", "--check", "-f", "jsonl", a, others[1])
    assert strict.exit_code == ExitCode.OK and not jsonl(strict.stdout)[0]["near_duplicate"]


def test_compare_with_a_glob_leaves_a_itself_out_and_ranks_by_similarity() -> None:
    a = str(SAMPLE / "shipping-policy.txt")
    every = sorted(str(path) for path in SAMPLE.glob("*.txt"))  # A among them, as a glob has it
    records = jsonl(run("compare", "-f", "jsonl", a, *every).stdout)
    assert a not in [r["b"] for r in records] and len(records) == len(every) - 1
    cosines = [r["cosine"] for r in records]
    assert cosines == sorted(cosines, reverse=True)
    alone = jsonl(run("compare", "-f", "jsonl", a, a).stdout)  # asked for: A with itself
    assert [(r["b"], r["hamming"]) for r in alone] == [(a, 0)]


@pytest.mark.parametrize("kind", ["texts", "vectors"])
def test_compare_takes_records_by_id(tmp_path: Path, kind: str) -> None:
    texts = ["my parcel has not arrived yet", "my parcel has not arrived", "reset my password"]
    source = tmp_path / "records.jsonl"
    source.write_text(
        "".join(
            json.dumps(
                {"id": n + 1, "text": text}
                if kind == "texts"
                else {"id": n + 1, "features": dict.fromkeys(text.split(), 1)}
            )
            + "\n"
            for n, text in enumerate(texts)
        )
    )
    result = run("compare", f"--{kind}", str(source), "1", "3", "2", "-f", "jsonl")
    assert result.exit_code == 0, result.stderr
    assert [(r["a"], r["b"]) for r in jsonl(result.stdout)] == [(1, 2), (1, 3)]
    missing = run("compare", f"--{kind}", str(source), "1", "9")
    assert missing.exit_code == ExitCode.ERROR
    assert missing.stderr == f"Error: no record of {source} has the id '9'\n"


def test_compare_says_where_its_idf_comes_from() -> None:
    a, b = str(SAMPLE / "shipping-policy.txt"), str(SAMPLE / "shipping-policy-revised.txt")
    result = run("compare", "--weighting", "tfidf", "-f", "jsonl", a, b)
    assert result.exit_code == 0
    assert "idf from these 2 documents only; dedupe takes it from all it reads" in result.stderr


def test_ids_come_back_as_the_records_gave_them() -> None:
    """An integer id is written back as an integer, a string one as a string."""
    lines = [
        {"id": 1, "text": "the same words here and there"},
        {"id": "2", "text": "the same words here and there"},
        {"id": 30, "text": "the same words here and there again"},
    ]
    source = "".join(json.dumps(line) + "\n" for line in lines)
    pairs = jsonl(
        run("dedupe", "--list", "pairs", "--texts", "-", "--threshold", "0.5", input=source).stdout
    )
    assert [(p["a"], p["b"]) for p in pairs] == [(1, "2"), (1, 30), ("2", 30)]
    clusters = json.loads(
        run("dedupe", "-f", "json", "--texts", "-", "--threshold", "0.5", input=source).stdout
    )["clusters"]
    ids = [member["id"] for member in clusters[0]["members"]]  # the one kept first, its copy
    assert ids in ([1, "2", 30], ["2", 1, 30]) and clusters[0]["representative"] == ids[0]
    records = jsonl(run("fingerprint", "--texts", "-", input=source).stdout)
    assert [r["id"] for r in records] == [1, "2", 30]


@pytest.mark.parametrize(
    "args",
    [
        ["fingerprint"],
        ["dedupe", "--threshold", "0.5"],
        ["dedupe", "--threshold", "0.5", "--list", "pairs"],
    ],
)
@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "csv"])
def test_integer_ids_in_every_format(tmp_path: Path, args: list[str], fmt: str) -> None:
    source = tmp_path / "ints.jsonl"
    source.write_text('{"id": 1, "text": "a b c d"}\n{"id": 2, "text": "a b c d"}\n')
    result = run(*args, "-f", fmt, "--texts", str(source))
    assert result.exit_code == 0, result.stderr or str(result.exception)
    assert "1" in result.stdout and "2" in result.stdout


def test_integer_ids_in_an_index_query_table(tmp_path: Path) -> None:
    source = tmp_path / "ints.jsonl"
    source.write_text('{"id": 1, "text": "a b c d"}\n{"id": 2, "text": "a b c d"}\n')
    db = str(tmp_path / "ints.db")
    assert run("index", "add", db, "--texts", str(source)).exit_code == 0
    result = run("index", "query", db, "-f", "table", "--texts", str(source))
    assert result.exit_code == 0, result.stderr or str(result.exception)
    assert "2 matches" in result.stdout


def test_shell_completion_knows_the_commands_and_their_options() -> None:
    """What docs/usage.md's completion lines rely on: click's completion of the installed command,
    the commands it imports when asked for among them."""
    simhash = str(Path(sys.executable).parent / "simhash")

    def completed(words: str) -> list[str]:
        env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1),
               "_SIMHASH_COMPLETE": "bash_complete"}  # fmt: skip
        done = subprocess.run([simhash], env=env, capture_output=True, text=True, check=True)
        return [line.split(",", 1)[1] for line in done.stdout.splitlines()]

    assert completed("simhash ded") == ["dedupe"]
    assert "--threshold" in completed("simhash dedupe --thr")
    assert completed("simhash apply plan.json --action mo") == ["move-to"]
    source = subprocess.run(
        [simhash], env={**os.environ, "_SIMHASH_COMPLETE": "bash_source"}, capture_output=True,
        text=True, check=True,
    ).stdout  # fmt: skip
    assert "complete -o nosort -F _simhash_completion simhash" in source


def test_a_mistyped_command_is_told_the_command_it_is_close_to() -> None:
    """Commands are loaded when first asked for, and click suggested only among those loaded:
    `simhash dedup` had no suggestion. The installed command, in a process of its own (this
    one has loaded every command)."""
    simhash = str(Path(sys.executable).parent / "simhash")
    for typed, meant in ((["dedup"], "dedupe"), (["index", "qurey"], "query")):
        done = subprocess.run([simhash, *typed], capture_output=True, text=True)
        assert done.returncode == ExitCode.USAGE and not done.stdout
        assert f"No such command '{typed[-1]}'. Did you mean '{meant}'?" in done.stderr
    far = subprocess.run([simhash, "zzz"], capture_output=True, text=True)
    assert far.returncode == ExitCode.USAGE and "Did you mean" not in far.stderr


@pytest.mark.parametrize("command", ["dedupe", "fingerprint"])
def test_output_named_as_a_page_is_refused_before_any_work(command: str, tmp_path: Path) -> None:
    """`-o out.html` wrote JSON Lines into a file named as a page: refused before reading,
    nothing written; with -f the name is the user's."""
    page = tmp_path / "out.html"
    refused = run(command, "-o", str(page), str(SAMPLE))
    assert refused.exit_code == ExitCode.USAGE and not page.exists()
    assert "--report" in refused.output and "read 8" not in refused.output
    named = run(command, "-f", "json", "-o", str(page), "-qq", str(SAMPLE))
    assert named.exit_code == 0 and json.loads(page.read_text())


def test_a_threshold_outside_a_cosine_is_told_what_a_threshold_is() -> None:
    """`--threshold 90` said only that 90.0 is not in the range -1.0<=x<=1.0."""
    for command in (["dedupe"], ["plan"], ["index", "query", "db"]):
        told = run(*command, "--threshold", "90", str(SAMPLE))
        assert told.exit_code == ExitCode.USAGE
        assert "is not a cosine: a threshold is a cosine from -1 to 1, like 0.9" in told.output
        assert "(0.9 for 90%?)" in told.output
    assert run("dedupe", "--threshold", "0.95", "-qq", str(SAMPLE)).exit_code == 0


def test_the_plan_table_says_what_comparing_every_pair_costs() -> None:
    """The every-pair row showed 0 unrelated pairs and 0 comparisons, free beside schemes that
    compare a few: it compares every pair, and its products are priced as comparisons, none
    left only when the run's pilot already compared them all (which the caption says)."""
    out = json.loads(run("plan", "-f", "json", str(SAMPLE)).stdout)
    every = next(s for s in out["schemes"] if s["kind"] == "every")
    assert every["work"] == 0 and all(s["work"] >= s["expected_candidates"] for s in out["schemes"])
    table = run("plan", "-f", "table", str(SAMPLE)).stdout
    row = next(line for line in table.splitlines() if "--blocks every" in line)
    assert row.split()[-3:-1] == ["15", "0"]  # of the 15 pairs of distinct fingerprints
    said = " ".join(table.split())
    assert "every pair: none left, the sample compared first held them all" in said
    # A pilot that did not compare them all: every pair is priced by its products.
    assert schemes_sink._every_work({"schemes": [{"kind": "every", "work": 12.5}]}) == (
        "its products, priced as so many"
    )


def test_ctrl_c_prints_no_summary_of_what_was_skipped_before_it(tmp_path: Path) -> None:
    """Ctrl-C in the middle of a run printed the summary of the files skipped so far (ten
    lines on a terminal) before `Error: interrupted`: an interrupted run says only that."""
    (tmp_path / "a.txt").write_text("some words to read")
    (tmp_path / "b.bin").write_bytes(b"\x00\x01binary")
    # A batch of files holds 2 MiB at most: the first two are read, b.bin skipped, and its
    # batch done before the named pipe is read, last, and waited for (no writer comes).
    (tmp_path / "big.txt").write_text("words of a long text\n" * 150_000)
    os.mkfifo(tmp_path / "fifo")
    names = [str(tmp_path / name) for name in ("a.txt", "b.bin", "big.txt", "fifo")]
    command = [sys.executable, "-m", "simhash_cli", "fingerprint", "-f", "jsonl", *names]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    # Interrupt once b.bin is skipped and the named pipe waited for.
    while time.monotonic() < deadline and "poll" not in _wchan(process.pid):
        time.sleep(0.05)
    assert "poll" in _wchan(process.pid), "never reached the named pipe"
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == ExitCode.INTERRUPTED
    assert process.stderr.read().decode() == "Error: interrupted\n"
    # Not interrupted, the same run sums up what it skipped.
    done = subprocess.run(command[:-1], capture_output=True, check=False)
    assert b"warning: skipped files: 1 binary" in done.stderr


def _wchan(pid: int) -> str:
    """Where the process sleeps in the kernel."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""
