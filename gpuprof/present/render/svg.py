"""Small SVG charts drawn in Python, so the HTML report needs no script library and prints as drawn.

A chart is lines (or stacked areas) over a shared x axis, with round-number ticks, a legend and an
optional shaded band (the measured window). Each chart also carries its points, thinned, in a
`data-points` attribute that the report's few lines of script read to show values under the
pointer; without script the chart is complete."""

import html
import json
import math
from typing import Optional

# Okabe-Ito: told apart by people with the common colour-vision deficiencies, and in print.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 62, 14, 24, 34
MAX_POINTS = 800


def nice_ticks(low: float, high: float, count: int = 5) -> list:
    """Round tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks: list = []
    value = first
    while value < high + step * 0.5 and len(ticks) < 50:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def tick_label(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value / 1000:g}k"
    if magnitude >= 1:
        return f"{value:g}"
    return f"{value:.3g}"


def thin_points(xs, ys, limit: int = MAX_POINTS):
    """At most `limit` (x, y) points: neighbours averaged in equal groups, gaps (None) kept apart."""
    points = [(x, y) for x, y in zip(xs, ys) if x is not None]
    if len(points) <= limit:
        return points
    size = -(-len(points) // limit)
    out = []
    for i in range(0, len(points), size):
        group = points[i:i + size]
        values = [y for _, y in group if y is not None]
        out.append((sum(x for x, _ in group) / len(group), sum(values) / len(values) if values else None))
    return out


class Series:
    def __init__(self, name: str, xs, ys, color: Optional[str] = None, dashed: bool = False):
        self.name = name
        self.points = thin_points(list(xs), list(ys))
        self.color = color
        self.dashed = dashed

    def values(self):
        return [y for _, y in self.points if y is not None]


def line_chart(series, y_unit: str, x_unit: str = "s since start", band=None, stacked: bool = False,
               y_max: float = None, label: str = "", x_range=None) -> str:
    """An SVG of `series` (Series), stacked as areas when `stacked`. `band`: (x0, x1, text) shaded;
    `x_range`: (x0, x1) shared by charts meant to be read one above the other."""
    series = [s for s in series if s.values()]
    if not series:
        return ""
    for i, s in enumerate(series):
        s.color = s.color or PALETTE[i % len(PALETTE)]
    x_low, x_high = _x_span(series, band, x_range)
    stacks = _stack(series) if stacked else None
    y_ticks = nice_ticks(0.0, y_max if y_max is not None else max(_data_top(series, stacks), 1e-9))
    # x ends where the run ends (ticks inside it only); y ends on a round tick above the data.
    x_ticks = [t for t in nice_ticks(x_low, x_high, 8) if x_low - 1e-9 <= t <= x_high + 1e-9]
    y_top = y_ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + (x - x_low) / (x_high - x_low or 1.0) * plot_w

    def py(y):
        return TOP + plot_h - min(max(y, 0.0), y_top) / (y_top or 1.0) * plot_h

    parts = [f'<svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{_attr(label)}" '
             f'data-x0="{x_low}" data-x1="{x_high}" data-left="{LEFT}" data-width="{plot_w}" '
             f'data-top="{TOP}" data-bottom="{TOP + plot_h}" '
             f'data-unit="{_attr(y_unit)}" data-points="{_attr(_points_json(series))}">']
    if band:
        parts.append(f'<rect class="band" x="{px(band[0]):.1f}" y="{TOP}" width="{max(px(band[1]) - px(band[0]), 0):.1f}" '
                     f'height="{plot_h}"><title>{html.escape(band[2])}</title></rect>')
    parts += _axes(y_ticks, x_ticks, px, py, y_unit, x_unit)
    parts += _series_paths(series, stacks, px, py)
    parts.append("</svg>")
    return "".join(parts) + legend(series)


def _x_span(series, band, x_range):
    """The x range drawn: the data's, widened to hold the band and any range shared with other charts."""
    xs = [x for s in series for x, _ in s.points]
    x_low, x_high = min(xs), max(xs)
    if band:
        x_low, x_high = min(x_low, band[0]), max(x_high, band[1])
    if x_range:
        x_low, x_high = min(x_low, x_range[0]), max(x_high, x_range[1])
    return x_low, x_high


def _data_top(series, stacks) -> float:
    """The highest value drawn: the top of the stack when stacked, else the highest point."""
    if stacks is not None:
        return max((y for layer in stacks for _, _, y in layer), default=0.0)
    return max(max(s.values()) for s in series)


