"""Which files a walk lists: hidden ones, .gitignore and .ignore, --exclude and --include."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from simhash_cli.cli import main
from simhash_cli.core.events import Event, Excluded
from simhash_cli.errors import UsageError
from simhash_cli.io.sources.files import list_files, list_sized
from simhash_cli.io.sources.selection import Selection


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def listed(root: Path, selection: Selection) -> tuple[list[str], list[Excluded]]:
    events: list[Event] = []
    files = list_files([str(root)], events.append, selection=selection)
    left_out = [event for event in events if isinstance(event, Excluded)]
    return sorted(str(Path(f).relative_to(root)) for f in files), left_out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tree(
        tmp_path / "repo",
        {
            ".git/HEAD": "ref: refs/heads/main\n",  # what makes .git a repository to git
            ".git/logs/HEAD": "x",
            ".env": "x",
            ".gitignore": "build/\n*.log\n!keep.log\n/top.txt\n",
            "top.txt": "x",
            "a/top.txt": "x",
            "a/run.log": "x",
            "a/keep.log": "x",
            "a/.ignore": "secret*\n",
            "a/secret.txt": "x",
            "a/b/secret.md": "x",
            "build/out.txt": "x",
            "docs/guide.md": "x",
            "docs/old/guide.md": "x",
            "src/main.txt": "x",
        },
    )


def test_hidden_and_ignored_are_left_out_by_default(repo: Path) -> None:
    files, left_out = listed(repo, Selection())
    assert files == [
        "a/keep.log",
        "a/top.txt",
        "docs/guide.md",
        "docs/old/guide.md",
        "src/main.txt",
    ]
    rules = {str(Path(e.id).relative_to(repo)): e.rule for e in left_out}
    assert rules == {
        ".env": "hidden",
        ".git": "hidden",  # a directory left out whole: not entered
        ".gitignore": "hidden",
        "a/.ignore": "hidden",
        "a/b/secret.md": "ignored",  # a deeper directory's .ignore applies below it
        "a/run.log": "ignored",
        "a/secret.txt": "ignored",
        "build": "ignored",
        "top.txt": "ignored",  # anchored: the root's top.txt, not a/top.txt
    }


def test_hidden_and_no_ignore_read_everything(repo: Path) -> None:
    files, left_out = listed(repo, Selection(hidden=True, ignore_files=False))
    assert len(files) == 15 and left_out == []
    files, _ = listed(repo, Selection(hidden=True))
    assert ".git/logs/HEAD" in files and "build/out.txt" not in files


def test_exclude_and_include_match_below_the_root(repo: Path) -> None:
    files, left_out = listed(repo, Selection(exclude=("old/", "src")))
    assert "docs/old/guide.md" not in files and "src/main.txt" not in files
    assert {e.rule for e in left_out} >= {"excluded"}
    files, _ = listed(repo, Selection(include=("*.md",)))
    assert files == ["docs/guide.md", "docs/old/guide.md"]
    files, _ = listed(repo, Selection(include=("docs/*.md",)))
    assert files == ["docs/guide.md"]
    files, _ = listed(repo, Selection(include=("docs/**/*.md",), exclude=("old/",)))
    assert files == ["docs/guide.md"]


def test_a_file_named_is_always_read(repo: Path) -> None:
    named = [str(repo / ".env"), str(repo / "a" / "run.log")]
    assert list_files(named, lambda e: None, selection=Selection(exclude=("*",))) == named


def test_a_bad_pattern_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="invalid pattern"):
        Selection(exclude=("!",))


def test_dedupe_of_a_clone_reports_no_git_internals(tmp_path: Path) -> None:
    text = "the quick brown fox jumps over the lazy dog near the river bank " * 4
    root = tree(
        tmp_path / "clone",
        {
            ".git/logs/HEAD": text,
            ".git/logs/refs/heads/main": text,
            "notes.txt": "a note about something else entirely and at length " * 4,
            "dist/bundle.txt": text,
            ".gitignore": "dist/\n",
        },
    )
    result = run("dedupe", "-f", "json", str(root))
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["pairs"] == [] and document["summary"]["documents"] == 1
    shown = run("dedupe", "-f", "json", "--hidden", "--no-ignore", str(root))
    assert json.loads(shown.stdout)["summary"]["documents"] == 5
    assert (
        "note: left out 3 paths: 2 hidden (" in result.stderr and "; 1 ignored (" in result.stderr
    )


def test_a_line_of_an_ignore_file_that_is_no_pattern_is_passed_over(tmp_path: Path) -> None:
    root = tree(tmp_path / "r", {".gitignore": "!\n\\\n*.log\n", "a.log": "x", "b.txt": "x"})
    files, _ = listed(root, Selection())
    assert files == ["b.txt"]


def test_a_walk_below_the_top_reads_the_ignore_files_above_it_as_git_does(repo: Path) -> None:
    """The same files are left out wherever the walk starts: a subdirectory walked alone is
    judged by the work tree's .gitignore above it and by .git/info/exclude."""
    tree(repo, {".git/info/exclude": "guide.md\n", "docs/notes.log": "x", "docs/more.txt": "x"})
    files, left_out = listed(repo / "docs", Selection())
    assert files == ["more.txt"]
    assert {str(Path(e.id).relative_to(repo / "docs")): e.rule for e in left_out} == {
        "guide.md": "ignored",  # .git/info/exclude
        "old/guide.md": "ignored",  # the same, at any depth
        "notes.log": "ignored",  # the top's .gitignore: *.log
    }
    whole, _ = listed(repo, Selection())
    assert [f for f in whole if f.startswith("docs/")] == ["docs/more.txt"]
    # The top's anchored /top.txt judges the top only, not a/top.txt walked from a/.
    files, _ = listed(repo / "a", Selection())
    assert files == ["keep.log", "top.txt"]


