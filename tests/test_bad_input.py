"""The catalogue of bad inputs (issue: safe to point at real data), one test per row.

Each row runs the CLI as a user would and checks three things: a clear message (a one-line
``Error:`` or a ``warning:``), a sensible exit code, and that the user's files are untouched.
Rows of the catalogue that are not built yet are listed at the end of this module.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.core.events import Event, Skipped, stamp_of
from simhash_cli.errors import ExitCode
from simhash_cli.io.sources.files import ReadPolicy, list_files, read_documents

from conftest import interruptible, member_ids

TEXT = "the quick brown fox jumps over the lazy dog and keeps running far away"


def run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def digest(directory: Path) -> dict[str, str]:
    """Every regular file below ``directory`` and the hash of its bytes: nothing may change."""
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def records(result: Result) -> dict[str, dict[str, object]]:
    return {r["id"]: r for r in map(json.loads, result.stdout.splitlines())}


def one_line_error(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


# ---------------------------------------------------------------- files


def test_binary_file_is_skipped_by_name(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text(TEXT)
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF" + bytes(64) + b"\x01\x02")
    before = digest(tmp_path)
    result = run("fingerprint", "-f", "jsonl", str(tmp_path))
    assert result.exit_code == ExitCode.OK
    assert list(records(result)) == [str(tmp_path / "ok.txt")]
    # Summed up, in a log too (a line for each of 211 binary files of a folder of
    # documentation); -v names each.
    assert f"skipped files: 1 binary ({tmp_path / 'blob.bin'})" in result.stderr
    verbose = run("fingerprint", "-v", "-f", "jsonl", str(tmp_path))
    assert f"skipped {tmp_path / 'blob.bin'}: binary" in verbose.stderr
    assert digest(tmp_path) == before


def test_invalid_utf8_is_replaced_with_one_warning_or_refused_when_strict(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("café crème brûlée".encode("latin-1"))
    result = run("fingerprint", "-f", "jsonl", str(bad))
    assert result.exit_code == ExitCode.OK and len(records(result)) == 1
    assert result.stderr.count(f"warning: {bad}: bytes that are not valid text") == 1
    strict = run("fingerprint", "--strict-encoding", str(bad))
    assert strict.exit_code == ExitCode.ERROR and strict.stdout == ""
    assert one_line_error(strict) == (
        f"Error: {bad}: not valid utf-8 at byte 3 (e9) (--strict-encoding)"
    )


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_a_byte_order_mark_gives_the_same_text_and_fingerprint(
    tmp_path: Path, encoding: str
) -> None:
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    plain.write_text(TEXT + " ünïcödé", encoding="utf-8")
    data = (TEXT + " ünïcödé").encode(encoding)
    if encoding.endswith("-be"):  # the codec writes no BOM for an explicit byte order
        data = {"utf-16-be": b"\xfe\xff", "utf-32-be": b"\x00\x00\xfe\xff"}[encoding] + data
    marked.write_bytes(data)
    out = records(run("fingerprint", "-f", "jsonl", str(plain), str(marked)))
    assert out[str(plain)]["fingerprint"] == out[str(marked)]["fingerprint"]


def test_utf16_without_a_bom_is_skipped_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "export.txt"
    path.write_bytes((TEXT + "\n").encode("utf-16-le"))
    result = run("fingerprint", str(path))
    assert result.exit_code == ExitCode.OK and result.stdout == ""
    assert "looks like UTF-16 without one: add a BOM or convert it to UTF-8" in result.stderr


@pytest.mark.parametrize("content", ["", "   \n\t\n", "!!! ??? ... ---"])
def test_documents_without_tokens_are_reported_empty_not_fingerprinted(
    tmp_path: Path, content: str
) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "b.txt").write_text(TEXT)
    (tmp_path / "hollow.txt").write_text(content)
    (tmp_path / "hollow2.txt").write_text(content)
    fingerprinted = run("fingerprint", "-f", "jsonl", str(tmp_path))
    assert str(tmp_path / "hollow.txt") not in records(fingerprinted)
    assert f"skipped {tmp_path / 'hollow.txt'}: empty" in fingerprinted.stderr
    deduped = json.loads(run("dedupe", "-f", "json", str(tmp_path)).stdout)
    members = [m["id"] for cluster in deduped["clusters"] for m in cluster["members"]]
    assert sorted(members) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    # --include-empty: fingerprint 0 with 0 features, and a cluster of their own.
    kept = records(run("fingerprint", "--include-empty", "-f", "jsonl", str(tmp_path)))
    hollow = kept[str(tmp_path / "hollow.txt")]
    assert (hollow["fingerprint"], hollow["features"]) == ("0000000000000000", 0)
    grouped = json.loads(run("dedupe", "--include-empty", "-f", "json", str(tmp_path)).stdout)
    assert member_ids(grouped["clusters"]) == [
        [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")],
        [str(tmp_path / "hollow.txt"), str(tmp_path / "hollow2.txt")],
    ]
    assert grouped["summary"]["empty_pairs"] == 1
    empty_pair = next(p for p in grouped["pairs"] if p["a"].endswith("hollow.txt"))
    assert empty_pair["cosine"] is None  # undefined, never claimed


def test_empty_documents_never_meet_a_real_one_of_fingerprint_zero(tmp_path: Path) -> None:
    vectors = tmp_path / "v.jsonl"
    lines = [
        {"id": "negative", "features": {"a": -1, "b": -2}},  # fingerprint 0, a real vector
        {"id": "negative2", "features": {"a": -1, "b": -2.5}},
        {"id": "nothing", "features": {}},
        {"id": "zero", "features": {"a": 0}},
    ]
    vectors.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run("dedupe", "--include-empty", "--vectors", str(vectors), "-f", "json")
    assert result.exit_code == ExitCode.OK, result.stderr
    clusters = member_ids(json.loads(result.stdout)["clusters"])
    assert clusters == [["negative", "negative2"], ["nothing", "zero"]]
    fingerprints = tmp_path / "fps.jsonl"
    fingerprints.write_text(
        run("fingerprint", "--include-empty", "--vectors", str(vectors), "-f", "jsonl").stdout
    )
    skipped = run("dedupe", "--fingerprints", str(fingerprints), "-f", "json")
    assert json.loads(skipped.stdout)["summary"]["skipped_by_reason"] == {"empty": 2}
    both = run("dedupe", "--include-empty", "--fingerprints", str(fingerprints), "-f", "json")
    clusters = member_ids(json.loads(both.stdout)["clusters"])
    assert clusters == [["negative", "negative2"], ["nothing", "zero"]]


def test_files_over_max_bytes_are_skipped_without_being_read(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text(TEXT)
    (tmp_path / "one-long-line.log").write_text("token " * 400_000)  # 2.4 MB, no newline
    result = run("fingerprint", "-f", "jsonl", "--max-bytes", "1M", str(tmp_path))
    assert result.exit_code == ExitCode.OK
    assert list(records(result)) == [str(tmp_path / "ok.txt")]
    assert "one-long-line.log: too large (2,400,000 bytes; --max-bytes 1M)" in result.stderr
    assert run("fingerprint", "--max-bytes", "0", str(tmp_path)).stdout.count("\n") == 2
    streamed = run("fingerprint", "--max-bytes", "1000", "-", input="word " * 1000)
    assert "skipped -: too large (more than 1,000 bytes" in streamed.stderr
    bad = run("fingerprint", "--max-bytes", "lots", str(tmp_path))
    assert bad.exit_code == ExitCode.USAGE and "is not a size like" in bad.stderr


def test_a_fifo_inside_a_directory_is_skipped_before_opening(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text(TEXT)
    os.mkfifo(tmp_path / "pipe")
    result = run("fingerprint", "-f", "jsonl", str(tmp_path))
    assert result.exit_code == ExitCode.OK and len(records(result)) == 1
    assert f"skipped {tmp_path / 'pipe'}: not a regular file" in result.stderr


def test_a_fifo_named_whose_writer_comes_late_is_waited_for(tmp_path: Path) -> None:
    """A named pipe whose writer opened late was read as empty (exit 0), and the writer then
    waited for ever: it is waited for, as cat waits."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [sys.executable, "-m", "simhash_cli", "fingerprint", "-f", "jsonl", str(fifo)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def late() -> None:
        time.sleep(1.5)  # the command has long opened its input by then
        fifo.write_text(TEXT)

    writer = threading.Thread(target=late, daemon=True)
    writer.start()
    stdout, stderr = process.communicate(timeout=60)
    writer.join(timeout=10)
    assert process.returncode == ExitCode.OK, stderr
    assert not writer.is_alive() and len(stdout.splitlines()) == 1


