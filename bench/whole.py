"""Fingerprinting as a user runs it: whole processes, side by side in one run, into the
"Fingerprinting, whole processes" section of docs/benchmarks.md.

The inputs are bench/prose.py's documents (realistic prose, 80-400 words each) as a directory
of files, as one JSON Lines file (``--texts``) and as one Parquet file (row groups of 10,000).
Each tool is one process that reads the input itself:

- the floor: one core, read and ``re.findall(r"\\w+", text.lower())``, nothing counted or hashed;
- simhash-pybind with xxh3 word hashes, tokenized by that regex (bench/whole_peer.py);
- ``simhash fingerprint`` with ``--jobs 1`` and ``--jobs 2``, its records to /dev/null.

Wall time is the median of the repeats (tools interleaved); peak memory is the largest sum of
the resident memory of the tool's process tree, polled every 0.1 s. Then one ``--jobs 1`` run
under cProfile says where its time goes.

The same rows for each corpus kind of bench/kinds.py (copyright files, manual pages, Python
sources, short texts, template pages, scripts without spaces), each a directory of real text,
and each under 50 MB also five times over (copyright files: 93 MB, a few with names in other
scripts):
the "Fingerprinting, by kind of text" section. And the start-up of small commands against
importing the libraries they need: the "Start-up" section.

    python bench/whole.py --sizes 100000 --big 1000000
    python bench/whole.py --parts kinds startup
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import kinds  # noqa: E402
from peak_rss import measure  # noqa: E402
from recall import corpus  # noqa: E402

DOCS = HERE.parent / "docs" / "benchmarks.md"
SIMHASH = str(Path(sys.executable).parent / "simhash")
KINDS_CACHE = HERE / ".cache" / "kinds"
COPIES = 5
SMALL = 50_000_000
"""A corpus kind below this many bytes is also measured five times over: its rows as it is
are mostly start-up, the copies' mostly the work."""


def inputs(n: int, *, files: bool) -> dict[str, Path]:
    """The corpus of ``n`` documents as JSON Lines, Parquet and (with ``files``) a directory,
    made once in bench/.cache."""
    texts, _ = corpus(n, 0)
    made = {"one JSON Lines file (--texts)": texts}
    parquet = texts.with_suffix(".parquet")
    if not parquet.exists():
        import pyarrow as pa
        import pyarrow.parquet as pq

        records = [json.loads(line) for line in texts.open(encoding="utf-8")]
        ids = [str(r.get("id", k)) for k, r in enumerate(records)]
        table = pa.table({"id": ids, "text": [r["text"] for r in records]})
        pq.write_table(table, parquet, row_group_size=10_000)
    made["one Parquet file (--texts)"] = parquet
    if files:
        directory = texts.with_suffix(".d")
        if not directory.exists():
            directory.mkdir()
            for number, line in enumerate(texts.open(encoding="utf-8")):
                folder = directory / f"{number // 1000:04d}"
                folder.mkdir(exist_ok=True)
                (folder / f"{number}.txt").write_text(json.loads(line)["text"], "utf-8")
        made = {f"{n:,} files in a directory": directory, **made}
    return made


def _source(path: Path) -> list[str]:
    """Our arguments for ``path``: a directory is walked, everything in it read (bench/.cache
    is in the repository's .gitignore, which a walk honours as git does), a file is records."""
    return [str(path), "--no-ignore"] if path.is_dir() else ["--texts", str(path)]


def commands(path: Path) -> dict[str, list[str]]:
    kind = "files" if path.is_dir() else path.suffix.lstrip(".")
    source = _source(path)
    peer = [sys.executable, str(HERE / "whole_peer.py")]
    return {
        "floor": [*peer, "floor", kind, str(path)],
        "simhash-pybind": [*peer, "pybind", kind, str(path)],
        "simhash -j1": [SIMHASH, "fingerprint", *source, "-qq", "--jobs", "1"],
        "simhash -j2": [SIMHASH, "fingerprint", *source, "-qq", "--jobs", "2"],
    }


