"""The second safety pass: what a hostile user (or an unlucky one) tries, one test per case.

Files lost or changed: concurrent applies of one plan, a move onto the file's own place, outputs
over inputs under other spellings, a journal that is not ours, a hand-edited plan, links over
files with other bytes. Each test states the promise it checks (docs/safety.md).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_cli.cli import main
from simhash_cli.errors import ExitCode, ParameterError

from conftest import SAMPLE, interruptible, planned

SIMHASH = [sys.executable, "-m", "simhash_cli"]
CONSENT = "--delete-near-duplicates"


def run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def contents(*roots: Path) -> dict[str, int]:
    """How many times each distinct file content appears below ``roots`` (links counted by
    what they lead to are not files: skipped)."""
    seen: dict[str, int] = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                key = hashlib.sha256(path.read_bytes()).hexdigest()
                seen[key] = seen.get(key, 0) + 1
    return seen


def digests(root: Path) -> dict[str, str]:
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def one_line_error(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert lines and lines[-1].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[-1]


def many_pairs(root: Path, pairs: int) -> None:
    """Pairs of near-duplicates, every file's bytes distinct."""
    root.mkdir(parents=True)
    for number in range(pairs):
        words = " ".join(f"w{number}x{i}" for i in range(40))
        (root / f"p{number:03}a.txt").write_text(words)
        (root / f"p{number:03}b.txt").write_text(words + " tail")


# ---------------------------------------------------------------- 1. two applies at once


def test_two_applies_of_one_plan_at_once_lose_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    many_pairs(corpus, 60)
    _, plan = planned(tmp_path, corpus)
    before = contents(corpus)
    dups = tmp_path / "dups"
    command = [*SIMHASH, "apply", str(plan), "--action", "move-to", str(dups), "--yes", "-qq"]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)
    ]
    ends = [(p.returncode, p.communicate(timeout=60)[1].decode()) for p in runs]
    ends = [(p.returncode, stderr) for p, (_, stderr) in zip(runs, ends, strict=True)]
    assert contents(corpus, dups) == before  # every original byte present exactly once
    codes = sorted(code for code, _ in ends)
    assert codes[0] == ExitCode.OK
    assert codes[1] in (ExitCode.OK, ExitCode.ERROR)
    for code, stderr in ends:
        if code == ExitCode.ERROR:
            assert "another simhash apply is acting on the plan" in stderr


