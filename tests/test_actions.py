"""Plans for clusters of near-duplicate files (`dedupe --plan`): nothing is ever changed, every
cluster keeps a copy, protected files are never marked for removal, and the same input always
gives the same plan."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli.app.keep import Keep
from simhash_cli.app.plans.document import PLAN_VERSION, FileState, make_plan
from simhash_cli.cli import main
from simhash_cli.core.events import stamp_of
from simhash_cli.errors import ExitCode
from simhash_cli.errors import FileChanged as Changed

from conftest import SAMPLE


@st.composite
def planned_clusters(draw: st.DrawFn) -> tuple[list[str], list[np.ndarray], dict[str, FileState]]:
    n = draw(st.integers(2, 12))
    paths = [f"/data/{draw(st.sampled_from(['a', 'b', 'keep']))}/f{i}.txt" for i in range(n)]
    states = {
        path: FileState(
            path,
            1,
            i,
            draw(st.integers(0, 3)),  # sizes and times tie often: the path must decide
            draw(st.integers(0, 3)),
            "0" * 64,
        )
        for i, path in enumerate(paths)
    }
    labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    clusters = [np.flatnonzero(np.array(labels) == label) for label in sorted(set(labels))]
    return paths, [c for c in clusters if c.size >= 2], states


@given(planned_clusters(), st.sampled_from(list(Keep)), st.booleans(), st.data())
def test_every_cluster_keeps_a_copy_and_protected_files_stay(
    case: tuple[list[str], list[np.ndarray], dict[str, FileState]],
    keep: Keep,
    protect: bool,
    data: st.DataObject,
) -> None:
    paths, clusters, states = case
    changed = set(data.draw(st.lists(st.sampled_from(paths))))
    fingerprints = np.zeros((len(paths), 1), dtype=np.uint64)
    roots = ["/data/keep"] if protect else []
    stamps = [(1, i + 1, 0, 0, 0) for i in range(len(paths))]

    def planned() -> dict[str, Any]:
        return make_plan(
            paths,
            fingerprints,
            stamps,
            64,
            clusters,
            keep=keep,
            roots=["/"],
            protect=roots,
            check=lookup,
        )

    def lookup(path: str, stamp: tuple[int, ...]) -> FileState:
        if path in changed:
            raise Changed("changed since the scan")
        return states[path]

    plan, again = planned(), planned()
    assert plan == again
    for cluster, members in zip(plan["clusters"], clusters, strict=True):
        actions = [f["action"] for f in cluster["files"]]
        usable = [paths[m] for m in members.tolist() if paths[m] not in changed]
        assert actions.count("keep") == (1 if usable else 0) and len(actions) == members.size
        assert actions.count("skip") == members.size - len(usable)
        assert {f["path"] for f in cluster["files"]} == {paths[m] for m in members.tolist()}
        guarded = [u for u in usable if protect and u.startswith("/data/keep/")]
        if guarded:  # a cluster holding a protected file keeps one of them
            assert cluster["keep"] in guarded and cluster["why"].startswith("protected (")
        for entry in cluster["files"]:
            if protect and entry["path"].startswith("/data/keep/"):
                assert entry["action"] in ("keep", "protected", "skip")
            if entry["path"] in changed:
                assert entry["action"] == "skip"


def test_keep_orders_with_the_path_as_tie_break() -> None:
    digest = "0" * 64
    states = {
        "/x/long-name.txt": FileState("/x/long-name.txt", 1, 1, 50, 10, digest),
        "/x/b.txt": FileState("/x/b.txt", 1, 2, 90, 30, digest),
        "/x/a.txt": FileState("/x/a.txt", 1, 3, 90, 10, digest),
    }
    paths = list(states)
    kept = {
        keep: make_plan(
            paths,
            np.zeros((3, 1), np.uint64),
            [(1, i + 1, 0, 0, 0) for i in range(3)],
            64,
            [np.arange(3)],
            keep=keep,
            roots=["/x"],
            check=lambda path, stamp: states[path],
        )["clusters"][0]["keep"]
        for keep in Keep
        if keep is not Keep.CENTRAL
    }
    assert kept == {
        Keep.OLDEST: "/x/a.txt",  # mtime 10 twice: the path decides
        Keep.NEWEST: "/x/b.txt",
        Keep.LONGEST: "/x/a.txt",  # 90 bytes twice: the path decides
        Keep.SHORTEST_PATH: "/x/a.txt",
        Keep.FIRST: "/x/long-name.txt",
    }


def test_keep_means_one_thing_with_and_without_a_plan(tmp_path: Path) -> None:
    """--keep picks each cluster's kept member the same way in the table, the JSON and the
    plan, and --plan changes none of it: the same clusters around the same member, the plan
    keeping it; without --keep, the most central one everywhere."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    for age, path in enumerate(sorted(corpus.iterdir())):
        os.utime(path, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))  # later names older
    runner = CliRunner()
    seen = {}
    for keep in (None, "newest", "oldest", "first"):
        rule = [] if keep is None else ["--keep", keep]
        alone = runner.invoke(main, ["dedupe", "-f", "json", *rule, str(corpus)])
        plan = tmp_path / f"plan-{keep}.json"
        planned = runner.invoke(
            main, ["dedupe", "-f", "json", *rule, "--plan", str(plan), str(corpus)]
        )
        assert alone.exit_code == planned.exit_code == 0, (alone.output, planned.output)
        clusters = json.loads(alone.stdout)["clusters"]
        assert json.loads(planned.stdout)["clusters"] == clusters
        kept = [os.path.basename(c["keep"]) for c in json.loads(plan.read_text())["clusters"]]
        assert kept == [os.path.basename(c["representative"]) for c in clusters]
        seen[keep] = kept
    assert seen[None] == ["shipping-policy-copy.txt", "volcano-report-wire.txt"]  # central
    assert seen["newest"] == ["shipping-policy-copy.txt", "volcano-report-wire.txt"]
    assert seen["oldest"] == ["shipping-policy.txt", "volcano-report.txt"]
    assert seen["first"] == seen["newest"]  # sorted names, the first the newest here


