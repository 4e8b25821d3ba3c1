"""`simhash apply`: plans executed with every check, a journal that resumes a killed run, and the
equivalent shell script."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from simhash_cli.app.apply.apply import apply, load_plan
from simhash_cli.app.apply.checks import destination_of
from simhash_cli.app.apply.journal import Journal
from simhash_cli.app.apply.steps import Action, Status
from simhash_cli.app.keep import Keep
from simhash_cli.app.plans.document import make_plan
from simhash_cli.cli import main
from simhash_cli.core.events import stamp_of
from simhash_cli.errors import ExitCode

from conftest import ROOT, SAMPLE, planned


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def state(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry below ``root``: a symbolic link's text, or a file's bytes (hashed) and
    which other entries share its inode."""
    entries: dict[str, tuple[Any, ...]] = {}
    inodes: dict[int, list[str]] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            entries[name] = ("link", os.readlink(path))
        elif path.is_file():
            entries[name] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            inodes.setdefault(path.stat().st_ino, []).append(name)
    for names in inodes.values():
        for name in names:
            entries[name] += (tuple(names),)
    return entries


def statuses(result: Result) -> list[str]:
    return [json.loads(line)["status"] for line in result.stdout.splitlines()]


REMOVED = ("shipping-policy-revised.txt", "shipping-policy.txt", "volcano-report.txt")
KEPT = {
    "shipping-policy-revised.txt": "shipping-policy-copy.txt",
    "shipping-policy.txt": "shipping-policy-copy.txt",
    "volcano-report.txt": "volcano-report-wire.txt",
}


def test_a_dry_run_checks_every_step_and_changes_nothing(tmp_path: Path) -> None:
    _corpus, plan = planned(tmp_path)
    before = state(tmp_path)
    result = run("apply", str(plan), "--action", "move-to", str(tmp_path / "dups"), "-f", "jsonl")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert statuses(result) == ["would_do"] * 3
    dry = "dry run: 3 steps would be taken; nothing was changed (add --yes to act)"
    assert dry in result.stderr
    assert state(tmp_path) == before  # no journal, no destination, no file touched


@pytest.mark.parametrize("action", list(Action))
def test_each_action_end_to_end_on_a_copy_of_the_sample_corpus(
    tmp_path: Path, action: Action
) -> None:
    corpus, plan = planned(tmp_path)
    originals = {p.name: p.read_bytes() for p in corpus.iterdir()}
    dups = tmp_path / "dups"
    where = [str(dups)] if action is Action.MOVE_TO else []
    flags = [] if action is Action.MOVE_TO else ["--delete-near-duplicates"]
    result = run(
        "apply", str(plan), "--action", action.value, *where, "--yes", *flags, "-f", "jsonl"
    )
    assert result.exit_code == ExitCode.OK, result.stderr
    assert statuses(result) == ["done"] * 3
    for name, kept in KEPT.items():
        assert (corpus / kept).read_bytes() == originals[kept]  # every cluster keeps its copy
        removed = corpus / name
        if action is Action.MOVE_TO:
            assert not removed.exists()
            assert Path(destination_of(str(dups), str(removed))).read_bytes() == originals[name]
        elif action is Action.HARDLINK:
            assert removed.samefile(corpus / kept) and not removed.is_symlink()
        elif action is Action.SYMLINK:
            assert os.readlink(removed) == str(corpus / kept)
        else:
            assert not os.path.lexists(removed)
    untouched = set(originals) - set(KEPT)
    assert all((corpus / name).read_bytes() == originals[name] for name in untouched)
    assert not list(corpus.glob(".*"))  # no temporary name left behind
    journal = [json.loads(line) for line in Path(f"{plan}.journal").read_text().splitlines()]
    assert journal[0]["plan_sha256"] == hashlib.sha256(plan.read_bytes()).hexdigest()
    assert [line["status"] for line in journal[1:]] == ["started", "done"] * 3
    again = run(
        "apply", str(plan), "--action", action.value, *where, "--yes", *flags, "-f", "jsonl"
    )
    assert again.exit_code == ExitCode.OK and statuses(again) == ["already_done"] * 3


