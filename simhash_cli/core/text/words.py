"""The default words of a batch of texts, found and keyed in bulk: the tokens of
:func:`~simhash_cli.core.text.tokenizer.tokenize` (single words, by the rules of every script, or
the ``\\w+`` runs of earlier versions), token for token, with array operations instead of a
Python step per token, and a 64-bit key for each (equal words, equal keys, in every batch).

Texts of Latin-1 alone are read a byte per character. A text with other letters is read so
too, when they are letters of scripts written with spaces (they stand in as ``a``) or of
scripts without spaces (they stand in as a space, and their words are made apart from their
code points); only a text with a combining mark is read as UTF-32, a code point per unit. So a
batch costs what its texts do, and a text what its own characters do.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from . import scripts

__all__ = ["WordTokens", "word_tokens"]


@dataclass(frozen=True)
class WordTokens:
    """The default tokens of a batch of texts, found with array operations.

    Attributes:
        text: the lower-cased texts joined by NUL (a non-word character); token i is
            ``text[start[i]:stop[i]]``.
        doc: (n_tokens,) int64 index of each token's text in the batch.
        start: (n_tokens,) int64.
        stop: (n_tokens,) int64.
        key: (n_tokens,) uint64 identity of each token: equal tokens have equal keys, in
            every batch.
        check: (n_tokens,) uint64: 0 for a Latin-1 token of at most eight characters (its
            key is exact); for any other, a second, independent hash, never 0. Two tokens with
            equal keys but different checks are different tokens that collided
            (:class:`KeyCollision`).
    """

    text: str
    doc: NDArray[np.int64]
    start: NDArray[np.int64]
    stop: NDArray[np.int64]
    key: NDArray[np.uint64]
    check: NDArray[np.uint64]


@functools.cache
def _bmp_word_characters() -> NDArray[np.bool_]:
    # Python's re \w for str patterns: str.isalnum() or "_" (checked against re by the tests).
    table = np.fromiter((chr(c).isalnum() for c in range(0x10000)), dtype=bool, count=0x10000)
    table[ord("_")] = True
    return table


@functools.cache
def _latin1_word_characters() -> NDArray[np.bool_]:
    # The first 256 entries of the table above, without building all of it.
    table = np.fromiter((chr(c).isalnum() for c in range(256)), dtype=bool, count=256)
    table[ord("_")] = True
    return table


def _is_word(codes: NDArray[np.uint32]) -> NDArray[np.bool_]:
    table = _bmp_word_characters()
    bmp = codes < 0x10000
    result = np.zeros(codes.size, dtype=bool)
    result[bmp] = table[codes[bmp]]
    if not bmp.all():
        astral, inverse = np.unique(codes[~bmp], return_inverse=True)
        flags = np.fromiter((chr(c).isalnum() for c in astral.tolist()), bool, astral.size)
        result[~bmp] = flags[inverse]
    return result


_SEED = np.uint64(0x243F6A8885A308D3)
_WIDE_SEED = np.uint64(0x13198A2E03707344)
_MULTIPLY = np.uint64(0x9E3779B97F4A7C15)
_CHECK_MULTIPLY = np.uint64(0xBF58476D1CE4E5B9)
# _BYTE_MASKS[r]: the low r bytes of a word.
_BYTE_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)


def word_tokens(texts: Sequence[str], *, by_script: bool = True) -> WordTokens:
    """The words of a batch of texts, in bulk
    (:class:`~simhash_cli.core.text.tokenizer.TokenizerConfig` with ``ngram=1``, and
    ``scripts=by_script``).

    Equal to :func:`~simhash_cli.core.text.tokenizer.tokenize` with that config, token for token,
    but without a Python step per token: the texts are lower-cased and joined, their code
    points classified with a lookup table, token boundaries found where the class changes, and
    every token keyed eight bytes at a time (:func:`_chunk_hashes`). Texts of Latin-1 alone
    (ASCII, accents, the copyright sign) are read a byte per character, and so are the others
    but those with a combining mark, which are read as UTF-32 (:func:`_narrowed`), each text
    by its own kind: a batch costs what its texts do, whatever one of them holds.
    """
    # Lower-cased one by one: lower() can change a text's length ("İ" becomes two characters).
    lowered = [t.lower() for t in texts]
    text = "\x00".join(lowered)
    lengths = np.fromiter(map(len, lowered), np.int64, len(lowered))
    text_starts = np.cumsum(lengths + 1) - (lengths + 1)
    latin1 = [_latin1(t) for t in lowered]
    above: list[_Above | None] = [None] * len(lowered)
    apart: list[_Above | None] = [None] * len(lowered)
    wide: list[NDArray[np.uint32] | None] = [None] * len(lowered)
    others = [i for i, units in enumerate(latin1) if units is None]
    if others:  # read narrow all the same where their other characters allow it
        read = _narrowed([lowered[i] for i in others], by_script)
        for k, i in enumerate(others):
            latin1[i], above[i], wide[i] = read.units[k], read.above[k], read.wide[k]
            apart[i] = read.apart[k]
    narrow = np.fromiter((units is not None for units in latin1), bool, len(lowered))
    if narrow.all():
        placed = _placed(above, lengths), _placed(apart, lengths)
        start, stop, key, check = _narrow_tokens(_joined(latin1), *placed)
    elif not narrow.any():
        start, stop, key, check = _wide_tokens(_joined_wide(wide), by_script)
    else:
        start, stop, key, check = _tokens_by_kind(
            _Narrowed(latin1, above, apart, wide),
            narrow,
            lengths,
            text_starts,
            by_script,
        )
    # Text k starts at sum(lengths[:k]) + k (one NUL between texts): count its tokens.
    first_token = np.searchsorted(start, np.append(text_starts, len(text)))
    doc = np.repeat(np.arange(len(lowered), dtype=np.int64), np.diff(first_token))
    return WordTokens(text, doc, start, stop, key, check)


Spans = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint64], NDArray[np.uint64]]
"""(start, stop, key, check) of the tokens of a joined text, in order."""


def _latin1(text: str) -> bytes | None:
    """A text's Latin-1 bytes, a byte per character; None for a text with other characters."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return None


