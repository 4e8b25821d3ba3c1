"""``dedupe --report FILE``: the page's data, and the page itself opened in a real headless
Chromium (its DOM after the scripts ran): clusters listed, a member's diff shown, the charts
drawn, 10,000 clusters paged, and hostile names and texts that execute nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli.cli import main
from simhash_cli.errors import ExitCode
from simhash_cli.io.sinks.report import _json_for_script

from conftest import SAMPLE

CHROMIUM = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome")
        if (found := shutil.which(name))
    ),
    None,
)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


class Page(HTMLParser):
    """The elements of a page (tag and attributes, in order) and the text inside each element
    with an id or a class, as a browser's DOM holds them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.open: list[tuple[str, dict[str, str], list[str]]] = []
        self.texts: dict[str, list[str]] = {}
        self.html = html
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.elements.append((tag, values))
        if tag not in ("meta", "input", "br", "img", "link", "line", "rect", "polyline"):
            self.open.append((tag, values, []))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, values, parts = self.open.pop()
            text = "".join(parts)
            for key in [f"#{values['id']}" if "id" in values else None,
                        *(f".{c}" for c in values.get("class", "").split())]:  # fmt: skip
                if key:
                    self.texts.setdefault(key, []).append(text)
            if self.open:
                self.open[-1][2].append(text)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][2].append(data)

    def tags(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [
            values
            for name, values in self.elements
            if name == tag and all(values.get(k.rstrip("_")) == v for k, v in attrs.items())
        ]


def in_browser(page: Path, fragment: str, profile: Path) -> Page:
    """The DOM of ``page`` after its scripts ran, in headless Chromium."""
    if CHROMIUM is None:
        if os.environ.get("SIMHASH_REQUIRE_BROWSER"):
            pytest.fail("SIMHASH_REQUIRE_BROWSER is set but no chromium is installed")
        pytest.skip("no chromium installed (apt-get install chromium): the page is not opened")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", "--dump-dom", page.resolve().as_uri() + fragment],
        capture_output=True, text=True, timeout=180, check=True,
    )  # fmt: skip
    return Page(done.stdout)


def data_of(page: Path) -> dict[str, Any]:
    """The report's data, as the page's script reads it."""
    text = page.read_text()
    found = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S)
    assert found is not None
    value: dict[str, Any] = json.loads(found.group(1))
    return value


# ---------------------------------------------------------------- the data


@given(st.text())
def test_data_in_a_script_cannot_end_it(text: str) -> None:
    value = {"name": text, "list": [text, "</script><!--", "]]>"]}
    written = _json_for_script(value)
    assert "</" not in written and "<!--" not in written and "]]>" not in written
    assert json.loads(written) == value


