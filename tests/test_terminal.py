"""The installed command in a real terminal: stderr on a pseudo-terminal (so progress is drawn
live), stdout sent to a file or a pipe. CliRunner never sees this: no test of it has a terminal.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.cells import cell_len

from simhash_cli.io.sinks.console import wrapped_at_spaces

from conftest import SAMPLE
from terminal import SIMHASH, on_a_terminal, screen_of


@pytest.mark.parametrize("command", ["fingerprint", "dedupe"])
def test_records_reach_a_file_while_progress_is_drawn_on_the_terminal(
    command: str, tmp_path: Path
) -> None:
    out = tmp_path / "records.jsonl"
    with open(out, "wb") as handle:
        code, shown = on_a_terminal([command, "-f", "jsonl", str(SAMPLE)], handle.fileno())
    assert code == 0, shown.decode(errors="replace")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == (8 if command == "fingerprint" else 2)  # 2 clusters
    assert b'"fingerprint"' not in shown and b'"members"' not in shown  # none on the screen


def test_records_reach_a_pipe_while_progress_is_drawn_on_the_terminal(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    received = bytearray()

    def collect() -> None:
        while chunk := os.read(read_end, 65536):
            received.extend(chunk)

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        code, shown = on_a_terminal(["fingerprint", str(SAMPLE)], write_end)
    finally:
        os.close(write_end)
    reader.join(timeout=10)
    os.close(read_end)
    assert code == 0, shown.decode(errors="replace")
    assert received.count(b'"fingerprint"') == 8  # piped: JSON Lines, every document


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sample corpus as ``c/``, a plan of it and an index of it, made once for
    the module: the commands run here read them and change nothing (apply is a dry run)."""
    root = tmp_path_factory.mktemp("work")
    shutil.copytree(SAMPLE, root / "c")
    for args in (["dedupe", "-qq", "--plan", "plan.json", "c"], ["index", "add", "-qq", "db", "c"]):
        done = subprocess.run([SIMHASH, *args], cwd=root, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
    return root


# Every command that writes data (``index add`` and ``prune`` only say what they did).
COMMANDS = {
    "fingerprint": ["fingerprint", "c"],
    "dedupe": ["dedupe", "c"],
    "compare": ["compare", "c/shipping-policy.txt", "c/shipping-policy-revised.txt"],
    "plan": ["plan", "c"],
    "calibrate": ["calibrate", "c"],
    "apply": ["apply", "plan.json", "--action", "move-to", "moved"],
    "index query": ["index", "query", "db", "c/shipping-policy.txt"],
    "index dedupe": ["index", "dedupe", "db"],
    "index stats": ["index", "stats", "db"],
}


def parses(fmt: str) -> Callable[[str], object]:
    """A reader of the format that fails on anything else."""
    if fmt == "json":
        return json.loads
    if fmt == "jsonl":
        return lambda text: [json.loads(line) for line in text.splitlines()]
    if fmt == "csv":
        return lambda text: list(csv.DictReader(io.StringIO(text, newline="")))
    return lambda text: text


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "csv"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_data_lands_in_the_file_and_messages_on_the_terminal(
    workdir: Path, command: str, fmt: str
) -> None:
    """Every command and format, stdout to a file and stderr on an 80-column terminal: the
    data all in the file, in its format; none of it on the screen; the screen's words none of
    the file's."""
    out = workdir / "out"
    with open(out, "wb") as handle:
        code, shown = on_a_terminal(
            [*COMMANDS[command], "-f", fmt], handle.fileno(), columns=80, cwd=workdir
        )
    screen = screen_of(shown, 80)
    assert code == 0, "\n".join(screen)
    data = out.read_text(encoding="utf-8")
    assert data.strip(), f"{command} -f {fmt} wrote nothing to its file"
    assert parses(fmt)(data) is not None
    shown_lines = {line.strip() for line in screen if line.strip()}
    written = {line.strip() for line in data.splitlines() if len(line.strip()) > 3}
    assert not shown_lines & written, f"data on the screen: {sorted(shown_lines & written)[:3]}"
    assert not any("━" in line or "⠋" in line for line in screen), "progress left on the screen"


@pytest.mark.parametrize("columns", [80, 160])
@pytest.mark.parametrize("listing", ["clusters", "pairs"])
def test_tables_fit_the_terminal_without_breaking_a_name(
    tmp_path: Path, columns: int, listing: str
) -> None:
    """dedupe's table on a terminal of 80 or 160 columns: one line per row, each name whole
    or shortened with an ellipsis, never folded onto a second line."""
    workdir = tmp_path
    shutil.copytree(SAMPLE, workdir / "c")
    deep = workdir / "c" / "a rather long directory name" / "and another level below it"
    deep.mkdir(parents=True)
    long_name = "shipping-policy-copied-again-with-a-rather-long-name-indeed.txt"
    shutil.copy(workdir / "c" / "shipping-policy.txt", deep / long_name)
    code, shown = on_a_terminal(
        ["dedupe", "-qq", "--list", listing, "c"], None, columns=columns, cwd=workdir
    )
    screen = screen_of(shown, columns)
    assert code == 0, "\n".join(screen)
    names = sorted(p.name for p in (workdir / "c").rglob("*.txt"))
    rule = next(n for n, line in enumerate(screen) if "────" in line)
    body = [line for line in screen[rule + 1 :] if line.strip() and "dist:" not in line]
    # One line per row, nothing folded: 6 members of 2 clusters, or 6 + 1 pairs.
    assert len(body) == (6 if listing == "clusters" else 7), "\n".join(screen)
    for line in body:
        cells = line.split()
        assert any(name in line or "…" in line for name in names), line
        assert not any(cell.endswith("-") for cell in cells), line  # no name cut at a dash
    if columns == 160 and listing == "clusters":
        assert any(long_name in line for line in body)  # room enough: shown whole


@pytest.mark.parametrize("command", [["dedupe"], ["fingerprint"], ["plan"]])
def test_a_table_into_a_pipe_ends_its_lines_where_their_text_does(command: list[str]) -> None:
    """Rich pads every line to the table's width: a diff or a grep of the file met them."""
    for colour in ("auto", "always"):  # styled, a padded cell's spaces sit among its codes
        piped = subprocess.run(
            [SIMHASH, "--color", colour, *command, "-f", "table", str(SAMPLE)],
            capture_output=True,
            text=True,
        )
        assert piped.returncode == 0 and piped.stdout.count("\n") > 3, piped.stderr
        shown = re.sub(r"\x1b\[[0-9;]*m", "", piped.stdout)
        assert [line for line in shown.splitlines() if line != line.rstrip()] == [], colour
        assert colour == "auto" or "\x1b[" in piped.stdout  # the styles kept


@pytest.mark.parametrize("listing", ["pairs", "clusters"])
def test_a_narrow_table_keeps_its_title_on_one_line(tmp_path: Path, listing: str) -> None:
    """Rich wraps a title at its table's width: two short names under a long folder folded
    ``1 near-duplicate pair (paths`` / ``under ...)``, into a pipe as on a terminal."""
    folder = tmp_path / "a-rather-long-folder-name-for-a-narrow-table"
    folder.mkdir()
    for name in ("a.txt", "b.txt"):
        shutil.copy(SAMPLE / "volcano-report.txt", folder / name)
    piped = subprocess.run(
        [SIMHASH, "dedupe", "-q", "-f", "table", "--list", listing, folder.name],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    title = piped.stdout.splitlines()[0]
    assert title.endswith(f"(paths under {folder.name}/)"), piped.stdout


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "csv", "groups"])
def test_a_reader_gone_is_exit_141_in_every_format(fmt: str) -> None:
    """``simhash dedupe -f FMT DIR | head -1`` whose reader has gone: 141, quietly, as a Unix
    tool ends when its pipe closes."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [SIMHASH, "dedupe", "-qq", "-f", fmt, str(SAMPLE)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == b""


def test_apply_draws_its_table_after_the_bar_is_gone(workdir: Path) -> None:
    code, shown = on_a_terminal(COMMANDS["apply"], None, columns=80, cwd=workdir)
    screen = screen_of(shown, 80)
    assert code == 0, "\n".join(screen)
    assert screen[0].startswith("acting only inside "), "\n".join(screen)
    assert any(line.startswith("3 steps: move each file to ") for line in screen)
    assert not any("━" in line for line in screen)
    assert screen[-1].startswith("dry run: 3 steps would be taken")


@pytest.mark.parametrize("verbose", [False, True])
def test_skips_are_summed_up_on_a_terminal_and_listed_when_verbose(
    tmp_path: Path, verbose: bool
) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    for n in range(40):
        (tree / f"module{n:02}.pyc").write_bytes(b"\x00\x01" * 64)
    (tree / "a.txt").write_text("a short note about the weather today " * 3)
    (tree / "b.txt").write_text("a longer letter about the trip to the coast " * 3)
    with open(os.devnull, "wb") as sink:
        code, shown = on_a_terminal(
            ["dedupe", *(["-v"] if verbose else []), "t"], sink.fileno(), columns=160, cwd=tmp_path
        )
    screen = screen_of(shown, 160)
    assert code == 0, "\n".join(screen)
    each = [line for line in screen if line.startswith("warning: skipped t/module")]
    if verbose:
        assert len(each) == 40
    else:
        assert each == []
        (summary,) = [line for line in screen if line.startswith("warning: skipped files: 40")]
        assert summary.startswith(
            "warning: skipped files: 40 binary (e.g. t/module00.pyc, t/module01.pyc, "
            "t/module02.pyc); --verbose lists every one"
        )
    assert "read 2 documents (40 skipped: 40 binary)" in screen


@pytest.mark.parametrize("columns", [80, 160])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_table_on_the_terminal_is_drawn_after_the_progress_is_gone(
    workdir: Path, command: str, columns: int
) -> None:
    """stdout and stderr both on one terminal of 80 or 160 columns: the table and the summary,
    no trace of a progress bar or spinner, and no line of the table glued to one."""
    code, shown = on_a_terminal(
        [*COMMANDS[command], "-f", "table"], None, columns=columns, cwd=workdir
    )
    screen = screen_of(shown, columns)
    assert code == 0, "\n".join(screen)
    assert screen, f"{command} showed nothing"
    # A bar's or a spinner's marks: its elapsed time, its count, its spinner's dots.
    marks = ("0:00:0", " 0/?", *"⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    assert not any(mark in line for line in screen for mark in marks), "\n".join(screen)


def test_reading_standard_input_from_a_terminal_says_so(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with open(out, "wb") as handle:
        code, shown = on_a_terminal(
            ["fingerprint", "-"], handle.fileno(), typed=b"a few words typed by hand\n\x04"
        )
    screen = screen_of(shown, 100)
    assert code == 0, "\n".join(screen)
    assert "reading standard input (type or paste the text, then Ctrl-D)" in screen
    assert json.loads(out.read_text())["features"] == 6


def test_a_name_in_a_status_line_is_shown_not_obeyed(tmp_path: Path) -> None:
    """The spinner's line names REF: its escape sequences and its brackets (Rich markup) are
    shown as text, never sent to the terminal or read as styles."""
    name = "ref\x1b]0;pwned\x07[bold].jsonl"
    (tmp_path / name).write_text('{"id": "r", "text": "hello world out there in the sun"}\n')
    given = tmp_path / "in.jsonl"
    given.write_text('{"id": "a", "text": "hello world out there in the sun"}\n')
    code, shown = on_a_terminal(
        ["dedupe", "--texts", str(given), "--against", name], subprocess.DEVNULL, cwd=tmp_path
    )
    assert code == 0, shown.decode(errors="replace")
    assert b"reading the reference ref\\x1b]0;pwned\\x07[bold].jsonl" in shown
    assert b"\x1b]0;pwned" not in shown and b"\x07" not in shown


def test_the_summary_fits_a_screen_and_wraps_only_at_spaces(tmp_path: Path) -> None:
    """dedupe's summary at 80 columns: three lines by default; -v's whole account wraps its
    long lines at a space, never mid-word (the same words as the one-line-each log)."""
    out = tmp_path / "out.jsonl"
    with open(out, "wb") as handle:
        code, shown = on_a_terminal(["dedupe", str(SAMPLE)], handle.fileno(), columns=80)
    assert code == 0 and screen_of(shown, 80) == [
        "read 8 documents",
        "4 near-duplicate pairs in 2 clusters (cosine >= 0.9)",
        "recall 1.00: every pair was compared, none was missed",
    ]
    with open(out, "wb") as handle:
        code, shown = on_a_terminal(["dedupe", "-v", str(SAMPLE)], handle.fileno(), columns=80)
    screen = screen_of(shown, 80)
    logged = subprocess.run(
        [SIMHASH, "dedupe", "-v", str(SAMPLE)], capture_output=True, text=True, check=True
    ).stderr
    assert max(len(line) for line in logged.splitlines()) > 80  # there is something to wrap
    assert " ".join(screen).split() == logged.split()


def test_an_error_wraps_at_a_space_on_the_terminal_and_stays_one_line_in_a_log() -> None:
    """click writes a misuse's usage and ``Error:`` lines itself, unwrapped: at 80 columns the
    terminal cut them mid-word (``fingerprint width (64) evenly`` / ``, not 7``)."""
    for args in (["dedupe", "--blocks", "7", str(SAMPLE)], ["dedupe", "--keep", "nope"]):
        code, shown = on_a_terminal(args, subprocess.DEVNULL, columns=80)
        screen = screen_of(shown, 80)
        logged = subprocess.run([SIMHASH, *args], capture_output=True, text=True).stderr
        error = next(line for line in logged.splitlines() if line.startswith("Error:"))
        assert code == 2 and len(error) > 80  # there is something to wrap
        assert max(len(line) for line in screen) <= 80  # each line whole on the screen
        assert " ".join(screen).split() == logged.split()


def test_a_help_shown_for_no_argument_is_laid_out_as_the_help_is() -> None:
    """``simhash index`` alone shows its help as an error does: it is click's own layout, not
    an error line to wrap (rewrapped at 45 columns, its lists lost their indentation)."""
    alone = screen_of(on_a_terminal(["index"], None, columns=45)[1], 45)
    asked = screen_of(on_a_terminal(["index", "--help"], None, columns=45)[1], 45)
    assert alone == asked and any(line.startswith("  ") for line in alone)


def test_an_error_line_wraps_by_the_cells_of_its_characters_and_keeps_a_long_word_whole() -> None:
    wide = "Error: no index at /tmp/" + "文档 " * 12 + "x"
    assert all(cell_len(line) <= 60 for line in wrapped_at_spaces(wide, 60).split("\n"))
    path = "/srv/" + "a" * 70 + "/index.db"
    lines = wrapped_at_spaces(f"Error: no index at {path}: make one with index add", 40)
    # The path copied from the screen still works: the terminal folds it, never a newline.
    assert lines.split("\n") == ["Error: no index at", path + ":", "make one with index add"]


def test_each_table_at_80_columns_shows_what_it_exists_to_show(tmp_path: Path) -> None:
    """At 80 columns: plan keeps its recall and cost columns, apply's dry run says where the
    files go, whole, and fingerprint and index query keep each name on one line."""
    deep = tmp_path / "a rather long directory name" / "and another level below it"
    shutil.copytree(SAMPLE, deep)
    plan = tmp_path / "plan.json"
    moved = tmp_path / "near-duplicates-moved-out-of-the-way"
    made = (
        ["dedupe", "-q", "--plan", str(plan), str(tmp_path)],
        ["index", "add", "-q", str(tmp_path / "db"), str(tmp_path)],
    )
    for args in made:
        subprocess.run([SIMHASH, *args], capture_output=True, check=True)

    def screen(*args: str) -> list[str]:
        code, shown = on_a_terminal(list(args), None, columns=80, cwd=tmp_path)
        lines = screen_of(shown, 80)
        assert code == 0, "\n".join(lines)
        return lines

    header = next(line for line in screen("plan", str(deep)) if "scheme" in line)
    assert header.split() == ["scheme", "recall", "unrelated", "comparisons", "cosine", "0.5..1"]
    dry = screen("apply", str(plan), "--action", "move-to", str(moved))
    assert str(moved) in "".join(dry)  # whole, if folded where it has no space
    assert "followed by its absolute path" in " ".join(dry)
    printed = screen("fingerprint", "--include", "*.txt", ".")
    rows = [line for line in printed if re.search(r"\b[0-9a-f]{16}\b", line)]
    title = "8 fingerprints (bits=64 seed=12345 tokenizer=unicode-word weighting=tf"
    assert any(line.startswith(title) for line in printed)  # not folded to the table's width
    assert len(rows) == 8  # a line per document: no name folded, however long its path
    found = screen("index", "query", str(tmp_path / "db"), str(deep / "shipping-policy.txt"))
    rule = next(n for n, line in enumerate(found) if "────" in line)
    assert len([line for line in found[rule + 1 :] if ".txt" in line]) == 2  # a line a match


def test_reading_records_counts_them_on_the_terminal(tmp_path: Path) -> None:
    """dedupe --texts FILE shows how many records it has read (a spinner alone said nothing
    of how far a large file had come), and the count is gone when the search begins."""
    records = tmp_path / "t.jsonl"
    words = (SAMPLE / "volcano-report.txt").read_text().split()
    # Records of their own words each: the reading is the work, not 4.5 million pairs.
    records.write_text(
        "".join(
            json.dumps({"id": n, "text": " ".join(f"{w}{n}" for w in words)}) + "\n"
            for n in range(3000)
        )
    )
    with open(tmp_path / "out", "wb") as handle:
        code, shown = on_a_terminal(["dedupe", "-j", "2", "--texts", str(records)], handle.fileno())
    assert code == 0
    assert b"reading the records of " in shown and re.search(rb"\d records", shown)
    assert not any("records " in line for line in screen_of(shown, 100))  # gone when done


def test_a_terminal_is_not_warned_of_empty_files_every_run(tmp_path: Path) -> None:
    """A tree of code has an empty __init__.py in every package: on a terminal the line of
    what was read counts them, with no warning; -v names each."""
    for package in ("a", "b", "c"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        shutil.copy(SAMPLE / "volcano-report.txt", tmp_path / package / "report.txt")
    with open(tmp_path / "out", "wb") as handle:
        code, shown = on_a_terminal(["dedupe", "a", "b", "c"], handle.fileno(), cwd=tmp_path)
    screen = screen_of(shown, 100)
    assert code == 0 and screen[0] == "read 3 documents (3 skipped: 3 empty)"
    assert not any("warning" in line for line in screen)
    with open(tmp_path / "out", "wb") as handle:
        code, shown = on_a_terminal(["dedupe", "-v", "a", "b", "c"], handle.fileno(), cwd=tmp_path)
    assert "warning: skipped a/__init__.py: empty (no tokens)" in screen_of(shown, 100)


def test_a_terminal_counts_the_short_texts_it_was_asked_to_leave_out(tmp_path: Path) -> None:
    """--min-length: the texts left out as short are counted in the line of what was read,
    never warned of one by one (the user asked for them to be left out)."""
    (tmp_path / "docs").mkdir()
    shutil.copy(SAMPLE / "volcano-report.txt", tmp_path / "docs" / "report.txt")
    (tmp_path / "docs" / "note.txt").write_text("call me back")
    with open(tmp_path / "out", "wb") as handle:
        code, shown = on_a_terminal(
            ["dedupe", "--min-length", "5", "docs"], handle.fileno(), cwd=tmp_path
        )
    screen = screen_of(shown, 100)
    assert code == 0 and screen[0] == "read 1 document (1 skipped: 1 short)"
    assert not any("warning" in line or "note.txt" in line for line in screen)


def test_no_bar_is_left_among_the_lines_of_a_pipes_reader(tmp_path: Path) -> None:
    """``simhash fingerprint DIR | head -2`` on a terminal: head's lines and nothing else (a
    bar drawn while head wrote on the same terminal was left behind when head went away)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(3000):
        (docs / f"{n:04d}.txt").write_text(f"words of document number {n} " * 40)
    code, shown = on_a_terminal(
        ["-o", "pipefail", "-c", f"{SIMHASH} fingerprint -j 1 {docs} | head -2 | cut -c1-20"],
        None,
        columns=200,
        program="bash",
    )
    screen = screen_of(shown, 200)
    assert code == 141, "\n".join(screen)
    assert len(screen) == 2 and all(line.startswith('{"id": ') for line in screen), screen