def _digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}


def test_dedupe_plan_writes_the_plan_and_changes_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for source in SAMPLE.iterdir():
        (corpus / source.name).write_bytes(source.read_bytes())
    before = _digest(corpus)
    plan_file = tmp_path / "plan.json"
    result = CliRunner().invoke(
        main,
        ["dedupe", "-f", "json", "--plan", str(plan_file), "--protect", str(corpus), str(corpus)],
    )
    assert result.exit_code == ExitCode.OK, result.stderr
    assert _digest(corpus) == before
    plan = json.loads(plan_file.read_text())
    assert plan["version"] == PLAN_VERSION and len(plan["clusters"]) == 2
    assert plan["settings"]["bits"] == 64
    assert {f["action"] for c in plan["clusters"] for f in c["files"]} == {"keep", "protected"}
    assert "3 protected (nothing was changed)" in result.stderr


def test_a_protected_file_is_the_one_its_cluster_keeps(tmp_path: Path) -> None:
    """``--protect FILE``: the tagged original is kept, and only its copies are marked."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    original = corpus / "shipping-policy-revised.txt"
    plan_file = tmp_path / "plan.json"
    result = CliRunner().invoke(
        main,
        ["dedupe", "-qq", "--plan", str(plan_file), "--keep", "first", "--protect",
         str(original), str(corpus)],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    plan = json.loads(plan_file.read_text())
    (cluster,) = [c for c in plan["clusters"] if any("shipping" in f["path"] for f in c["files"])]
    assert (
        cluster["keep"] == str(original) and cluster["why"] == "protected (first of the protected)"
    )
    actions = {Path(f["path"]).name: f["action"] for f in cluster["files"]}
    assert actions == {
        "shipping-policy-revised.txt": "keep",
        "shipping-policy.txt": "remove",
        "shipping-policy-copy.txt": "remove",
    }


def test_protect_is_refused_without_a_plan_and_a_plan_for_standard_input() -> None:
    runner = CliRunner()
    alone = runner.invoke(main, ["dedupe", "--protect", str(SAMPLE), str(SAMPLE)])
    assert alone.exit_code == ExitCode.USAGE and "--protect goes with --plan" in alone.stderr
    text = (SAMPLE / "volcano-report.txt").read_text()
    piped = runner.invoke(
        main,
        ["dedupe", "--plan", "/tmp/never-written.json", "-", str(SAMPLE / "volcano-report.txt")],
        input=text,
    )
    assert piped.exit_code == ExitCode.ERROR
    assert "- (a stream) cannot be kept or removed" in piped.stderr
    assert not Path("/tmp/never-written.json").exists()


def test_a_file_changed_after_the_scan_is_skipped_not_kept_or_removed(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (SAMPLE / "volcano-report.txt").read_text()
    for name in ("a.txt", "b.txt", "c.txt"):
        (corpus / name).write_text(text)
    docs = [str(corpus / name) for name in ("a.txt", "b.txt", "c.txt")]
    stamps = [stamp_of(os.stat(doc)) for doc in docs]
    (corpus / "b.txt").write_text(text + " more")  # after the scan
    os.symlink(corpus / "a.txt", corpus / "link.txt")
    docs.append(str(corpus / "link.txt"))
    stamps.append(stamp_of(os.stat(corpus / "link.txt")))
    plan = make_plan(
        docs,
        np.zeros((4, 1), np.uint64),
        stamps,
        64,
        [np.arange(4)],
        keep=Keep.FIRST,
        roots=[str(corpus)],
    )
    files = {Path(f["path"]).name: f for f in plan["clusters"][0]["files"]}
    assert [files[n]["action"] for n in ("a.txt", "b.txt", "c.txt", "link.txt")] == [
        "keep",
        "skip",
        "remove",
        "skip",
    ]
    assert files["b.txt"]["why"] == "changed since the scan"
    assert files["link.txt"]["why"].startswith("a symbolic link")
    assert files["a.txt"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()


def test_the_plan_keeps_the_representative_and_removes_nothing_when_it_changed(
    tmp_path: Path,
) -> None:
    """Clusters made around a kept member: that one is kept (not the keep rule's favourite
    among the rest); when it changed since the scan, its near-duplicates are not removed."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (SAMPLE / "volcano-report.txt").read_text()
    docs = []
    for name in ("a.txt", "b.txt", "c.txt"):
        (corpus / name).write_text(text)
        docs.append(str(corpus / name))
    stamps = [stamp_of(os.stat(doc)) for doc in docs]

    def plan_of(representative: int) -> dict[str, str]:
        plan = make_plan(
            docs,
            np.zeros((3, 1), np.uint64),
            stamps,
            64,
            [np.arange(3)],
            keep=Keep.FIRST,
            roots=[str(corpus)],
            representatives=[representative],
        )
        return {Path(f["path"]).name: f["action"] for f in plan["clusters"][0]["files"]}

    assert plan_of(1) == {"b.txt": "keep", "a.txt": "remove", "c.txt": "remove"}
    (corpus / "b.txt").write_text(text + " more")  # after the scan
    assert plan_of(1) == {"a.txt": "skip", "b.txt": "skip", "c.txt": "skip"}
    assert plan_of(0) == {"a.txt": "keep", "b.txt": "skip", "c.txt": "remove"}


