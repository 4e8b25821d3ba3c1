"""Where a record's fields are: ``--text-field`` and ``--id-field``, paths into nested JSON
written as jq writes them (``.meta.id``, ``meta.id``, ``.sections[0].body``, ``."a.b"``,
``.["a.b"]``), and the same paths into a Parquet row (a struct column is a nested object, a list
column a list).

Several text fields are joined, in the order given, by a newline: a record whose fields are
``title`` and ``body`` is read as its title, a line end, and its body. Among several, a field
that is missing or null is left out; a record none of whose text fields holds a string is
malformed, as is one whose only text field is missing.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from ...errors import BadValueError

__all__ = ["DEFAULT_FIELDS", "MISSING", "FieldPath", "Fields"]

MISSING: Any = object()
"""What :meth:`FieldPath.get` gives where the path leads nowhere."""

# One step of a path: .name, ."quoted name", [N] or ["quoted name"].
_STEP = re.compile(
    r"""\.?(?P<name>[^.\["\]\s]+)"""
    r"""|\.?"(?P<quoted>(?:[^"\\]|\\.)*)\""""
    r"""|\.?\[\s*(?P<index>-?\d+)\s*\]"""
    r"""|\.?\[\s*"(?P<key>(?:[^"\\]|\\.)*)"\s*\]"""
)


@dataclass(frozen=True)
class FieldPath:
    """A path to a value in a record: its steps, each a key of an object or an index of a
    list (negative from the end), and the text it was written as."""

    steps: tuple[str | int, ...]
    text: str

    @classmethod
    def parse(cls, text: str, parameter: str) -> FieldPath:
        """A path as jq writes it (a leading dot optional).

        Raises:
            BadValueError: not such a path, or one that starts with a list index.
        """
        steps: list[str | int] = []
        at = 0
        while at < len(text):
            step = _STEP.match(text, at)
            if step is None or (steps and step.group(0)[0] not in ".["):
                raise BadValueError(
                    f"{text!r}: not a field path (write it as jq does: text, .meta.id, "
                    '.sections[0].body, ."a.b")',
                    parameter=parameter,
                )
            if step.group("index") is not None:
                steps.append(int(step.group("index")))
            else:
                name = step.group("name")
                steps.append(name if name is not None else _unquote(step, text, parameter))
            at = step.end()
        if not steps or not isinstance(steps[0], str):
            raise BadValueError(
                f"{text!r}: a field path starts with a field's name", parameter=parameter
            )
        return cls(tuple(steps), text)

    @classmethod
    def named(cls, name: str) -> FieldPath:
        """The path of one top-level field."""
        return cls((name,), name)

    @property
    def column(self) -> str:
        """The top-level field (the Parquet column) the path starts in."""
        first = self.steps[0]
        assert isinstance(first, str)
        return first

    def get(self, record: Any) -> Any:
        """The value at this path of ``record``, or :data:`MISSING`."""
        value = record
        for step in self.steps:
            if isinstance(step, str):
                if not isinstance(value, dict) or step not in value:
                    return MISSING
            elif not isinstance(value, list) or not -len(value) <= step < len(value):
                return MISSING
            value = value[step]
        return value

    def __str__(self) -> str:
        return self.text


def _unquote(step: re.Match[str], text: str, parameter: str) -> str:
    quoted = step.group("quoted") if step.group("quoted") is not None else step.group("key")
    try:
        name: str = json.loads(f'"{quoted}"')
    except ValueError:
        raise BadValueError(f"{text!r}: a quoted name is not valid", parameter=parameter) from None
    return name


_TEXT = FieldPath.named("text")
_FEATURES = FieldPath.named("features")


@dataclass(frozen=True)
class Fields:
    """Where a record's text (``--texts``), features (``--vectors``) and id are.

    Attributes:
        text: the text fields, joined by a newline when there are several.
        id: the id field; None for ``id`` where a record has one, else its ``FILE:LINE``.
        reserved: a key no record may hold: the one ``--dropped`` and ``--annotated`` add
            (a record that has it is refused as it is read, before any output).
    """

    text: tuple[FieldPath, ...] = (_TEXT,)
    id: FieldPath | None = None
    features: FieldPath = _FEATURES
    reserved: str | None = None

    @classmethod
    def of(cls, text: tuple[str, ...] = (), id: str | None = None) -> Fields:
        """The fields named on the command line (the defaults where none is).

        Raises:
            BadValueError: a path that is not one.
        """
        paths = tuple(FieldPath.parse(one, "text_field") for one in text)
        return cls(
            text=paths or DEFAULT_FIELDS.text,
            id=None if id is None else FieldPath.parse(id, "id_field"),
        )

    @property
    def custom(self) -> bool:
        """Whether any field is not the default."""
        return dataclasses.replace(self, reserved=None) != DEFAULT_FIELDS

    def columns(self, kind: str) -> list[str]:
        """The top-level fields (Parquet columns) records of ``kind`` are read from, the id's
        last (it may be absent unless named)."""
        paths = self.text if kind == "texts" else (self.features,)
        names = list(dict.fromkeys(path.column for path in paths))
        id_column = "id" if self.id is None else self.id.column
        return names + ([id_column] if id_column not in names else [])

    def names(self, kind: str) -> dict[str, Any]:
        """The fields as a run's settings name them (``text_fields``, ``id_field``)."""
        named: dict[str, Any] = {}
        if kind == "texts":
            named["text_fields"] = [str(path) for path in self.text]
        named["id_field"] = None if self.id is None else str(self.id)
        return named

    def text_of(self, record: Any) -> str | None:
        """The record's text, its text fields joined; None when there is none to read."""
        if len(self.text) == 1:
            value = self.text[0].get(record)
            return value if isinstance(value, str) else None
        parts = [path.get(record) for path in self.text]
        if any(part not in (MISSING, None) and not isinstance(part, str) for part in parts):
            return None
        strings = [part for part in parts if isinstance(part, str)]
        return "\n".join(strings) if strings else None

    def describe_text(self) -> str:
        """What a record without a text was expected to hold."""
        if self.text == DEFAULT_FIELDS.text:
            return 'expected {"id": ..., "text": "..."}'
        if len(self.text) == 1:
            return f"no text at {self.text[0]} (--text-field): a string was expected"
        named = ", ".join(str(path) for path in self.text)
        return f"no text at {named} (--text-field): strings (or null) were expected"


DEFAULT_FIELDS = Fields()
"""``text``, ``features`` and ``id`` (a record without an id is named ``FILE:LINE``)."""