def test_nothing_is_drawn_over_what_a_person_types(tmp_path: Path) -> None:
    typed = b"a few words typed by hand\n" * 3 + b"\x04"
    with open(tmp_path / "out.jsonl", "wb") as handle:
        code, shown = on_a_terminal(["fingerprint", "-"], handle.fileno(), typed=typed)
    screen = screen_of(shown, 100)
    assert code == 0, "\n".join(screen)
    assert screen.count("a few words typed by hand") == 3  # each line as typed
    assert b"reading files" not in shown


def test_color_never_on_a_terminal_and_always_into_a_file(tmp_path: Path) -> None:
    pair = [str(SAMPLE / "shipping-policy.txt"), str(SAMPLE / "shipping-policy-revised.txt")]
    code, shown = on_a_terminal(["--color", "never", "explain", *pair], None)
    assert code == 0 and "[-usually -]{+normally +}" in " ".join(screen_of(shown, 100))
    colour = rb"\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])[;m]"  # as NO_COLOR means
    assert not re.search(colour, shown)
    assert re.search(colour, on_a_terminal(["explain", *pair], None)[1])
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        done = subprocess.run(
            [SIMHASH, "--color", "always", "dedupe", "-f", "table", str(SAMPLE)],
            stdout=stdout,
            stderr=stderr,
            check=False,
        )
    assert done.returncode == 0
    assert re.search(rb"\x1b\[[0-9;]*m", out.read_bytes())  # for less -R
    logged = err.read_text()
    assert "read 8 documents" in logged and "\r" not in logged  # no bar drawn into a file
    assert max(len(line) for line in out.read_text().splitlines()) < 200  # one table, unfolded


