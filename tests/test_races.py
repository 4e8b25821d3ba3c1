"""Runs of simhash racing for the same files, as real processes (README, "Safety").

Two plans of one tree can ask for opposite steps: one keeps the older file of each cluster and
removes the newer, the other the reverse. Applied at once, each step must hold both of its
files against the other run from its checks to its act, so every cluster keeps a file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from simhash_cli.cli import main
from simhash_cli.errors import ExitCode

SIMHASH = [sys.executable, "-m", "simhash_cli"]
CLUSTERS = 150
"""Enough steps that the two runs overlap for most of their length (startup ~1 s)."""


def _clusters(root: Path) -> None:
    """``CLUSTERS`` clusters of two identical files, ``a`` older than ``b``."""
    for number in range(CLUSTERS):
        directory = root / f"{number:04}"
        directory.mkdir(parents=True)
        text = f"cluster {number} " + " ".join(f"w{number}x{i}" for i in range(30))
        for name, when in (("a.txt", 1_000_000), ("b.txt", 2_000_000)):
            (directory / name).write_text(text)
            os.utime(directory / name, (when, when))


def _plan(corpus: Path, plan: Path, keep: str) -> None:
    made = CliRunner().invoke(
        main, ["dedupe", "-qq", "-f", "json", "--keep", keep, "--plan", str(plan), str(corpus)]
    )
    assert made.exit_code == ExitCode.OK, made.stderr


def _kept(corpus: Path) -> int:
    """How many clusters still hold a regular file in their directory."""
    return sum(
        any((d / n).is_file() and not (d / n).is_symlink() for n in ("a.txt", "b.txt"))
        for d in corpus.iterdir()
    )


@pytest.mark.parametrize("action", ["delete", "symlink", "hardlink", "move-to"])
def test_opposite_plans_applied_at_once_leave_every_cluster_a_file(
    tmp_path: Path, action: str
) -> None:
    for trial in range(2):
        corpus = tmp_path / f"trial{trial}"
        _clusters(corpus)
        runs = []
        for keep in ("oldest", "newest"):
            plan = tmp_path / f"{keep}{trial}.json"
            _plan(corpus, plan, keep)
            moved = [str(tmp_path / f"moved-{keep}{trial}")] if action == "move-to" else []
            consent = ["--delete-near-duplicates", "--yes", "-qq"]
            runs.append([*SIMHASH, "apply", str(plan), *moved, "--action", action, *consent])
        processes = [
            subprocess.Popen(run, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for run in runs
        ]
        for process in processes:
            _, stderr = process.communicate(timeout=120)
            assert process.returncode in (ExitCode.OK, ExitCode.INCOMPLETE), stderr
        assert _kept(corpus) == CLUSTERS