def test_a_fifo_named_with_a_writer_is_read(tmp_path: Path) -> None:
    # What `simhash fingerprint <(curl ...)` amounts to.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [sys.executable, "-m", "simhash_cli", "fingerprint", "-f", "jsonl", str(fifo)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writer = threading.Thread(target=lambda: fifo.write_text(TEXT))
    writer.start()
    stdout, _ = process.communicate(timeout=60)
    writer.join(timeout=60)
    assert process.returncode == ExitCode.OK
    assert [json.loads(line)["id"] for line in stdout.splitlines()] == [str(fifo)]


def test_a_file_that_vanishes_after_listing_is_skipped(tmp_path: Path) -> None:

    (tmp_path / "a.txt").write_text(TEXT)
    gone = tmp_path / "gone.txt"
    gone.write_text(TEXT)
    files = list_files([str(tmp_path)], lambda event: None)
    gone.unlink()
    events: list[Event] = []
    read = list(read_documents(files, events.append))
    assert [d.id for d in read] == [str(tmp_path / "a.txt")]
    assert events == [Skipped(str(gone), "unreadable: No such file or directory")]


def test_a_file_that_changes_after_listing_is_read_as_it_is_then_and_stamped(
    tmp_path: Path,
) -> None:

    grows = tmp_path / "grows.txt"
    grows.write_text(TEXT)
    files = list_files([str(tmp_path)], lambda event: None)
    grows.write_text(TEXT + " and then some" * 100)  # after listing, before reading
    events: list[Event] = []
    policy = ReadPolicy(max_bytes=len(TEXT) + 100)
    assert list(read_documents(files, events.append, policy=policy)) == []
    skipped = events[0]  # the limit holds for what is there now
    assert isinstance(skipped, Skipped) and skipped.reason.startswith("too large")
    (document,) = read_documents(files, events.append)
    assert document.text.endswith("and then some")
    assert document.stamp == stamp_of(grows.stat())
    # Written to after the scan: a plan will not act on it (tests/test_actions.py).
    grows.write_text("changed once more")
    assert document.stamp != stamp_of(grows.stat())


