"""A request made of typed parts from a command's options, each option named as a field of the
part that owns it (``--max-distance`` -> ``SearchRequest.max_distance``)."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["taken"]

Part = TypeVar("Part")


def taken(kind: type[Part], options: dict[str, Any]) -> Part:
    """The part ``kind`` (a dataclass) made of the ``options`` named as its fields, taken out
    of them; the fields not given keep the part's defaults."""
    names = [f.name for f in dataclasses.fields(kind)]  # type: ignore[arg-type]
    return kind(**{name: options.pop(name) for name in names if name in options})