def measured(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak GB of the process tree)."""
    status, wall, peak = measure(command, poll=0.1)
    if status:
        raise SystemExit(f"failed ({status}): {' '.join(command)}")
    return wall, peak / 1e6


def row(name: str, path: Path, repeats: int) -> str:
    # A run that reads nothing is fast and exits 0 (-qq keeps its note quiet): not timed.
    done = subprocess.run(commands(path)["simhash -j2"], capture_output=True, check=True, text=True)
    if not done.stdout.strip():
        raise SystemExit(f"simhash fingerprint read no document of {path}")
    runs: dict[str, list[tuple[float, float]]] = {tool: [] for tool in commands(path)}
    for _ in range(repeats):
        for tool, command in commands(path).items():
            runs[tool].append(measured(command))
    wall = {tool: statistics.median(t for t, _ in done) for tool, done in runs.items()}
    peak = {tool: max(m for _, m in done) for tool, done in runs.items()}
    cells = [f"{wall[tool]:.1f} s, {peak[tool]:.2f} GB" for tool in runs]
    pybind, best = wall["simhash-pybind"], min(wall["simhash -j1"], wall["simhash -j2"])
    ratios = f" | {pybind / best:.2f}x | {wall['floor'] / best:.2f}x |"
    return f"| {name} | " + " | ".join(cells) + ratios


def holding(n: int, path: Path) -> str:
    """One row of what the commands that keep something per document take: ``dedupe`` (with
    the vectors exact verification needs) and ``index add`` (ids and fingerprints only)."""
    db = HERE / ".cache" / "whole-index.db"
    cells = []
    for command in (
        [SIMHASH, "fingerprint", "--texts", str(path), "-qq", "--jobs", "2"],
        [SIMHASH, "dedupe", "--texts", str(path), "-qq", "--jobs", "2", "-f", "json"],
        [SIMHASH, "index", "add", str(db), "--texts", str(path), "-qq", "--jobs", "2"],
    ):
        for stale in db.parent.glob(db.name + "*"):
            stale.unlink()
        wall, peak = measured(command)
        cells.append(f"{wall:.1f} s, {peak:.2f} GB")
    return f"| {n:,} | " + " | ".join(cells) + " |"


STAGES = [
    ("reading files", "read_documents"),
    ("JSON parsing", "parse_lines"),
    ("Parquet reading", "read_records"),
    ("tokenizing (finding and keying words)", "word_tokens"),
    ("counting (words to columns)", "count_matrix"),
    ("hashing features (FNV-1a, xorshift signs)", "feature_signs"),
    ("fingerprinting (the product)", "fingerprint_matrix"),
    ("writing records", "emit_fingerprints"),
]


def breakdown(path: Path) -> str:
    """Where a ``--jobs 1`` run's time goes, by stage, from cProfile's cumulative times."""
    source = _source(path)
    profile = HERE / ".cache" / "whole.prof"
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(profile), SIMHASH, "fingerprint", *source,
         "-qq", "--jobs", "1"],
        stdout=subprocess.DEVNULL, check=True,
    )  # fmt: skip
    wall = time.monotonic() - start
    stats = pstats.Stats(str(profile), stream=io.StringIO())
    cumulative: dict[str, float] = {}
    for (_, _, function), (_, _, _, total, _) in stats.stats.items():  # type: ignore[attr-defined]
        cumulative[function] = max(cumulative.get(function, 0.0), total)
    main = cumulative.get("fingerprint_command", 0.0)
    seconds = {label: cumulative.get(function, 0.0) for label, function in STAGES}
    # Nested stages are reported apart: counting without tokenizing (nor, for files, the
    # reading its generator of texts does), writing without the rest.
    seconds["counting (words to columns)"] -= seconds["tokenizing (finding and keying words)"]
    seconds["counting (words to columns)"] -= seconds["reading files"]
    inner = sum(v for k, v in seconds.items() if k != "writing records")
    if seconds["writing records"]:
        seconds["writing records"] = max(0.0, seconds["writing records"] - inner)
    lines = [
        f"`simhash fingerprint {' '.join(source)} --jobs 1` under cProfile: {wall:.1f} s "
        f"(start-up and imports before the command: {wall - main:.1f} s).",
        "",
        "| stage | seconds | share |",
        "|---|---:|---:|",
    ]
    for label, value in seconds.items():
        if value > 0.05:
            lines.append(f"| {label} | {value:.1f} | {value / wall:.0%} |")
    return "\n".join(lines)


def copies_of(directory: Path, copies: int) -> Path:
    """``copies`` copies of a corpus directory side by side, one folder each (made once)."""
    target = directory.with_name(f"{directory.name}-x{copies}")
    done = target / ".complete"
    if not done.exists():
        shutil.rmtree(target, ignore_errors=True)
        for copy in range(copies):
            shutil.copytree(directory, target / str(copy), ignore=shutil.ignore_patterns(".*"))
        done.touch()
    return target


def described(kind: str, path: Path) -> str:
    files = [p for p in path.rglob("*.txt")]
    megabytes = sum(p.stat().st_size for p in files) / 1e6
    return f"{kind}: {len(files):,} files, {megabytes:.0f} MB"


def kinds_section(chosen: list[str], repeats: int) -> list[str]:
    lines = [
        "## Fingerprinting, by kind of text",
        "",
        "Written by `python bench/whole.py --parts kinds`, on this machine (2 cores), in one "
        "run: the tools and measures of the section above, on each corpus of bench/kinds.py "
        "(real text this machine has: licences, manual pages rendered at 80 columns, Python "
        "sources, texts of 10-40 words, pages of one template, Chinese, Japanese and Thai "
        f"text) as a directory of files, and each that is under 50 MB also {COPIES} times "
        "over (each copy a folder of its own), where the work outweighs the start-up. A few "
        "copyright files hold names in other scripts; the pages of one template each have a "
        "Japanese language link; the Chinese, Japanese and Thai texts are read by pairs of "
        "letters (bigrams), where the regex of the floor and of simhash-pybind takes a whole "
        "run of letters as one word, far fewer tokens.",
        "",
        "| input | floor: one core, read + regex | simhash-pybind + xxh3, same regex | "
        "`simhash fingerprint` -j1 | -j2 | vs pybind | vs the floor |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in chosen:
        path = kinds.build(kind, KINDS_CACHE / f"{kind}-0")
        print(kind, file=sys.stderr)
        lines.append(row(described(kind, path), path, repeats))
        if sum(p.stat().st_size for p in path.glob("*.txt")) < SMALL:
            many = copies_of(path, COPIES)
            lines.append(row(described(f"{kind} x{COPIES}", many), many, repeats))
    return lines


def startup_section(repeats: int) -> list[str]:
    """Whole-process times of small commands, and what importing costs them."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    sample = HERE.parent / "sample_corpus"
    first, second = (str(p) for p in sorted(sample.iterdir())[:2])
    cases = {
        "the interpreter alone: `python -c pass`": [sys.executable, "-c", "pass"],
        "importing click, rich, numpy and scipy.sparse": [
            sys.executable, "-c", "import click, rich.console, numpy, scipy.sparse"
        ],
        "`simhash --version`": [SIMHASH, "--version"],
        "`simhash --help`": [SIMHASH, "--help"],
        "a Tab after `simhash ded` (completing a command's name)": [
            "env", "_SIMHASH_COMPLETE=bash_complete", "COMP_WORDS=simhash ded", "COMP_CWORD=1",
            SIMHASH,
        ],
        "`simhash dedupe --help`": [SIMHASH, "dedupe", "--help"],
        "`simhash compare A B` (two files of sample_corpus/)": [SIMHASH, "compare", first, second],
        "`simhash dedupe sample_corpus/`": [SIMHASH, "dedupe", str(sample)],
    }  # fmt: skip

    def timed(command: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(command, env=environment, capture_output=True, check=True)
        return time.perf_counter() - started

    for command in cases.values():
        timed(command)  # bytecode written, files in the page cache
    runs: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, command in cases.items():
            runs[name].append(timed(command))
    lines = [
        "## Start-up",
        "",
        "Written by `python bench/whole.py --parts startup`, on this machine (2 cores), in one "
        f"run: each command as a whole process, the median of {repeats} (interleaved, after "
        "one run that writes the bytecode, as an installed package has it). The second row "
        "is the floor of a command that makes arrays: importing what it cannot do without.",
        "",
        "| process | median | min | max |",
        "|---|---:|---:|---:|",
    ]
    for name, times in runs.items():
        lines.append(
            f"| {name} | {statistics.median(times):.2f} s | {min(times):.2f} s "
            f"| {max(times):.2f} s |"
        )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "simhash_cli", "compare", first, second],
        env=environment, capture_output=True, text=True, check=True,
    )  # fmt: skip
    own: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            package = parts[2].strip().split(".")[0]
            own[package] = own.get(package, 0.0) + int(parts[0]) / 1e6
    total = sum(own.values())
    lines += [
        "",
        f"Where `simhash compare A B` spends its imports (`python -X importtime`: {total:.2f} s "
        "in all, each module's own time summed by package):",
        "",
        "| package | seconds | share |",
        "|---|---:|---:|",
    ]
    for package, seconds in sorted(own.items(), key=lambda item: -item[1])[:8]:
        lines.append(f"| {package} | {seconds:.3f} | {seconds / total:.0%} |")
    return lines


