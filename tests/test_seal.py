"""A plan's seal (docs/safety.md): apply takes a plan's roots on its word only when this
user's ``dedupe --plan`` wrote it and nobody changed it since; any other plan acts only inside
the roots named on apply's own command line."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from simhash_cli.app.plans.seal import key_path
from simhash_cli.cli import main
from simhash_cli.errors import ExitCode

from conftest import planned

CONSENT = "--delete-near-duplicates"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _records(result: Result) -> dict[str, dict]:  # type: ignore[type-arg]
    return {json.loads(line)["path"]: json.loads(line) for line in result.stdout.splitlines()}


def _forge(plan: Path, victim: Path) -> None:
    """The attack: the plan's roots widened to ``/`` and a file outside its tree marked
    ``remove``, with its true device, inode, size, mtime and SHA-256."""
    document = json.loads(plan.read_text())
    info = victim.stat()
    document["roots"] = ["/"]
    removed = next(
        entry for c in document["clusters"] for entry in c["files"] if entry["action"] == "remove"
    )
    removed.update(
        path=str(victim),
        device=info.st_dev,
        inode=info.st_ino,
        size=info.st_size,
        mtime_ns=info.st_mtime_ns,
        sha256=hashlib.sha256(victim.read_bytes()).hexdigest(),
    )
    plan.write_text(json.dumps(document))


def test_a_plan_whose_roots_were_widened_deletes_nothing_outside_the_tree(
    tmp_path: Path,
) -> None:
    corpus, plan = planned(tmp_path)
    victim = tmp_path / "elsewhere" / "precious.txt"
    victim.parent.mkdir()
    victim.write_text("a file outside the scanned tree")
    _forge(plan, victim)
    delete = ["apply", str(plan), "--action", "delete", CONSENT, "--yes", "-f", "jsonl"]

    refused = run(*delete)
    assert refused.exit_code == ExitCode.USAGE, refused.stderr
    assert "its seal does not match" in refused.stderr
    assert "--root DIR" in refused.stderr

    bounded = run(*delete, "--root", str(corpus))
    assert bounded.exit_code == ExitCode.INCOMPLETE, bounded.stderr
    assert "acting only inside" in bounded.stderr and "not trusted" in bounded.stderr
    outcome = _records(bounded)[str(victim)]
    assert outcome["status"] == "refused"
    assert "outside the roots this run may act in" in outcome["detail"]
    assert victim.read_text() == "a file outside the scanned tree"


def test_a_plan_this_user_wrote_acts_within_its_own_roots_and_says_so(tmp_path: Path) -> None:
    corpus, plan = planned(tmp_path)
    dry = run("apply", str(plan), "--action", "move-to", str(tmp_path / "moved"))
    assert dry.exit_code == ExitCode.OK, dry.stderr
    assert f"acting only inside {os.path.realpath(corpus)}: the folders the plan was made from" in (
        " ".join(dry.stderr.split())
    )
    other = tmp_path / "other"
    other.mkdir()
    narrowed = run(
        "apply", str(plan), "--action", "move-to", str(tmp_path / "moved"), "-f", "jsonl",
        "--root", str(other),
    )  # fmt: skip
    assert narrowed.exit_code == ExitCode.INCOMPLETE  # --root narrows: nothing of it is inside
    assert {r["status"] for r in _records(narrowed).values()} == {"refused"}


def test_a_plan_sealed_with_another_key_needs_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, plan = planned(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-user"))
    refused = run("apply", str(plan), "--action", "hardlink")
    assert refused.exit_code == ExitCode.USAGE
    assert "there is no key to check its seal with" in refused.stderr
    run("dedupe", "-qq", "--plan", str(tmp_path / "theirs.json"), str(corpus))
    shutil.copy(tmp_path / "theirs.json", plan)  # sealed, but with their key: fine for them
    monkeypatch.setenv("XDG_STATE_HOME", os.environ["XDG_STATE_HOME"] + "-x")
    assert run("apply", str(plan), "--action", "hardlink").exit_code == ExitCode.USAGE


def test_the_key_is_private_and_one_open_to_others_seals_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    corpus, plan = planned(tmp_path)
    key = Path(key_path())
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert run("apply", str(plan), "--action", "move-to", str(tmp_path)).exit_code == ExitCode.OK

    key.chmod(0o644)
    again = run("dedupe", "--plan", str(tmp_path / "again.json"), str(corpus))
    assert "the plan is not sealed" in again.stderr and "mode 644" in again.stderr
    assert run("apply", str(plan), "--action", "hardlink").exit_code == ExitCode.USAGE
