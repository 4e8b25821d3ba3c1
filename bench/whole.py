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

    python bench/whole.py --sizes 100000 --big 1000000
"""

from __future__ import annotations

import argparse
import io
import json
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from peak_rss import measure  # noqa: E402
from recall import corpus  # noqa: E402

DOCS = HERE.parent / "docs" / "benchmarks.md"
BEGIN, END = "<!-- whole: begin -->", "<!-- whole: end -->"
SIMHASH = str(Path(sys.executable).parent / "simhash")


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


def commands(path: Path) -> dict[str, list[str]]:
    kind = "files" if path.is_dir() else path.suffix.lstrip(".")
    source = [str(path)] if path.is_dir() else ["--texts", str(path)]
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
    source = [str(path)] if path.is_dir() else ["--texts", str(path)]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--big", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    lines = [
        BEGIN,
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
    for n in args.sizes:
        for name, path in inputs(n, files=True).items():
            print(name, file=sys.stderr)
            lines.append(row(f"{n:,}: {name}", path, args.repeats))
    for n in args.big:
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
    for n in [*args.sizes, *args.big]:
        lines.append(holding(n, next(iter(inputs(n, files=False).values()))))
    lines += ["", "Where the time goes:", ""]
    for name, path in inputs(args.sizes[0], files=True).items():
        lines += [f"*{name}*: " + breakdown(path), ""]
    lines.append(END)
    text = DOCS.read_text(encoding="utf-8")
    section = "\n".join(lines)
    if BEGIN in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    DOCS.write_text(text, encoding="utf-8")
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