# Run as this user, or as nobody when the tests run as root (CI does): root reads everything.
_AS_NOBODY = """
import codecs, os, sys
import simhash_cli.cli as cli
import pathspec  # imported when a walk first reads an ignore file: imported as root here
import simhash_cli.cli.fingerprint  # the command, imported when asked for: likewise
import simhash_cli.app.fingerprint, simhash_cli.engines, simhash_cli.io.sinks.messages
import simhash_cli.io.sinks.tables  # (and what runs it, imported by the run)
for name in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-8-sig", "latin-1"):
    codecs.lookup(name)  # codecs load lazily, and the interpreter's files are root's alone
os.setgid(65534)
os.setuid(65534)
sys.argv = ["simhash", *sys.argv[1:]]
cli.main()
"""


def test_unreadable_files_and_directories_are_warned_and_counted_not_empty() -> None:
    root = Path(tempfile.mkdtemp(prefix="simhash-unreadable-", dir="/tmp"))
    try:
        root.chmod(0o755)
        (root / "ok.txt").write_text(TEXT)
        (root / "secret.txt").write_text(TEXT)
        (root / "secret.txt").chmod(0)
        (root / "locked").mkdir()
        (root / "locked" / "inner.txt").write_text(TEXT)
        (root / "locked").chmod(0)
        command = ["fingerprint", "-f", "jsonl", str(root)]
        if os.geteuid() == 0:
            argv = [sys.executable, "-c", _AS_NOBODY, *command]
        else:
            argv = [sys.executable, "-m", "simhash_cli", *command]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == ExitCode.OK, done.stderr
        assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [
            str(root / "ok.txt")
        ]
        assert f"skipped {root / 'secret.txt'}: unreadable: Permission denied" in done.stderr
        assert f"skipped {root / 'locked'}: unreadable directory" in done.stderr
        assert "(2 skipped: 1 unreadable, 1 unreadable directory)" in done.stderr
    finally:
        (root / "locked").chmod(0o755)
        shutil.rmtree(root)


