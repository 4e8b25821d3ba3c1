"""Another local user who can write in the tree, the destination or beside the plan
(docs/safety.md): what apply checked is what it acts on, through descriptors, never a path looked up
again; nothing outside the roots or DIR is written, moved or deleted."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from simhash_cli.app.apply import apply as applying
from simhash_cli.app.apply.apply import apply, load_plan
from simhash_cli.app.apply.checks import destination_of
from simhash_cli.app.apply.journal import Journal
from simhash_cli.app.apply.steps import Action
from simhash_cli.cli import main
from simhash_cli.errors import ExitCode, InputError

from conftest import SAMPLE, planned


def test_a_journal_flipped_to_a_link_after_its_check_is_not_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal was checked through one descriptor and opened again by name to append and
    truncate: flipped to a link in that gap, a 104 KB file was truncated to 651 bytes."""
    _corpus, plan_file = planned(tmp_path)
    plan = load_plan(str(plan_file))
    header = {"journal": 1, "plan": plan.path, "plan_sha256": plan.sha256, "action": "delete"}
    path = tmp_path / "journal"
    first = Journal(str(path), header, len(plan.steps))
    first.open()
    first.record(plan.steps[0], "started")
    first.close()
    with path.open("ab") as handle:
        handle.write(b'{"step": 1, "pa')  # a last line cut short by a kill: to be truncated
    victim = tmp_path / "victim"
    victim.write_bytes(b"x" * 104_000)
    checked = Journal._check

    def flipped(self: Journal, data: bytes) -> int:
        keep = checked(self, data)
        os.replace(path, tmp_path / "moved-away")
        os.symlink(victim, path)
        return keep

    monkeypatch.setattr(Journal, "_check", flipped)
    journal = Journal(str(path), header, len(plan.steps))
    with pytest.raises(InputError, match="journal"):
        journal.open()
    journal.close()
    assert victim.read_bytes() == b"x" * 104_000


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A corpus whose near-duplicates lie in a subdirectory, its plan, and a directory
    outside the roots holding files of the same names (what a racing user points at)."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus / "sub")
    _corpus, plan = planned(tmp_path, corpus)
    victim = tmp_path / "victim"
    victim.mkdir()
    for path in (corpus / "sub").iterdir():
        (victim / path.name).write_text("precious")
    return corpus, plan, victim


def _state(victim: Path) -> dict[str, tuple[int, str]]:
    """Each name with its inode and text (a link is its own kind)."""
    return {
        p.name: (p.lstat().st_ino, "a link" if p.is_symlink() else p.read_text())
        for p in victim.iterdir()
    }


@pytest.mark.parametrize("action", list(Action))
def test_a_directory_swapped_for_a_link_after_the_checks_is_not_acted_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: Action
) -> None:
    """apply checked a file, then acted on it by path: a directory of the tree swapped for a
    link in that gap made delete, symlink and hardlink act outside the roots (a racing user
    made root delete 133 of 1,000 files in a directory that user cannot write)."""
    corpus, plan_file, victim = _tree(tmp_path)
    plan = load_plan(str(plan_file))
    sub = corpus / "sub"
    checked = applying.refusal  # type: ignore[attr-defined]

    def then_swapped(*args: object) -> str | None:
        found = checked(*args)  # type: ignore[arg-type]
        if sub.is_dir() and not sub.is_symlink():
            os.rename(sub, corpus / "away")
            os.symlink(victim, sub)
        return found

    monkeypatch.setattr(applying, "refusal", then_swapped)
    dups = str(tmp_path / "dups") if action is Action.MOVE_TO else None
    before = _state(victim)
    outcomes = list(apply(plan, action, destination=dups, execute=True, consent=True))
    assert outcomes and _state(victim) == before


def test_a_link_inside_the_move_destination_is_not_followed(tmp_path: Path) -> None:
    """move-to DIR followed links inside DIR: the file landed in a 0700 directory elsewhere
    while the output said it went to DIR."""
    corpus, plan_file, _victim = _tree(tmp_path)
    dups, elsewhere = tmp_path / "dups", tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    dups.mkdir()
    first = str(corpus).lstrip(os.sep).split(os.sep)[0]
    os.symlink(elsewhere, dups / first)  # planted by whoever can write in DIR
    result = CliRunner().invoke(
        main, ["apply", str(plan_file), "--action", "move-to", str(dups), "--yes", "-f", "jsonl"]
    )
    assert "Traceback" not in result.stderr
    assert list(elsewhere.iterdir()) == []
    assert sorted(p.name for p in (corpus / "sub").iterdir()) == sorted(
        p.name for p in SAMPLE.iterdir()
    )
    statuses = {json.loads(line)["status"] for line in result.stdout.splitlines()}
    assert statuses == {"refused"}


