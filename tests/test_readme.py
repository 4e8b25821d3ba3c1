"""Every `$ simhash ...` command the README shows runs, from a copy of the repository's layout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE

COMMANDS = [
    line[2:]
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    if line.startswith(("$ simhash ", "$ echo ", "$ cp -r sample_corpus "))
]


def test_the_readme_shows_commands() -> None:
    assert len(COMMANDS) >= 8


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(command: str, tmp_path: Path) -> None:
    if "| jq" in command and shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", re.sub(r"\s+#.*$", "", command)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "the command printed nothing on stdout"
    assert "Traceback" not in done.stderr


def test_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"## Python API\n\n```python\n(.*?)```", readme, re.S)
    assert found is not None
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(compile(found.group(1), "README.md", "exec"), namespace)
    assert "result" in namespace
