"""Shared fixtures and hypothesis settings."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from simhash_cli.app import parallel
from simhash_cli.cli import main
from simhash_cli.errors import ExitCode

# CI replays the same examples on every run (derandomized), so that its verdict is the
# commit's and not the draw's; a developer's runs draw new ones each time, and `make fuzz`
# and `--hypothesis-seed=N` search further.
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# The key that seals plans lives in the user's state directory: the suite's (and each worker's,
# and every process a test starts) is its own, never the developer's.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="simhash-state-")
# A walk in a git work tree reads the user's excludes file, as git does: the suite's are
# none, whatever the developer's git configuration ignores (the walk and git, alike).
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="simhash-config-")
os.environ["GIT_CONFIG_GLOBAL"] = os.devnull
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_corpus"


@pytest.fixture(autouse=True)
def workers_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of ``-j 2`` in this process starts its workers at once, as a long run does: the
    suite's inputs end before the time a real run works alone, and are shorter than the work
    a real run starts workers for (tests of those set them)."""
    monkeypatch.setattr(parallel, "WORKERS_AFTER", 0.0)
    monkeypatch.setattr(parallel, "WORKERS_PAY", 0.0)


@pytest.fixture
def messy_dir(tmp_path: Path) -> Path:
    """Text files among binary, empty and undecodable ones."""
    (tmp_path / "a.txt").write_text("the quick brown fox jumps over the lazy dog " * 5)
    (tmp_path / "b.txt").write_text("the quick brown fox jumps over the lazy dog " * 5 + "again")
    (tmp_path / "c.txt").write_text("an entirely different note about tax forms and receipts")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.txt").write_text("  \n\t ... !!! \n")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e recipe".encode("latin-1"))
    return tmp_path


@contextmanager
def small_filesystem(where: Path, size: str) -> Iterator[Path]:
    """A real file system of ``size`` (a tmpfs) mounted at ``where``, where the machine lets the
    tests mount one (root, or a container that allows it); the test is skipped otherwise."""
    where.mkdir(exist_ok=True)
    name = f"simhash-test-{uuid.uuid4().hex[:8]}"
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", name, str(where)]
    if subprocess.run(mount, capture_output=True, check=False).returncode:
        pytest.skip("this machine does not let the tests mount a small file system")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def read_only_again(where: Path) -> None:
    """Remount the :func:`small_filesystem` at ``where`` read-only (root cannot write there)."""
    remount = ["mount", "-o", "remount,ro", str(where)]
    subprocess.run(remount, capture_output=True, check=True)


def interruptible() -> None:
    """``preexec_fn`` of a child that a test interrupts with SIGINT: the default disposition,
    whatever the test runner inherited (a job started with ``&`` by a shell without job
    control ignores SIGINT, and Python keeps an ignored SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def planned(tmp_path: Path, corpus: Path | None = None) -> tuple[Path, Path]:
    """A copy of the sample corpus (or ``corpus``) and its plan (``--keep first``: 2
    clusters, 3 files marked remove)."""
    if corpus is None:
        corpus = tmp_path / "corpus"
        shutil.copytree(SAMPLE, corpus)
    plan = tmp_path / "plan.json"
    made = CliRunner().invoke(
        main, ["dedupe", "-qq", "-f", "json", "--keep", "first", "--plan", str(plan), str(corpus)]
    )
    assert made.exit_code == ExitCode.OK, made.stderr
    return corpus, plan


def member_ids(clusters: list[dict[str, Any]]) -> list[list[Any]]:
    """The ids of each cluster's members (a dedupe's JSON ``clusters``), each cluster's
    sorted, the clusters sorted."""
    return sorted(sorted(member["id"] for member in cluster["members"]) for cluster in clusters)