_Above = tuple[NDArray[np.int64], NDArray[np.uint32]]
"""The positions in a text read narrow of its word characters above U+00FF, and their code
points."""

_WORD_BYTE, _SPACE_BYTE = ord("a"), ord(" ")


class _Narrowed(NamedTuple):
    """How each of some texts is read: the texts with characters above U+00FF as
    :func:`_narrowed` reads them, or a whole batch's (its Latin-1 texts' bytes as they are)."""

    units: list[bytes | None]
    """Each text as a byte per character, or None for a text read wide."""
    above: list[_Above | None]
    """Where each text read narrow has word characters above U+00FF, and which."""
    apart: list[_Above | None]
    """Where each text read narrow has letters that are words by themselves and katakana
    (:data:`~simhash_cli.core.text.scripts.SOLO`, :data:`~simhash_cli.core.text.scripts.KATA`), and
    which: their words are made apart from the bytes (:func:`_apart_tokens`)."""
    wide: list[NDArray[np.uint32] | None]
    """The UTF-32 code units of each text read wide."""


def _narrowed(texts: list[str], by_script: bool) -> _Narrowed:
    """Texts with characters above U+00FF, each as a byte per character unless it holds a
    combining mark: a word character of a script written with spaces stands in as ``a``, any
    other character (a dash, a curly quote, a letter of a script without spaces) as a space, so
    that the words and their places are the text's own; the positions and code points of the
    first, to key the words they are in from what they are (:func:`_narrow_tokens`), and of
    the letters of scripts without spaces, to make their words apart. A text with a mark is
    read wide (its UTF-32 code units): a mark joins the word before it, whatever its script.
    So a page of English with one name in Chinese is read as English is, and only the name's
    letters take the path of their script. Looked at together, not a text at a time."""
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    starts = np.cumsum(lengths + 1) - (lengths + 1)
    joined = np.frombuffer("\x00".join(texts).encode("utf-32-le", "surrogatepass"), "<u4")
    high = np.flatnonzero(joined > 0xFF)
    codes = joined[high]
    # Each text's characters above U+00FF: high[first[i] : first[i + 1]].
    first = np.searchsorted(high, np.append(starts, len(joined)))
    if by_script:
        kind = scripts.classes(codes)
        marks = np.concatenate(([0], np.cumsum(kind == scripts.MARK)))
        wide_read = marks[first[1:]] > marks[first[:-1]]
        word = kind == scripts.WORD
        alone = (kind == scripts.SOLO) | (kind == scripts.KATA)
    else:
        wide_read = np.zeros(len(texts), dtype=bool)
        word = _is_word(codes)
        alone = np.zeros(codes.size, dtype=bool)
    spans = list(zip(starts.tolist(), (starts + lengths).tolist(), strict=True))
    wide = [joined[a:b] if wide_read[i] else None for i, (a, b) in enumerate(spans)]
    if wide_read.all():
        nothing: list[_Above | None] = [None] * len(texts)
        return _Narrowed([None] * len(texts), nothing, list(nothing), wide)
    bytes_of = joined.astype(np.uint8)
    bytes_of[high] = np.where(word, _WORD_BYTE, _SPACE_BYTE)
    ends = np.append(starts, len(joined))
    units = [None if wide_read[i] else bytes_of[a:b].tobytes() for i, (a, b) in enumerate(spans)]
    above = _per_text(high[word], codes[word], ends, wide_read)
    apart = _per_text(high[alone], codes[alone], ends, wide_read)
    return _Narrowed(units, above, apart, wide)