# ---------------------------------------------------------------- trees


def test_a_symlink_loop_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    result = run("fingerprint", "-f", "jsonl", str(tmp_path))
    assert result.exit_code == ExitCode.OK
    assert list(records(result)) == [str(tmp_path / "a.txt")]


def test_follow_symlinks_enters_linked_directories_and_reports_a_loop_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.txt").write_text(TEXT)
    (tmp_path / "a" / "b" / "up").symlink_to(tmp_path / "a", target_is_directory=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "o.txt").write_text(TEXT + " elsewhere")
    (tmp_path / "a" / "link").symlink_to(elsewhere, target_is_directory=True)
    root = str(tmp_path / "a")
    plain = run("fingerprint", "-f", "jsonl", root)
    assert list(records(plain)) == [f"{root}/b/x.txt"]
    followed = run("fingerprint", "-f", "jsonl", "--follow-symlinks", root)
    assert followed.exit_code == ExitCode.OK
    assert list(records(followed)) == [f"{root}/b/x.txt", f"{root}/link/o.txt"]
    assert followed.stderr.count("symlink loop") == 2  # the warning and the summary's count
    assert f"skipped {root}/b/up: symlink loop: the directory {root} again" in followed.stderr


_PEAK = """
import sys
import simhash_cli.cli as cli
try:
    cli.main(sys.argv[1:], standalone_mode=False)
finally:
    status = open("/proc/self/status").read()
    peak = next(line for line in status.splitlines() if line.startswith("VmHWM"))
    print(int(peak.split()[1]) // 1024, file=sys.stderr)
"""


def test_fifty_thousand_files_in_one_directory_stream_in_flat_memory(tmp_path: Path) -> None:
    def peak_mb(directory: Path) -> tuple[int, int]:
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, "fingerprint", "-qq", "-j", "1", str(directory)],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        return len(done.stdout.splitlines()), int(done.stderr.splitlines()[-1])

    small, large = tmp_path / "small", tmp_path / "large"
    for directory, count in ((small, 5_000), (large, 50_000)):
        directory.mkdir()
        for i in range(count):
            (directory / f"{i:05d}.txt").write_text(f"note {i} about item {i % 97} and more")
    small_docs, small_peak = peak_mb(small)
    large_docs, large_peak = peak_mb(large)
    assert (small_docs, large_docs) == (5_000, 50_000)
    # Ten times the files, not ten times the memory: batches, not the corpus, are resident.
    assert large_peak < small_peak + 120, (small_peak, large_peak)


def test_the_same_file_reached_twice_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    os.link(tmp_path / "a.txt", tmp_path / "hard.txt")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text(TEXT + " more")
    result = run("dedupe", "-f", "json", str(tmp_path), str(tmp_path / "sub"), str(tmp_path))
    out = json.loads(result.stdout)
    assert out["summary"]["documents"] == 2  # a.txt (or its hard link) and sub/b.txt
    assert all(pair["a"] != pair["b"] for pair in out["pairs"])
    assert "same file as" in result.stderr


