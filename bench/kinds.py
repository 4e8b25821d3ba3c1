"""Corpora of several kinds of real text, made at bench time from what every Debian machine
with Python has (no downloads): one directory of files each, deterministic for a variant.

- ``copyright``: the packages' copyright files (/usr/share/doc/*/copyright): licences, most
  of them sharing whole texts (the GPL, the Apache licence) around their own names and lists.
- ``manpages``: manual pages rendered as text by man(1) at 80 columns.
- ``python``: Python source files of every interpreter on the machine.
- ``short``: texts of 10-40 words (sentences of the manual pages), a share of them with a
  few edited copies, as support tickets or titles are.
- ``template``: pages built from one site's template (a navigation bar, a sidebar and a
  footer of a few hundred words) around distinct bodies, some bodies edited copies.
- ``scripts``: text in scripts written without spaces (Chinese, Japanese, Thai), a share of
  documents with edited copies.

A ``variant`` draws another sample of the same kind (other files, another seed): the corpora
the planner was not tuned on.

    python bench/kinds.py manpages /tmp/manpages --variant 1
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from prose import edited  # noqa: E402

KINDS = ("copyright", "manpages", "python", "short", "template", "scripts")
WORD = re.compile(r"\w+")
MANPAGES = 3000
PYTHON_FILES = 6000
SHORT_TEXTS = 5000
TEMPLATE_PAGES = 3000
SCRIPT_DOCS = 3000


def _write(directory: Path, texts: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (directory / f"{i:05d}.txt").write_text(text, encoding="utf-8")


def _sample(paths: list[Path], most: int, variant: int) -> list[Path]:
    """At most ``most`` of ``paths``, a seeded sample for the variant (sorted)."""
    if len(paths) <= most:
        return paths
    chosen = np.random.default_rng(variant).choice(len(paths), most, replace=False)
    return [paths[i] for i in sorted(chosen.tolist())]


def copyright_files(directory: Path, variant: int) -> None:
    """Every copyright file (a variant: a seeded 80% of them)."""
    found = sorted(Path("/usr/share/doc").glob("*/copyright"))
    if variant:
        found = _sample(found, len(found) * 4 // 5, variant)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in found if p.is_file()]
    _write(directory, [t for t in texts if WORD.search(t)])


def _manual_pages() -> list[Path]:
    roots = sorted(Path("/usr/share/man").glob("man[1-8]"))
    return sorted(p for root in roots for p in root.iterdir() if p.is_file())


def _render(page: Path) -> str:
    environment = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "0", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(
        ["man", "-l", str(page)], capture_output=True, env=environment, timeout=60, check=False
    )
    text = done.stdout.decode("utf-8", errors="replace")
    return re.sub(r".\x08", "", text)  # overstrikes (bold, underline) as plain letters


def manual_pages(directory: Path, variant: int) -> None:
    """``MANPAGES`` manual pages rendered as text."""
    pages = _sample(_manual_pages(), MANPAGES, variant)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        texts = list(pool.map(_render, pages))
    _write(directory, [t for t in texts if WORD.search(t)])


def _python_sources() -> list[Path]:
    roots = {Path(sysconfig.get_paths()["stdlib"])}
    roots.update(Path("/usr/lib").glob("python3.*"))
    roots.update(Path.home().glob(".pyenv/versions/*/lib/python3.*"))
    found = []
    for root in sorted(roots):
        if root.is_dir() and not root.is_symlink():
            found += [p for p in root.rglob("*.py") if "site-packages" not in p.parts]
    return sorted(found)


def python_sources(directory: Path, variant: int) -> None:
    """``PYTHON_FILES`` Python source files of the interpreters on the machine."""
    paths = _sample([p for p in _python_sources() if p.is_file()], PYTHON_FILES, variant)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    _write(directory, [t for t in texts if WORD.search(t)])


def _sentences(limit: int) -> list[str]:
    """Sentences of manual pages' text, in order, from gzipped sources read as plain text."""
    found: list[str] = []
    for page in _manual_pages()[::7]:
        try:
            raw = gzip.decompress(page.read_bytes()).decode("utf-8", errors="replace")
        except (OSError, EOFError):
            continue
        body = " ".join(line for line in raw.splitlines() if line and not line.startswith("."))
        body = re.sub(r"\\f[BIRP]|\\[-&(e]|\\\*\(..", "", body)
        found += [s.strip() for s in re.split(r"(?<=[.!?])\s+", body) if s.strip()]
        if len(found) >= limit:
            break
    return found


def _families(
    originals: list[str], rng: np.random.Generator, share: float, total: int
) -> list[str]:
    """The originals and, for ``share`` of them, one to four edited copies, shuffled, at most
    ``total``."""
    vocabulary = np.array(sorted({w for t in originals for w in t.split()}), dtype=object)
    texts = list(originals)
    for i in np.flatnonzero(rng.random(len(originals)) < share).tolist():
        texts += [edited(originals[i], rng, vocabulary) for _ in range(int(rng.integers(1, 5)))]
    order = rng.permutation(len(texts))[:total]
    return [texts[i] for i in order.tolist()]