def _per_text(
    at: NDArray[np.int64],
    points: NDArray[np.uint32],
    ends: NDArray[np.int64],
    wide_read: NDArray[np.bool_],
) -> list[_Above | None]:
    """Characters at ``at`` of texts joined (each text from ``ends[i]`` to ``ends[i + 1]``),
    for each text read narrow: where in it, and which; None for a text read wide."""
    bounds = np.searchsorted(at, ends).tolist()
    found: list[_Above | None] = []
    for i, read_wide in enumerate(wide_read.tolist()):
        mine = slice(bounds[i], bounds[i + 1])
        found.append(None if read_wide else (at[mine] - ends[i], points[mine]))
    return found


def _placed(above: Sequence[_Above | None], lengths: NDArray[np.int64]) -> _Above:
    """The characters above U+00FF of texts read narrow, placed in the texts joined by NUL."""
    offsets = np.cumsum(lengths + 1) - (lengths + 1)
    parts = [(at + offsets[i], codes) for i, (at, codes) in _present(above)]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.uint32)
    return np.concatenate([at for at, _ in parts]), np.concatenate([codes for _, codes in parts])


def _present(above: Sequence[_Above | None]) -> Iterator[tuple[int, _Above]]:
    return ((i, found) for i, found in enumerate(above) if found is not None and found[0].size)


def _joined(encoded: list[bytes | None]) -> bytes:
    """Latin-1 texts' bytes joined by NUL, as their texts are."""
    return b"\x00".join(units for units in encoded if units is not None)


def _joined_wide(wide: Sequence[NDArray[np.uint32] | None]) -> NDArray[np.uint32]:
    """Texts' UTF-32 code units joined by NUL, as their texts are."""
    parts = [part for units in wide if units is not None for part in (units, _NUL)]
    return np.concatenate(parts[:-1]) if parts else np.zeros(0, np.uint32)


_NUL = np.zeros(1, dtype=np.uint32)


def _narrow_tokens(encoded: bytes, above: _Above, apart: _Above) -> Spans:
    """The tokens of texts read a byte per character: runs of ``\\w`` (no letter below U+0100
    is a word by itself, and none is a mark). A word holding a character above U+00FF
    (``above``: where, and which) is keyed from its code points, as it is when read wide; the
    letters of scripts without spaces (``apart``, spaces in ``encoded``) make their own words
    (:func:`_apart_tokens`), in their places among the others."""
    units = np.frombuffer(encoded, dtype=np.uint8)
    start, stop = _runs(_latin1_word_characters()[units])
    length = stop - start
    key, check = _chunk_hashes(units, 1, start, length, _SEED)
    at, codes = above
    if at.size:
        wide = np.append(at, len(units))[np.searchsorted(at, start)] < stop
        chosen = np.flatnonzero(wide)
        lengths = length[chosen]
        offsets = np.cumsum(lengths) - lengths
        where = np.repeat(start[chosen] - offsets, lengths) + np.arange(lengths.sum())
        points = units[where].astype(np.uint32)
        found = np.searchsorted(at, where)
        high = at[np.minimum(found, at.size - 1)] == where
        points[high] = codes[found[high]]
        key[chosen], check[chosen] = _chunk_hashes(points, 4, offsets, lengths, _WIDE_SEED)
    if not apart[0].size:
        return start, stop, key, check
    columns = [
        np.concatenate(pair)
        for pair in zip((start, stop, key, check), _apart_tokens(*apart), strict=True)
    ]
    order = np.argsort(columns[0], kind="stable")
    return columns[0][order], columns[1][order], columns[2][order], columns[3][order]