def _applied(plan_file: Path, *arguments: str) -> None:
    done = CliRunner().invoke(main, ["apply", str(plan_file), *arguments, "--yes", "-q"])
    assert done.exit_code == ExitCode.OK, done.stderr


def test_undo_never_copies_through_a_link_planted_at_its_temporary_name(tmp_path: Path) -> None:
    """--undo copied the kept file's bytes through a link planted at .NAME.simhash-apply: a
    root-only 0600 file was overwritten and left 0644."""
    corpus, plan_file, _victim = _tree(tmp_path)
    _applied(plan_file, "--action", "hardlink", "--delete-near-duplicates")
    secret = tmp_path / "secret"
    secret.write_text("root only")
    secret.chmod(0o600)
    journal = f"{plan_file}.journal"
    linked = [
        p for p in (corpus / "sub").iterdir() if p.stat().st_nlink > 1 and p.name.endswith("y.txt")
    ]
    assert linked
    for path in linked:
        os.symlink(secret, path.parent / f".{path.name}.simhash-apply")
    result = CliRunner().invoke(main, ["apply", "--undo", journal, "--yes", "-f", "jsonl"])
    assert "Traceback" not in result.stderr
    assert secret.read_text() == "root only" and stat.S_IMODE(secret.stat().st_mode) == 0o600


def test_undo_does_not_act_through_a_directory_turned_into_a_link(tmp_path: Path) -> None:
    """--undo checked neither the roots nor links: after a directory of the tree became a
    link it moved files outside the roots, while its first line said it acted inside."""
    corpus, plan_file, _victim = _tree(tmp_path)
    dups = tmp_path / "dups"
    _applied(plan_file, "--action", "move-to", str(dups))
    outside = tmp_path / "outside"
    outside.mkdir()
    sub = corpus / "sub"
    os.rename(sub, corpus / "away")
    os.symlink(outside, sub)
    result = CliRunner().invoke(
        main, ["apply", "--undo", f"{plan_file}.journal", "--yes", "-f", "jsonl"]
    )
    assert "Traceback" not in result.stderr
    assert list(outside.iterdir()) == []
    assert {json.loads(line)["status"] for line in result.stdout.splitlines()} == {"refused"}


@pytest.mark.parametrize("action", ["hardlink", "symlink"])
def test_a_name_too_long_for_the_temporary_name_is_linked_all_the_same(
    tmp_path: Path, action: str
) -> None:
    """Names of 242-255 bytes could never be hard- or symlinked: the temporary name
    (.NAME.simhash-apply) was longer than a name may be."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (SAMPLE / "shipping-policy.txt").read_text()
    long = "n" * 250
    for name in (f"{long}.a", f"{long}.b"):
        (corpus / name).write_text(text)
    _corpus, plan_file = planned(tmp_path, corpus)
    result = CliRunner().invoke(
        main, ["apply", str(plan_file), "--action", action, "--yes", "-f", "jsonl"]
    )
    assert result.exit_code == ExitCode.OK, result.stderr
    assert [json.loads(line)["status"] for line in result.stdout.splitlines()] == ["done"]
    assert (corpus / f"{long}.a").samefile(corpus / f"{long}.b")
    assert sorted(p.name for p in corpus.iterdir()) == [f"{long}.a", f"{long}.b"]


def test_an_unsealed_plan_removes_a_file_only_when_it_is_near_its_kept_file(
    tmp_path: Path,
) -> None:
    """apply never checked that a file marked remove is near its kept file: an unsealed plan
    run with --root and --delete-near-duplicates deleted an unrelated file. Its pairs are
    checked on the files, at the plan's threshold; a sealed plan's are the run's own."""
    corpus, plan_file = planned(tmp_path)
    plan = json.loads(plan_file.read_text())
    del plan["seal"]
    victim = corpus / "chess-openings.txt"  # nothing like any other file
    info = victim.stat()
    cluster = plan["clusters"][1]
    removed = next(f for f in cluster["files"] if f["action"] == "remove")
    removed.update(
        path=str(victim), device=info.st_dev, inode=info.st_ino, size=info.st_size,
        mtime_ns=info.st_mtime_ns, sha256=hashlib.sha256(victim.read_bytes()).hexdigest(),
    )  # fmt: skip
    evil = tmp_path / "evil.json"
    evil.write_text(json.dumps(plan))
    result = CliRunner().invoke(
        main, ["apply", str(evil), "--action", "delete", "--delete-near-duplicates",
               "--root", str(corpus), "--yes", "-f", "jsonl"],
    )  # fmt: skip
    assert result.exit_code == ExitCode.INCOMPLETE, result.stderr
    outcomes = {json.loads(line)["path"]: json.loads(line) for line in result.stdout.splitlines()}
    assert outcomes[str(victim)]["status"] == "refused"
    assert "not a near-duplicate of its kept file" in outcomes[str(victim)]["detail"]
    assert victim.exists()
    # The true pairs of the same plan, unsealed, are near: they go.
    assert sum(o["status"] == "done" for o in outcomes.values()) == 2