def _touch_later(path: Path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda p: p.write_text(p.read_text() + " one more line"), "changed size"),
        (_touch_later, "was modified since the plan (another mtime)"),
        (lambda p: p.unlink(), "is gone"),
        # Renamed away (so that its inode cannot be reused), then a new file of that name.
        (lambda p: (p.rename(p.with_suffix(".old")), p.write_text("new")), "was replaced"),
    ],
)
def test_a_file_changed_after_the_plan_is_refused_and_left_as_it_is(
    tmp_path: Path, change: Any, says: str
) -> None:
    corpus, plan = planned(tmp_path)
    change(corpus / "volcano-report.txt")
    before = state(corpus)
    result = run("apply", str(plan), "--action", "symlink", "--yes", "--delete-near-duplicates")
    assert result.exit_code == ExitCode.INCOMPLETE, result.stderr
    outcome = {Path(r["path"]).name: r for r in map(json.loads, result.stdout.splitlines())}
    assert outcome["volcano-report.txt"]["status"] == "refused"
    assert says in outcome["volcano-report.txt"]["detail"]
    assert "2 done, 1 refused" in result.stderr
    after = state(corpus)
    assert after.get("volcano-report.txt") == before.get("volcano-report.txt")
    assert "volcano-report-wire.txt" in after