def test_the_first_screen_of_dedupe_help_at_80_columns_holds_the_first_hour() -> None:
    code, shown = on_a_terminal(["dedupe", "--help"], None, columns=80)
    screen = screen_of(shown, 80)
    assert code == 0 and max(len(line) for line in screen) <= 80
    first = "\n".join(screen[:60])
    for option in ("--texts", "--threshold", "--blocks", "-f, --format", "--plan", "--keep"):
        assert option in first, option
    assert "--max-candidates" not in first and "--max-candidates" in "\n".join(screen)


@pytest.mark.parametrize("command", ["fingerprint", "dedupe"])
def test_the_files_bar_counts_to_the_files_listed(command: str, tmp_path: Path) -> None:
    """The bar's total was the length of the listing's (files, sizes) pair: `8/2` from the
    first file on. It counts to the files listed."""
    with open(tmp_path / "out", "wb") as handle:
        code, shown = on_a_terminal([command, str(SAMPLE)], handle.fileno())
    assert code == 0, shown.decode(errors="replace")
    totals = {int(m) for m in re.findall(rb"\d+/(\d+)", shown)}
    assert totals == {8}, shown.decode(errors="replace")


def test_color_never_after_the_command_writes_no_style_at_all(tmp_path: Path) -> None:
    """`simhash dedupe --color never` was "No such option", and `--color never` before the
    command still wrote bold and italic: after the command too, and no style escape at all."""
    style = rb"\x1b\[[0-9;]*m"
    for args in (["dedupe", "--color", "never"], ["--color", "never", "dedupe"]):
        code, shown = on_a_terminal([*args, "-f", "table", str(SAMPLE)], None)
        assert code == 0, shown.decode(errors="replace")
        assert b"near-duplicate pairs" in shown and not re.search(style, shown)
    code, shown = on_a_terminal(["dedupe", "-f", "table", str(SAMPLE)], None)
    assert code == 0 and re.search(style, shown)  # auto, on a terminal: styled


