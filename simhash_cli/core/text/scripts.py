"""Which characters are words by themselves: the scripts written without spaces between words.

Chinese, Japanese, Thai, Lao, Khmer, Myanmar and the Tai scripts do not separate words with
spaces, so a run of their letters is a phrase or a whole sentence, not a word. The Unicode word
boundary rules (UAX #29, as ICU applies them without a dictionary) then break between every two
of those letters, keep a run of katakana together, and keep combining marks (vowel signs, tone
marks) with the letter they follow. The default tokenizer starts from the same boundaries (see
:mod:`~simhash_cli.core.text.tokenizer` for what it makes of them): letters of these scripts one by
one (with their marks), a katakana run as one, and the words of every other script as runs of
word characters (Python's ``\\w``), now with their combining marks (so that a Hindi word is one
token, not three pieces).

The ranges are the code points whose Unicode Word_Break property is Other and whose general
category is a letter (``SOLO``), and those whose Word_Break is Katakana (``KATA``), made with
the ``regex`` module's Unicode data; tests/test_tokenizer.py checks them against it and the
tokens against its word boundaries. A code point counts only where Python's own Unicode data
makes it a word character.
"""

from __future__ import annotations

import unicodedata

import numpy as np
from numpy.typing import NDArray

__all__ = ["KATA", "MARK", "OTHER", "SOLO", "WORD", "classes"]

OTHER, WORD, KATA, SOLO, MARK = 0, 1, 2, 3, 4
"""Classes of code points: not in a word; in a word (Python's ``\\w``); a katakana letter; a
letter that is a word by itself; a combining mark (not itself ``\\w``), which goes with the
character before it."""

SOLO_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E01, 0x0E30),
    (0x0E32, 0x0E33),
    (0x0E40, 0x0E46),
    (0x0E81, 0x0E82),
    (0x0E84, 0x0E84),
    (0x0E86, 0x0E8A),
    (0x0E8C, 0x0EA3),
    (0x0EA5, 0x0EA5),
    (0x0EA7, 0x0EB0),
    (0x0EB2, 0x0EB3),
    (0x0EBD, 0x0EBD),
    (0x0EC0, 0x0EC4),
    (0x0EC6, 0x0EC6),
    (0x0EDC, 0x0EDF),
    (0x1000, 0x102A),
    (0x103F, 0x103F),
    (0x1050, 0x1055),
    (0x105A, 0x105D),
    (0x1061, 0x1061),
    (0x1065, 0x1066),
    (0x106E, 0x1070),
    (0x1075, 0x1081),
    (0x108E, 0x108E),
    (0x1780, 0x17B3),
    (0x17D7, 0x17D7),
    (0x17DC, 0x17DC),
    (0x1950, 0x196D),
    (0x1970, 0x1974),
    (0x1980, 0x19AB),
    (0x19B0, 0x19C9),
    (0x1A20, 0x1A54),
    (0x1AA7, 0x1AA7),
    (0x3006, 0x3007),
    (0x3021, 0x3029),
    (0x3038, 0x303A),
    (0x3041, 0x3096),
    (0x309D, 0x309F),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA9E0, 0xA9E4),
    (0xA9E6, 0xA9EF),
    (0xA9FA, 0xA9FE),
    (0xAA60, 0xAA76),
    (0xAA7A, 0xAA7A),
    (0xAA7E, 0xAAAF),
    (0xAAB1, 0xAAB1),
    (0xAAB5, 0xAAB6),
    (0xAAB9, 0xAABD),
    (0xAAC0, 0xAAC0),
    (0xAAC2, 0xAAC2),
    (0xAADB, 0xAADD),
    (0xF900, 0xFA6D),
    (0xFA70, 0xFAD9),
    (0x11700, 0x1171A),
    (0x11740, 0x11746),
    (0x16FF2, 0x16FF6),
    (0x17000, 0x18CDA),
    (0x18CFF, 0x18D20),
    (0x18D80, 0x18DF2),
    (0x18E00, 0x19191),
    (0x191A0, 0x191D2),
    (0x1B001, 0x1B11F),
    (0x1B123, 0x1B123),
    (0x1B132, 0x1B132),
    (0x1B150, 0x1B152),
    (0x1B170, 0x1B2FB),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B81E),
    (0x2B820, 0x2CEAD),
    (0x2CEB0, 0x2EBE0),
    (0x2EBF0, 0x2EE5D),
    (0x2F800, 0x2FA1D),
    (0x30000, 0x3134A),
    (0x31350, 0x33479),
    (0x3D000, 0x3FC3F),
)

KATA_RANGES: tuple[tuple[int, int], ...] = (
    (0x3031, 0x3035),
    (0x309B, 0x309C),
    (0x30A0, 0x30FA),
    (0x30FC, 0x30FF),
    (0x31F0, 0x31FF),
    (0x32D0, 0x32FE),
    (0x3300, 0x3357),
    (0xFF66, 0xFF9D),
    (0x1AFF0, 0x1AFF3),
    (0x1AFF5, 0x1AFFB),
    (0x1AFFD, 0x1AFFE),
    (0x1B000, 0x1B000),
    (0x1B120, 0x1B122),
    (0x1B124, 0x1B128),
    (0x1B155, 0x1B155),
    (0x1B164, 0x1B168),
    (0xFF9E, 0xFF9F),  # the halfwidth sound marks: Extend, but only ever after katakana
)


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # Python's re \w for str patterns


def _within(codes: NDArray[np.uint32], ranges: tuple[tuple[int, int], ...]) -> NDArray[np.bool_]:
    """Which of ``codes`` fall in one of ``ranges`` (inclusive, none overlapping)."""
    bounds = sorted(ranges)
    low = np.array([lo for lo, _ in bounds], dtype=np.int64)
    high = np.array([hi for _, hi in bounds], dtype=np.int64)
    at = np.searchsorted(low, codes, side="right") - 1
    return (at >= 0) & (codes <= high[np.maximum(at, 0)])


def _classify(codes: NDArray[np.uint32]) -> NDArray[np.uint8]:
    """The class of each of ``codes`` from Python's Unicode data and the ranges above."""
    chars = [chr(code) for code in codes.tolist()]
    word = np.fromiter(map(_is_word, chars), dtype=bool, count=len(chars))
    mark = np.fromiter((unicodedata.category(c)[0] == "M" for c in chars), bool, len(chars))
    kind = np.where(word, WORD, np.where(mark, MARK, OTHER)).astype(np.uint8)
    kind[word & _within(codes, KATA_RANGES)] = KATA
    kind[word & _within(codes, SOLO_RANGES)] = SOLO  # before katakana, where both hold
    return kind


_UNSEEN = 255
_BMP = np.full(0x10000, _UNSEEN, dtype=np.uint8)
"""The classes of the BMP's code points, each looked up when a text first holds it: a process
pays for the characters it reads (a few dozen in a licence with a name in Chinese, a few
thousand in Chinese text), not for all 65,536."""


def classes(codes: NDArray[np.uint32]) -> NDArray[np.uint8]:
    """The class of every code point (a table for the BMP, one look each for the others)."""
    bmp = codes < 0x10000
    every = bool(bmp.all())
    low = codes if every else codes[bmp]
    found = _BMP[low]
    unseen = found == _UNSEEN
    if unseen.any():
        new = np.unique(low[unseen])
        _BMP[new] = _classify(new)
        found = _BMP[low]
    if every:
        return found
    result = np.empty(codes.size, dtype=np.uint8)
    result[bmp] = found
    astral, inverse = np.unique(codes[~bmp], return_inverse=True)
    result[~bmp] = _classify(astral)[inverse]
    return result