def test_outside_a_work_tree_no_ignore_file_above_the_walk_is_read(tmp_path: Path) -> None:
    root = tree(tmp_path / "plain", {".gitignore": "*.txt\n", "sub/a.txt": "x"})
    assert listed(root / "sub", Selection())[0] == ["a.txt"]
    assert listed(root, Selection())[0] == []  # the walked directory's own file still is


def test_no_ignore_reads_past_the_ignore_files_above_too(repo: Path) -> None:
    tree(repo, {".git/info/exclude": "*.md\n"})
    files, _ = listed(repo / "docs", Selection(ignore_files=False))
    assert files == ["guide.md", "old/guide.md"]


def test_a_link_to_a_file_of_the_walk_gives_way_to_the_file(tmp_path: Path) -> None:
    """The file itself is the document a plan keeps or removes, even where its link sorts
    first; a link to a file outside the walk is read as before."""
    root = tree(tmp_path / "w", {"real.txt": "x", "elsewhere/outside.txt": "yy"})
    (root / "a-link.txt").symlink_to(root / "real.txt")
    (root / "b-out.txt").symlink_to(root / "elsewhere" / "outside.txt")
    events: list[Event] = []
    listed = list_sized([str(root)], events.append, selection=Selection(exclude=("elsewhere/",)))
    assert [Path(f).name for f in listed.files] == ["b-out.txt", "real.txt"]
    assert listed.sizes == [2, 1]  # each file's size, kept in step with it
    skipped = [(Path(e.id).name, getattr(e, "reason", "")) for e in events]
    assert ("a-link.txt", f"same file as {root / 'real.txt'}") in skipped


GIT_CASES = [
    "*\n!*.md\n!*/\n",  # everything but Markdown, in every directory
    "*\n!*/\n!sub/**\n",
    "sub/\n!sub/b.md\n",  # a file of an ignored directory stays out, as in git
    "*.txt\n!deeper/\n",
    "/sub/deeper/\n*.md\n!c.md\n",
    "**/deeper\n!*.txt\n",
]