def test_fingerprint_of_records_counts_records_under_no_empty_files_bar(tmp_path: Path) -> None:
    """fingerprint --texts drew an empty `reading files 0/?` bar above its count of records."""
    records = tmp_path / "t.jsonl"
    words = (SAMPLE / "volcano-report.txt").read_text().split()
    # Records of their own words each: the reading is the work, not 4.5 million pairs.
    records.write_text(
        "".join(
            json.dumps({"id": n, "text": " ".join(f"{w}{n}" for w in words)}) + "\n"
            for n in range(3000)
        )
    )
    with open(tmp_path / "out", "wb") as handle:
        code, shown = on_a_terminal(["fingerprint", "--texts", str(records)], handle.fileno())
    assert code == 0, shown.decode(errors="replace")
    assert b"reading files" not in shown and re.search(rb"[1-9][\d,]* records", shown)
    assert len((tmp_path / "out").read_text().splitlines()) == 3000


def test_csv_on_a_terminal_writes_no_name_as_terminal_control(tmp_path: Path) -> None:
    """-f csv wrote control characters of names raw on a terminal (an escape sequence in a
    file name retitled the window); the same CSV into a file keeps names exact."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    evil = "evil\x1b]0;owned\x07.txt"
    shutil.copy(corpus / "shipping-policy.txt", corpus / evil)
    code, shown = on_a_terminal(["fingerprint", "-f", "csv", str(corpus)], None, columns=200)
    assert code == 0
    assert b"\x1b]0;owned" not in shown and b"evil\\x1b]0;owned\\x07.txt" in shown
    with (tmp_path / "out.csv").open("wb") as handle:
        code, _ = on_a_terminal(["fingerprint", "-f", "csv", str(corpus)], handle.fileno())
    assert code == 0 and evil.encode() in (tmp_path / "out.csv").read_bytes()


def test_a_diff_of_wrapped_texts_is_wrapped_once_on_a_terminal() -> None:
    """explain kept the texts' own line breaks (wrapped at 95 columns) and the terminal wrapped
    them again at 80: every other line a stub ("three weeks of small"). On a terminal each
    paragraph flows at the terminal's width; into a pipe the lines stay as they were."""
    pair = [str(SAMPLE / "volcano-report.txt"), str(SAMPLE / "volcano-report-wire.txt")]
    code, shown = on_a_terminal(["--color", "never", "explain", *pair], None, columns=80)
    screen = screen_of(shown, 80)
    assert code == 0, "\n".join(screen)
    diff = screen[next(k for k, line in enumerate(screen) if line.startswith("Differences")) + 1 :]
    paragraphs = "\n".join(diff).split("\n\n")
    assert len(paragraphs) >= 3
    for paragraph in paragraphs:
        lines = paragraph.splitlines()
        assert all(len(line) >= 60 for line in lines[:-1]), paragraph
    piped = subprocess.run(
        [SIMHASH, "explain", "-f", "table", *pair], capture_output=True, text=True, check=True
    ).stdout
    assert "after three weeks of small\nearthquakes [-beneath -]{+under +}the" in piped
