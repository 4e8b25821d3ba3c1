"""``dedupe --report FILE``: the report model (:mod:`simhash_cli.app.dedupe.report`) as one
self-contained HTML page.

Nothing is fetched: the style, the script, the charts (SVG drawn here) and the data are all in
the file, so that it opens on a machine without a network. Names and texts are hostile input:
the template escapes every value it writes (jinja2's autoescape), the data travels as JSON in a
``<script type="application/json">`` whose ``<``, ``>`` and ``&`` are written as ``\\u`` escapes,
and the page's script puts text in the page only as text (``textContent``), never as markup.
A Content-Security-Policy allows no script but the page's own (by its hash), and no request.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib import resources
from typing import Any

from ...errors import ParameterError

__all__ = ["MISSING_JINJA2", "check_report_engine", "render_report"]

MISSING_JINJA2 = "{report} needs jinja2: pip install 'simhash-cli[report]'"

WIDTH, HEIGHT, MARGIN = 560, 220, 36


def check_report_engine() -> None:
    """Raises: ParameterError: jinja2 is not installed (before any work is done)."""
    try:
        import jinja2  # noqa: F401
    except ImportError as exc:
        raise ParameterError(MISSING_JINJA2, parameters=("report",)) from exc


def _json_for_script(value: Any) -> str:
    """JSON that a ``<script>`` element holds as data whatever its strings say: no ``</``,
    ``<!--`` or ``]]>`` can end or bend it."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for char, escape in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text


def _x(value: float) -> float:
    return round(MARGIN + value * (WIDTH - 2 * MARGIN), 2)


def _y(share: float) -> float:
    return round(HEIGHT - MARGIN - share * (HEIGHT - 2 * MARGIN), 2)


def _histogram(model: dict[str, Any]) -> dict[str, Any]:
    """Bars of the flagged pairs' and the chance pairs' cosines, each as a share of its own
    total (so that 4,000 chance pairs and 40 flagged ones are both seen), in SVG units."""
    histogram = model["histogram"]
    edges = histogram["edges"]
    series = []
    for name, counts, offset in (
        ("flagged", histogram["flagged"], 0.0),
        ("chance", histogram["chance"], 0.5),
    ):
        if not counts or not sum(counts):
            continue
        total = sum(counts)
        tallest = max(counts) / total
        bars = []
        for k, count in enumerate(counts):
            if not count:
                continue
            left, right = _x(edges[k]), _x(edges[k + 1])
            width = (right - left) / 2
            top = _y(count / total / tallest)
            bars.append(
                {
                    "x": round(left + offset * (right - left), 2),
                    "y": top,
                    "width": round(width, 2),
                    "height": round(_y(0) - top, 2),
                    "title": f"{edges[k]:.2f}-{edges[k + 1]:.2f}: {count:,} {name} pairs",
                }
            )
        series.append({"name": name, "total": total, "bars": bars})
    return {"series": series, "threshold": _x(model["threshold"]), "ticks": _ticks()}


def _curve(model: dict[str, Any]) -> dict[str, Any]:
    """The S-curve as an SVG polyline, with the threshold and the probability there."""
    curve = model["curve"]
    points = " ".join(
        f"{_x(c)},{_y(p)}" for c, p in zip(curve["cosine"], curve["probability"], strict=True)
    )
    return {"points": points, "threshold": _x(model["threshold"]), "ticks": _ticks()}


def _ticks() -> list[dict[str, Any]]:
    return [{"x": _x(k / 10), "label": f"{k / 10:.1f}"} for k in range(11)]


def render_report(model: dict[str, Any], title: str) -> str:
    """The page, as text (UTF-8 when written)."""
    import jinja2
    import markupsafe  # jinja2's own

    template_text = (
        resources.files("simhash_cli.io.sinks").joinpath("report.html.j2").read_text("utf-8")
    )
    script = resources.files("simhash_cli.io.sinks").joinpath("report.js").read_text("utf-8")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = environment.from_string(template_text)
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return template.render(
        title=title,
        model=model,
        summary=model["summary"],
        histogram=_histogram(model),
        curve=_curve(model),
        width=WIDTH,
        height=HEIGHT,
        margin=MARGIN,
        data=markupsafe.Markup(_json_for_script(model)),
        script=markupsafe.Markup(script),
        script_hash=digest,
    )