def test_two_copies_of_one_plan_racing_lose_nothing(tmp_path: Path) -> None:
    """Two plans of one corpus (two locks, two journals) racing for the same files: no run's
    rollback removes a name the other made."""
    corpus = tmp_path / "corpus"
    many_pairs(corpus, 60)
    _, plan = planned(tmp_path, corpus)
    twin = tmp_path / "twin.json"
    shutil.copy(plan, twin)
    before = contents(corpus)
    dups = tmp_path / "dups"
    runs = [
        subprocess.Popen(
            [*SIMHASH, "apply", str(p), "--action", "move-to", str(dups), "--yes", "-qq"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for p in (plan, twin)
    ]
    for process in runs:
        process.wait(60)
        assert process.returncode in (ExitCode.OK, ExitCode.INCOMPLETE)
    assert contents(corpus, dups) == before


def test_a_second_apply_is_refused_while_the_first_holds_the_plan(tmp_path: Path) -> None:
    _, plan = planned(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; d = os.open(sys.argv[1], os.O_RDONLY); "
            "fcntl.flock(d, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
            str(plan),
        ],
        stdout=subprocess.PIPE,
        preexec_fn=interruptible,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        result = run("apply", str(plan), "--action", "move-to", str(tmp_path / "d"), "--yes")
        assert result.exit_code == ExitCode.ERROR
        assert "another simhash apply is acting on the plan" in one_line_error(result)
        assert not (tmp_path / "d").exists()
    finally:
        holder.kill()
        holder.wait()


# ---------------------------------------------------------------- 2. a move onto itself


@pytest.mark.parametrize("where", ["/", "link-to-root", "up"])
def test_a_move_to_the_files_own_place_is_refused(tmp_path: Path, where: str) -> None:
    corpus, plan = planned(tmp_path)
    before = digests(corpus)
    if where == "link-to-root":
        (tmp_path / "link").symlink_to("/")
        destination = str(tmp_path / "link")
    elif where == "up":  # tmp_path/../../.. back to /
        destination = str(tmp_path) + "/.." * (len(tmp_path.parts) - 1)
    else:
        destination = "/"
    result = run("apply", str(plan), "--action", "move-to", destination, "--yes", "-f", "jsonl")
    assert result.exit_code == ExitCode.INCOMPLETE
    for line in result.stdout.splitlines():
        record = json.loads(line)
        assert record["status"] == "refused" and "is the file itself" in record["detail"]
    assert digests(corpus) == before


# ---------------------------------------------------------------- 3. outputs over inputs


def test_outputs_never_replace_an_input_under_another_spelling(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    run("index", "add", str(tmp_path / "idx.db"), str(corpus), "-qq")
    _, plan = planned(tmp_path, corpus)
    member = corpus / "shipping-policy.txt"
    kept = corpus / "shipping-policy-copy.txt"
    idx = str(tmp_path / "idx.db")
    before = digests(tmp_path)
    cases = [
        ["dedupe", str(corpus), "-o", str(corpus / "password-reset-ticket.txt")],
        ["dedupe", str(corpus), "-o", str(corpus / "sub" / ".." / "volcano-report.txt")],
        ["dedupe", str(corpus), "--plan", str(corpus / "chess-openings.txt")],
        ["fingerprint", str(corpus), "-o", f"{corpus}/./sourdough-bread.txt"],
        ["dedupe", str(corpus), "--plan", str(tmp_path / "x.json"), "-o", f"{tmp_path}/./x.json"],
        ["dedupe", str(corpus), "--index", idx, "-o", idx],
        ["dedupe", str(corpus), "--index", idx, "--plan", idx],
        ["index", "query", idx, str(kept), "-o", idx],
        ["index", "stats", idx, "-o", f"{idx}-wal"],
        ["apply", str(plan), "--action", "delete", CONSENT, "--script", str(kept)],
        ["apply", str(plan), "--action", "symlink", "-o", str(member)],
        ["apply", str(plan), "--action", "symlink", "-o", f"{corpus}/../corpus/{kept.name}"],
        ["apply", str(plan), "--action", "symlink", "--yes", "--journal", str(member)],
        ["apply", str(plan), "--action", "symlink", "--yes", "--journal", str(plan)],
    ]  # fmt: skip
    for args in cases:
        result = run(*args)
        assert result.exit_code == ExitCode.USAGE, (args, result.output)
        assert "is also an input" in one_line_error(result) or "are one file" in result.stderr
    assert digests(tmp_path) == before


def test_standard_output_redirected_into_the_scanned_tree_is_not_read(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    with open(corpus / "fps.jsonl", "wb") as out:
        done = subprocess.run(
            [*SIMHASH, "fingerprint", str(corpus)], stdout=out, stderr=subprocess.PIPE
        )
    assert done.returncode == ExitCode.OK
    ids = [json.loads(line)["id"] for line in (corpus / "fps.jsonl").read_text().splitlines()]
    assert len(ids) == len(list(SAMPLE.iterdir())) and str(corpus / "fps.jsonl") not in ids
    assert b"this command's own output" in done.stderr


# ---------------------------------------------------------------- 4. a journal not ours


@pytest.mark.parametrize(
    "text", [b"my notes, no newline at the end", b"", b'{"journal": 1}\n', b"line\nother"]
)
def test_a_file_that_is_not_this_plans_journal_is_never_written(
    tmp_path: Path, text: bytes
) -> None:
    _, plan = planned(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_bytes(text)
    result = run(
        "apply", str(plan), "--action", "move-to", str(tmp_path / "d"), "--yes",
        "--journal", str(notes),
    )  # fmt: skip
    assert result.exit_code == ExitCode.ERROR
    assert "is not the journal of this plan" in one_line_error(result)
    assert notes.read_bytes() == text
    assert not (tmp_path / "d").exists()


# ---------------------------------------------------------------- 5. a hand-edited plan


def _edit(plan: Path, change: object) -> None:
    document = json.loads(plan.read_text())
    change(document)  # type: ignore[operator]
    plan.write_text(json.dumps(document))


def test_a_plan_naming_a_kept_file_under_another_spelling_is_refused(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)

    def respell(document: dict) -> None:  # type: ignore[type-arg]
        # Cluster 1 removes, under another spelling, the file cluster 0 keeps.
        kept = dict(next(f for f in document["clusters"][0]["files"] if f["action"] == "keep"))
        kept["path"] = kept["path"].replace("/corpus/", "/corpus/./")
        kept["action"] = "remove"
        document["clusters"][1]["files"].append(kept)

    _edit(plan, respell)
    before = digests(corpus)
    result = run("apply", str(plan), "--action", "delete", "--delete-near-duplicates", "--yes")
    assert result.exit_code == ExitCode.ERROR
    assert "not an absolute, normalised path" in one_line_error(result)
    assert digests(corpus) == before


def test_a_plan_that_names_a_file_outside_its_roots_acts_on_nothing_there(
    tmp_path: Path,
) -> None:
    corpus, plan = planned(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    victim = outside / "precious.txt"
    shutil.copy(corpus / "shipping-policy.txt", victim)

    def redirect(document: dict) -> None:  # type: ignore[type-arg]
        info = victim.stat()
        for cluster in document["clusters"]:
            for entry in cluster["files"]:
                if entry["path"].endswith("/shipping-policy.txt"):
                    entry.update(path=str(victim), inode=info.st_ino, mtime_ns=info.st_mtime_ns)

    _edit(plan, redirect)
    result = run(
        "apply", str(plan), "--action", "delete", "--delete-near-duplicates", "--yes",
        "-f", "jsonl", "--root", str(corpus),
    )  # fmt: skip
    outcome = {json.loads(line)["path"]: json.loads(line) for line in result.stdout.splitlines()}
    assert outcome[str(victim)]["status"] == "refused"
    assert "outside the roots this run may act in" in outcome[str(victim)]["detail"]
    assert victim.read_bytes() == (SAMPLE / "shipping-policy.txt").read_bytes()


def test_a_plan_with_relative_paths_or_a_nul_is_refused(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    for bad in ("corpus/shipping-policy.txt", f"{corpus}/shipping\0policy.txt"):

        def change(document: dict, bad: str = bad) -> None:  # type: ignore[type-arg]
            document["clusters"][0]["files"][1]["path"] = bad

        _edit(plan, change)
        result = run("apply", str(plan), "--action", "move-to", str(tmp_path / "d"))
        assert result.exit_code == ExitCode.ERROR
        error = one_line_error(result)
        assert "NUL" in error or "not an absolute, normalised path" in error


# ---------------------------------------------------------------- 6. --follow-symlinks


def test_a_file_reached_through_a_linked_directory_is_skipped_not_removed(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    text = (SAMPLE / "volcano-report.txt").read_text()
    (corpus / "a.txt").write_text(text)
    (outside / "b.txt").write_text(text + " and more")
    (corpus / "linked").symlink_to(outside)
    plan = tmp_path / "plan.json"
    made = run(
        "dedupe", "-qq", "--follow-symlinks", "--keep", "first", "--plan", str(plan), str(corpus)
    )
    assert made.exit_code == ExitCode.OK, made.stderr
    files = {f["path"]: f for c in json.loads(plan.read_text())["clusters"] for f in c["files"]}
    linked = next(f for p, f in files.items() if p.endswith("b.txt"))
    assert linked["action"] == "skip" and "symbolic link" in linked["why"]
    run("apply", str(plan), "--action", "delete", "--delete-near-duplicates", "--yes")
    assert (outside / "b.txt").exists() and (corpus / "a.txt").exists()


# ---------------------------------------------------------------- 7. links over other bytes


@pytest.mark.parametrize("action", ["hardlink", "symlink"])
def test_a_link_over_a_file_with_other_bytes_needs_the_delete_consent(
    tmp_path: Path, action: str
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (SAMPLE / "volcano-report.txt").read_text()
    (corpus / "a.txt").write_text(text)
    (corpus / "b.txt").write_text(text)  # byte-identical: needs no consent
    (corpus / "c.txt").write_text(text + " one more sentence at the end.")
    _, plan = planned(tmp_path, corpus)
    result = run("apply", str(plan), "--action", action, "--yes", "-f", "jsonl")
    assert result.exit_code == ExitCode.INCOMPLETE
    outcome = {Path(r["path"]).name: r for r in map(json.loads, result.stdout.splitlines())}
    assert outcome["b.txt"]["status"] == "done"
    assert outcome["c.txt"]["status"] == "refused"
    assert "--delete-near-duplicates" in outcome["c.txt"]["detail"]
    assert (corpus / "c.txt").read_text().endswith("at the end.")
    assert not (corpus / "c.txt").is_symlink() and (corpus / "c.txt").stat().st_nlink == 1
    agreed = run(
        "apply", str(plan), "--action", action, "--yes", "--delete-near-duplicates", "-f", "jsonl"
    )
    assert agreed.exit_code == ExitCode.OK, agreed.stderr


def test_a_move_into_the_plans_own_protected_root_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    plan = tmp_path / "plan.json"
    made = run("dedupe", "-qq", "--protect", str(corpus), "--plan", str(plan), str(corpus))
    assert made.exit_code == ExitCode.OK
    result = run("apply", str(plan), "--action", "move-to", str(corpus / "dups"), "--yes")
    assert result.exit_code == ExitCode.USAGE
    assert "under the protected root" in one_line_error(result)
    assert not (corpus / "dups").exists()


# ---------------------------------------------------------------- 8. prune, a foreign WAL file


def test_prune_keeps_entries_whose_directory_cannot_be_read(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    db = str(tmp_path / "idx.db")
    assert run("index", "add", db, str(corpus), "-qq").exit_code == ExitCode.OK
    script = (
        "import os, sys, errno\n"
        "real = os.lstat\n"
        "def lstat(path, *a, **k):\n"
        f"    if str(path).startswith({str(corpus)!r}):\n"
        "        raise PermissionError(errno.EACCES, 'Permission denied', path)\n"
        "    return real(path, *a, **k)\n"
        "os.lstat = lstat\n"
        "from simhash_cli.cli import main\n"
        "sys.exit(main(['index', 'prune', sys.argv[1], '-f', 'jsonl']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, db], capture_output=True, text=True)
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout == "" and "0 removed" in done.stderr
    (corpus / "chess-openings.txt").unlink()  # one really gone: forgotten
    gone = run("index", "prune", db, "-f", "jsonl")
    assert [json.loads(line)["removed"] for line in gone.stdout.splitlines()] == [
        str(corpus / "chess-openings.txt")
    ]


def test_a_foreign_wal_mode_database_is_refused_without_being_touched(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    maker = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1])\n"
        "c.execute('PRAGMA journal_mode=WAL')\n"
        "c.execute('CREATE TABLE t (x)')\n"
        "c.execute('INSERT INTO t VALUES (1)')\n"
        "c.commit()\n"
        "os._exit(0)  # no checkpoint: the -wal stays beside it\n"
    )
    subprocess.run([sys.executable, "-c", maker, str(db)], check=True)
    wal = Path(f"{db}-wal")
    assert wal.exists()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for args in (
        ["stats", str(db)],
        ["query", str(db), str(SAMPLE)],
        ["add", str(db), str(SAMPLE)],
    ):
        result = run("index", *args)
        assert result.exit_code == ExitCode.ERROR
        assert "not a simhash index" in one_line_error(result)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# ---------------------------------------------------------------- 9. the script


def test_a_newline_in_the_plans_name_or_the_destination_runs_nothing(tmp_path: Path) -> None:
    _corpus, plan = planned(tmp_path)
    odd = tmp_path / "plan\ntouch pwned-by-plan\n.json"
    plan.rename(odd)
    destination = str(tmp_path / "d\ntouch pwned-by-destination\n")
    script = tmp_path / "review.sh"
    made = run("apply", str(odd), "--action", "move-to", destination, "--script", str(script))
    assert made.exit_code == ExitCode.OK, made.stderr
    subprocess.run(["sh", "-n", str(script)], check=True)  # it parses
    subprocess.run(["sh", str(script)], cwd=tmp_path, capture_output=True)
    assert not list(tmp_path.glob("pwned*"))
    header = [line for line in script.read_text().splitlines() if line.startswith("# ")]
    assert any("plan: " in line and "\\x0a" in line for line in header)


# ---------------------------------------------------------------- 10. names on the terminal


HOSTILE_NAME = "a\x1b]0;pwned\x07\x1b[2J\rb\u202e\nc.txt"


def test_control_characters_in_names_are_shown_escaped_on_the_terminal(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (SAMPLE / "volcano-report.txt").read_text()
    (corpus / HOSTILE_NAME).write_text(text)
    (corpus / "plain.txt").write_text(text + " more")
    (corpus / "\x1b[31mbinary").write_bytes(b"\x00\x01")
    for args in (
        ["dedupe", str(corpus), "-f", "table"],
        ["fingerprint", str(corpus), "-f", "table"],
        ["compare", str(corpus / HOSTILE_NAME), str(corpus / "plain.txt"), "-f", "table"],
        ["dedupe", str(corpus / "missing\x1b[2J")],
    ):
        result = run(*args)
        shown = result.stdout + result.stderr
        assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown, args
        assert "\u202e" not in shown
        assert "\\x1b" in shown, args
    table = run("dedupe", str(corpus), "-f", "table").stdout
    assert "\\n" in table and "\\u202e" in table
    exact = run("dedupe", str(corpus), "-f", "jsonl").stdout
    members = {m["id"] for line in exact.splitlines() for m in json.loads(line)["members"]}
    assert str(corpus / HOSTILE_NAME) in members  # data formats keep names exact


# ---------------------------------------------------------------- 11. extreme weights


@pytest.mark.parametrize("weight", [1.7976931348623157e308, 1e308, 1e200, 1e-200, 5e-324])
def test_cosine_is_right_for_every_finite_weight(tmp_path: Path, weight: float) -> None:
    vectors = tmp_path / "v.jsonl"
    records = [
        {"id": "a", "features": {"x": weight, "y": weight}},
        {"id": "b", "features": {"x": weight, "y": weight}},
        {"id": "c", "features": {"z": weight}},
    ]
    vectors.write_text("".join(json.dumps(r) + "\n" for r in records))
    script = "import sys, warnings; warnings.simplefilter('error')\n" + (
        "from simhash_cli.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "dedupe", "--vectors", str(vectors), "--threshold", "0",
         "--list", "pairs", "-f", "jsonl", "-q"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == ExitCode.OK and done.stderr == "", done.stderr
    pairs = {(p["a"], p["b"]): p for p in map(json.loads, done.stdout.splitlines())}
    assert pairs[("a", "b")]["cosine"] == 1.0 and pairs[("a", "b")]["hamming"] == 0


# ---------------------------------------------------------------- 12. duplicate ids


@pytest.mark.parametrize("second", ['"dup"', "1"])
def test_an_id_given_twice_is_refused_naming_both_lines(tmp_path: Path, second: str) -> None:
    first = '"dup"' if second == '"dup"' else '"1"'
    texts = tmp_path / "t.jsonl"
    texts.write_text(
        f'{{"id": {first}, "text": "a b c d"}}\n\n{{"id": "x", "text": "e f"}}\n'
        f'{{"id": {second}, "text": "a b c d e"}}\n'
    )
    result = run("dedupe", "--texts", str(texts))
    assert result.exit_code == ExitCode.ERROR
    error = one_line_error(result)
    assert f"{texts}:4" in error and f"{texts}:1" in error
    skipped = run("dedupe", "--texts", str(texts), "--on-error", "skip", "-f", "jsonl")
    assert skipped.exit_code == ExitCode.OK and "malformed" in skipped.stderr


# ---------------------------------------------------------------- 14. deep trees


DEPTH = 1100


def _deep_tree(root: Path, text: str) -> None:
    """``root/d/d/.../d/deep.txt``, DEPTH levels, made relative to directory descriptors: no
    path over PATH_MAX is ever built."""
    descriptor = os.open(root, os.O_RDONLY)
    try:
        for _ in range(DEPTH):
            os.mkdir("d", dir_fd=descriptor)
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        made = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor)
        with open(made, "w") as handle:
            handle.write(text)
    finally:
        os.close(descriptor)


def _remove_deep_tree(root: Path) -> None:
    """The tree of :func:`_deep_tree` removed bottom up, iteratively (shutil.rmtree, and so
    pytest's cleanup of old temporary directories, recurses once per level)."""
    chain = [os.open(root, os.O_RDONLY)]
    try:
        while True:
            try:
                chain.append(os.open("d", os.O_RDONLY, dir_fd=chain[-1]))
            except FileNotFoundError:
                break
        for name in os.listdir(chain[-1]):
            os.unlink(name, dir_fd=chain[-1])
        while len(chain) > 1:
            os.close(chain.pop())
            os.rmdir("d", dir_fd=chain[-1])
    finally:
        for descriptor in chain:
            os.close(descriptor)


def test_a_tree_a_thousand_levels_deep_is_walked(tmp_path: Path) -> None:
    text = (SAMPLE / "volcano-report.txt").read_text()
    (tmp_path / "top.txt").write_text(text)
    _deep_tree(tmp_path, text)
    try:
        result = run("dedupe", str(tmp_path), "-f", "jsonl")
    finally:
        _remove_deep_tree(tmp_path)
    assert result.exit_code == ExitCode.OK, result.output[-500:]
    assert "Traceback" not in result.stderr
    assert len(result.stdout.splitlines()) == 1


# ---------------------------------------------------------------- 15. lines and streams


def test_a_json_line_longer_than_max_bytes_is_never_held_whole(tmp_path: Path) -> None:
    texts = tmp_path / "t.jsonl"
    with texts.open("w") as out:
        out.write(json.dumps({"id": "a", "text": "word " * 50}) + "\n")
        out.write('{"id": "huge", "text": "' + "x" * 20_000_000 + '"}\n')
        out.write(json.dumps({"id": "c", "text": "word " * 50 + "more"}) + "\n")
    limited = "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))"
    for source, stdin in ((str(texts), None), ("-", texts.open("rb"))):
        done = subprocess.run(
            [sys.executable, "-c", limited + "\nfrom simhash_cli.cli import main\nsys.exit(main())",
             "dedupe", "--texts", source, "--max-bytes", "1000000", "--on-error", "skip",
             "-f", "jsonl"],
            stdin=stdin, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == ExitCode.OK, done.stderr[-400:]
        assert "longer than 1,000,000 characters" in done.stderr
        assert len(done.stdout.splitlines()) == 1


# ---------------------------------------------------------------- 16. full disks


def _file_size_limit() -> None:
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (600, 600))


def test_a_full_disk_is_one_line_and_leaves_no_partial_file(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    before = contents(corpus)
    for args in (
        ["dedupe", str(corpus), "-qq", "-f", "json", "-o", str(tmp_path / "out.json")],
        ["dedupe", str(corpus), "-qq", "--plan", str(tmp_path / "p2.json")],
        ["apply", str(plan), "--action", "delete", CONSENT, "--script", str(tmp_path / "s.sh")],
        ["apply", str(plan), "--action", "move-to", str(tmp_path / "d"), "--yes",
         "--journal", str(tmp_path / "j")],
    ):  # fmt: skip
        done = subprocess.run(
            [*SIMHASH, *args], preexec_fn=_file_size_limit, capture_output=True, text=True
        )
        assert done.returncode == ExitCode.ERROR, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert lines[-1].startswith("Error: cannot write") and "Traceback" not in done.stderr
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], args
    for fmt in ("json", "jsonl", "table"):
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [*SIMHASH, "dedupe", str(corpus), "-qq", "-f", fmt], stdout=full,
                stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        assert done.returncode == ExitCode.ERROR
        assert done.stderr == "Error: cannot write standard output: No space left on device\n"
    # The run that acted stopped when its journal could not be written: what it moved is in
    # the destination, every byte once.
    assert contents(corpus, tmp_path / "d") == before


def test_a_move_across_filesystems_onto_a_full_disk_leaves_no_partial_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from simhash_cli.app.apply.apply import apply, load_plan
    from simhash_cli.app.apply.steps import Action, Status

    corpus, plan_file = planned(tmp_path)
    plan = load_plan(str(plan_file))
    real_copy = shutil.copyfileobj

    def no_link(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    def full(source: Any, destination: Any, length: int = 0) -> None:
        destination.write(b"half a file")
        destination.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", no_link)
    monkeypatch.setattr(shutil, "copyfileobj", full)
    dups = tmp_path / "dups"
    outcomes = list(apply(plan, Action.MOVE_TO, destination=str(dups), execute=True))
    monkeypatch.setattr(shutil, "copyfileobj", real_copy)
    assert {o.status for o in outcomes} == {Status.FAILED}
    assert all("No space left" in o.detail for o in outcomes)
    assert [p for p in dups.rglob("*") if p.is_file()] == []
    assert len(list(corpus.iterdir())) == len(list(SAMPLE.iterdir()))


# ---------------------------------------------------------------- 13. dask clusters

distributed = pytest.importorskip("distributed")


def _silent_listener() -> tuple[object, int]:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    return server, server.getsockname()[1]


def test_an_address_that_is_not_a_dask_scheduler_is_one_line_not_a_hang(tmp_path: Path) -> None:
    http = subprocess.Popen(
        [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
    )  # fmt: skip
    silent, silent_port = _silent_listener()
    try:
        assert http.stdout is not None
        http_port = int(http.stdout.readline().split(" port ")[1].split(" ")[0])
        runs = [
            subprocess.Popen(
                [
                    *SIMHASH,
                    "dedupe",
                    "--engine",
                    "dask",
                    "--scheduler",
                    f"tcp://127.0.0.1:{port}",
                    str(SAMPLE),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "DASK_SIMHASH__CONNECT_TIMEOUT": "1s"},  # not 10 s
            )
            for port in (http_port, silent_port)
        ]
        for process in runs:
            _, stderr = process.communicate(timeout=60)
            assert process.returncode == ExitCode.ERROR
            assert stderr.count("\n") == 1 and "does not answer as a dask scheduler" in stderr
    finally:
        http.kill()
        http.wait()
        silent.close()  # type: ignore[attr-defined]


def _scheduler(port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", str(port), "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _worker(port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", f"tcp://127.0.0.1:{port}",
         "--nthreads", "1", "--no-nanny"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _free_port() -> int:
    server, port = _silent_listener()
    server.close()  # type: ignore[attr-defined]
    return port


def _wait_for_workers(port: int, count: int) -> None:
    client = distributed.Client(f"tcp://127.0.0.1:{port}", timeout="20s")
    try:
        client.wait_for_workers(count, timeout=30)
    finally:
        client.close()


def _wait_for_tasks(port: int, timeout: float = 60.0) -> None:
    """Until a worker of the cluster at ``port`` is processing a task (the run's)."""
    import time

    client = distributed.Client(f"tcp://127.0.0.1:{port}", timeout="20s")
    try:
        deadline = time.monotonic() + timeout
        while not any(client.processing().values()):
            assert time.monotonic() < deadline, "no task reached the cluster"
            time.sleep(0.05)
    finally:
        client.close()


@pytest.mark.parametrize("victim", ["workers", "scheduler"])
def test_an_external_cluster_dying_mid_run_ends_it_in_one_line(tmp_path: Path, victim: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for number in range(3000):
        words = " ".join(f"w{(number * 7 + i) % 5003}" for i in range(300))
        (corpus / f"d{number:05}.txt").write_text(words)
    port = _free_port()
    scheduler = _scheduler(port)
    worker = _worker(port)
    try:
        _wait_for_workers(port, 1)
        run_ = subprocess.Popen(
            [*SIMHASH, "dedupe", "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
             str(corpus), "-qq", "-f", "jsonl"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "DASK_SIMHASH__NO_WORKER_GRACE": "2"},  # not 20 s
        )  # fmt: skip
        _wait_for_tasks(port)  # listing done, tasks running
        (worker if victim == "workers" else scheduler).kill()
        _, stderr = run_.communicate(timeout=90)
        assert run_.returncode == ExitCode.ERROR, stderr
        assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
        said = "every worker" if victim == "workers" else "scheduler went away"
        assert said in stderr and (victim == "scheduler" or "(2 s without one)" in stderr)
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()


@pytest.mark.parametrize(("value", "seconds"), [(60, 60.0), ("90s", 90.0), ("2 minutes", 120.0)])
def test_the_dask_waits_are_dask_settings(value: object, seconds: float) -> None:
    import dask.config

    from simhash_cli.engines.dask.cluster import NO_WORKER_GRACE, waited

    assert waited("no-worker-grace", NO_WORKER_GRACE) == NO_WORKER_GRACE
    with dask.config.set({"simhash.no-worker-grace": value}):
        assert waited("no-worker-grace", NO_WORKER_GRACE) == seconds
    for wrong in ("soon", -1, 0):
        refused = pytest.raises(ParameterError, match=r"simhash\.no-worker-grace is not a dur")
        with dask.config.set({"simhash.no-worker-grace": wrong}), refused:
            waited("no-worker-grace", NO_WORKER_GRACE)


# ---------------------------------------------------------------- 17. a tampered index


def _tamper(db: Path, *statements: str) -> None:
    import sqlite3

    connection = sqlite3.connect(db, isolation_level=None)
    try:
        for statement in statements:
            connection.execute(statement)
    finally:
        connection.close()


TAMPERING = {
    "edited settings": ["UPDATE meta SET value = '7' WHERE key = 'seed'"],
    "edited width": ["UPDATE meta SET value = '128' WHERE key = 'bits'"],
    "impossible settings": ["UPDATE meta SET value = 'nonsense' WHERE key = 'tokenizer'"],
    "a dropped table": ["DROP TABLE keys1"],
    "a trigger": ["CREATE TRIGGER t AFTER INSERT ON docs BEGIN DELETE FROM docs; END"],
    "an extra index": ["CREATE INDEX extra ON docs (size)"],
    "rows deleted behind the tables": ["DELETE FROM docs"],
    "a truncated list": ["UPDATE keys0 SET entries = substr(entries, 1, length(entries) - 3)"],
    "an edited fingerprint": ["UPDATE docs SET w0 = w0 + 4096"],
}


@pytest.mark.parametrize("how", list(TAMPERING))
def test_a_tampered_index_is_called_damaged_in_one_line(tmp_path: Path, how: str) -> None:
    db = tmp_path / "idx.db"
    assert run("index", "add", str(db), str(SAMPLE), "-qq").exit_code == ExitCode.OK
    _tamper(db, *TAMPERING[how])
    for args in (["query", str(db), str(SAMPLE)], ["dedupe", str(db)], ["stats", str(db)]):
        result = run("index", *args, "-f", "jsonl")
        if how.startswith(("rows deleted", "a truncated")) and args[0] != "query":
            continue  # what only a look-up meets
        if how == "an edited fingerprint" and args[0] == "stats":
            continue  # stats reads no fingerprint
        assert result.exit_code == ExitCode.ERROR, (how, args, result.output)
        assert "damaged" in one_line_error(result), (how, args)


_READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'


def _without_write_access(place: Path, command: list[str]) -> list[str]:
    """``command`` run where ``place`` cannot be written: a read-only mount of it in a mount
    namespace of its own when root (root writes through any mode bits), else its mode bits."""
    if os.geteuid() != 0:
        place.chmod(0o555)
        for path in place.iterdir():
            path.chmod(0o444)
        return command
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: no way to take write access away")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", _READ_ONLY, str(place), "true"])
    if probe.returncode != 0:
        pytest.skip("no mount namespace here: no way to take write access away from root")
    return ["unshare", "-m", "sh", "-c", _READ_ONLY, str(place), *command]


def test_a_healthy_index_is_read_where_it_cannot_be_written(tmp_path: Path) -> None:
    place = tmp_path / "ro"
    place.mkdir()
    db = place / "idx.db"
    assert run("index", "add", str(db), str(SAMPLE), "-qq").exit_code == ExitCode.OK
    before = {p.name: p.read_bytes() for p in place.iterdir()}
    try:
        for args in (["stats", str(db)], ["query", str(db), str(SAMPLE / "volcano-report.txt")]):
            command = _without_write_access(place, [*SIMHASH, "index", *args, "-f", "jsonl"])
            done = subprocess.run(command, capture_output=True, text=True)
            assert done.returncode == ExitCode.OK, (args, done.stderr)
            assert "damaged" not in done.stderr
    finally:
        place.chmod(0o755)
    assert {p.name: p.read_bytes() for p in place.iterdir()} == before


def test_an_index_reached_through_a_link_is_read_where_its_journal_cannot_be_made(
    tmp_path: Path,
) -> None:
    """SQLite keeps its journal beside the file a link reaches: a read-only command through a
    link in a writable directory, to an index it may write in a directory it may not, was
    "damaged or truncated (attempt to write a readonly database)"."""
    place = tmp_path / "locked"
    place.mkdir()
    db = place / "idx.db"
    assert run("index", "add", str(db), str(SAMPLE), "-qq").exit_code == ExitCode.OK
    link = tmp_path / "link.db"
    link.symlink_to(db)
    db.chmod(0o666)
    place.chmod(0o555)  # the index may be written, its directory not
    command = list(SIMHASH)
    if os.geteuid() == 0:  # root writes through any mode bits: without that power, then
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv: no way to take the power to write away")
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", *command]
    before = {p.name: p.read_bytes() for p in place.iterdir()}
    try:
        for args in (
            ["stats", str(link)],
            ["query", str(link), str(SAMPLE / "volcano-report.txt")],
        ):
            done = subprocess.run(
                [*command, "index", *args, "-f", "jsonl"], capture_output=True, text=True
            )
            assert done.returncode == ExitCode.OK, (args, done.stderr)
    finally:
        place.chmod(0o755)
    assert {p.name: p.read_bytes() for p in place.iterdir()} == before


# ---------------------------------------------------------------- 18. a tampered plan, journal


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b'{"path": "/x", "status": "done"}\n', ":2: not a line of a simhash apply journal"),
        (b'{"step": 99, "path": "/x", "status": "done"}\n', ":2: not a line"),
        (b'{"step": 1, "path": "/x", "status": "burnt"}\n', ":2: not a line"),
        (b"[1, 2]\n", ":2: not a line"),
    ],
)
def test_a_tampered_journal_is_refused_naming_its_line(
    tmp_path: Path, line: bytes, says: str
) -> None:
    _corpus, plan = planned(tmp_path)
    dups = str(tmp_path / "dups")
    first = run("apply", str(plan), "--action", "move-to", dups)  # a dry run: no journal
    assert first.exit_code == ExitCode.OK
    journal = Path(f"{plan}.journal")
    done = run("apply", str(plan), "--action", "move-to", dups, "--yes", "-qq")
    assert done.exit_code == ExitCode.OK
    header = journal.read_bytes().split(b"\n")[0] + b"\n"
    journal.write_bytes(header + line)
    result = run("apply", str(plan), "--action", "move-to", dups, "--yes")
    assert result.exit_code == ExitCode.ERROR and says in one_line_error(result)
    assert journal.read_bytes() == header + line


def test_a_journal_that_claims_a_step_never_taken_is_not_believed(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    dups = str(tmp_path / "dups")
    run("apply", str(plan), "--action", "move-to", dups, "--yes", "-qq", "--journal",
        str(tmp_path / "j"))  # fmt: skip
    # A journal of the same plan, action and destination claiming all three steps done, for
    # a fresh copy of the corpus where none was taken.
    shutil.rmtree(dups)
    shutil.rmtree(corpus)
    shutil.copytree(SAMPLE, corpus)
    _, plan = planned(tmp_path, corpus)
    lines = Path(tmp_path / "j").read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header["plan_sha256"] = hashlib.sha256(plan.read_bytes()).hexdigest()
    claims = [json.dumps({"step": n, "path": "/x", "status": "done"}) for n in (1, 2, 3)]
    Path(f"{plan}.journal").write_text(json.dumps(header) + "\n" + "\n".join(claims) + "\n")
    result = run("apply", str(plan), "--action", "move-to", dups, "--yes", "-f", "jsonl")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert [json.loads(x)["status"] for x in result.stdout.splitlines()] == ["done"] * 3


def test_a_plan_applied_from_another_directory_acts_on_the_same_files(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    plan = tmp_path / "plan.json"
    made = subprocess.run(
        [*SIMHASH, "dedupe", "-qq", "--plan", "plan.json", "corpus"], cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert made.returncode == ExitCode.OK
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [*SIMHASH, "apply", str(plan), "--action", "move-to", "dups", "--yes", "-f", "jsonl"],
        cwd=elsewhere, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    assert [json.loads(x)["status"] for x in done.stdout.splitlines()] == ["done"] * 3
    assert contents(corpus, elsewhere / "dups") == contents(Path(SAMPLE))


# ---------------------------------------------------------------- 19, 20. resources, messages


def test_jobs_beyond_the_cores_are_capped_and_said() -> None:
    done = subprocess.run(
        [*SIMHASH, "fingerprint", "-j", "512", str(SAMPLE), "-qq"], capture_output=True, text=True
    )
    assert done.returncode == ExitCode.OK
    cores = len(os.sched_getaffinity(0))
    if cores < 512:
        assert f"512 jobs asked, {cores} cores here: {cores} processes used" in done.stderr


def test_an_index_of_vectors_queried_with_files_says_why(tmp_path: Path) -> None:
    vectors = tmp_path / "v.jsonl"
    vectors.write_text('{"id": "u1", "features": {"jazz": 3, "vinyl": 1.5}}\n')
    db = str(tmp_path / "idx.db")
    assert run("index", "add", db, "--vectors", str(vectors), "-qq").exit_code == ExitCode.OK
    result = run("index", "query", db, str(SAMPLE))
    assert result.exit_code != ExitCode.OK
    error = one_line_error(result)
    assert "not a tokenizer name" not in error and "vectors" in error


# ---------------------------------------------------------------- the property: nothing lost


def _kept_files(plan: Path) -> dict[str, tuple[int, str]]:
    kept = {}
    for cluster in json.loads(plan.read_text())["clusters"]:
        if cluster["keep"] is not None:
            path = Path(cluster["keep"])
            kept[str(path)] = (path.stat().st_ino, hashlib.sha256(path.read_bytes()).hexdigest())
    return kept


@settings(max_examples=6, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["plan", "twin"]),  # two plans of one corpus: no lock between them
            st.floats(0.0, 0.4),  # when it starts
            st.one_of(st.none(), st.floats(0.05, 0.8)),  # killed (SIGKILL) after, or left
        ),
        min_size=2,
        max_size=4,
    )
)
def test_interleaved_and_killed_applies_lose_no_byte_and_touch_no_kept_file(
    runs: list[tuple[str, float, float | None]],
) -> None:
    import signal
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        corpus = root / "corpus"
        many_pairs(corpus, 40)
        _, plan = planned(root, corpus)
        twin = root / "twin.json"
        shutil.copy(plan, twin)
        before, kept = contents(corpus), _kept_files(plan)
        dups = root / "dups"
        started = time.monotonic()
        live = []
        for which, start, kill_after in sorted(runs, key=lambda r: r[1]):
            time.sleep(max(0.0, start - (time.monotonic() - started)))
            command = [*SIMHASH, "apply", str(root / f"{which}.json"), "--action", "move-to",
                       str(dups), "--yes", "-qq"]  # fmt: skip
            process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            live.append((process, None if kill_after is None else time.monotonic() + kill_after))
        while any(p.poll() is None for p, _ in live):
            for process, deadline in live:
                if deadline is not None and time.monotonic() > deadline and process.poll() is None:
                    process.send_signal(signal.SIGKILL)
            time.sleep(0.02)
        assert contents(corpus, dups) == before  # at every stop
        final = subprocess.run(command, capture_output=True, text=True)  # and once more, whole
        assert final.returncode in (ExitCode.OK, ExitCode.INCOMPLETE), final.stderr
        assert contents(corpus, dups) == before
        assert _kept_files(plan) == kept
        assert not [p for p in corpus.iterdir() if p.name not in {Path(k).name for k in kept}]