def test_sample_corpus_report_holds_every_cluster_member_and_diff(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    result = run("dedupe", str(SAMPLE), "--report", str(page), "-f", "json", "-q")
    assert result.exit_code == ExitCode.OK, result.output
    clusters = json.loads(result.stdout)["clusters"]
    data = data_of(page)
    assert sorted(c["size"] for c in data["clusters"]) == sorted(c["size"] for c in clusters)
    assert [c["size"] for c in data["clusters"]] == sorted(
        (c["size"] for c in clusters), reverse=True
    )
    for cluster in data["clusters"]:
        kept, *others = cluster["members"]
        assert kept["kept"] and kept["detail"] is None
        for member in others:
            detail = data["details"][member["detail"]]
            diff = detail["diff"]
            assert "".join(s[1] for s in diff) == Path(kept["id"]).read_text()
            assert "".join(s[-1] for s in diff) == Path(member["id"]).read_text()
            assert detail["explain"]["cosine"] == pytest.approx(member["cosine"], abs=1e-6)
    assert sum(data["histogram"]["flagged"]) == json.loads(result.stdout)["summary"]["pairs"]


def test_vectors_have_features_but_no_diff_and_the_page_says_so(tmp_path: Path) -> None:
    vectors = tmp_path / "v.jsonl"
    vectors.write_text(
        "".join(
            json.dumps({"id": f"v{k}", "features": {"x": 3, "y": 2, "z": 1 + k % 2}}) + "\n"
            for k in range(4)
        )
    )
    page = tmp_path / "report.html"
    assert run("dedupe", "--vectors", str(vectors), "--report", str(page), "-qq").exit_code == 0
    data = data_of(page)
    assert any("vectors have no text" in note for note in data["notes"])
    assert data["details"] and all(d["diff"] is None for d in data["details"])
    assert all(d["explain"]["carrying"] for d in data["details"])


def test_the_plan_is_reviewed_in_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each member's row says what the plan does to it, the corpus named as a relative path
    (the plan names files by their absolute paths) as well as an absolute one."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    monkeypatch.chdir(tmp_path)
    page, plan = tmp_path / "report.html", tmp_path / "plan.json"
    done = run("dedupe", "corpus", "--plan", str(plan), "--keep", "shortest-path",
               "--report", str(page), "-qq")  # fmt: skip
    assert done.exit_code == ExitCode.OK, done.output
    planned = {
        f["path"]: f["action"] for c in json.loads(plan.read_text())["clusters"] for f in c["files"]
    }
    shown = {
        str(tmp_path / m["id"]): m["action"]
        for c in data_of(page)["clusters"]
        for m in c["members"]
    }
    assert shown == planned and set(shown.values()) == {"keep", "remove"}
    assert data_of(page)["plan"]["keep"] == "shortest-path"


def test_a_report_over_an_input_or_without_jinja2_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    over = run("dedupe", str(corpus), "--report", str(corpus / "volcano-report.txt"))
    assert over.exit_code == ExitCode.USAGE and "report" in over.stderr
    monkeypatch.chdir(tmp_path)
    for option in ("--report", "--plan"):
        dash = run("dedupe", str(corpus), option, "-")
        assert dash.exit_code == ExitCode.USAGE and "standard output carries" in dash.stderr
        assert not (tmp_path / "-").exists()
    monkeypatch.setitem(sys.modules, "jinja2", None)
    missing = run("dedupe", str(corpus), "--report", str(tmp_path / "r.html"))
    assert missing.exit_code != ExitCode.OK
    assert "needs jinja2: pip install 'simhash-cli[report]'" in missing.stderr
    assert not (tmp_path / "r.html").exists()


# ---------------------------------------------------------------- in a browser


def test_the_sample_corpus_report_in_a_browser(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    assert run("dedupe", str(SAMPLE), "--report", str(page), "-qq").exit_code == ExitCode.OK
    data = data_of(page)
    cluster = next(c for c in data["clusters"] if c["size"] == 3)
    member = 2
    dom = in_browser(page, f"#cluster={cluster['number']}&member={member}", tmp_path / "p")
    assert dom.tags("body", **{"data-ready": "1"})
    assert len(dom.tags("section", class_="cluster")) == len(data["clusters"])
    assert dom.texts[".kept-text"] == [Path(cluster["members"][0]["id"]).read_text()]
    assert dom.texts[".member-text"] == [Path(cluster["members"][member]["id"]).read_text()]
    assert dom.texts.get(".del") and dom.texts.get(".ins")
    assert "Features that carry the cosine" in dom.texts["#detail"][0]
    assert " of 64 bits" in dom.texts["#detail"][0] and "undefined" not in dom.texts["#detail"][0]
    assert dom.tags("rect") and dom.tags("polyline", class_="s-curve")
    assert len(dom.tags("line", class_="threshold")) == 2
    # The page's own scripts only; nothing fetched.
    assert len(dom.tags("script")) == 2
    assert not [values for tag, values in dom.elements if "src" in values or "href" in values]


def test_thousands_of_clusters_are_paged(tmp_path: Path) -> None:
    """3,000 clusters: one page of 50 in the DOM at a time, any page or cluster reached by
    its address."""
    texts = tmp_path / "texts.jsonl"
    words = [f"w{k}" for k in range(20_000)]
    lines = []
    for c in range(3_000):
        text = [words[(c * 61 + 7 * k * k) % len(words)] for k in range(60)]
        lines.append(json.dumps({"id": f"c{c}-a", "text": " ".join(text)}))
        text[c % 60] = f"edit{c}"
        lines.append(json.dumps({"id": f"c{c}-b", "text": " ".join(text)}))
    texts.write_text("\n".join(lines) + "\n")
    page = tmp_path / "report.html"
    done = run("dedupe", "--texts", str(texts), "--report", str(page), "-qq")
    assert done.exit_code == ExitCode.OK, done.output
    assert len(data_of(page)["clusters"]) == 3_000
    dom = in_browser(page, "#page=45", tmp_path / "p")
    assert dom.tags("body", **{"data-ready": "1"})
    assert len(dom.tags("section", class_="cluster")) == 50  # one page in the DOM, not 3,000
    assert dom.texts["#page"] == ["page 45 of 60"]
    assert dom.texts["#shown"] == ["3,000 of 3,000 clusters"]
    opened = in_browser(page, "#cluster=2777&member=1", tmp_path / "p")
    assert opened.tags("section", id="cluster-2777")
    changed = opened.texts.get(".del", []) + opened.texts.get(".ins", [])
    assert len(changed) == 2 and any("edit2777" in text for text in changed)


HOSTILE_TEXT = (
    "<script>document.title='pwned'</script> words words words "
    "<img src=x onerror=\"document.body.dataset.pwned='1'\"> </script><!-- ]]> "
    "more plain words to make a document of some length here"
)


@pytest.mark.parametrize("policy", [True, False], ids=["as-written", "without-its-csp"])
def test_hostile_names_and_texts_execute_nothing(tmp_path: Path, policy: bool) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    names = ["<img src=x onerror=alert(1)>.txt", '"><script>alert(2)<!--.txt']
    (corpus / names[0]).write_text(HOSTILE_TEXT)
    (corpus / names[1]).write_text(
        HOSTILE_TEXT.replace("more plain", "more <marquee>moving</marquee>")
    )
    page = tmp_path / "report.html"
    assert run("dedupe", str(corpus), "--report", str(page), "-qq").exit_code == ExitCode.OK
    if not policy:
        # Escaping alone must hold: the page without the policy that forbids other scripts.
        html = page.read_text()
        page.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html))
    dom = in_browser(page, "#cluster=0&member=1", tmp_path / "p")
    assert dom.tags("body", **{"data-ready": "1"})
    assert not dom.tags("body", **{"data-pwned": "1"})
    assert not dom.tags("img") and not dom.tags("marquee")
    assert len(dom.tags("script")) == 2
    assert "<title>simhash dedupe: 1 cluster among 2 documents</title>" in dom.html
    shown = " ".join(dom.texts[".id"])
    assert all(str(corpus / name) in shown for name in names)
    assert HOSTILE_TEXT in dom.texts[".kept-text"] + dom.texts[".member-text"]
