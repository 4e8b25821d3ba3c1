"""Regenerate tests/reference/vectors.json by running the specification's JavaScript reference.

    python tests/reference/make_vectors.py      (needs node on PATH)

The cases cover every edge the specification names: non-ASCII and astral features (two UTF-16
units), lone surrogates, the empty-string feature, ':' and spaces in features, zero and
negative weights, the empty mapping, slots summing to exactly zero, float sums next to zero,
integer-like keys (which JavaScript iterates first), and bits from 8 to 4096.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def cases() -> list[dict[str, Any]]:
    fixed: list[dict[str, Any]] = [
        {"name": "empty mapping", "features": [], "bits": 64, "seed": 12345},
        {"name": "one word", "features": [["cat", 1]], "bits": 32, "seed": 12345},
        {"name": "empty-string feature", "features": [["", 2]], "bits": 64, "seed": 12345},
        {
            "name": "colon and spaces",
            "features": [["a:b", 1], ["a b", 2], [":", 1], [" ", 3]],
            "bits": 64,
            "seed": 7,
        },
        {
            "name": "non-ASCII",
            "features": [["naïve", 1], ["日本語", 2], ["Ωmega", 1]],
            "bits": 64,
            "seed": 12345,
        },
        {
            "name": "astral (surrogate pairs)",
            "features": [["😀", 1], ["𝔘𝔫𝔦", 2], ["a😀b", 1]],
            "bits": 128,
            "seed": 12345,
        },
        {
            "name": "lone surrogates",
            "features": [["\ud800", 1], ["x\udfff", 2]],
            "bits": 64,
            "seed": 12345,
        },
        {"name": "zero weights only", "features": [["a", 0], ["b", 0]], "bits": 64, "seed": 1},
        {
            "name": "negative weights",
            "features": [["a", -1], ["b", -2.5], ["c", 1]],
            "bits": 64,
            "seed": 12345,
        },
        {
            "name": "exact cancellation",
            "features": [["a", 1], ["a ", 1], ["b", -1]],
            "bits": 64,
            "seed": 12345,
        },
        {
            "name": "same weight twice cancels",
            "features": [["x", 0.5], ["y", 0.5]],
            "bits": 16,
            "seed": 99,
        },
        {
            "name": "float sums near zero",
            "features": [["a", 0.1], ["b", 0.2], ["c", -0.3]],
            "bits": 256,
            "seed": 12345,
        },
        {
            "name": "integer-like keys go first",
            "features": [["a", 1e16], ["b", 1.0], ["7", -1e16]],
            "bits": 64,
            "seed": 12345,
        },
        {
            "name": "integer-like key order",
            "features": [
                ["10", 0.1],
                ["2", 0.7],
                ["02", -0.3],
                ["x", -0.5],
                ["4294967294", 0.2],
                ["4294967295", -0.2],
                ["-1", 0.1],
            ],
            "bits": 128,
            "seed": 12345,
        },
        {"name": "seed 0", "features": [["cat", 2], ["dog", 1]], "bits": 64, "seed": 0},
        {
            "name": "seed 2^32-1",
            "features": [["cat", 2], ["dog", 1]],
            "bits": 64,
            "seed": 4294967295,
        },
        {"name": "bits 8", "features": [["cat", 2], ["dog", 1]], "bits": 8, "seed": 12345},
        {"name": "bits 40", "features": [["cat", 2], ["dog", 1]], "bits": 40, "seed": 12345},
        {
            "name": "bits 4096",
            "features": [["cat", 2], ["dog", 1], ["bird", 0.5]],
            "bits": 4096,
            "seed": 12345,
        },
        {
            "name": "tiny and huge weights",
            "features": [["a", 5e-324], ["b", 1.7976931348623157e308]],
            "bits": 64,
            "seed": 12345,
        },
    ]
    rng = random.Random(20261130)
    alphabet = ["a", "b", "é", "ß", "😀", "\ud83d", ":", " ", "1", "0", "7", "-", "日", ""]
    for n in range(200):
        features: dict[str, float] = {}
        for _ in range(rng.randint(0, 30)):
            key = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))
            features[key] = rng.choice(
                [
                    rng.randint(1, 9),
                    rng.randint(-3, 3),
                    rng.uniform(-1, 1),
                    rng.uniform(-1e-12, 1e-12),
                    rng.choice([0.1, 0.2, 0.3, -0.1, -0.2, -0.3, 1 / 3]),
                    rng.lognormvariate(0, 2),
                ]
            )
        fixed.append(
            {
                "name": f"random {n}",
                "features": [[k, v] for k, v in features.items()],
                "bits": rng.choice([8, 16, 24, 32, 48, 64, 72, 96, 128, 256, 512]),
                "seed": rng.choice([0, 1, 12345, 4294967295, rng.randrange(2**32)]),
            }
        )
    return fixed


def run_reference(batch: list[dict[str, Any]]) -> list[str]:
    """Fingerprints of ``batch`` from the JavaScript reference, as hex strings."""
    done = subprocess.run(
        ["node", str(HERE / "simhash_reference.js")],
        input=json.dumps(batch).encode("ascii"),
        capture_output=True,
        check=True,
        timeout=120,
    )
    result: list[str] = json.loads(done.stdout)
    return result


def main() -> None:
    batch = cases()
    for case, expected in zip(batch, run_reference(batch), strict=True):
        case["expected"] = expected
    lines = ",\n".join(json.dumps(case) for case in batch)
    (HERE / "vectors.json").write_text(f"[\n{lines}\n]\n", encoding="ascii")
    print(f"wrote {len(batch)} cases to {HERE / 'vectors.json'}")


if __name__ == "__main__":
    main()
