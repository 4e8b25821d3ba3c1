"""The README's examples, run as a reader would run them: each console block in order, in one
directory holding a copy of the sample corpus, on a terminal (stdout and stderr on a
pseudo-terminal of 120 columns). A line under a command that is not itself a command is what
the command shows: it must be on the screen (spaces aside), so that an example's effect is
checked, not only its exit code.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE
from terminal import on_a_terminal, screen_of

README = (ROOT / "README.md").read_text(encoding="utf-8")
COLUMNS = 120
# Commands of the development workflow, not of the tool: `make test` is what runs this file.
NOT_RUN = ("make ", ".ci/run")


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)


def sessions() -> list[tuple[int, list[Step]]]:
    """Each console block's commands with what each shows, and the block's line number."""
    found = []
    for match in re.finditer(r"```console\n(.*?)```", README, re.S):
        steps: list[Step] = []
        for line in match.group(1).splitlines():
            if line.startswith("$ "):
                steps.append(Step(line[2:]))
            elif line.strip() and steps:
                steps[-1].shown.append(line)
        runnable = [step for step in steps if not step.command.startswith(NOT_RUN)]
        if runnable:
            found.append((README.count("\n", 0, match.start()) + 1, runnable))
    return found


def squeezed(line: str) -> str:
    return " ".join(line.split())


def test_the_readme_shows_sessions_with_their_effects() -> None:
    found = sessions()
    assert len(found) >= 5
    assert sum(len(step.shown) for _, steps in found for step in steps) >= 10


@pytest.mark.parametrize(("line", "steps"), sessions(), ids=lambda v: str(v)[:40])
def test_a_readme_session_runs_in_order_and_shows_what_it_says(
    line: int, steps: list[Step], tmp_path: Path
) -> None:
    shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    for step in steps:
        if "| jq" in step.command and shutil.which("jq") is None:
            continue  # a reader without jq skips that line; the session goes on
        command = re.sub(r"\s+#.*$", "", step.command)
        code, shown = on_a_terminal(
            ["-o", "pipefail", "-c", command], None, columns=COLUMNS, cwd=tmp_path, program="bash"
        )
        screen = screen_of(shown, COLUMNS)
        where = f"README.md:{line}: $ {step.command}\n" + "\n".join(screen)
        assert code == 0, where
        if step.command.startswith("simhash "):  # each says what it did
            assert screen, f"{where}\nthe command showed nothing"
        assert not any("Traceback" in text for text in screen), where
        seen = {squeezed(text) for text in screen}
        for expected in step.shown:
            assert squeezed(expected) in seen, f"{where}\nnot shown: {expected}"


def test_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    found = re.search(r"## Python API\n\n```python\n(.*?)```", README, re.S)
    assert found is not None
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(compile(found.group(1), "README.md", "exec"), namespace)
    assert "result" in namespace
