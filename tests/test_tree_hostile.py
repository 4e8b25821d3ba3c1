"""Another local user who can write in the tree, the destination or beside the plan (README,
"Safety"): what apply checked is what it acts on, through descriptors, never a path looked up
again; nothing outside the roots or DIR is written, moved or deleted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from simhash_cli.app.apply.apply import load_plan
from simhash_cli.app.apply.journal import Journal
from simhash_cli.errors import InputError

from conftest import planned


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
