"""JSON Lines blocks for the dask engine: every line read once, by the block it starts in,
numbered as the file's reader numbers it, and no line held past the bound."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simhash_cli.engines.dask.blocks import blocks_of, count_lines, read_block
from simhash_cli.io.sources.records import block_lines

LINE = st.text(st.sampled_from("ab é\r"), max_size=12)


@given(
    lines=st.lists(LINE, max_size=30),
    ends=st.sampled_from(["\n", "\r\n"]),
    block_bytes=st.integers(1, 40),
    last_end=st.booleans(),
)
def test_blocks_read_every_line_once_and_number_them_as_open_does(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[str],
    ends: str,
    block_bytes: int,
    last_end: bool,
) -> None:
    path = tmp_path_factory.mktemp("blocks") / "t.jsonl"
    text = ends.join(lines) + (ends if last_end and lines else "")
    path.write_bytes((b"\xef\xbb\xbf" if text else b"") + text.encode())
    expected = list(io.StringIO(text, newline=None))
    read: list[str | None] = []
    for block in blocks_of(str(path), block_bytes):
        raw = read_block(block, None)
        decoded = block_lines(raw, block.name, len(read) + 1, first_block=block.offset == 0)
        assert count_lines(raw) == len(decoded)
        read.extend(decoded)
    assert read == expected


def test_a_long_line_is_none_and_never_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"short\n" + b"x" * 5_000_000 + b"\nafter\n")
    blocks = blocks_of(str(path), 1 << 20)
    assert len(blocks) == 5
    first = read_block(blocks[0], max_line=1_000)
    assert first == [b"short\n", None]  # the long line starts in the first block
    assert [read_block(block, 1_000) for block in blocks[1:4]] == [[], [], []]
    assert read_block(blocks[4], 1_000) == [b"after\n"]
    assert count_lines(first) == 2
