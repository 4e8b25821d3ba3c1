"""Every command prints the bytes it printed before the package was reorganised (see golden.py)."""

from __future__ import annotations

import json

from golden import DIGESTS, digests


def test_every_command_prints_the_recorded_bytes() -> None:
    recorded = json.loads(DIGESTS.read_text(encoding="utf-8"))
    now = digests()
    assert list(now) == list(recorded), "the cases changed: re-record with tests/golden.py --write"
    changed = [line for line in recorded if now[line] != recorded[line]]
    assert changed == [], f"{len(changed)} of {len(recorded)} outputs changed: {changed[:5]}"