def short_texts(directory: Path, variant: int) -> None:
    """``SHORT_TEXTS`` texts of 10-40 words, 10% of them with edited copies."""
    rng = np.random.default_rng(100 + variant)
    sentences = [s for s in _sentences(60_000) if 10 <= len(s.split()) <= 40]
    sentences = sorted(set(sentences))
    picked = rng.choice(len(sentences), min(len(sentences), SHORT_TEXTS * 4 // 5), replace=False)
    originals = [sentences[i] for i in sorted(picked.tolist())]
    _write(directory, _families(originals, rng, 0.1, SHORT_TEXTS))


_NAVIGATION = (
    "Home Products Solutions Pricing Documentation Blog Community Support Contact Sign in "
    "Create account Search the site English Deutsch Français Español 日本語 "
)
_SIDEBAR = (
    "Related articles Getting started Installing on Linux Installing on macOS Configuring the "
    "server Upgrading from an earlier release Troubleshooting common problems Frequently asked "
    "questions Release notes Security advisories Subscribe to our newsletter to hear about new "
    "releases, events and tutorials. We never share your address. Follow us on social media. "
)
_FOOTER = (
    "Copyright 2009-2026 Example Software Foundation. All rights reserved. Example and the "
    "Example logo are trademarks of the Example Software Foundation. Privacy policy Terms of "
    "use Cookie settings Accessibility Sitemap Careers Press Partners Status This site uses "
    "cookies to improve your experience and to analyse traffic. By continuing to browse the "
    "site you agree to our use of cookies. Was this page helpful? Yes No Edit this page on "
    "the repository. Last updated by the documentation team. "
)


def template_pages(directory: Path, variant: int) -> None:
    """``TEMPLATE_PAGES`` pages: one template around bodies of 40-300 words (sentences of
    manual pages), 10% of the bodies with edited copies."""
    rng = np.random.default_rng(200 + variant)
    sentences = _sentences(120_000)
    bodies: list[str] = []
    at = int(rng.integers(0, 1000))
    while len(bodies) < TEMPLATE_PAGES * 4 // 5 and at < len(sentences):
        length = int(rng.integers(40, 300))
        body: list[str] = []
        while len(body) < length and at < len(sentences):
            body += sentences[at].split()
            at += 1
        bodies.append(" ".join(body))
    pages = _families(bodies, rng, 0.1, TEMPLATE_PAGES)
    _write(directory, [f"{_NAVIGATION}\n{_SIDEBAR}\n{body}\n{_FOOTER}" for body in pages])


_SCRIPTS = {
    "chinese": [chr(c) for c in range(0x4E00, 0x4E00 + 3000)],
    "japanese": [chr(c) for c in range(0x3041, 0x3097)] + [chr(c) for c in range(0x30A1, 0x30FB)],
    "thai": [chr(c) for c in range(0x0E01, 0x0E2F)] + [chr(c) for c in range(0x0E30, 0x0E3B)],
}


def _script_text(rng: np.random.Generator, letters: list[str], words: list[str]) -> str:
    """Sentences of Zipf-drawn words of one script, no spaces, ended by its full stop."""
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    chosen = rng.choice(len(words), int(rng.integers(60, 300)), p=(1 / ranks) / (1 / ranks).sum())
    text = "".join(words[i] + ("。" if rng.random() < 0.08 else "") for i in chosen.tolist())
    return text + "。"


def _script_edit(text: str, rng: np.random.Generator, letters: list[str]) -> str:
    """About 5% of the characters replaced, a run dropped or inserted."""
    chars = list(text)
    for at in np.flatnonzero(rng.random(len(chars)) < 0.05).tolist():
        chars[at] = letters[int(rng.integers(0, len(letters)))]
    if rng.random() < 0.5 and len(chars) > 40:
        start = int(rng.integers(0, len(chars) - 20))
        del chars[start : start + int(rng.integers(3, 15))]
    return "".join(chars)


def script_texts(directory: Path, variant: int) -> None:
    """``SCRIPT_DOCS`` documents, a third in each script, 10% with edited copies."""
    rng = np.random.default_rng(300 + variant)
    texts: list[str] = []
    per = SCRIPT_DOCS // len(_SCRIPTS)
    for letters in _SCRIPTS.values():
        words = ["".join(rng.choice(letters, int(rng.integers(1, 4)))) for _ in range(5000)]
        originals = [_script_text(rng, letters, words) for _ in range(per * 4 // 5)]
        for i in np.flatnonzero(rng.random(len(originals)) < 0.1).tolist():
            originals += [
                _script_edit(originals[i], rng, letters) for _ in range(int(rng.integers(1, 5)))
            ]
        texts += originals[:per]
    order = rng.permutation(len(texts))
    _write(directory, [texts[i] for i in order.tolist()])


BUILDERS: dict[str, Callable[[Path, int], None]] = {
    "copyright": copyright_files,
    "manpages": manual_pages,
    "python": python_sources,
    "short": short_texts,
    "template": template_pages,
    "scripts": script_texts,
}


def build(kind: str, directory: Path, variant: int = 0) -> Path:
    """The corpus ``kind`` in ``directory`` (made once: an existing one is kept)."""
    done = directory / ".complete"
    if done.exists():
        return directory
    if directory.exists():
        shutil.rmtree(directory)
    BUILDERS[kind](directory, variant)
    done.touch()
    return directory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--variant", type=int, default=0)
    args = parser.parse_args()
    build(args.kind, args.directory, args.variant)
    print(f"{args.kind}: {len(list(args.directory.glob('*.txt')))} files in {args.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