@pytest.mark.parametrize("ignore", GIT_CASES)
def test_a_walk_lists_what_git_lists(tmp_path: Path, ignore: str) -> None:
    """.gitignore negation (``*``, ``!*.md``, ``!*/``) gave another set than git's: a match
    through a directory outranked the negation of the directory itself."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.fail("git is not installed: this test compares the walk with git")
    names = ["a.md", "a.txt", "sub/b.md", "sub/b.txt", "sub/deeper/c.md", "sub/deeper/c.txt"]
    root = tree(tmp_path / "repo", {".gitignore": ignore, **{name: name for name in names}})
    subprocess.run([git, "init", "-q", str(root)], check=True)
    lists = subprocess.run(
        [git, "-C", str(root), "ls-files", "--others", "--exclude-standard"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    shown = sorted(name for name in lists if not name.startswith("."))  # hidden: left out
    assert listed(root, Selection())[0] == shown


def _git_lists(git: str, root: Path) -> list[str]:
    """What git lists in the work tree ``root`` as untracked and not ignored (a nested
    repository is one entry, ``inner/``)."""
    import subprocess

    return subprocess.run(
        [git, "-C", str(root), "ls-files", "--others", "--exclude-standard"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip


def test_the_users_excludes_file_and_nested_repositories_are_read_as_git_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's excludes file (core.excludesFile, by default $XDG_CONFIG_HOME/git/ignore)
    was not read; a nested repository inherited the .gitignore of the one around it, which
    git never applies inside it (it reads the nested one's own rules and excludes)."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.fail("git is not installed: this test compares the walk with git")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    tree(home, {"xdg/git/ignore": "*.log\n"})
    names = ["a.txt", "a.log", "a.tmp", "b.md", "inner/c.txt", "inner/c.log", "inner/c.tmp"]
    root = tree(tmp_path / "repo", {".gitignore": "*.txt\n", **{n: n for n in names}})
    for repository in (root, root / "inner"):
        subprocess.run([git, "init", "-q", str(repository)], check=True)
    (root / "inner" / ".git" / "info").mkdir(exist_ok=True)
    (root / "inner" / ".git" / "info" / "exclude").write_text("c.md\n")
    tree(root / "inner", {"c.md": "x"})

    def expected() -> list[str]:
        outer = [name for name in _git_lists(git, root) if not name.startswith(".")]
        assert "inner/" in outer  # git does not walk into a repository of its own
        inner = ["inner/" + name for name in _git_lists(git, root / "inner")]
        return sorted([name for name in outer if name != "inner/"] + inner)

    assert expected() == ["a.tmp", "b.md", "inner/c.tmp", "inner/c.txt"]
    assert listed(root, Selection())[0] == expected()
    # core.excludesFile names another file, in the user's configuration (~ expanded).
    tree(home, {".gitconfig": '[user]\n\tname = x\n[core]\n\texcludesFile = "~/my ignore" # x\n'})
    tree(home, {"my ignore": "*.tmp\n"})
    assert expected() == ["a.log", "b.md", "inner/c.log", "inner/c.txt"]
    assert listed(root, Selection())[0] == expected()
    # A subsection ([core "x"]) is not [core]; a relative path is from the work tree's top.
    config = '[core "x"]\n\texcludesFile = ~/my ignore\n[core]\n\texcludesfile = rel\n'
    tree(home, {".gitconfig": config})
    tree(root, {"rel": "*.log\n", "inner/rel": "*.md\n"})
    assert "a.log" not in expected() and "inner/c.log" in expected()
    assert listed(root, Selection())[0] == expected()


def test_a_repository_is_what_git_takes_for_one(tmp_path: Path) -> None:
    """A worktree's (or a submodule's) ``.git`` is a file naming the repository, whose
    excludes were looked for under ``.git/info`` and never found; an empty ``.git`` directory
    is no repository to git, but made the walk leave the ignore files around it behind."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.fail("git is not installed: this test compares the walk with git")
    main_repo = tree(tmp_path / "main", {".gitignore": "*.txt\n", "fake/c.txt": "x", "b.md": "x"})
    (main_repo / "fake" / ".git").mkdir()
    commit = [git, "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(main_repo)]
    subprocess.run([git, "init", "-q", str(main_repo)], check=True)
    subprocess.run([*commit, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    subprocess.run([*commit, "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    (main_repo / ".git" / "info").mkdir(exist_ok=True)
    (main_repo / ".git" / "info" / "exclude").write_text("*.log\n")
    worktree = tree(tmp_path / "wt", {"a.log": "x", "a.md": "x"})
    for root in (main_repo, worktree):
        lists = subprocess.run(
            [git, "-C", str(root), "ls-files", "--others", "--exclude-standard"],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        shown = sorted(name for name in lists if not name.startswith("."))
        assert listed(root, Selection())[0] == shown
    assert listed(main_repo, Selection())[0] == ["b.md"]
    assert listed(worktree, Selection())[0] == ["a.md"]
