"""The vocabulary of a count: each word's 64-bit key (:mod:`~simhash_cli.core.text.words`) to a
provisional id, numbered as the words first occur, in a hash table run in numpy array rounds
(:class:`WordTable`). :mod:`~simhash_cli.core.text.vectorize` counts by these ids."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ...errors import KeyCollision
from .words import WordTokens

__all__ = ["TOKENS_AT_ONCE", "WordTable"]

TOKENS_AT_ONCE = 1 << 16
"""Tokens found or placed in one pass of the table's rounds."""

_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / the golden ratio, odd


class WordTable:
    """Word key -> provisional id: open addressing with linear probing, in array rounds.

    Every key starts at its home slot (:meth:`_home`) and, when that slot holds another word,
    goes on to the next. Lookups and insertions are one walk for a whole batch of tokens at
    once, one round per probe step, each round over only the tokens still searching (after the
    first round, a few percent of them), so there is no Python step per token, no dict and no
    sort. Slots are never emptied, so a key is always found before the first free slot after
    its home. The table doubles (every word placed again) before it could be half full: 24
    bytes a slot, 48 to 96 bytes per distinct word.
    """

    INITIAL_BITS = 16

    def __init__(self) -> None:
        self._allocate(1 << self.INITIAL_BITS)
        self.count = 0

    def _allocate(self, size: int) -> None:
        self.mask = np.uint64(size - 1)
        self.shift = np.uint64(64 - (size.bit_length() - 1))
        self.slot_id = np.full(size, -1, dtype=np.int32)
        self.slot_key = np.zeros(size, dtype=np.uint64)
        self.slot_check = np.zeros(size, dtype=np.uint64)
        self.slot_claim = np.zeros(size, dtype=np.int32)  # scratch: who claims a free slot

    def ids(self, tokens: WordTokens, names: list[str]) -> NDArray[np.int64]:
        """Ids of every token; new words are named (appended to ``names``) and get new ids,
        numbered in the order they first occur. Found or placed :data:`TOKENS_AT_ONCE`
        tokens at a time, the table grown first so that it stays at most half full even if
        they are all new words.

        Raises:
            KeyCollision: two different words share a key. The words named so far keep their
                ids (the caller may go on counting by name from there).
        """
        ids = np.empty(tokens.key.size, dtype=np.int64)
        for lo in range(0, tokens.key.size, TOKENS_AT_ONCE):
            part = slice(lo, lo + TOKENS_AT_ONCE)
            self._grow(self.count + min(TOKENS_AT_ONCE, tokens.key.size - lo))
            ids[part] = self._resolve(tokens, part, names)
        return ids

    def _resolve(self, tokens: WordTokens, part: slice, names: list[str]) -> NDArray[np.int64]:
        """Find or place every token of ``part`` in rounds of probes: a token whose slot holds
        its word takes its id; one whose slot holds another word moves on; the tokens that
        reach a free slot claim it, and the one whose claim stays places its word there, under
        a provisional mark that its own word's other tokens find in the next round. No sort:
        each token costs a few probes. The new words' ids follow their first occurrence."""
        key, check = tokens.key[part], tokens.check[part]
        slot = self._home(key)
        # The first probe of every token, over whole arrays: most find their word there. The
        # others go on in rounds from their home (a free one is claimed there in the first).
        held = self.slot_id[slot]
        same = self.slot_key[slot] == key
        same &= held != -1
        if np.any(self.slot_check[slot][same] != check[same]):
            raise KeyCollision("two different words share a 64-bit key")
        ids = held.astype(np.int64)
        going = np.flatnonzero(~same)
        placed: list[NDArray[np.intp]] = []  # the positions that placed a new word, by mark
        new = 0
        while going.size:
            at = slot[going]
            held = self.slot_id[at].astype(np.int64)
            free = held == -1
            same = ~free & (self.slot_key[at] == key[going])
            if np.any(same & (self.slot_check[at] != check[going])):
                raise KeyCollision("two different words share a 64-bit key")
            ids[going[same]] = held[same]  # an id, or the mark of a word placed this call
            moving = ~free & ~same
            slot[going[moving]] = (at[moving] + 1) & int(self.mask)
            claimants, claimed = going[free], at[free]
            self.slot_claim[claimed] = claimants
            won = self.slot_claim[claimed] == claimants
            takers, taken = claimants[won], claimed[won]
            marks = -2 - np.arange(new, new + takers.size)
            self.slot_id[taken] = marks
            self.slot_key[taken] = key[takers]
            self.slot_check[taken] = check[takers]
            ids[takers] = marks
            placed.append(takers)
            new += takers.size
            stay = ~same
            stay[np.flatnonzero(free)[won]] = False
            going = going[stay]  # moved on, or lost a claim: the slot is looked at again
        if new == 0:
            return ids
        # Marks -> ids numbered by first occurrence: the vocabulary reads as the text does.
        fresh = ids < 0
        mark = -2 - ids[fresh]
        first = np.full(new, key.size, dtype=np.int64)
        np.minimum.at(first, mark, np.flatnonzero(fresh))
        order = np.argsort(first)
        number = np.empty(new, dtype=np.int64)
        number[order] = np.arange(len(names), len(names) + new)
        self.slot_id[slot[np.concatenate(placed)]] = number
        ids[fresh] = number[mark]
        self._name(tokens, part.start + first[order], names)
        self.count += new
        return ids

    def _insert(
        self, keys: NDArray[np.uint64], checks: NDArray[np.uint64], ids: NDArray[np.int64]
    ) -> None:
        """Place new, distinct keys: each takes the first free slot from its home on. Where
        several reach one free slot in a round, each writes a claim into it and the one whose
        claim stays takes it (claims are -2 - position: below -1, so never an id or free)."""
        slot = self._home(keys)
        placing = np.arange(keys.size)
        while placing.size:
            at = slot[placing]
            free = self.slot_id[at] < 0
            claimants, claimed = placing[free], at[free]
            self.slot_id[claimed] = -2 - claimants
            takers = claimants[self.slot_id[claimed] == -2 - claimants]
            self.slot_id[slot[takers]] = ids[takers]
            self.slot_key[slot[takers]] = keys[takers]
            self.slot_check[slot[takers]] = checks[takers]
            placed = np.zeros(keys.size, dtype=bool)
            placed[takers] = True
            placing = placing[~placed[placing]]  # their slot is taken now: the next one
            slot[placing] = (slot[placing] + 1) & int(self.mask)

    def _home(self, keys: NDArray[np.uint64]) -> NDArray[np.int64]:
        """Each key's home slot: the top bits of the key times 2**64 / phi, which depend on
        all of its bits. A key is itself a product (:mod:`~simhash_cli.core.text.words`), and the
        low bits of a product depend only on the low bits of what was multiplied: taken as the
        slot, they would give every word that differs only in its seventh or eighth letter one
        home, and each word's probes would walk the run of the others."""
        home: NDArray[np.uint64] = keys * _FIBONACCI
        home >>= self.shift
        return home.view(np.int64)

    def _grow(self, words: int) -> None:
        """Room for ``words`` words at most half full: every known word placed again."""
        size = self.slot_id.size
        if 2 * words <= size:
            return
        while 2 * words > size:
            size *= 2
        used = np.flatnonzero(self.slot_id >= 0)
        keys, checks = self.slot_key[used], self.slot_check[used]
        ids = self.slot_id[used].astype(np.int64)
        self._allocate(size)
        self._insert(keys, checks, ids)

    @staticmethod
    def _name(tokens: WordTokens, occurrences: NDArray[np.int64], names: list[str]) -> None:
        """Append the text of the tokens at ``occurrences`` to ``names``."""
        spans = zip(
            tokens.start[occurrences].tolist(), tokens.stop[occurrences].tolist(), strict=True
        )
        names.extend(tokens.text[a:b] for a, b in spans)
