"""Names and texts from the user, made safe to show to a person on a terminal.

A file name or record id can hold any character: an escape sequence that clears the screen or
retitles the window, a carriage return that overwrites the line, a newline that splits a table
row, a right-to-left override that shows ``exe.txt`` for ``txt.exe``. Wherever such a name is
printed for a person (tables, warnings, summaries, errors), each character that is not
printable is written as a visible escape (``\\x1b``, ``\\n``, ``\\u202e``), and a byte that was
not valid UTF-8 as ``\\xNN``. Data formats (JSON, JSON Lines, CSV) keep names exact, escaped
only as their own syntax requires.
"""

from __future__ import annotations

__all__ = ["visible"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that did not decode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every character that is not printable (controls, line and paragraph
    separators, format characters such as bidirectional overrides, undecodable bytes) written
    as a visible escape; a space stays a space."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char == " " else _escape(char) for char in text)