def prose_section(sizes: list[int], big: list[int], repeats: int) -> list[str]:
    lines = [
        "## Fingerprinting, whole processes",
        "",
        "Written by `make bench` (`python bench/whole.py`), on this machine (2 cores), in one "
        "run. The inputs are bench/prose.py's documents (realistic prose, 80-400 words each) "
        "as a directory of files, as one JSON Lines file and as one Parquet file (row groups "
        "of 10,000). Each tool is one process that reads the input itself. The floor: one "
        'core, read and `re.findall(r"\\w+", text.lower())`, nothing counted or hashed. '
        "simhash-pybind: the same words hashed by xxh3 and fingerprinted by its `compute` "
        "(bench/whole_peer.py). Ours: `simhash fingerprint`, its records to /dev/null. Wall "
        "time: the median of the repeats (tools interleaved); memory: the peak of the summed "
        "resident memory of the process tree, polled every 0.1 s. Ratios: the time of "
        "simhash-pybind, or of the floor, over our better one (above 1: we are faster).",
        "",
        "| input | floor: one core, read + regex | simhash-pybind + xxh3, same regex | "
        "`simhash fingerprint` -j1 | -j2 | vs pybind | vs the floor |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        for name, path in inputs(n, files=True).items():
            print(name, file=sys.stderr)
            lines.append(row(f"{n:,}: {name}", path, repeats))
    for n in big:
        name, path = next(iter(inputs(n, files=False).items()))
        print(f"{n:,}: {name}", file=sys.stderr)
        lines.append(row(f"{n:,}: {name}", path, 1))
    lines += [
        "",
        "What the commands that keep something per document hold, on the JSON Lines files "
        "(one run each, `--jobs 2`): `dedupe` keeps each document's id, fingerprint and term "
        "counts (float32 counts, int32 columns: what exact verification and MinHash need), "
        "`index add` its id and fingerprint only.",
        "",
        "| documents | `fingerprint --texts` | `dedupe --texts` | `index add --texts` |",
        "|---:|---:|---:|---:|",
    ]
    for n in [*sizes, *big]:
        lines.append(holding(n, next(iter(inputs(n, files=False).values()))))
    lines += ["", "Where the time goes:", ""]
    for name, path in inputs(sizes[0], files=True).items():
        lines += [f"*{name}*: " + breakdown(path), ""]
    return lines


def write_section(name: str, lines: list[str]) -> None:
    """The section between ``<!-- name: begin -->`` and its end in docs/benchmarks.md, made
    again (appended the first time)."""
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    section = "\n".join([begin, *lines, end])
    text = DOCS.read_text(encoding="utf-8")
    if begin in text:
        text = text[: text.index(begin)] + section + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    DOCS.write_text(text, encoding="utf-8")
    print(section)


PARTS = ("prose", "kinds", "startup")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--big", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--kinds", nargs="+", choices=kinds.KINDS, default=list(kinds.KINDS))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if "prose" in args.parts:
        write_section("whole", prose_section(args.sizes, args.big, args.repeats))
    if "kinds" in args.parts:
        write_section("whole-kinds", kinds_section(args.kinds, args.repeats))
    if "startup" in args.parts:
        write_section("startup", startup_section(max(5, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
