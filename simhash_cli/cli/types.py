"""The values click parses that no builtin type names: sizes (``64M``), ``--blocks``
(``auto``, ``every`` or a number) and ``--bands`` (``BANDSxROWS``), and a choice whose absence
is told in one line. Each refuses a bad value with click's own usage error, naming the option.
"""

from __future__ import annotations

from typing import Any, ClassVar

import click

from ..core.config import MAX_BITS, MAX_SLOTS

__all__ = ["BANDS", "BLOCKS", "COSINE", "ByteSize", "Choices", "Cosine"]


class ByteSize(click.ParamType):  # type: ignore[type-arg]
    """A number of bytes: 1000000, 500K, 64M, 2G (powers of 1024); 0 for no limit."""

    name = "size"
    _UNITS: ClassVar[dict[str, int]] = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    LARGEST: ClassVar[int] = 1 << 60
    """A size beyond which a bound means nothing (and would not fit the reads it bounds)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip().upper().removesuffix("B")
        unit = text[-1:] if text[-1:] in self._UNITS else ""
        number = text[: len(text) - len(unit)]
        if not (number.isascii() and number.isdigit()):
            self.fail(f"{value!r} is not a size like 1000000, 500K, 64M or 2G", param, ctx)
        size = int(number) * self._UNITS[unit]
        if size > self.LARGEST:
            self.fail(
                f"{value!r} is more than any file holds (at most {self.LARGEST >> 30:,}G); "
                "0 for no limit",
                param,
                ctx,
            )
        return size


class Cosine(click.FloatRange):
    """A cosine, from -1 to 1: a value outside is told what a threshold is (``--threshold
    90`` said only that 90.0 is not in the range -1.0<=x<=1.0), a percentage its share."""

    name = "cosine"

    def __init__(self) -> None:
        super().__init__(-1.0, 1.0)

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        number = click.FLOAT.convert(value, param, ctx)
        if -1.0 <= number <= 1.0:
            return float(number)
        hint = f" ({number / 100:g} for {number:g}%?)" if 10.0 <= number <= 100.0 else ""
        self.fail(
            f"{value!r} is not a cosine: a threshold is a cosine from -1 to 1, like 0.9{hint}",
            param,
            ctx,
        )


COSINE = Cosine()


class BlocksType(click.ParamType):  # type: ignore[type-arg]
    """``auto``, ``every`` or a whole number of blocks."""

    name = "auto|every|N"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | str:
        if value in ("auto", "every"):
            return str(value)
        if isinstance(value, int):
            return value
        try:
            number = int(value)
        except ValueError:
            self.fail(f"{value!r} is not 'auto', 'every' nor a whole number", param, ctx)
        if not 1 <= number <= MAX_BITS:
            self.fail(f"{number} is not from 1 to {MAX_BITS}", param, ctx)
        return number


BLOCKS = BlocksType()


class BandsType(click.ParamType):  # type: ignore[type-arg]
    """``BANDSxROWS``: MinHash bands of ROWS bins each, at most MAX_SLOTS bins in all."""

    name = "BANDSxROWS"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        bands, x, rows = str(value).lower().partition("x")
        if not (x and bands.isdigit() and rows.isdigit()):
            self.fail(f"{value!r} is not BANDSxROWS (for example 16x8)", param, ctx)
        pair = (int(bands), int(rows))
        if min(pair) < 1 or pair[0] * pair[1] > MAX_SLOTS:
            self.fail(
                f"{value!r}: bands and rows from 1, at most {MAX_SLOTS} bins in all", param, ctx
            )
        return pair


BANDS = BandsType()


class Choices(click.Choice):  # type: ignore[type-arg]
    """A choice that, when it is required and missing, names its choices in one line
    (click's own lists them a line each, tab-indented)."""

    def get_missing_message(self, param: click.Parameter, ctx: click.Context | None) -> str:
        names = [str(choice) for choice in self.choices]
        return "Choose " + ", ".join(names[:-1]) + f" or {names[-1]}."
