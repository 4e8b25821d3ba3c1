"""The examples of the README and of every page of docs/, run as a reader would run them: each
console block in order, in one directory holding a copy of the sample corpus, on a terminal
(stdout and stderr on a pseudo-terminal of 120 columns). A line under a command that is not
itself a command is what the command shows: it must be on the screen (spaces aside), so that
an example's effect is checked, not only its exit code. The README is the front door: short,
and linking every page.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import cli_reference
import pytest

from conftest import ROOT, SAMPLE
from terminal import on_a_terminal, screen_of

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "docs").glob("*.md"))
COLUMNS = 120
# Commands of the development workflow, not of the tool: `make test` is what runs this file.
NOT_RUN = ("make ", ".ci/run")


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)


def sessions() -> list[tuple[str, list[Step]]]:
    """Each console block's commands with what each shows, and where the block is (its file
    and line)."""
    found = []
    for path in [ROOT / "README.md", *PAGES]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"```console\n(.*?)```", text, re.S):
            steps: list[Step] = []
            for line in match.group(1).splitlines():
                if line.startswith("$ "):
                    steps.append(Step(line[2:]))
                elif line.strip() and steps:
                    steps[-1].shown.append(line)
            runnable = [step for step in steps if not step.command.startswith(NOT_RUN)]
            if runnable:
                where = f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
                found.append((where, runnable))
    return found


def squeezed(line: str) -> str:
    return " ".join(line.split())


def test_the_readme_shows_sessions_with_their_effects() -> None:
    found = sessions()
    assert len(found) >= 5
    assert sum(len(step.shown) for _, steps in found for step in steps) >= 10


@pytest.mark.parametrize(("line", "steps"), sessions(), ids=lambda v: str(v)[:40])
def test_a_documented_session_runs_in_order_and_shows_what_it_says(
    line: str, steps: list[Step], tmp_path: Path
) -> None:
    shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    for step in steps:
        if "| jq" in step.command and shutil.which("jq") is None:
            # CI installs jq and requires it; a reader without jq skips that line.
            assert not os.environ.get("SIMHASH_REQUIRE_JQ"), "jq is required here"
            continue
        command = re.sub(r"\s+#.*$", "", step.command)
        code, shown = on_a_terminal(
            ["-o", "pipefail", "-c", command], None, columns=COLUMNS, cwd=tmp_path, program="bash"
        )
        screen = screen_of(shown, COLUMNS)
        where = f"{line}: $ {step.command}\n" + "\n".join(screen)
        assert code == 0, where
        if step.command.startswith("simhash "):  # each says what it did
            assert screen, f"{where}\nthe command showed nothing"
        assert not any("Traceback" in text for text in screen), where
        seen = {squeezed(text) for text in screen}
        for expected in step.shown:
            assert squeezed(expected) in seen, f"{where}\nnot shown: {expected}"


def test_the_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    page = ROOT / "docs" / "python-api.md"
    found = re.search(r"# Python API\n\n```python\n(.*?)```", page.read_text("utf-8"), re.S)
    assert found is not None
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(compile(found.group(1), str(page), "exec"), namespace)
    assert "result" in namespace


def test_the_readme_is_a_front_door_that_links_every_page() -> None:
    assert README.count("\n") <= 200
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)", README))
    assert {page.name for page in PAGES} - linked == set()


def slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_between_pages_leads_somewhere() -> None:
    for path in [ROOT / "README.md", *PAGES]:
        text = path.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([\w./-]*\.md|)(?:#([\w-]+))?\)", text):
            page = path if not target else (path.parent / target)
            assert page.is_file(), f"{path.name}: {target}"
            if anchor:
                headings = re.findall(r"^#+ (.*)$", page.read_text(encoding="utf-8"), re.M)
                assert anchor in {slug(heading) for heading in headings}, f"{path.name}: {anchor}"


def test_the_cli_reference_is_what_the_commands_print_today() -> None:
    assert cli_reference.PAGE.read_text(encoding="utf-8") == cli_reference.page(), (
        "docs/cli.md is stale: .venv/bin/python tests/cli_reference.py --write"
    )
