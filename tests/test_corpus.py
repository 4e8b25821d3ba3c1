"""Corpus: listing, decoding and the skip policy; JSON Lines readers."""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path

import pytest

from simhash_cli import InputError, PathNotFoundError
from simhash_cli.core.events import Event, OnEvent, Skipped, Stamp, Warned
from simhash_cli.errors import TooLarge
from simhash_cli.io.opening import open_descriptor
from simhash_cli.io.sources import files as files_module
from simhash_cli.io.sources.files import (
    READ_CHUNK,
    SNIFF_BYTES,
    STDIN,
    _read_bytes,
    decode_text,
    list_files,
    read_documents,
)
from simhash_cli.io.sources.fingerprints import read_fingerprints
from simhash_cli.io.sources.records import open_text, read_vectors

TEXT = "Grüße, 世界 😀 — a test"


@pytest.mark.parametrize(
    "encoding",
    ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"],
)
def test_byte_order_marks_decide_the_encoding(encoding: str) -> None:
    raw = TEXT.encode(encoding)
    if not raw.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        bom = {
            "utf-16-le": "\ufeff",
            "utf-16-be": "\ufeff",
            "utf-32-le": "\ufeff",
            "utf-32-be": "\ufeff",
        }[encoding]
        raw = (bom + TEXT).encode(encoding)
    assert decode_text(raw) == (TEXT, False)


def test_plain_utf8_nul_bytes_and_replacement() -> None:
    assert decode_text(TEXT.encode()) == (TEXT, False)
    assert decode_text(b"abc\x00def") is None
    assert decode_text("utf-16 without bom".encode("utf-16-le")) is None
    assert decode_text(b"caf\xe9 ok") == ("caf\ufffd ok", True)
    assert decode_text(b"") == ("", False)


def collect() -> tuple[list[Event], OnEvent]:
    events: list[Event] = []
    return events, events.append


def test_directories_are_listed_recursively_in_sorted_order(tmp_path: Path) -> None:
    for name in ["b/z.txt", "b/a.txt", "a.txt", "c/d/e.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    events, on_event = collect()
    root = str(tmp_path)
    assert list_files([root], on_event) == [
        f"{root}/a.txt",
        f"{root}/b/a.txt",
        f"{root}/b/z.txt",
        f"{root}/c/d/e.txt",
    ]
    assert events == []


def test_the_same_file_is_listed_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    os.link(tmp_path / "a.txt", tmp_path / "hard.txt")
    events, on_event = collect()
    root = str(tmp_path)
    files = list_files([root, f"{root}/a.txt"], on_event)
    assert files == [f"{root}/a.txt"]
    assert events == [
        Skipped(f"{root}/hard.txt", f"same file as {root}/a.txt"),
        Skipped(f"{root}/a.txt", f"same file as {root}/a.txt"),
    ]


def test_fifos_inside_directories_are_skipped_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "ok.txt").write_text("fine")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    events, on_event = collect()
    assert list_files([str(tmp_path)], on_event) == [f"{tmp_path}/ok.txt"]
    assert Skipped(f"{tmp_path}/pipe", "not a regular file") in events
    dangling = f"dangling symbolic link (to {tmp_path / 'missing'})"
    assert Skipped(f"{tmp_path}/dangling", dangling) in events


def test_missing_paths_fail_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(PathNotFoundError, match=r"no such file or directory: .*nope"):
        list_files([str(tmp_path), str(tmp_path / "nope")], lambda event: None)
    with pytest.raises(PathNotFoundError, match="only once"):
        list_files(["-", "-"], lambda event: None)