def test_non_utf8_and_newline_file_names_stay_valid_in_json_and_csv(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/caf\xe9.txt"
    with open(raw, "wb") as handle:
        handle.write(TEXT.encode())
    (tmp_path / "two\nlines.txt").write_text(TEXT + " again")
    result = run("dedupe", "-f", "json", "--threshold", "0.5", str(tmp_path))
    assert result.exit_code == ExitCode.OK
    document = json.loads(result.stdout)  # valid JSON whatever the names
    names = {p["a"] for p in document["pairs"]} | {p["b"] for p in document["pairs"]}
    assert any("two\nlines" in name for name in names)
    assert len(run("dedupe", "-f", "csv", "--threshold", "0.5", str(tmp_path)).stdout) > 0
    report = tmp_path.parent / f"{tmp_path.name}-report.json"
    written = run("dedupe", "--threshold", "0.5", "-o", str(report), str(tmp_path))
    assert written.exit_code == ExitCode.OK, written.stderr
    assert json.loads(report.read_text(encoding="utf-8"))["pairs"]  # valid JSON in the file too


# ---------------------------------------------------------------- arguments


def test_a_missing_path_among_several_fails_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    result = run("dedupe", str(tmp_path / "a.txt"), str(tmp_path / "missing.txt"))
    assert result.exit_code == ExitCode.USAGE and result.stdout == ""
    assert one_line_error(result) == f"Error: no such file or directory: {tmp_path}/missing.txt"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--bits", "63"], "--bits"),
        (["--bits", "64", "--blocks", "5"], "--blocks"),
        (["--bits", "0"], "--bits"),
    ],
)
def test_bits_and_blocks_that_do_not_fit(args: list[str], says: str) -> None:
    result = run("dedupe", *args, "-")
    assert result.exit_code == ExitCode.USAGE
    assert says in result.stderr and "Traceback" not in result.stderr