def _apart_tokens(at: NDArray[np.int64], codes: NDArray[np.uint32]) -> Spans:
    """The words of the letters of scripts without spaces at ``at`` (increasing) of a text,
    ``codes`` their code points, as :func:`_wide_tokens` makes them from the whole text:
    katakana runs, and the other letters each a word by itself, paired where two touch
    (:func:`_bigrams`); keyed from their code points. Letters next to each other in the text
    are next to each other here, so a word's code points are a slice of ``codes``."""
    kind = scripts.classes(codes)
    follows = np.zeros(at.size, dtype=bool)  # the letter before it in the text is in its word
    follows[1:] = (at[1:] == at[:-1] + 1) & (kind[1:] == kind[:-1]) & (kind[1:] != scripts.SOLO)
    first = np.flatnonzero(~follows)
    last = np.append(first[1:], at.size) - 1
    start, stop = _bigrams(at[first], at[last] + 1, kind[first] == scripts.SOLO)
    index = np.searchsorted(at, start)  # where each word's code points begin in ``codes``
    key, check = _chunk_hashes(codes, 4, index, stop - start, _WIDE_SEED)
    return start, stop, key, check


def _wide_tokens(wide: NDArray[np.uint32], by_script: bool) -> Spans:
    """The tokens of any text, given as its UTF-32 code units (the words of scripts without
    spaces as pairs of letters, with ``by_script``)."""
    start, stop = _bigrams(*_script_words(wide)) if by_script else _runs(_is_word(wide))
    return start, stop, *_token_keys(wide, start, stop - start)


def _tokens_by_kind(
    read: _Narrowed,
    narrow: NDArray[np.bool_],
    lengths: NDArray[np.int64],
    text_starts: NDArray[np.int64],
    by_script: bool,
) -> Spans:
    """The tokens of a batch whose texts are of both kinds (``read``, each text's
    reading): the texts read narrow joined, the texts read wide joined, their spans moved to
    the whole batch's text."""
    parts: list[Spans] = []
    for chosen in (np.flatnonzero(narrow), np.flatnonzero(~narrow)):
        if narrow[chosen[0]]:
            encoded = _joined([read.units[i] for i in chosen.tolist()])
            above = _placed([read.above[i] for i in chosen.tolist()], lengths[chosen])
            apart = _placed([read.apart[i] for i in chosen.tolist()], lengths[chosen])
            start, stop, key, check = _narrow_tokens(encoded, above, apart)
        else:
            joined = _joined_wide([read.wide[i] for i in chosen.tolist()])
            start, stop, key, check = _wide_tokens(joined, by_script)
        sizes = lengths[chosen] + 1
        starts_here = np.cumsum(sizes) - sizes
        which = np.searchsorted(starts_here, start, side="right") - 1
        shift = text_starts[chosen][which] - starts_here[which]
        parts.append((start + shift, stop + shift, key, check))
    columns = [np.concatenate([part[i] for part in parts]) for i in range(4)]
    order = np.argsort(columns[0], kind="stable")  # two sorted runs: merged in linear time
    start, stop, key, check = (column[order] for column in columns)
    return start, stop, key, check


