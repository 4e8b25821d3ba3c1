"""Runs of simhash racing for the same files, as real processes (docs/safety.md).

Two plans of one tree can ask for opposite steps: one keeps the older file of each cluster and
removes the newer, the other the reverse. Applied at once, each step must hold both of its
files against the other run from its checks to its act, so every cluster keeps a file.
"""

from __future__ import annotations

import ctypes
import os
import pwd
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


# A user who can write in the tree swaps one of its directories with a link to a directory
# that user cannot write, for HOLD microseconds every PERIOD, through a descriptor of the
# tree opened before it drops to ``nobody`` (renameat2's RENAME_EXCHANGE: the name is always
# one or the other). Tuned on the apply of b19f7cd, which checked a file and then acted on it
# by its path: 5 of 800 steps deleted a file in the other directory, and most runs ended in
# a traceback (EINVAL from realpath on the vanishing link).
SWAPPER = r"""
import ctypes, os, signal, sys, time
tree, uid, period, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
if uid >= 0:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG, after the change of user that clears it
if os.getppid() == 1:
    sys.exit("the test is gone")
swap, clock = libc.renameat2, time.perf_counter
if swap(fd, b"sub", fd, b"sub.link", 2) or swap(fd, b"sub", fd, b"sub.link", 2):
    print("no RENAME_EXCHANGE here:", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
print("ready", flush=True)
while True:
    for pause in (hold, period):
        swap(fd, b"sub", fd, b"sub.link", 2)
        until = clock() + pause
        while clock() < until:
            pass
"""
PERIOD, HOLD = 200e-6, 50e-6
ROUNDS, PAIRS = 4, 250


def _swappable(tmp_path: Path, round_: int) -> tuple[Path, Path, Path]:
    """A tree whose ``sub`` holds ``PAIRS`` pairs of copies, its plan (``--keep first``), and
    the victim directory ``sub.link`` points to, holding files of the same names."""
    tree, victim = tmp_path / f"tree{round_}", tmp_path / f"victim{round_}"
    (tree / "sub").mkdir(parents=True)
    victim.mkdir()
    for number in range(PAIRS):
        text = f"cluster {number} " + " ".join(f"w{number}x{i}" for i in range(30))
        for name in (f"{number:04}a.txt", f"{number:04}b.txt"):
            (tree / "sub" / name).write_text(text)
            (victim / name).write_text("precious")
    plan = tmp_path / f"plan{round_}.json"
    _plan(tree, plan, "first")
    os.symlink(victim, tree / "sub.link")
    tree.chmod(0o777)  # the racing user may rename in the tree, not in the victim
    return tree, plan, victim


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "renameat2"), reason="needs renameat2")
def test_a_user_swapping_a_directory_for_a_link_as_apply_runs_makes_it_act_nowhere_else(
    tmp_path: Path,
) -> None:
    """A real process of another user swaps a directory of the tree with a link to one
    outside it, thousands of times while apply deletes: nothing outside is touched, no run
    ends in a traceback, and each step deleted what it says, in the tree."""
    from simhash_cli.app.apply.apply import apply, load_plan
    from simhash_cli.app.apply.steps import Action, Status

    try:
        uid = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else -1
    except KeyError:  # no such user here: the same user, in a process of its own
        uid = -1
    refused = 0
    for round_ in range(ROUNDS):
        tree, plan_file, victim = _swappable(tmp_path, round_)
        plan = load_plan(str(plan_file))
        arguments = [str(tree), str(uid), str(PERIOD), str(HOLD)]
        swapper = subprocess.Popen(
            [sys.executable, "-c", SWAPPER, *arguments], stdout=subprocess.PIPE, text=True
        )
        try:
            assert swapper.stdout is not None
            said = swapper.stdout.readline()
            if said.startswith("no RENAME_EXCHANGE"):
                pytest.skip(said.strip())
            assert said == "ready\n", said
            outcomes = list(apply(plan, Action.DELETE, execute=True, consent=True))
        finally:
            swapper.kill()
            swapper.wait()
        assert sorted(p.name for p in victim.iterdir()) == sorted(
            f"{number:04}{end}.txt" for number in range(PAIRS) for end in "ab"
        )
        assert all(p.read_text() == "precious" for p in victim.iterdir())
        real = tree / "sub" if not (tree / "sub").is_symlink() else tree / "sub.link"
        deleted = {Path(o.step.target.path).name for o in outcomes if o.status is Status.DONE}
        assert {o.status for o in outcomes} <= {Status.DONE, Status.REFUSED}
        assert len(outcomes) == PAIRS
        assert {p.name for p in real.iterdir()} == {
            f"{number:04}{end}.txt" for number in range(PAIRS) for end in "ab"
        } - deleted
        refused += sum(o.status is Status.REFUSED for o in outcomes)
    assert refused > 0  # the swaps met the run: some steps saw a link where a directory was