def test_read_documents_skips_and_warns(messy_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (messy_dir / "secret.txt").write_text("top secret")
    real = _read_bytes

    def guarded(path: str, max_bytes: int | None) -> tuple[bytes, Stamp]:
        if path.endswith("secret.txt"):
            raise PermissionError(13, "Permission denied", path)
        return real(path, max_bytes)

    monkeypatch.setattr(files_module, "_read_bytes", guarded)
    events, on_event = collect()
    reads: list[None] = []
    files = list_files([str(messy_dir)], on_event)
    docs = list(read_documents(files, on_event, on_read=lambda: reads.append(None)))
    names = [Path(d.id).name for d in docs]
    assert names == ["a.txt", "b.txt", "blank.txt", "c.txt", "empty.txt", "latin1.txt"]
    assert len(reads) == len(files)
    assert Skipped(f"{messy_dir}/image.png", "binary (NUL bytes, no byte-order mark)") in events
    assert Skipped(f"{messy_dir}/secret.txt", "unreadable: Permission denied") in events
    assert (
        Warned(f"{messy_dir}/latin1.txt", "bytes that are not valid text were replaced") in events
    )


def test_a_file_is_read_whole_from_its_descriptor_whatever_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular file is read by the descriptor's own reads, as a file object reads it: small,
    past the first 8 KiB, past a read's chunk, grown since it was opened, and over the limit."""
    for size in (0, 5, SNIFF_BYTES - 1, SNIFF_BYTES, SNIFF_BYTES + 1, 3 * READ_CHUNK + 7):
        data = bytes(range(97, 123)) * (size // 26) + b"z" * (size % 26)
        (tmp_path / "f").write_bytes(data)
        assert _read_bytes(str(tmp_path / "f"), None)[0] == data
        assert _read_bytes(str(tmp_path / "f"), size)[0] == data
        if size > 0:
            with pytest.raises(TooLarge):
                _read_bytes(str(tmp_path / "f"), size - 1)
    # A file that grew after it was opened (its size as opened is 10): read to its end.
    grown = b"x" * (2 * READ_CHUNK)
    (tmp_path / "g").write_bytes(grown)

    def opened_small(path: str, **options: bool) -> tuple[int, os.stat_result]:
        descriptor, info = open_descriptor(path, **options)
        fields = list(info)
        fields[stat.ST_SIZE] = 10
        return descriptor, os.stat_result(fields)

    monkeypatch.setattr(files_module, "open_descriptor", opened_small)
    assert _read_bytes(str(tmp_path / "g"), None)[0] == grown
    with pytest.raises(TooLarge):
        _read_bytes(str(tmp_path / "g"), READ_CHUNK)


def write(path: Path, text: str) -> str:
    path.write_bytes(text.encode("utf-8"))
    return str(path)


def test_vectors_accept_bom_crlf_blank_lines_and_default_ids(tmp_path: Path) -> None:
    source = write(
        tmp_path / "v.jsonl",
        '\ufeff{"id": "u1", "features": {"jazz": 3, "9": 0.5}}\r\n'
        '\r\n{"features": {}}\n{"id": 7, "features": {"x": -1e-3}}',
    )
    records = list(read_vectors(source))
    assert [r.id for r in records] == ["u1", f"{source}:3", "7"]
    assert records[0].features == {"jazz": 3.0, "9": 0.5}
    assert records[1].features == {}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": 1, "features": {"a": NaN}}', r"v.jsonl:2: invalid JSON: NaN is not a number"),
        ('{"id": 1, "features": {"a": Infinity}}', r"v.jsonl:2: invalid JSON: Infinity"),
        ('{"id": 1, "features": {"a": 1e400}}', r"v.jsonl:2: weight of 'a' is not finite: inf"),
        (
            '{"id": 1, "features": {"a": 1' + "0" * 400 + "}}",
            r"v.jsonl:2: weight of 'a' is not finite",
        ),
        ('{"id": 1, "features": {"a": "3"}}', r"v.jsonl:2: weight of 'a' must be a number"),
        ('{"id": 1, "features": {"a": true}}', r"v.jsonl:2: weight of 'a' must be a number"),
        ('{"id": 1, "features": [1, 2]}', r"v.jsonl:2: expected \{\"id\""),
        ('{"id": [1], "features": {}}', r"v.jsonl:2: \"id\" must be a string or an integer"),
        ('{"id": 1, "features": {"a": 1}', r"v.jsonl:2: invalid JSON"),
        ("[" * 100_000, r"v.jsonl:2: invalid JSON"),
    ],
)
def test_bad_vector_lines_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    source = write(tmp_path / "v.jsonl", '{"id": 0, "features": {"ok": 1}}\n' + line + "\n")
    with pytest.raises(InputError, match=message):
        list(read_vectors(source))


def test_vectors_that_are_not_utf8(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    source.write_bytes(b'{"id": 1, "features": {"caf\xe9": 1}}\n')
    with pytest.raises(InputError, match=r"v\.jsonl:1: not UTF-8"):
        list(read_vectors(str(source)))


def test_lone_surrogate_keys_survive(tmp_path: Path) -> None:
    source = write(tmp_path / "v.jsonl", '{"id": "s", "features": {"\\ud800x": 1}}\n')
    assert next(iter(read_vectors(source))).features == {"\ud800x": 1.0}


def test_missing_vectors_file(tmp_path: Path) -> None:
    with pytest.raises(PathNotFoundError, match="no such file or directory"):
        list(read_vectors(str(tmp_path / "nope.jsonl")))


def test_fingerprint_records(tmp_path: Path) -> None:
    good = (
        '{"id": "a", "fingerprint": "00000000000000ff", "bits": 64, "seed": 1, '
        '"features": 3, "tokenizer": "word", "weighting": "tf"}\n'
    )
    records = list(read_fingerprints(write(tmp_path / "f.jsonl", good)))
    assert records[0].fingerprint == 255 and records[0].settings.bits == 64
    with pytest.raises(InputError, match=r"f\.jsonl:1: not a fingerprint record"):
        list(read_fingerprints(write(tmp_path / "f.jsonl", '{"id": "a"}\n')))
    with pytest.raises(InputError, match=r"f\.jsonl:1: fingerprint '00ff' is not 16 hex digits"):
        list(
            read_fingerprints(write(tmp_path / "f.jsonl", good.replace("00000000000000ff", "00ff")))
        )
    with pytest.raises(InputError, match=r"f\.jsonl:1: bits must be a multiple of 8"):
        list(
            read_fingerprints(write(tmp_path / "f.jsonl", good.replace('"bits": 64', '"bits": 63')))
        )


def test_standard_input_read_unfinished_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reading of stdin stopped half-way and closed later (a generator collected after its
    run) finds stdin closed already: nothing to detach, and no error then."""
    stdin = io.TextIOWrapper(io.BytesIO(b'{"id": 1}\n{"id": 2}\n'), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    reading = open_text(STDIN)
    handle = reading.__enter__()
    assert handle.readline() == '{"id": 1}\n'
    stdin.buffer.close()
    assert reading.__exit__(None, None, None) is False