def test_a_partial_copy_left_by_a_killed_move_is_dropped_when_the_move_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL during a move across file systems left its partial copy (under its temporary
    name in DIR) for ever; the move made again drops it and copies whole."""
    _corpus, plan_file = planned(tmp_path)
    plan = load_plan(str(plan_file))
    dups = tmp_path / "dups"

    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    for step in plan.steps:  # what a kill in the middle of each copy leaves
        moved = Path(destination_of(str(dups), step.target.path))
        moved.parent.mkdir(parents=True, exist_ok=True)
        (moved.parent / f".{moved.name}.simhash-apply").write_bytes(b"half a co")
    outcomes = list(apply(plan, Action.MOVE_TO, destination=str(dups), execute=True))
    assert [o.status.value for o in outcomes] == ["done"] * len(plan.steps)
    for step in plan.steps:
        moved = Path(destination_of(str(dups), step.target.path))
        assert hashlib.sha256(moved.read_bytes()).hexdigest() == step.target.sha256
    assert [p.name for p in dups.rglob(".*")] == []


def test_a_plan_of_files_named_one_by_one_is_applied_in_their_directory(tmp_path: Path) -> None:
    """Files named as the roots (dedupe a.txt b.txt --plan): each is its own root, reached
    through the directory it was named in."""
    for name in ("shipping-policy.txt", "shipping-policy-copy.txt"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    plan = tmp_path / "plan.json"
    made = CliRunner().invoke(
        main, ["dedupe", "-qq", "--plan", str(plan), "-o", os.devnull,
               str(tmp_path / "shipping-policy.txt"), str(tmp_path / "shipping-policy-copy.txt")],
    )  # fmt: skip
    assert made.exit_code == ExitCode.OK, made.stderr
    done = CliRunner().invoke(main, ["apply", str(plan), "--action", "hardlink", "--yes"])
    assert done.exit_code == ExitCode.OK, done.stderr
    assert (tmp_path / "shipping-policy.txt").samefile(tmp_path / "shipping-policy-copy.txt")


def test_an_undo_killed_between_the_two_halves_of_a_move_is_finished_by_another(
    tmp_path: Path,
) -> None:
    """A killed --undo of a move could not be finished by another --undo: the file had its
    old name back and its name under DIR too, and the step was refused ("its place is taken
    again")."""
    corpus, plan_file = planned(tmp_path)
    dups = tmp_path / "dups"
    _applied(plan_file, "--action", "move-to", str(dups))
    plan = load_plan(str(plan_file))
    step = plan.steps[0]
    moved = Path(destination_of(str(dups), step.target.path))
    os.link(moved, step.target.path)  # the first half of moving it back, then the kill
    result = CliRunner().invoke(
        main, ["apply", "--undo", f"{plan_file}.journal", "--yes", "-f", "jsonl"]
    )
    assert result.exit_code == ExitCode.OK, result.stderr
    assert {json.loads(line)["status"] for line in result.stdout.splitlines()} == {"done"}
    assert not moved.exists() and Path(step.target.path).exists()
    assert sorted(p.name for p in corpus.iterdir()) == sorted(p.name for p in SAMPLE.iterdir())
