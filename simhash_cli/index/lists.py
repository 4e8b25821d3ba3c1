"""The tables of an index: one per block of the fingerprint, each a list of packed (row,
fingerprint) entries per block value, read and written a list at a time; and the look-up that
reads, per table, the lists of every value within ``k // m`` bits of a query's block."""

from __future__ import annotations

import functools
import itertools
import json
import math
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.distinct import distinct
from ..core.search.blocking import bit_slice
from ..errors import (
    InputError,
)
from .schema import damaged, integers, unsigned

__all__ = [
    "IN_CHUNK",
    "Lists",
    "agree",
    "disagreement",
    "no_rows",
    "probe_masks",
    "rows_and_prints",
    "unique_matches",
]


class Lists:
    """The tables of an index as SQLite rows: table ``j`` (``keys{j}``) holds, under each
    value of block ``j``, the packed (row, fingerprint) entries of the documents having it.

    Attributes:
        path: the index file (for messages).
        blocks: the (start, width) bit ranges of the ``m`` blocks, one table each.
        words: 64-bit words per fingerprint.
    """

    def __init__(self, path: str, blocks: list[tuple[int, int]], words: int) -> None:
        self.path, self.blocks, self.words = path, blocks, words

    @property
    def entry(self) -> np.dtype[np.void]:
        """One document in a table's list: its row and its fingerprint (12 bytes at 64 bits)."""
        return np.dtype([("row", "<u4"), ("words", "<u8", (self.words,))])

    def keys(self, fingerprints: NDArray[np.uint64]) -> NDArray[np.int64]:
        """(n, m) each fingerprint's block values: the tables' keys."""
        if fingerprints.shape[0] == 0:
            return np.zeros((0, len(self.blocks)), np.int64)
        return np.stack(
            [bit_slice(fingerprints, start, width)[:, 0] for start, width in self.blocks],
            axis=1,
        ).astype(np.int64)

    def probes(self, max_distance: int) -> int:
        """Look-ups per query at this distance: per table, every key within k // m bits."""
        radius = max_distance // len(self.blocks)
        return sum(
            sum(math.comb(width, d) for d in range(min(radius, width) + 1))
            for _, width in self.blocks
        )

    def write(
        self,
        connection: sqlite3.Connection,
        rows: NDArray[np.int64],
        fingerprints: NDArray[np.uint64],
        current: dict[int, tuple[NDArray[np.int64], NDArray[np.void]]],
        *,
        replace: bool = True,
    ) -> None:
        """Each table's lists for the keys of ``rows``: the ``current`` entries of those keys
        (per table: keys and entries), plus the new rows; without ``replace``, into tables
        known to hold none of these keys."""
        if rows.size and int(rows.max()) >= 2**32:
            raise InputError(f"the index {self.path} has run out of row numbers")
        entry = self.entry
        added = np.zeros(rows.size, dtype=entry)
        added["row"] = rows
        added["words"] = fingerprints.reshape(rows.size, self.words)
        keys = self.keys(fingerprints.reshape(rows.size, self.words))
        for j in range(len(self.blocks)):
            old_keys, old_entries = current.get(
                j, (np.zeros(0, np.int64), np.zeros(0, dtype=entry))
            )
            all_keys = np.concatenate((old_keys, keys[:, j]))
            entries = np.concatenate((old_entries, added))
            # Keys of up to 16 bits sort as uint16: numpy's radix sort, several times faster.
            narrow = self.blocks[j][1] <= 16
            order = np.argsort(all_keys.astype(np.uint16) if narrow else all_keys, kind="stable")
            all_keys, entries = all_keys[order], entries[order]
            bounds = np.flatnonzero(np.diff(all_keys)) + 1
            starts = np.concatenate(([0], bounds)) if all_keys.size else bounds
            stops = np.concatenate((bounds, [all_keys.size])) if all_keys.size else bounds
            payload = entries.tobytes()
            size = entry.itemsize
            verb = "INSERT OR REPLACE" if replace else "INSERT"
            connection.executemany(
                f"{verb} INTO keys{j} (key, entries) VALUES (?, ?)",
                (
                    (int(all_keys[a]), payload[a * size : b * size])
                    for a, b in zip(starts.tolist(), stops.tolist(), strict=True)
                ),
            )

    def read(
        self, connection: sqlite3.Connection, j: int, keys: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.void]]:
        """Table ``j``'s entries under ``keys``: (the key of each entry, the entries)."""
        entry = self.entry
        wanted = distinct(keys).tolist()
        blobs = []
        for start in range(0, len(wanted), IN_CHUNK):
            found = connection.execute(
                f"SELECT entries FROM keys{j} WHERE key IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted[start : start + IN_CHUNK]),),
            ).fetchall()
            # The lists, joined without a Python step per entry; their keys are read back
            # from the entries' own fingerprints below.
            joined = b"".join(itertools.chain.from_iterable(found))
            if len(joined) % entry.itemsize or any(
                not isinstance(blob, bytes) or len(blob) % entry.itemsize for (blob,) in found
            ):
                raise InputError(
                    f"the index {self.path} is damaged (a list of table keys{j} is cut short); "
                    "restore it from a copy"
                )
            blobs.append(joined)
        entries = np.frombuffer(b"".join(blobs), dtype=entry)
        start, width = self.blocks[j]
        found_keys = bit_slice(entries["words"].reshape(-1, self.words), start, width)[:, 0]
        return found_keys.astype(np.int64), entries

    def change(
        self,
        connection: sqlite3.Connection,
        gone: tuple[NDArray[np.int64], NDArray[np.uint64]],
        added: tuple[NDArray[np.int64], NDArray[np.uint64]],
    ) -> None:
        """Take the ``gone`` rows (rows, their old fingerprints) out of the tables and put the
        ``added`` ones in: only the lists of their keys are read and written."""
        gone_rows, gone_prints = gone
        rows, prints = added
        if not gone_rows.size and not rows.size:
            return
        prints = prints.reshape(-1, self.words)
        affected = self.keys(np.concatenate((gone_prints.reshape(-1, self.words), prints)))
        new_keys = self.keys(prints)
        touched = np.concatenate((gone_rows, rows))
        current = {}
        for j in range(len(self.blocks)):
            old_keys, old_entries = self.read(connection, j, affected[:, j])
            keep = ~np.isin(old_entries["row"], touched)
            current[j] = (old_keys[keep], old_entries[keep])
            emptied = np.setdiff1d(affected[:, j], np.concatenate((old_keys[keep], new_keys[:, j])))
            connection.executemany(
                f"DELETE FROM keys{j} WHERE key = ?", ((k,) for k in emptied.tolist())
            )
        self.write(connection, rows, prints, current)

    def summary(self, connection: sqlite3.Connection, documents: int) -> list[dict[str, Any]]:
        """Each table: its bits, its keys, and how evenly its lists spread."""
        tables = []
        for j, (start, width) in enumerate(self.blocks):
            longest, keys = connection.execute(
                f"SELECT max(length(entries)), count(*) FROM keys{j}"
            ).fetchone()
            tables.append(
                {
                    "table": j,
                    "bits": f"{start}-{start + width - 1}",
                    "keys": keys,
                    "largest_bucket": (longest or 0) // self.entry.itemsize,
                    "mean_bucket": documents / keys if keys else 0.0,
                }
            )
        return tables

    def everything(
        self, connection: sqlite3.Connection
    ) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
        """Every (row, fingerprint) the first table lists."""
        blobs = connection.execute("SELECT entries FROM keys0").fetchall()
        data = b"".join(itertools.chain.from_iterable(blobs))
        if len(data) % self.entry.itemsize:
            raise InputError(
                f"the index {self.path} is damaged (a list of table keys0 is cut short); "
                "restore it from a copy"
            )
        entries = np.frombuffer(data, dtype=self.entry)
        words = np.ascontiguousarray(entries["words"]).reshape(-1, self.words)
        return entries["row"].astype(np.int64), words.astype(np.uint64)

    def look_up(
        self, connection: sqlite3.Connection, queries: NDArray[np.uint64], max_distance: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        radius = max_distance // len(self.blocks)
        values = self.keys(queries)
        parts: list[NDArray[np.int64]] = []
        for j, (_, width) in enumerate(self.blocks):
            masks = probe_masks(width, radius)
            # (query, probe key) for every query and every key within the radius of its block.
            probe_query = np.repeat(np.arange(queries.shape[0]), masks.size)
            probe_key = (values[:, j, None] ^ masks[None, :]).ravel()
            keys, entries = self.read(connection, j, probe_key)
            order = np.argsort(keys.astype(np.uint16) if width <= 16 else keys, kind="stable")
            keys = keys[order]
            # Each probe meets the entries of its key: a range of the sorted entries.
            low = np.searchsorted(keys, probe_key, side="left")
            count = np.searchsorted(keys, probe_key, side="right") - low
            which = np.repeat(probe_query, count)
            picked = np.repeat(low - np.cumsum(count) + count, count) + np.arange(which.size)
            # Gathered from plain arrays (the packed entries gather slowly), rows only of the
            # few entries that are close.
            met = order[picked]
            words = np.ascontiguousarray(entries["words"]).reshape(-1, self.words)
            distance = np.bitwise_count(words[met] ^ queries[which]).sum(axis=1, dtype=np.int64)
            close = distance <= max_distance
            rows = entries["row"][met[close]].astype(np.int64)
            parts.append(np.stack((which[close], rows, distance[close]), 1))
        return unique_matches(parts)


IN_CHUNK = 20_000


def agree(
    rows: NDArray[np.int64],
    fingerprints: NDArray[np.uint64],
    listed_rows: NDArray[np.int64],
    listed_prints: NDArray[np.uint64],
) -> bool:
    """Whether the documents' fingerprints (by row) are the ones a table lists for them."""
    if listed_rows.size != rows.size:
        return False
    order = np.argsort(listed_rows, kind="stable")
    return bool(
        np.array_equal(listed_rows[order], rows)
        and np.array_equal(listed_prints[order], fingerprints)
    )


def disagreement(path: str) -> InputError:
    """A fingerprint edited in one place only: the index is "damaged", not quietly wrong."""
    return damaged(path, "the fingerprints it stores and the ones its tables list disagree")


def no_rows(words: int) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
    return np.zeros(0, np.int64), np.zeros((0, words), np.uint64)


def rows_and_prints(
    index: str, located: Sequence[tuple[Any, ...]], words: int
) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
    """(rows, fingerprints) from :meth:`.store.Store.locate`'s (row, size, mtime, features,
    words)."""
    if not located:
        return no_rows(words)
    numbers = integers(index, [(row[0], *row[4:]) for row in located], 1 + words)
    return numbers[:, 0].copy(), unsigned(numbers[:, 1:])


@functools.lru_cache(maxsize=64)
def probe_masks(width: int, radius: int) -> NDArray[np.int64]:
    """Every value of ``width`` bits with at most ``radius`` bits set (read-only: shared)."""
    if width <= 20:
        values = np.arange(1 << width, dtype=np.int64)
        masks = values[np.bitwise_count(values) <= radius]
        masks.flags.writeable = False
        return masks
    masks = np.zeros(1, np.int64)
    frontier = masks
    for _ in range(min(radius, width)):
        grown = (frontier[:, None] | (np.int64(1) << np.arange(width, dtype=np.int64))).ravel()
        frontier = distinct(grown[np.bitwise_count(grown) > np.bitwise_count(frontier).max()])
        masks = np.concatenate((masks, frontier))
    masks.flags.writeable = False
    return masks


def unique_matches(
    parts: list[NDArray[np.int64]],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(query, row, distance) found through several tables, each pair once."""
    if not parts:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    found = np.concatenate(parts)
    # One code per (query, row): np.unique on rows of a 2-d array is several times slower.
    code = found[:, 0] * (int(found[:, 1].max(initial=0)) + 1) + found[:, 1]
    _, first = np.unique(code, return_index=True)
    found = found[first]
    return found[:, 0], found[:, 1], found[:, 2]