def test_fingerprints_of_other_settings_are_refused_naming_both(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    narrow = run("fingerprint", "--bits", "32", str(tmp_path / "a.txt")).stdout
    wide = run("fingerprint", "--bits", "64", str(tmp_path / "a.txt")).stdout
    (tmp_path / "mixed.jsonl").write_text(narrow + wide)
    result = run("dedupe", "--fingerprints", str(tmp_path / "mixed.jsonl"))
    assert result.exit_code != ExitCode.OK
    error = one_line_error(result)
    assert "bits=32" in error and "bits=64" in error


# ---------------------------------------------------------------- JSON input


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"id": 1, "features": {"a": ', "invalid JSON"),
        ('{"id": 1, "features": {"a": NaN}}', "NaN is not a number"),
        ('{"id": 1, "features": {"a": Infinity}}', "Infinity is not a number"),
        ('{"id": 1, "features": {"a": 1e400}}', "not finite"),
        ('{"id": 1, "features": {"a": ' + "9" * 400 + "}}", "not finite"),
        ('{"id": 1, "features": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid JSON"),
    ],
)
def test_bad_vector_lines_are_refused_by_file_and_line(
    tmp_path: Path, line: str, says: str
) -> None:
    source = tmp_path / "v.jsonl"
    source.write_text('{"id": 0, "features": {"ok": 1}}\n' + line + "\n")
    result = run("fingerprint", "--vectors", str(source))
    assert result.exit_code == ExitCode.ERROR and result.stdout == ""
    error = one_line_error(result)
    assert error.startswith(f"Error: {source}:2: ") and says in error


def test_on_error_skip_leaves_malformed_lines_out_and_counts_them(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    source.write_text(
        '{"id": "a", "features": {"x": 1}}\n'
        '{"id": "b", "features": {"x": NaN}}\n'
        "not json at all\n"
        '{"id": "c", "features": {"x": 1, "y": 2}}\n'
    )
    result = run("fingerprint", "-f", "jsonl", "--on-error", "skip", "--vectors", str(source))
    assert result.exit_code == ExitCode.OK
    assert list(records(result)) == ["a", "c"]
    assert f"skipped {source}:2: malformed: invalid JSON: NaN is not a number" in result.stderr
    assert f"skipped {source}:3: malformed: invalid JSON" in result.stderr
    assert "(2 skipped: 2 malformed)" in result.stderr
    fps = tmp_path / "fps.jsonl"
    fps.write_text(
        run("fingerprint", "--vectors", str(tmp_path / "v.jsonl"), "--on-error", "skip").stdout
        + "{}\n"
    )
    stopped = run("dedupe", "--fingerprints", str(fps))
    assert stopped.exit_code == ExitCode.ERROR and "not a fingerprint record" in stopped.stderr
    skipped = run("dedupe", "--on-error", "skip", "--fingerprints", str(fps))
    assert skipped.exit_code == ExitCode.OK and f"skipped {fps}:3: malformed" in skipped.stderr


def test_vector_files_with_bom_crlf_blank_lines_and_odd_keys_are_read(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    lines = ['{"id": "a", "features": {"\\ud800x": 1, "b": 2}}', "", '{"id": "e", "features": {}}']
    source.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    result = run("fingerprint", "-f", "jsonl", "--vectors", str(source))
    assert result.exit_code == ExitCode.OK
    assert list(records(result)) == ["a"]  # a lone surrogate is a key; {} is empty
    assert "skipped e: empty" in result.stderr


# ---------------------------------------------------------------- output


def test_output_to_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    for i in range(3000):
        (tmp_path / f"{i:04d}.txt").write_text(f"{TEXT} {i}")
    done = subprocess.run(
        f"{sys.executable} -m simhash_cli fingerprint -q -f jsonl {tmp_path} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_a_locale_that_cannot_encode_the_names_falls_back_to_escapes(tmp_path: Path) -> None:
    (tmp_path / "naïve café.txt").write_text(TEXT)
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "LC_ALL": "C"}
    for fmt in ("jsonl", "table", "csv"):
        done = subprocess.run(
            [sys.executable, "-m", "simhash_cli", "fingerprint", "-f", fmt, str(tmp_path)],
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == ExitCode.OK, done.stderr
        assert b"Traceback" not in done.stderr
        done.stdout.decode("ascii")  # nothing the locale cannot carry


def test_output_file_is_replaced_whole_or_left_as_it_was(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(1500):
        (docs / f"{i:04d}.txt").write_text(f"{TEXT} {i}")
    report = tmp_path / "report.jsonl"
    report.write_text("the previous, good report\n")
    # The last file fails --strict-encoding after the first batch of 1,000 was written.
    (docs / "9999.txt").write_bytes(b"caf\xe9")
    args = ["fingerprint", "-qq", "-j", "1", "--strict-encoding", "-o", str(report), str(docs)]
    failed = run(*args)
    assert failed.exit_code == ExitCode.ERROR
    assert report.read_text() == "the previous, good report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "report.jsonl"]  # no temp
    report.chmod(0o640)
    (docs / "9999.txt").write_text("fixed now")
    assert run(*args).exit_code == ExitCode.OK
    assert len(report.read_text().splitlines()) == 1501
    assert report.stat().st_mode & 0o777 == 0o640  # the replaced file's mode, not 0600
    fresh = tmp_path / "fresh.jsonl"
    mask = os.umask(0o022)
    try:
        assert run("fingerprint", "-qq", "-o", str(fresh), str(docs / "0001.txt")).exit_code == 0
    finally:
        os.umask(mask)
    assert fresh.stat().st_mode & 0o777 == 0o644  # a new file's mode, as the umask says


def test_output_file_format_follows_its_extension(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    for name, check in (("r.json", json.loads), ("r.csv", lambda t: t.startswith("id,"))):
        result = run("fingerprint", "-o", str(tmp_path / name), str(tmp_path / "a.txt"))
        assert result.exit_code == ExitCode.OK and result.stdout == ""
        assert check((tmp_path / name).read_text())


def test_output_over_an_input_file_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text(TEXT)
    fps = tmp_path / "fps.jsonl"
    fps.write_text(run("fingerprint", str(notes)).stdout)
    for args in (
        ["fingerprint", "-o", str(notes), str(notes)],
        ["dedupe", "--fingerprints", str(fps), "-o", str(fps)],
        ["dedupe", "--plan", str(notes), str(notes), str(fps)],
    ):
        result = run(*args)
        assert result.exit_code == ExitCode.USAGE, args
        assert "is also an input: it would be replaced" in result.stderr
    assert notes.read_text() == TEXT and fps.read_text().startswith('{"id"')


def test_output_to_a_missing_directory_fails_before_any_work(tmp_path: Path) -> None:
    result = run("dedupe", "-o", str(tmp_path / "nowhere" / "r.json"), str(tmp_path))
    assert result.exit_code == ExitCode.USAGE
    assert "no such directory" in result.stderr and "read" not in result.stderr


def _running(pid: int) -> bool:
    """Still a live process (an exited one may linger as a zombie where nothing reaps it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_ctrl_c_with_workers_exits_130_and_leaves_no_process_or_report(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    # Batches of files are cut at 2 MiB and workers start once the first has taken 0.3 s:
    # enough batches that workers start however fast this machine is at the moment.
    for i in range(6000):
        (docs / f"{i:05d}.txt").write_text(f"{TEXT} {i} " * 100)
    report = tmp_path / "report.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simhash_cli",
            "fingerprint",
            "-j",
            "2",
            "-o",
            str(report),
            str(docs),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and not workers:
        workers = _children(process.pid)
        time.sleep(0.05)
    assert workers, "no worker process started"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == ExitCode.INTERRUPTED
    assert stderr.splitlines()[-1] == "Error: interrupted" and "Traceback" not in stderr
    workers = sorted(set(workers) | set(_children(process.pid)))
    settled = time.monotonic() + 10
    while time.monotonic() < settled and any(map(_running, workers)):
        time.sleep(0.1)
    assert not any(map(_running, workers))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]  # no report, no temp file


# Acting on plans (simhash apply, its journal and --script) is tested in tests/test_apply.py,
# the plans themselves in tests/test_actions.py. The fuzz targets are in fuzz/.


def test_documents_alike_as_a_whole_stop_at_the_pair_budget_not_at_memory(
    tmp_path: Path,
) -> None:
    for i in range(60):
        (tmp_path / f"{i:02d}.txt").write_text(f"{TEXT} {i}")  # all near-duplicates: 1,770 pairs
    result = run("dedupe", "--max-pairs", "500", "-f", "json", str(tmp_path))
    assert result.exit_code == ExitCode.ERROR and result.stdout == ""
    line = one_line_error(result)
    assert "more than 500 pairs reach exact cosine >= 0.9 among 60 documents" in line
    assert "--max-pairs raises the limit" in line
    assert run("dedupe", "-qq", "-f", "json", str(tmp_path)).exit_code == ExitCode.OK


def test_a_dangling_link_is_said_to_be_one(tmp_path: Path) -> None:
    """A symbolic link to nothing was "unreadable: No such file or directory"."""
    (tmp_path / "ok.txt").write_text(TEXT)
    (tmp_path / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    result = run("fingerprint", "-f", "jsonl", str(tmp_path))
    assert result.exit_code == ExitCode.OK
    assert list(records(result)) == [str(tmp_path / "ok.txt")]
    assert f"dangling symbolic link (to {tmp_path / 'nowhere.txt'})" in result.stderr
    assert "unreadable" not in result.stderr
