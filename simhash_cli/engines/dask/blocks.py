"""Record inputs cut into pieces for the workers: blocks of JSON Lines and Parquet row groups.

A block is the lines that start in its byte range. A worker reads it through fsspec (a local
path, or any URL fsspec opens) one line at a time, each line bounded by ``--max-bytes``, so
that no worker ever holds a longer line than the limit however the file is cut, and a block is
read again rather than kept: once to count its lines (so that every block knows the number of
its first line), once to parse them, and once more only to say where a repeated id was given.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from ...errors import InputError, PathNotFoundError
from ...io.opening import open_file
from ...io.sources import parquet
from ...io.sources.fields import Fields
from ...io.sources.records import (
    OnBadLine,
    Record,
    RecordKind,
    UniqueIds,
    block_lines,
    bounded_lines,
    parse_lines,
)
from ...io.sources.shards import (
    compression_of,
    decompressed,
    decompression_errors,
    is_sharded,
    shards_of,
)

__all__ = ["Block", "Lines", "RowGroup", "count_lines", "files_of", "read_block"]

# Bytes a line of at most ``max_line`` characters can take: four per character in UTF-8,
# and its CR LF.
_BYTES_PER_CHARACTER = 4


@dataclass(frozen=True)
class Block:
    """The lines of a JSON Lines file that start in ``[offset, offset + length)``."""

    url: str  # what the workers open: a path, or a URL fsspec opens
    name: str  # how ids and errors name the file
    offset: int
    length: int
    compression: str | None = None  # a compressed file is one block, read whole


@dataclass(frozen=True)
class Lines:
    """A block, and the number of its first line."""

    block: Block
    first_line: int

    @property
    def name(self) -> str:
        return self.block.name

    def parse(
        self,
        kind: RecordKind,
        max_line: int | None,
        on_bad_line: OnBadLine,
        unique: UniqueIds,
        fields: Fields,
    ) -> list[Record]:
        """The block's records, as the file's reader gives them (line numbers included)."""
        block = self.block
        raw = read_block(block, max_line)
        lines = block_lines(raw, block.name, self.first_line, first_block=block.offset == 0)
        return parse_lines(
            lines,
            block.name,
            self.first_line,
            kind,
            on_bad_line,
            max_line=max_line,
            unique=unique,
            fields=fields,
        )


@dataclass(frozen=True)
class RowGroup:
    """A row group of a Parquet file, and the number of its first row."""

    url: str
    name: str
    group: int
    first_row: int

    def parse(
        self,
        kind: RecordKind,
        max_line: int | None,
        on_bad_line: OnBadLine,
        unique: UniqueIds,
        fields: Fields,
    ) -> list[Record]:
        """The row group's records, as the file's reader gives them (rows numbered)."""
        return parquet.read_records(
            self.url,
            kind,
            name=self.name,
            row_group=self.group,
            first_row=self.first_row,
            on_bad_line=on_bad_line,
            unique=unique,
            fields=fields,
            max_line=max_line,
        )


def files_of(source: str) -> list[tuple[str, str, Any]]:
    """(url, name, file system) of every file ``source`` (a path, a directory or glob of
    shards, or a URL) names; a single file is named as given, as the local reader names it.

    Raises:
        PathNotFoundError: nothing there. InputError: a source fsspec cannot open.
    """
    import fsspec

    if is_sharded(source):  # listed as the local reader lists them
        local = fsspec.filesystem("file")
        return [(path, path, local) for path in shards_of(source)]
    try:
        fs, _, paths = fsspec.core.get_fs_token_paths(source)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {source}: {exc}") from None
    if not paths:
        raise PathNotFoundError(f"no such file or directory: {source}")
    urls = [fs.unstrip_protocol(path) if "://" in source else path for path in paths]
    names = [source] if len(urls) == 1 else urls
    return [(url, name, fs) for url, name in zip(urls, names, strict=True)]


def blocks_of(source: str, block_bytes: int) -> list[Block]:
    """The blocks of ``block_bytes`` of every file ``source`` names (an empty file is one
    empty block), in order.

    Raises:
        PathNotFoundError: nothing there. InputError: a file that cannot be read.
    """
    blocks = []
    for url, name, fs in files_of(source):
        try:
            size = int(fs.size(url))
        except FileNotFoundError:
            raise PathNotFoundError(f"no such file or directory: {name}") from None
        except OSError as exc:
            raise InputError(f"cannot read {name}: {exc}") from None
        compression = compression_of(url)
        if compression is not None:
            blocks.append(Block(url, name, 0, size, compression))
            continue
        for offset in range(0, max(size, 1), block_bytes):
            blocks.append(Block(url, name, offset, min(block_bytes, size - offset)))
    return blocks


def read_block(block: Block, max_line: int | None) -> list[bytes | None]:
    """The lines of ``block`` as bytes, each ending in LF (but perhaps the file's last); None
    for a line longer than ``max_line`` characters could be, passed over unread.

    Raises:
        InputError: the file cannot be read.
    """
    import fsspec

    limit = None if max_line is None else _BYTES_PER_CHARACTER * max_line + 2
    stop = block.offset + block.length if block.compression is None else None
    try:
        # A local path through the one opener (a FIFO or a device is refused, never waited on).
        opened = open_file(block.url) if "://" not in block.url else fsspec.open(block.url, "rb")
        with opened as raw, decompressed(raw, block.url) as handle:
            if block.offset:
                # The line holding the byte before the block is the previous block's.
                handle.seek(block.offset - 1)
                _read_past_newline(handle)
            return list(_lines_until(handle, stop, limit))
    except FileNotFoundError:
        raise PathNotFoundError(f"no such file or directory: {block.name}") from None
    except decompression_errors() as exc:  # OSError among them
        raise InputError(f"cannot read {block.name}: {exc}") from None


def _lines_until(handle: IO[bytes], stop: int | None, limit: int | None) -> Iterator[bytes | None]:
    lines = bounded_lines(handle, limit)
    if stop is None:  # the whole file
        yield from lines
        return
    while handle.tell() < stop:
        try:
            yield next(lines)
        except StopIteration:
            return


def _read_past_newline(handle: IO[bytes]) -> None:
    while line := handle.readline(1 << 20):
        if line.endswith(b"\n"):
            return


def count_lines(raw: list[bytes | None]) -> int:
    """Lines of a block as :func:`~simhash_cli.io.sources.records.block_lines` splits them
    (universal newlines), counted on the bytes: no UTF-8 sequence holds a CR or LF byte, and
    a line of bytes ends with its LF. A line too long to read is one line."""
    total = 0
    for line in raw:
        if line is None:
            total += 1
            continue
        ends = line.count(b"\n") + line.count(b"\r") - line.count(b"\r\n")
        total += ends + (1 if line and line[-1:] not in (b"\n", b"\r") else 0)
    return total