def test_same_size_same_mtime_other_bytes_is_caught_by_the_content_hash(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    target = corpus / "volcano-report.txt"
    info = target.stat()
    data = bytearray(target.read_bytes())
    data[0] ^= 0x20  # one letter's case: same size
    target.write_bytes(bytes(data))
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the old mtime
    result = run("apply", str(plan), "--action", "hardlink", "--yes", "--delete-near-duplicates")
    assert result.exit_code == ExitCode.INCOMPLETE
    assert "another SHA-256" in result.stdout
    assert target.read_bytes() == bytes(data) and target.stat().st_nlink == 1


def test_a_changed_kept_file_refuses_its_whole_cluster(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    (corpus / "shipping-policy-copy.txt").write_text("rewritten since")
    result = run(
        "apply",
        str(plan),
        "--action",
        "symlink",
        "--yes",
        "--delete-near-duplicates",
        "-f",
        "jsonl",
    )
    assert result.exit_code == ExitCode.INCOMPLETE
    outcome = {Path(r["path"]).name: r for r in map(json.loads, result.stdout.splitlines())}
    for name in ("shipping-policy-revised.txt", "shipping-policy.txt"):
        assert outcome[name]["status"] == "refused"
        assert outcome[name]["detail"].startswith("the kept file ")
        assert not (corpus / name).is_symlink()
    assert outcome["volcano-report.txt"]["status"] == "done"


def test_protected_roots_and_two_names_of_one_file_are_refused(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    protected = run(
        "apply", str(plan), "--action", "delete", "--delete-near-duplicates", "--yes",
        "--protect", str(corpus), "-f", "jsonl",
    )  # fmt: skip
    assert protected.exit_code == ExitCode.INCOMPLETE
    details = [json.loads(line)["detail"] for line in protected.stdout.splitlines()]
    assert details == [f"under the protected root {corpus}"] * 3
    assert sorted(p.name for p in corpus.iterdir()) == sorted(p.name for p in SAMPLE.iterdir())
    # A plan whose removed file is the kept file under another name (a hard link).
    document = json.loads(plan.read_text())
    files = document["clusters"][1]["files"]
    kept = next(f for f in files if f["action"] == "keep")
    other = next(f for f in files if f["action"] == "remove")
    Path(other["path"]).unlink()
    os.link(kept["path"], other["path"])
    other.update({k: kept[k] for k in ("device", "inode", "size", "mtime_ns", "sha256")})
    plan.write_text(json.dumps(document))
    linked = run(  # a dry run says the same
        "apply", str(plan), "--action", "delete", "--delete-near-duplicates"
    )
    assert linked.exit_code == ExitCode.ERROR
    assert "are recorded as one file (same device and inode)" in linked.stderr
    assert Path(other["path"]).exists() and Path(kept["path"]).exists()


def test_a_folder_that_changes_as_it_is_resolved_refuses_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory swapped for a link while its path is resolved makes the resolver fail
    (EINVAL from readlink: CI's race test met it): the step is refused, never a traceback."""
    import simhash_cli.app.apply.checks as checks

    corpus, plan = planned(tmp_path)

    def changing(path: str, roots: object) -> str | None:
        raise OSError(errno.EINVAL, "Invalid argument", path)

    monkeypatch.setattr(checks, "root_of", changing)
    outcomes = list(apply(load_plan(str(plan)), Action.DELETE, execute=True, consent=True))
    assert [o.status for o in outcomes] == [Status.REFUSED] * 3
    assert all("not checkable where it is (Invalid argument)" in o.detail for o in outcomes)
    assert sorted(p.name for p in corpus.iterdir()) == sorted(p.name for p in SAMPLE.iterdir())


def test_acting_needs_the_words_and_options_that_fit(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    before = state(tmp_path)
    cases = [
        (["--action", "delete", "--yes"], "add --delete-near-duplicates"),
        (["--action", "delete"], "add --delete-near-duplicates"),  # a dry run as --yes
        ([], "Missing option '--action'. Choose move-to, hardlink, symlink or delete."),
        (["--action", "delete", "--script", str(tmp_path / "s.sh")], "--delete-near-duplicates"),
        (["--action", "move-to"], "needs a DIR"),
        (["--action", "hardlink", str(tmp_path)], "takes no DIR"),
        (
            ["--action", "hardlink", "--yes", "--delete-near-duplicates", "--script", "-"],
            "choose one",
        ),
        (["--action", "hardlink", "--journal", str(tmp_path / "j")], "--journal goes with --yes"),
        (["--action", "move-to", str(corpus), "--protect", str(corpus)], "protected root"),
        (["--action", "move-to", str(plan)], "is not a directory"),
        (["--action", "symlink", "--script", str(plan)], "is also an input"),
        (["--action", "symlink", "-o", str(plan)], "is also an input"),
    ]
    for args, says in cases:
        result = run("apply", str(plan), *args)
        assert result.exit_code == ExitCode.USAGE, (args, result.stderr)
        assert says in result.stderr, (args, result.stderr)
    assert state(tmp_path) == before


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not a plan written by simhash dedupe --plan"),
        ('{"version": 1, "clusters": []}', "plan version 1"),
        (
            '{"version": 3, "roots": ["/"], '
            '"clusters": [{"keep": null, "files": [{"path": "/a"}]}]}',
            "an action",
        ),
        (
            '{"version": 3, "roots": ["/"], "clusters": [{"keep": "/a", "files": []}]}',
            "must keep exactly",
        ),
    ],
)
def test_a_plan_that_is_not_one_is_refused_in_one_line(
    tmp_path: Path, content: str, says: str
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(content)
    result = run("apply", str(plan), "--action", "hardlink", "--yes", "--delete-near-duplicates")
    assert result.exit_code == ExitCode.ERROR
    assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
    assert not Path(f"{plan}.journal").exists()


def test_a_file_in_two_clusters_makes_the_plan_invalid(tmp_path: Path) -> None:
    _corpus, plan = planned(tmp_path)
    document = json.loads(plan.read_text())
    document["clusters"][1]["files"].append(dict(document["clusters"][0]["files"][1]))
    plan.write_text(json.dumps(document))
    result = run("apply", str(plan), "--action", "hardlink")
    assert result.exit_code == ExitCode.ERROR and "is also in cluster 0" in result.stderr


def test_a_journal_of_another_plan_is_refused(tmp_path: Path) -> None:
    _corpus, plan = planned(tmp_path)
    journal = tmp_path / "journal"
    first = run("apply", str(plan), "--action", "move-to", str(tmp_path / "a"), "--yes",
                "--journal", str(journal))  # fmt: skip
    assert first.exit_code == ExitCode.OK
    other = run("apply", str(plan), "--action", "move-to", str(tmp_path / "b"), "--yes",
                "--journal", str(journal))  # fmt: skip
    assert other.exit_code == ExitCode.ERROR
    assert "is not the journal of this plan, action and destination" in other.stderr
    assert not (tmp_path / "b").exists()


# ---------------------------------------------------------------- interruptions


def write_clusters(root: Path, clusters: int) -> None:
    """Pairs of near-duplicate documents (one word of 60 changed), unrelated across pairs."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(20_000)]
    root.mkdir()
    for number in range(clusters):
        text = rng.sample(words, 60)
        (root / f"d{number:04}a.txt").write_text(" ".join(text))
        text[30] = "changed"
        (root / f"d{number:04}b.txt").write_text(" ".join(text))


def _plan(corpus: Path, plan: Path) -> None:
    made = run("dedupe", "-qq", "-f", "json", "--keep", "first", "--plan", str(plan), str(corpus))
    assert made.exit_code == ExitCode.OK, made.stderr


def _journal_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_a_killed_apply_resumes_from_its_journal_to_the_same_end(tmp_path: Path) -> None:
    clusters = 150
    for name in ("calm", "killed"):
        write_clusters(tmp_path / name, clusters)
        _plan(tmp_path / name, tmp_path / f"{name}.json")
    calm = run("apply", str(tmp_path / "calm.json"), "--action", "move-to",
               str(tmp_path / "calm-dups"), "--yes", "-qq")  # fmt: skip
    assert calm.exit_code == ExitCode.OK, calm.stderr
    command = [
        sys.executable, "-m", "simhash_cli", "apply", str(tmp_path / "killed.json"),
        "--action", "move-to", str(tmp_path / "killed-dups"), "--yes", "-qq",
    ]  # fmt: skip
    journal = tmp_path / "killed.json.journal"
    for at_lines in (20, 120):  # killed twice, at different places, then left to finish
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, cwd=ROOT)
        while process.poll() is None and _journal_lines(journal) < at_lines:
            time.sleep(0.001)
        process.send_signal(signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL, "apply finished before it could be killed"
    done = Counter(json.loads(line).get("status") for line in journal.read_text().splitlines())
    assert 0 < done["done"] < clusters
    finished = run(*command[3:], "-f", "jsonl")
    assert finished.exit_code == ExitCode.OK, finished.stderr
    outcome = Counter(statuses(finished))
    assert outcome["done"] + outcome["already_done"] == clusters and outcome["already_done"] > 0
    assert state(tmp_path / "killed") == state(tmp_path / "calm")
    moved = {
        name: Path(destination_of(str(tmp_path / f"{name}-dups"), str(tmp_path / name)))
        for name in ("calm", "killed")
    }
    assert state(moved["killed"]) == state(moved["calm"]) != {}


def test_a_step_cut_between_its_two_halves_is_finished_on_resume(tmp_path: Path) -> None:
    _corpus, plan_file = planned(tmp_path)
    plan = load_plan(str(plan_file))
    dups = str(tmp_path / "dups")
    # Killed after the move linked the new name and before it unlinked the old one.
    step = plan.steps[0]
    moved = destination_of(dups, step.target.path)
    os.makedirs(os.path.dirname(moved))
    os.link(step.target.path, moved)
    header = {"journal": 1, "plan": plan.path, "plan_sha256": plan.sha256, "action": "move-to"}
    journal = Journal(str(tmp_path / "journal"), header, len(plan.steps))
    journal.open()
    journal.record(step, "started")
    outcomes = list(apply(plan, Action.MOVE_TO, destination=dups, execute=True, journal=journal))
    journal.close()
    assert [o.status for o in outcomes] == [Status.DONE] * 3
    assert not os.path.exists(step.target.path) and os.path.exists(moved)
    assert Path(moved).read_bytes() == (SAMPLE / Path(step.target.path).name).read_bytes()


def test_a_temporary_link_left_by_a_killed_run_is_replaced(tmp_path: Path) -> None:
    corpus, plan_file = planned(tmp_path)
    plan = load_plan(str(plan_file))
    step = plan.steps[0]
    head, name = os.path.split(step.target.path)
    os.link(step.kept.path, os.path.join(head, f".{name}.simhash-apply"))
    outcomes = list(apply(plan, Action.HARDLINK, execute=True, consent=True))
    assert [o.status for o in outcomes] == [Status.DONE] * 3
    assert not list(corpus.glob(".*"))
    # A file of that name that is not such a link is somebody's: the step is refused.
    _corpus2, plan_file2 = planned(tmp_path / "again")
    plan2 = load_plan(str(plan_file2))
    head, name = os.path.split(plan2.steps[0].target.path)
    Path(head, f".{name}.simhash-apply").write_text("mine")
    first = next(apply(plan2, Action.SYMLINK, execute=True, consent=True))
    assert first.status is Status.REFUSED and "is in use" in first.detail
    assert Path(head, f".{name}.simhash-apply").read_text() == "mine"


# ---------------------------------------------------------------- the script


ODD_NAMES = ["it's here.txt", "new\nline.txt", "-rf.txt", "$(echo no).txt", "space  twice.txt"]


def odd_corpus(root: Path) -> None:
    """Near-duplicate pairs whose names a careless script would break on."""
    root.mkdir(parents=True)
    rng = random.Random(3)
    words = [f"w{i}" for i in range(20_000)]
    for number, name in enumerate(ODD_NAMES):
        text = " ".join(rng.sample(words, 60))
        (root / f"a{number}-{name}").write_text(text)
        (root / f"b{number}-{name}").write_text(text + " again")
    text = " ".join(rng.sample(words, 60))
    with open(os.fsencode(root) + b"/c-caf\xe9.txt", "wb") as handle:  # not UTF-8
        handle.write(text.encode())
    (root / "d-plain.txt").write_text(text + " more")


@pytest.mark.parametrize("action", list(Action))
def test_the_script_ends_where_apply_ends(tmp_path: Path, action: Action) -> None:
    ends = {}
    for how in ("apply", "script"):
        root = tmp_path / how
        odd_corpus(root / "corpus")
        plan = root / "plan.json"
        _plan(root / "corpus", plan)
        where = [str(root / "dups")] if action is Action.MOVE_TO else []
        flags = [] if action is Action.MOVE_TO else ["--delete-near-duplicates"]
        if how == "apply":
            result = run("apply", str(plan), "--action", action.value, *where, *flags, "--yes")
            assert result.exit_code == ExitCode.OK, result.stderr
        else:
            script = root / "review.sh"
            result = run("apply", str(plan), "--action", action.value, *where, *flags,
                         "--script", str(script))  # fmt: skip
            assert result.exit_code == ExitCode.OK, result.stderr
            shell = subprocess.run(["sh", str(script)], capture_output=True, cwd=root)
            assert shell.returncode == 0, shell.stderr
            again = subprocess.run(["sh", str(script)], capture_output=True, cwd=root)
            assert again.returncode == 0 and b"already done: step 1" in again.stderr
        corpus_state = state(root / "corpus")
        moved = state(Path(destination_of(str(root / "dups"), str(root / "corpus"))))
        links = {
            k: (v[0], Path(v[1]).name) if v[0] == "link" else v for k, v in corpus_state.items()
        }
        ends[how] = (links, moved)
        assert len(json.loads(plan.read_text())["clusters"]) == len(ODD_NAMES) + 1
    assert ends["apply"] == ends["script"]


def test_the_script_refuses_a_file_changed_after_it_was_written(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    script = tmp_path / "review.sh"
    made = run("apply", str(plan), "--action", "delete", "--delete-near-duplicates",
               "--script", str(script))  # fmt: skip
    assert made.exit_code == ExitCode.OK
    assert os.stat(script).st_mode & 0o777 == 0o666 & ~_umask()
    (corpus / "volcano-report.txt").write_text("changed")
    shell = subprocess.run(["sh", str(script)], capture_output=True, text=True)
    assert shell.returncode == ExitCode.INCOMPLETE
    assert "refused: step 3: the file" in shell.stderr
    assert (corpus / "volcano-report.txt").read_text() == "changed"
    assert not (corpus / "shipping-policy.txt").exists()  # the other steps were taken


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------- properties


@settings(max_examples=25)
@given(
    st.lists(st.integers(2, 4), min_size=1, max_size=5),
    st.sampled_from(list(Action)),
    st.data(),
)
def test_apply_never_loses_a_kept_protected_or_changed_file(
    sizes: list[int], action: Action, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "protected").mkdir()
        (root / "open").mkdir()
        paths: list[str] = []
        clusters = []
        for number, size in enumerate(sizes):
            members = []
            for member in range(size):
                folder = data.draw(st.sampled_from(["protected", "open"]))
                path = root / folder / f"c{number}-{member}.txt"
                # Near-duplicates (an unsealed plan's pairs are checked on the files).
                body = " ".join(f"w{number}x{i}" for i in range(40))
                path.write_text(f"cluster {number} {body} member {member}")
                members.append(len(paths))
                paths.append(str(path))
            clusters.append(np.array(members))
        stamps = [stamp_of(os.stat(p)) for p in paths]
        plan = make_plan(
            paths, np.zeros((len(paths), 1), np.uint64), stamps, 64, clusters,
            keep=data.draw(st.sampled_from(list(Keep))), roots=[str(root)],
            protect=[str(root / "protected")],
        )  # fmt: skip
        plan_file = root / "plan.json"
        plan_file.write_text(json.dumps(plan))
        changed = set(data.draw(st.lists(st.sampled_from(paths), unique=True)))
        for name in changed:
            Path(name).write_text("changed after the plan")
        before = {p: Path(p).read_bytes() for p in paths}
        loaded = load_plan(str(plan_file)).bounded_by([str(root)])  # not sealed: bound here
        destination = str(root / "moved") if action is Action.MOVE_TO else None
        for _ in apply(loaded, action, destination=destination, execute=True, consent=True):
            pass
        for cluster in plan["clusters"]:
            for entry in cluster["files"]:
                name = entry["path"]
                if entry["action"] != "remove" or name in changed or cluster["keep"] in changed:
                    assert Path(name).read_bytes() == before[name]
                    assert not Path(name).is_symlink()
                    if entry["action"] != "keep":  # a kept file may gain hard links
                        assert os.stat(name).st_nlink == 1
                elif action is Action.MOVE_TO:  # moved as asked, its bytes kept
                    assert (
                        Path(destination_of(str(root / "moved"), name)).read_bytes()
                        == (before[name])
                    )
            if cluster["keep"] is not None:
                assert Path(cluster["keep"]).read_bytes() == before[cluster["keep"]]


def test_a_journal_line_cut_short_by_a_kill_is_dropped(tmp_path: Path) -> None:
    _corpus, plan = planned(tmp_path)
    dups = str(tmp_path / "dups")
    journal = Path(f"{plan}.journal")
    first = run("apply", str(plan), "--action", "move-to", dups, "--yes", "-f", "jsonl")
    assert first.exit_code == ExitCode.OK, first.stderr
    lines = journal.read_bytes().splitlines()
    assert json.loads(lines[0])["journal"] == 1 and len(lines) == 7
    with journal.open("ab") as handle:
        handle.write(b'{"step": 3, "pa')  # and while writing a later one
    again = run("apply", str(plan), "--action", "move-to", dups, "--yes", "-f", "jsonl")
    assert again.exit_code == ExitCode.OK and statuses(again) == ["already_done"] * 3
    assert all(json.loads(line) for line in journal.read_bytes().splitlines())


def test_a_move_across_filesystems_copies_syncs_then_unlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, plan_file = planned(tmp_path)
    plan = load_plan(str(plan_file))

    def no_links(source: str, destination: str, **_: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link", source)

    monkeypatch.setattr(os, "link", no_links)
    dups = str(tmp_path / "dups")
    outcomes = list(apply(plan, Action.MOVE_TO, destination=dups, execute=True))
    assert [o.status for o in outcomes] == [Status.DONE] * 3
    for step in plan.steps:
        moved = Path(destination_of(dups, step.target.path))
        assert not os.path.exists(step.target.path)
        assert hashlib.sha256(moved.read_bytes()).hexdigest() == step.target.sha256
        assert moved.stat().st_mtime_ns == step.target.mtime_ns  # copied with its times
    assert not list(Path(dups).rglob("*.simhash-apply"))


def _lines(result: Result) -> dict[str, str]:
    return {Path(r["path"]).name: r["status"] for r in map(json.loads, result.stdout.splitlines())}


def test_undo_puts_moved_files_back_and_a_run_can_take_them_again(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    before, dups, journal = state(corpus), tmp_path / "dups", f"{plan}.journal"
    moved = run("apply", str(plan), "--action", "move-to", str(dups), "--yes", "-q")
    assert moved.exit_code == ExitCode.OK and len(list(corpus.iterdir())) == 5
    dry = run("apply", "--undo", journal, "-f", "jsonl")
    assert statuses(dry) == ["would_do"] * 3 and len(list(corpus.iterdir())) == 5
    done = run("apply", "--undo", journal, "--yes", "-f", "jsonl")
    assert statuses(done) == ["done"] * 3, done.output
    assert state(corpus) == before and not [p for p in dups.rglob("*") if p.is_file()]
    assert statuses(run("apply", "--undo", journal, "-f", "jsonl")) == ["already_done"] * 3
    # Back under the very inodes the plan recorded: the plan can be taken again.
    again = run("apply", str(plan), "--action", "move-to", str(dups), "--yes", "-f", "jsonl")
    assert statuses(again) == ["done"] * 3


def test_undo_makes_a_link_a_file_again_where_its_bytes_were_the_kept_files(
    tmp_path: Path,
) -> None:
    corpus, plan = planned(tmp_path)
    linked = run("apply", str(plan), "--action", "hardlink", "--delete-near-duplicates", "--yes")
    assert linked.exit_code == ExitCode.OK, linked.output
    done = run("apply", "--undo", f"{plan}.journal", "--yes", "-f", "jsonl")
    assert done.exit_code == ExitCode.INCOMPLETE
    assert _lines(done) == {
        "shipping-policy.txt": "done",  # the same bytes as the kept copy: a file again
        "shipping-policy-revised.txt": "refused",  # a near-duplicate: its bytes are gone
        "volcano-report.txt": "refused",
    }
    restored = corpus / "shipping-policy.txt"
    assert restored.read_bytes() == (SAMPLE / "shipping-policy.txt").read_bytes()
    assert not restored.samefile(corpus / "shipping-policy-copy.txt")
    assert (corpus / "volcano-report.txt").samefile(corpus / "volcano-report-wire.txt")


def test_undo_moves_nothing_over_a_file_that_took_its_place(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    journal, dups = f"{plan}.journal", tmp_path / "dups"
    assert run("apply", str(plan), "--action", "move-to", str(dups), "--yes").exit_code == 0
    (corpus / "volcano-report.txt").write_text("a new file in its place")
    done = run("apply", "--undo", journal, "--yes", "-f", "jsonl")
    assert done.exit_code == ExitCode.INCOMPLETE
    assert _lines(done)["volcano-report.txt"] == "refused"
    assert (corpus / "volcano-report.txt").read_text() == "a new file in its place"
    assert [p.name for p in dups.rglob("volcano-report.txt")] == ["volcano-report.txt"]
    wrong = run("apply", "--undo", journal, "--action", "delete")
    assert wrong.exit_code == ExitCode.USAGE and "leave out --action" in wrong.stderr
    other = tmp_path / "other.json"
    other.write_text(plan.read_text().replace("first", "first "))
    mismatch = run("apply", str(other), "--undo", journal)
    assert mismatch.exit_code != ExitCode.OK and "is not the plan" in mismatch.stderr