def _runs(word: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(start, stop) of the maximal runs of True."""
    # A token starts where a word character follows a non-word one, and stops where one ends.
    edges = np.flatnonzero(np.diff(word, prepend=False, append=False))
    return edges[0::2], edges[1::2]


def _script_words(
    codes: NDArray[np.uint32],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """(start, stop, letter) of the words of :mod:`~simhash_cli.core.text.scripts`: runs of one
    class of word character, each letter that is a word by itself alone (``letter``), marks
    with what they follow."""
    kind = scripts.classes(codes)
    if not np.any(kind > scripts.WORD):  # no letter of those scripts, no mark: runs of \w
        start, stop = _runs(kind == scripts.WORD)
        return start, stop, np.zeros(start.size, dtype=bool)
    # A run of marks takes the class of the character before it (none, at the start).
    mark = kind == scripts.MARK
    owner = kind
    if mark.any():
        first, last = _runs(mark)
        before = kind[np.maximum(first - 1, 0)]
        before[first == 0] = scripts.OTHER
        owner = kind.copy()
        owner[mark] = np.repeat(before, last - first)
    in_word = owner != scripts.OTHER
    previous = np.concatenate(([scripts.OTHER], owner[:-1]))
    starts_here = in_word & ~mark & ((previous != owner) | (owner == scripts.SOLO))
    start = np.flatnonzero(starts_here)
    # Every character in a word is in the one that started last, so the words follow one
    # another: each stops where the next starts, or where a character outside words follows.
    stops_here = np.append(starts_here | ~in_word, True)
    stops_here[1:] &= in_word
    stops_here[0] = False
    stop = np.flatnonzero(stops_here)
    return start, stop, owner[start] == scripts.SOLO


def _bigrams(
    start: NDArray[np.int64], stop: NDArray[np.int64], letter: NDArray[np.bool_]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Letters that are words by themselves -> each two that touch, as one token (a letter
    touching none stays itself); other words as they are. (start, stop), in order."""
    touches = letter[:-1] & letter[1:] & (stop[:-1] == start[1:])  # token k and k + 1
    paired = np.zeros(start.size, dtype=bool)
    paired[:-1] |= touches
    paired[1:] |= touches
    # Token k begins a bigram when it touches the next; it stays a token of its own when it is
    # not a letter, or a letter touching neither neighbour.
    first = np.flatnonzero(np.append(touches, False))
    alone = np.flatnonzero(~paired)
    starts = np.concatenate((start[first], start[alone]))
    stops = np.concatenate((stop[first + 1], stop[alone]))
    order = np.argsort(starts, kind="stable")
    return starts[order], stops[order]


def _token_keys(
    wide: NDArray[np.uint32], start: NDArray[np.int64], length: NDArray[np.int64]
) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """A 64-bit key and a check for every token of a text read as UTF-32, eight bytes at a
    time.

    A token whose code points are all below U+0100 is read as its Latin-1 bytes, any other as
    its UTF-32 code units, so that a word gets the same key here as in a text read narrow
    (:func:`_narrow_tokens`). A Latin-1 token of at most eight characters is its own key
    (its bytes through a bijective mix; no word character is NUL, so the bytes determine the
    token): no two of them ever share a key, and their check is 0. Longer or wider tokens are
    hashed chunk by chunk, with a second, independent hash (never 0) as their check.
    """
    key = np.empty(start.size, dtype=np.uint64)
    check = np.empty(start.size, dtype=np.uint64)
    if start.size:
        # A token is Latin-1 when the first code point above U+00FF at or after its start
        # is at or after its stop.
        high = np.flatnonzero(wide > 0xFF)
        after = np.searchsorted(high, start)
        latin = np.append(high, len(wide))[after] >= start + length
        chosen = np.flatnonzero(latin)
        narrow = wide.astype(np.uint8)  # meaningful for the Latin-1 tokens only
        key[chosen], check[chosen] = _chunk_hashes(narrow, 1, start[chosen], length[chosen], _SEED)
        # The others read from their own code units alone, not from a copy of the whole text.
        chosen = np.flatnonzero(~latin)
        lengths = length[chosen]
        offsets = np.cumsum(lengths) - lengths
        units = wide[np.repeat(start[chosen] - offsets, lengths) + np.arange(lengths.sum())]
        key[chosen], check[chosen] = _chunk_hashes(units, 4, offsets, lengths, _WIDE_SEED)
    return key, check


def _chunk_hashes(
    units: NDArray[np.uint8] | NDArray[np.uint32],
    unit_bytes: int,
    start: NDArray[np.int64],
    length: NDArray[np.int64],
    seed: np.uint64,
) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """(key, check) of tokens ``units[start : start + length]``, eight bytes per step."""
    # Every unit offset, read as the little-endian uint64 of the eight bytes starting there.
    raw = np.zeros(units.nbytes + 8, dtype=np.uint8)
    raw[: units.nbytes] = units.view(np.uint8)
    words = np.ndarray((units.size,), dtype="<u8", buffer=raw, strides=(unit_bytes,))
    size = length if unit_bytes == 1 else length * unit_bytes
    first = words[start] & _BYTE_MASKS[np.minimum(size, 8)]
    # (x ^ c) * odd and x ^ (x >> 29) are bijections, so a single chunk is kept whole.
    key = _mix(seed ^ first)
    check = np.zeros(start.size, dtype=np.uint64)
    # The rest, for the few tokens longer than eight bytes (all tokens, for wide units, so
    # that every wide token gets a non-zero check).
    rest = np.flatnonzero(size > 8) if unit_bytes == 1 else np.arange(start.size)
    hashed, running = key[rest], (first[rest] + np.uint64(1)) * _CHECK_MULTIPLY
    alive, left = np.arange(rest.size), size[rest] - 8
    step = 1
    while True:
        more = left > 0
        alive, left = alive[more], left[more]
        if not alive.size:
            break
        chunk = words[start[rest[alive]] + step * (8 // unit_bytes)]
        chunk &= _BYTE_MASKS[np.minimum(left, 8)]
        hashed[alive] = _mix(hashed[alive] ^ chunk)
        running[alive] = (running[alive] + chunk + np.uint64(1)) * _CHECK_MULTIPLY
        left -= 8
        step += 1
    key[rest] = hashed
    check[rest] = (running ^ size[rest].astype(np.uint64)) | np.uint64(1)
    return key, check


def _mix(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """A bijection of 64-bit values that spreads every input bit over the high bits."""
    mixed: NDArray[np.uint64] = values * _MULTIPLY
    mixed ^= mixed >> np.uint64(29)
    return mixed
