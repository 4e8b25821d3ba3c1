"""A line-by-line Python transliteration of the specification's JavaScript reference.

Deliberately slow and literal (no numpy): the oracle the fast paths are tested against.
JavaScript semantics made explicit: ``s.charCodeAt`` is a UTF-16 code unit, ``Math.imul`` and
``>>> 0`` are arithmetic modulo 2**32, ``Object.entries`` lists integer-like keys first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

MASK = 0xFFFFFFFF


def char_codes(s: str) -> list[int]:
    raw = s.encode("utf-16-le", "surrogatepass")
    return [raw[i] | raw[i + 1] << 8 for i in range(0, len(raw), 2)]


def fnv1a(s: str) -> int:
    h = 0x811C9DC5
    for code in char_codes(s):
        h ^= code
        h = (h * 0x01000193) & MASK
    return h


def xorshift32(seed: int) -> Callable[[], int]:
    state = (seed & MASK) or 1

    def next_() -> int:
        nonlocal state
        state ^= (state << 13) & MASK
        state ^= state >> 17
        state ^= (state << 5) & MASK
        return state

    return next_


def feature_bits(feature: str, seed: int, b: int) -> list[int]:
    rng = xorshift32(fnv1a(f"{feature}:{seed}"))
    bits = []
    word = have = 0
    for _ in range(b):
        if have == 0:
            word, have = rng(), 32
        bits.append(word & 1)
        word >>= 1
        have -= 1
    return bits


def object_entries(vec: Mapping[str, float]) -> list[tuple[str, float]]:
    """Object.entries order: array-index keys ascending, then the rest in insertion order."""

    def is_index(key: str) -> bool:
        return bool(re.fullmatch(r"0|[1-9][0-9]*", key)) and int(key) <= 2**32 - 2

    indexed = sorted((int(k), k) for k in vec if is_index(k))
    return [(k, vec[k]) for _, k in indexed] + [(k, vec[k]) for k in vec if not is_index(k)]


def fingerprint(weighted_vec: Mapping[str, float], b: int, seed: int) -> int:
    acc = [0.0] * b
    for feature, weight in object_entries(weighted_vec):
        bits = feature_bits(feature, seed, b)
        for i in range(b):
            acc[i] += weight if bits[i] else -weight
    fp = 0
    for i in range(b):
        if acc[i] > 0:
            fp |= 1 << i
    return fp


def hamming_distance(a: int, b: int) -> int:
    x, count = a ^ b, 0
    while x > 0:
        count += x & 1
        x >>= 1
    return count


def estimate_cosine(a: int, b: int, bits: int) -> float:
    return math.cos(math.pi * hamming_distance(a, b) / bits)
