"""Line charts as inline SVG: the plots of the HTML report, with no library and no link.

:func:`line_chart` draws named series of (x, y) points on linear axes with ticks,
a legend and a title; ``percentile_axis`` puts the x axis on the "nines" scale of
latency percentile plots (x = -log10(1 - p/100): 50 %, 90 %, 99 %, 99.9 %, 99.99 %
equally spaced), where the tail is as wide as the body. The result is an ``<svg>``
element (no ``xmlns``: it is meant to sit inside HTML) whose ``data-plot`` attribute
names the plot, every series a ``<polyline>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

#: Colours of the series, in order (a palette readable in print and by the colour-blind).
COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000")
WIDTH, HEIGHT = 640, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 32, 40
#: The deepest percentile the nines axis shows (p99.999).
_MAX_NINES = 5.0

Series = tuple[str, Sequence[tuple[float, float]]]


def nines(percentile: float) -> float:
    """A percentile (0-100) on the nines axis."""
    return min(_MAX_NINES, -math.log10(max(1e-5, 1 - percentile / 100)))


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        return [low]
    raw = (high - low) / count
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 5, 10) if step * m >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _label(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def line_chart(
    plot: str,
    title: str,
    series: Sequence[Series],
    *,
    x_label: str,
    y_label: str,
    percentile_axis: bool = False,
) -> str:
    """An ``<svg data-plot=plot>`` chart of ``series`` (label, points); empty series
    are left out, and a chart with none says so."""
    drawn = [(label, points) for label, points in series if points]
    xs = [x for _, points in drawn for x, _ in points]
    ys = [y for _, points in drawn for _, y in points]
    parts = [
        f'<svg data-plot="{escape(plot)}" width="{WIDTH}" height="{HEIGHT}"'
        f' viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
        f'<text x="{WIDTH / 2}" y="18" text-anchor="middle" font-weight="bold">'
        f"{escape(title)}</text>",
    ]
    if not drawn:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no data</text>')
        return "".join(parts) + "</svg>"
    x_low, x_high = (0.0, max(xs)) if not percentile_axis else (0.0, max(1.0, max(xs)))
    y_low, y_high = 0.0, max(ys) * 1.05 or 1.0
    inner_w, inner_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM

    def px(x: float) -> float:
        return _LEFT + (x - x_low) / ((x_high - x_low) or 1) * inner_w

    def py(y: float) -> float:
        return _TOP + inner_h - (y - y_low) / ((y_high - y_low) or 1) * inner_h

    parts.append(
        f'<rect x="{_LEFT}" y="{_TOP}" width="{inner_w}" height="{inner_h}"'
        ' fill="none" stroke="#999"/>'
    )
    for y in _ticks(y_low, y_high):
        parts.append(
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{py(y):.1f}" y2="{py(y):.1f}"'
            f' stroke="#eee"/><text x="{_LEFT - 4}" y="{py(y) + 4:.1f}" text-anchor="end"'
            f' font-size="11">{_label(y)}</text>'
        )
    x_ticks = (
        [(float(n), f"{100 - 10 ** (2 - n):g}%") for n in range(int(x_high) + 1)]
        if percentile_axis
        else [(x, _label(x)) for x in _ticks(x_low, x_high)]
    )
    for x, text in x_ticks:
        parts.append(
            f'<text x="{px(x):.1f}" y="{HEIGHT - _BOTTOM + 16}" text-anchor="middle"'
            f' font-size="11">{escape(text)}</text>'
        )
    parts.append(
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 6}" text-anchor="middle" font-size="12">'
        f'{escape(x_label)}</text><text x="14" y="{HEIGHT / 2}" font-size="12"'
        f' transform="rotate(-90 14 {HEIGHT / 2})" text-anchor="middle">{escape(y_label)}</text>'
    )
    for index, (label, points) in enumerate(drawn):
        colour = COLOURS[index % len(COLOURS)]
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        parts.append(
            f'<polyline data-series="{escape(label)}" fill="none" stroke="{colour}"'
            f' stroke-width="1.5" points="{path}"/>'
            f'<text x="{_LEFT + 8}" y="{_TOP + 14 + 14 * index}" fill="{colour}"'
            f' font-size="12">{escape(label)}</text>'
        )
    return "".join(parts) + "</svg>"