def _axes(y_ticks, x_ticks, px, py, y_unit: str, x_unit: str) -> list:
    """Grid lines with y tick labels, x tick marks with labels, the x axis and both units."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    parts = []
    for tick in y_ticks:
        y = py(tick)
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}"/>'
                     f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick_label(tick)}</text>')
    for tick in x_ticks:
        x = px(tick)
        parts.append(f'<line class="axis" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP + plot_h}" y2="{TOP + plot_h + 4}"/>'
                     f'<text class="tick" x="{x:.1f}" y="{TOP + plot_h + 17}" text-anchor="middle">{tick_label(tick)}</text>')
    parts.append(f'<line class="axis" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{TOP + plot_h}" y2="{TOP + plot_h}"/>')
    parts.append(f'<text class="unit" x="{LEFT}" y="{TOP - 10}" text-anchor="start">{html.escape(y_unit)}</text>')
    parts.append(f'<text class="unit" x="{LEFT + plot_w}" y="{HEIGHT - 2}" text-anchor="end">{html.escape(x_unit)}</text>')
    return parts


def _series_paths(series, stacks, px, py) -> list:
    """One path per series: a filled area on the layers below when stacked, else a line."""
    parts = []
    if stacks is not None:
        for s, layer in zip(series, stacks):
            upper = " L".join(f"{px(x):.1f},{py(y):.1f}" for x, _, y in layer)
            lower = " L".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _ in reversed(layer))
            parts.append(f'<path class="series area" fill="{s.color}" stroke="{s.color}" d="M{upper} L{lower} Z">'
                         f'<title>{html.escape(s.name)}</title></path>')
    else:
        for s in series:
            dash = ' stroke-dasharray="5 3"' if s.dashed else ""
            parts.append(f'<path class="series" fill="none" stroke="{s.color}"{dash} d="{_path(s.points, px, py)}">'
                         f'<title>{html.escape(s.name)}</title></path>')
    return parts


def legend(series) -> str:
    items = "".join(f'<span class="key"><span class="swatch" style="background:{s.color}"></span>'
                    f'{html.escape(s.name)}</span>' for s in series)
    return f'<div class="legend">{items}</div>'


#: Label widths are estimated at this many pixels a character: wider than the 12 px sans-serif
#: face's average, so that a label given this room never reaches its neighbour.
CHAR_W = 7.2
BAR_ROW_H, BAR_NAME_W = 30, 230


def bar_chart(rows, unit: str, reference: float = None, label: str = "") -> str:
    """Horizontal bars: rows of (name, value, low, high, marker) where low/high draw a range and
    marker (e.g. an estimate) a tick; `reference` draws a dashed line (e.g. 1.0x, no change).
    Labels never overlap: a name is cut to its column, and a value is written right of everything
    its row draws, in room kept free for it at the right."""
    rows = [r for r in rows if r[1] is not None]
    if not rows:
        return ""
    values = [f"{r[1]:.2f}{unit}" for r in rows]
    room = CHAR_W * max(len(v) for v in values) + 12
    height = TOP + BAR_ROW_H * len(rows) + BOTTOM
    plot_w = WIDTH - BAR_NAME_W - RIGHT - room
    top = max(max(v for r in rows for v in (r[1], r[3], r[4]) if v is not None), reference or 0.0)
    ticks = nice_ticks(0.0, top)

    def px(v):
        return BAR_NAME_W + v / (ticks[-1] or 1.0) * plot_w

    parts = [f'<svg class="plot bars" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{_attr(label)}">']
    for tick in ticks:
        x = px(tick)
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{height - BOTTOM}"/>'
                     f'<text class="tick" x="{x:.1f}" y="{height - BOTTOM + 16}" text-anchor="middle">{tick_label(tick)}</text>')
    for i, ((name, value, low, high, marker), text) in enumerate(zip(rows, values)):
        parts.append(_bar_row(TOP + i * BAR_ROW_H, name, value, low, high, marker, text, unit, px))
    if reference is not None:
        x = px(reference)
        parts.append(f'<line class="reference" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{height - BOTTOM}"/>')
    parts.append(f'<text class="unit" x="{WIDTH - RIGHT}" y="{height - 2}" text-anchor="end">{html.escape(unit)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _bar_row(y: float, name: str, value: float, low, high, marker, text: str, unit: str, px) -> str:
    """One bar with its name, spread, estimate tick and value; the value right of all of them."""
    middle = y + BAR_ROW_H / 2
    fits = int((BAR_NAME_W - 8 - 4) / CHAR_W)
    parts = [f'<text class="name" x="{BAR_NAME_W - 8}" y="{middle + 4:.1f}" text-anchor="end">'
             f'{html.escape(_short(name, fits))}<title>{html.escape(name)}</title></text>',
             f'<rect class="series bar" x="{BAR_NAME_W}" y="{y + 6}" width="{max(px(value) - BAR_NAME_W, 1):.1f}" '
             f'height="{BAR_ROW_H - 12}" fill="{PALETTE[0]}"><title>{html.escape(name)}: {value:.2f}{html.escape(unit)}'
             f'</title></rect>']
    right = px(value)
    if low is not None and high is not None:
        parts.append(f'<line class="range" x1="{px(low):.1f}" x2="{px(high):.1f}" y1="{middle}" y2="{middle}"/>')
        right = max(right, px(high))
    if marker is not None:
        parts.append(f'<line class="marker" x1="{px(marker):.1f}" x2="{px(marker):.1f}" y1="{y + 2}" '
                     f'y2="{y + BAR_ROW_H - 2}"><title>estimate {marker:.2f}{html.escape(unit)}</title></line>')
        right = max(right, px(marker) + 1.5)
    parts.append(f'<text class="value" x="{right + 6:.1f}" y="{middle + 4:.1f}">{html.escape(text)}</text>')
    return "".join(parts)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _stack(series):
    """Per series, [(x, base, top)] with each layer on the ones before (same x positions assumed)."""
    layers = []
    base = None
    for s in series:
        layer = []
        for i, (x, y) in enumerate(s.points):
            below = base[i][2] if base and i < len(base) else 0.0
            layer.append((x, below, below + (y or 0.0)))
        layers.append(layer)
        base = layer
    return layers


def _path(points, px, py) -> str:
    """Line segments through the points; a missing value (None) breaks the line."""
    out, pen_down = [], False
    for x, y in points:
        if y is None:
            pen_down = False
            continue
        out.append(f"{'L' if pen_down else 'M'}{px(x):.1f},{py(y):.1f}")
        pen_down = True
    return " ".join(out)


def _points_json(series) -> str:
    return json.dumps([{"name": s.name, "color": s.color,
                        "points": [[round(x, 3), None if y is None else round(y, 4)] for x, y in s.points]}
                       for s in series], separators=(",", ":"))


def _attr(text: str) -> str:
    return html.escape(text, quote=True)