def chain(length: int) -> list[str]:
    """Texts each a few words from the one before: neighbours near-duplicates, ends not."""
    rng = np.random.default_rng(7)
    words = rng.integers(0, 10_000, 300)
    texts = []
    for _ in range(length):
        texts.append(" ".join(f"w{w}" for w in words))
        words = words.copy()
        words[rng.choice(300, 15, replace=False)] = rng.integers(10_000, 20_000, 15)
    return texts


def test_a_plan_never_removes_a_file_that_is_not_a_near_duplicate_of_the_one_kept(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for number, text in enumerate(chain(8)):
        (corpus / f"{number}.txt").write_text(text)
    texts = {p.name: p.read_text() for p in corpus.iterdir()}
    for clustering, safe in (("representative", True), ("components", False)):
        plan_file = tmp_path / f"{clustering}.json"
        result = CliRunner().invoke(
            main,
            ["dedupe", "-qq", "--plan", str(plan_file), "--keep", "first", "--clustering",
             clustering, "--max-distance", "32", str(corpus)],
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        removed_below = 0
        for cluster in json.loads(plan_file.read_text())["clusters"]:
            kept = Path(cluster["keep"]).name
            for file in cluster["files"]:
                if file["action"] == "remove":
                    removed_below += cosine_of(texts[kept], texts[Path(file["path"]).name]) < 0.9
        assert (removed_below == 0) is safe


def cosine_of(a: str, b: str) -> float:
    """The term-count cosine of two texts of words separated by spaces."""
    x, y = Counter(a.split()), Counter(b.split())
    dot = sum(x[w] * y[w] for w in x)
    norms = sum(v * v for v in x.values()) * sum(v * v for v in y.values())
    return float(dot / norms**0.5)
