"""Plots as inline SVG: pure functions from numbers to SVG text, for the HTML report and any page
that wants them (no script, no external asset, no style sheet needed).

Every plot is one ``<svg role="img">`` with a ``<title>`` (its name, read by screen readers) and a
``<desc>`` (its numbers in words); every bar, box and interval carries its own ``<title>`` (a
tooltip). All text is escaped: labels are data, never markup. Plots are drawn on a fixed
``viewBox`` and stretch to their container's width; colours are presentation attributes a page
may override with CSS (classes ``plot``, ``plot-bar``, ``plot-box``, ``plot-ci``, ``plot-point``).

>>> svg = histogram_svg(*bin_counts([0.1, 0.4, 0.45, 0.9], bins=4, lo=0.0, hi=1.0),
...                     title="trajectory_match", x_label="score")
>>> svg.startswith('<svg class="plot histogram"'), "<title>trajectory_match</title>" in svg
(True, True)
>>> "&lt;b&gt;" in bar_chart_svg([("<b>", 0.5)], title="pass rate per tag", x_label="pass rate")
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Literal

__all__ = [
    "Estimate",
    "bar_chart_svg",
    "bin_counts",
    "distribution_svg",
    "forest_plot_svg",
    "histogram_svg",
    "line_chart_svg",
    "percentiles",
]

_WIDTH = 480
_FONT = 'font-family="system-ui,-apple-system,Segoe UI,Roboto,Arial,sans-serif"'
_BAR = "#2f81f7"
_GOOD = "#2ea043"
_BAD = "#cf222e"
_NEUTRAL = "#6e7781"
_GRID = "#8c959f"
_SERIES = ("#2f81f7", "#cf222e", "#2ea043", "#bf8700", "#8250df", "#1b7c83", "#e16f24", "#6e7781")


@dataclass(frozen=True)
class Estimate:
    """One row of a forest plot: an estimate (``value``) with its confidence interval
    (``low``, ``high``; ``None`` when there is none) and a ``tone`` (``good``, ``bad`` or
    ``neutral``) that colours it."""

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    tone: Literal["good", "bad", "neutral"] = "neutral"


def bin_counts(values: Iterable[float], bins: int = 10, lo: float | None = None,
               hi: float | None = None) -> tuple[list[int], list[float]]:
    """``values`` counted into ``bins`` equal bins from ``lo`` to ``hi`` (default: their min and
    max); the counts and the ``bins + 1`` edges. The last bin holds ``hi``; values outside are
    counted in the nearest bin.

    >>> bin_counts([0.0, 0.2, 0.5, 1.0], bins=2, lo=0.0, hi=1.0)
    ([2, 2], [0.0, 0.5, 1.0])
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    data = [v for v in values if math.isfinite(v)]
    low = min(data, default=0.0) if lo is None else lo
    high = max(data, default=1.0) if hi is None else hi
    if high <= low:
        high = low + 1.0
    width = (high - low) / bins
    counts = [0] * bins
    for value in data:
        counts[min(bins - 1, max(0, int((value - low) / width)))] += 1
    return counts, [low + width * i for i in range(bins)] + [high]


def percentiles(values: Sequence[float], points: Sequence[float] = (50, 90, 95, 99)) -> dict[float, float]:
    """The ``points`` percentiles of ``values`` (linear interpolation between the closest
    ranks); empty when there are no values.

    >>> percentiles([1.0, 2.0, 3.0, 4.0, 5.0], (0, 50, 100))
    {0: 1.0, 50: 3.0, 100: 5.0}
    """
    data = sorted(values)
    if not data:
        return {}
    found = {}
    for point in points:
        rank = (len(data) - 1) * max(0.0, min(100.0, point)) / 100
        below, above = math.floor(rank), math.ceil(rank)
        found[point] = data[below] + (data[above] - data[below]) * (rank - below)
    return found


def histogram_svg(counts: Sequence[int], edges: Sequence[float], *, title: str, x_label: str,
                  y_label: str = "count", marker: float | None = None, marker_label: str = "threshold") -> str:
    """A histogram of ``counts`` over the bins between ``edges`` (as :func:`bin_counts` returns
    them), with a dashed line at ``marker`` (e.g. a criterion's threshold) if given.

    >>> svg = histogram_svg([3, 0, 5], [0.0, 1/3, 2/3, 1.0], title="score", x_label="score", marker=0.5)
    >>> svg.count('class="plot-bar"'), 'class="plot-marker"' in svg
    (2, True)
    """
    if len(edges) != len(counts) + 1:
        raise ValueError(f"edges must be one more than counts ({len(counts) + 1}), got {len(edges)}")
    left, right, top, bottom = 48, _WIDTH - 16, 30, 150
    height = bottom + 42
    peak = max(counts, default=0) or 1
    low, high = edges[0], edges[-1]
    span = (high - low) or 1.0

    def x(value: float) -> float:
        return left + (right - left) * (value - low) / span

    def y(count: float) -> float:
        return bottom - (bottom - top) * count / peak

    total = sum(counts)
    described = f"{total} values; " + ", ".join(
        f"{_num(a)}–{_num(b)}: {c}" for a, b, c in zip(edges, edges[1:], counts) if c)
    parts = [_open("histogram", height, title, described), _text(left, 18, title, weight="600")]
    for tick in _ticks(0, peak):
        parts.append(_hline(left, right, y(tick)) + _text(left - 6, y(tick) + 4, _num(tick), anchor="end", small=True))
    for a, b, count in zip(edges, edges[1:], counts):
        if count:
            x0, x1 = x(a), x(b)
            parts.append(f'<rect class="plot-bar" x="{x0 + 1:.1f}" y="{y(count):.1f}" width="{max(1.0, x1 - x0 - 2):.1f}" '
                         f'height="{bottom - y(count):.1f}" fill="{_BAR}"><title>{_e(f"{_num(a)}–{_num(b)}: {count}")}'
                         "</title></rect>")
    for edge in _edge_ticks(edges):
        parts.append(_text(x(edge), bottom + 16, _num(edge), anchor="middle", small=True))
    if marker is not None and low <= marker <= high:
        parts.append(f'<line class="plot-marker" x1="{x(marker):.1f}" y1="{top - 4}" x2="{x(marker):.1f}" '
                     f'y2="{bottom}" stroke="currentColor" stroke-width="2" stroke-dasharray="4 3">'
                     f"<title>{_e(f'{marker_label} {_num(marker)}')}</title></line>")
    parts.append(_axis_labels(left, right, bottom, height, x_label, y_label))
    return "".join(parts) + "</svg>"


def bar_chart_svg(bars: Sequence[tuple[str, float]], *, title: str, x_label: str, maximum: float = 1.0,
                  percent: bool = True, notes: Sequence[str] | None = None) -> str:
    """Horizontal bars, one per ``(label, value)``, scaled to ``maximum``; values shown as
    percentages with ``percent``; ``notes`` (one per bar) are written after each value.

    >>> svg = bar_chart_svg([("smoke", 1.0), ("weather", 0.5)], title="pass rate per tag",
    ...                     x_label="pass rate", notes=["2 cases", "4 cases"])
    >>> svg.count('class="plot-bar"'), "50% · 4 cases" in svg
    (2, True)
    """
    row, top, label_w = 26, 34, 120
    left, right = label_w + 8, _WIDTH - 100
    bottom = top + row * len(bars)
    height = bottom + 40
    scale = maximum or 1.0

    def shown(value: float) -> str:
        return f"{value:.0%}" if percent else _num(value)

    described = "; ".join(f"{label}: {shown(value)}" for label, value in bars)
    parts = [_open("bars", height, title, described), _text(0, 18, title, weight="600")]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        tx = left + (right - left) * tick
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{bottom}" stroke="{_GRID}" '
                     f'stroke-opacity=".35"/>' + _text(tx, bottom + 14, shown(tick * scale), anchor="middle", small=True))
    for index, (label, value) in enumerate(bars):
        y = top + index * row
        note = f" · {notes[index]}" if notes and index < len(notes) and notes[index] else ""
        width = (right - left) * max(0.0, min(1.0, value / scale))
        parts.append(f'<g class="plot-row"><title>{_e(f"{label}: {shown(value)}{note}")}</title>'
                     + _text(label_w, y + 15, _clip(label, 18), anchor="end")
                     + f'<rect x="{left}" y="{y + 3}" width="{right - left}" height="16" fill="{_GRID}" '
                       f'fill-opacity=".15" rx="2"/>'
                     + f'<rect class="plot-bar" x="{left}" y="{y + 3}" width="{width:.1f}" height="16" '
                       f'fill="{_BAR}" rx="2"/>'
                     + _text(right + 6, y + 15, f"{shown(value)}{note}", small=True) + "</g>")
    parts.append(_text((left + right) / 2, height - 6, x_label, anchor="middle", small=True))
    return "".join(parts) + "</svg>"


def distribution_svg(values: Sequence[float], *, title: str, x_label: str, unit: str = "",
                     bins: int = 20) -> str:
    """The shape of ``values``: a histogram with a box plot under it (the box from the 25th to
    the 75th percentile, the median in it, whiskers to the 5th and 95th) and the median, p90,
    p95 and p99 written out; ``unit`` follows each number.

    >>> svg = distribution_svg([0.2, 0.3, 0.3, 0.4, 1.5], title="latency", x_label="seconds", unit=" s")
    >>> 'class="plot-box"' in svg, "p50 0.3 s" in svg
    (True, True)
    """
    data = sorted(v for v in values if math.isfinite(v))
    if not data:
        return _open("distribution", 60, title, "no values") + _text(0, 18, title, weight="600") + \
            _text(0, 44, "no values", small=True) + "</svg>"
    counts, edges = bin_counts(data, bins)
    low, high = edges[0], edges[-1]
    left, right, top, bottom = 48, _WIDTH - 16, 30, 130
    box_y = bottom + 26
    height = box_y + 64
    peak = max(counts) or 1
    span = high - low

    def x(value: float) -> float:
        return left + (right - left) * (value - low) / span

    def y(count: float) -> float:
        return bottom - (bottom - top) * count / peak

    p = percentiles(data, (5, 25, 50, 75, 90, 95, 99))
    quoted = " · ".join(f"p{int(k)} {_num(p[k])}{unit}" for k in (50, 90, 95, 99))
    described = f"{len(data)} values, min {_num(data[0])}{unit}, max {_num(data[-1])}{unit}; {quoted}"
    parts = [_open("distribution", height, title, described), _text(left, 18, title, weight="600"),
             _text(right, 18, f"n={len(data)}", anchor="end", small=True)]
    for tick in _ticks(0, peak):
        parts.append(_hline(left, right, y(tick)) + _text(left - 6, y(tick) + 4, _num(tick), anchor="end", small=True))
    for a, b, count in zip(edges, edges[1:], counts):
        if count:
            parts.append(f'<rect class="plot-bar" x="{x(a) + .5:.1f}" y="{y(count):.1f}" '
                         f'width="{max(1.0, x(b) - x(a) - 1):.1f}" height="{bottom - y(count):.1f}" fill="{_BAR}">'
                         f"<title>{_e(f'{_num(a)}–{_num(b)}{unit}: {count}')}</title></rect>")
    for edge in _edge_ticks(edges):
        parts.append(_text(x(edge), bottom + 14, _num(edge), anchor="middle", small=True))
    mid = box_y + 9
    parts.append(f'<g class="plot-box"><title>{_e(described)}</title>'
                 f'<line x1="{x(p[5]):.1f}" y1="{mid}" x2="{x(p[95]):.1f}" y2="{mid}" stroke="currentColor"/>'
                 f'<rect x="{x(p[25]):.1f}" y="{box_y}" width="{max(1.0, x(p[75]) - x(p[25])):.1f}" height="18" '
                 f'fill="{_BAR}" fill-opacity=".3" stroke="{_BAR}"/>'
                 f'<line x1="{x(p[50]):.1f}" y1="{box_y - 2}" x2="{x(p[50]):.1f}" y2="{box_y + 20}" '
                 f'stroke="currentColor" stroke-width="2.5"/></g>')
    parts.append(_text(left, box_y + 40, quoted, small=True))
    parts.append(_text((left + right) / 2, height - 4, x_label, anchor="middle", small=True))
    return "".join(parts) + "</svg>"


def forest_plot_svg(estimates: Sequence[Estimate], *, title: str, x_label: str = "delta (B − A)") -> str:
    """A forest plot: one row per estimate, its point and its confidence interval on a shared
    axis, with a line at zero (no difference).

    >>> svg = forest_plot_svg([Estimate("accuracy", -0.12, -0.2, -0.04, "bad"),
    ...                        Estimate("helpfulness", 0.02, -0.05, 0.09)], title="per-metric deltas")
    >>> svg.count('class="plot-point"'), svg.count('class="plot-ci"'), 'class="plot-zero"' in svg
    (2, 2, True)
    """
    row, top, label_w = 30, 34, 120
    left, right = label_w + 12, _WIDTH - 140
    bottom = top + row * max(1, len(estimates))
    height = bottom + 44
    ends = [v for e in estimates for v in (e.value, e.low, e.high) if v is not None and math.isfinite(v)]
    reach = max((abs(v) for v in ends), default=1.0) or 1.0
    reach *= 1.1

    def x(value: float) -> float:
        return left + (right - left) * (value + reach) / (2 * reach)

    def interval(e: Estimate) -> str:
        return f"[{e.low:+.3f}, {e.high:+.3f}]" if e.low is not None and e.high is not None else "no interval"

    described = "; ".join(f"{e.label}: {e.value:+.3f} {interval(e)}" for e in estimates)
    parts = [_open("forest", height, title, described), _text(0, 18, title, weight="600")]
    for tick in (-reach, -reach / 2, 0.0, reach / 2, reach):
        parts.append(_text(x(tick), bottom + 16, f"{tick:+.2g}" if tick else "0", anchor="middle", small=True))
    parts.append(f'<line class="plot-zero" x1="{x(0):.1f}" y1="{top - 6}" x2="{x(0):.1f}" y2="{bottom}" '
                 'stroke="currentColor" stroke-dasharray="4 3"/>')
    for index, e in enumerate(estimates):
        y = top + index * row + row / 2
        colour = {"good": _GOOD, "bad": _BAD}.get(e.tone, _NEUTRAL)
        ci = ""
        if e.low is not None and e.high is not None:
            ci = (f'<line class="plot-ci" x1="{x(e.low):.1f}" y1="{y:.1f}" x2="{x(e.high):.1f}" y2="{y:.1f}" '
                  f'stroke="{colour}" stroke-width="2.5"/>'
                  + "".join(f'<line x1="{x(end):.1f}" y1="{y - 6:.1f}" x2="{x(end):.1f}" y2="{y + 6:.1f}" '
                            f'stroke="{colour}" stroke-width="2"/>' for end in (e.low, e.high)))
        parts.append(f'<g class="plot-row"><title>{_e(f"{e.label}: {e.value:+.3f} {interval(e)}")}</title>'
                     + _text(label_w, y + 4, _clip(e.label, 18), anchor="end") + ci
                     + f'<rect class="plot-point" x="{x(e.value) - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" '
                       f'fill="{colour}"/>'
                     + _text(right + 8, y + 4, f"{e.value:+.3f} {interval(e)}", small=True) + "</g>")
    parts.append(_text((left + right) / 2, height - 6, x_label, anchor="middle", small=True))
    return "".join(parts) + "</svg>"


def line_chart_svg(series: Sequence[tuple[str, Sequence[float | None]]], x_labels: Sequence[str], *, title: str,
                   y_label: str, minimum: float | None = None, maximum: float | None = None,
                   percent: bool = False) -> str:
    """Lines over the same ``x_labels`` (e.g. runs, oldest first), one per ``(name, values)``
    (a ``None`` value is a gap), on a shared axis from ``minimum`` to ``maximum`` (default:
    zero and the largest value), with a legend; values shown as percentages with ``percent``.

    >>> svg = line_chart_svg([("trajectory_match", [1.0, 0.5, None, 0.75])], ["r1", "r2", "r3", "r4"],
    ...                      title="mean score", y_label="score", maximum=1.0)
    >>> svg.count('class="plot-line"'), svg.count('class="plot-point"'), "r2: 0.5" in svg
    (1, 3, True)
    """
    count = len(x_labels)
    if any(len(values) != count for _, values in series):
        raise ValueError(f"every series needs one value per x label ({count})")
    found = [v for _, values in series for v in values if v is not None and math.isfinite(v)]
    low = (min(0.0, min(found, default=0.0)) if minimum is None else minimum)
    high = (_round_up(max(found, default=1.0)) if maximum is None else maximum)
    if high <= low:
        high = low + 1.0
    left, right, top, bottom = 64, _WIDTH - 16, 30, 170
    legend_rows = math.ceil(len(series) / 3)
    height = bottom + 40 + 16 * legend_rows

    def shown(value: float) -> str:
        return f"{value:.0%}" if percent else _num(value)

    def x(index: int) -> float:
        return (left + right) / 2 if count == 1 else left + (right - left) * index / (count - 1)

    def y(value: float) -> float:
        return bottom - (bottom - top) * (value - low) / (high - low)

    described = "; ".join(f"{name}: " + ", ".join(f"{label} {shown(v)}" for label, v in zip(x_labels, values)
                                                  if v is not None) for name, values in series)
    parts = [_open("lines", height, title, described or "no values"), _text(left, 18, title, weight="600")]
    for step in range(5):
        tick = low + (high - low) * step / 4
        parts.append(_hline(left, right, y(tick)) + _text(left - 6, y(tick) + 4, shown(tick), anchor="end", small=True))
    stride = max(1, math.ceil(count / 6))
    for index in range(0, count, stride):
        parts.append(_text(x(index), bottom + 16, _clip(x_labels[index], 12), anchor="middle", small=True))
    for number, (name, values) in enumerate(series):
        colour = _SERIES[number % len(_SERIES)]
        points = [(index, v) for index, v in enumerate(values) if v is not None and math.isfinite(v)]
        lines = "".join(f'<line class="plot-line" x1="{x(i):.1f}" y1="{y(a):.1f}" x2="{x(j):.1f}" y2="{y(b):.1f}" '
                        f'stroke="{colour}" stroke-width="2"/>'
                        for (i, a), (j, b) in zip(points, points[1:]) if j == i + 1)
        dots = "".join(f'<circle class="plot-point" cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5" fill="{colour}">'
                       f"<title>{_e(f'{name} · {x_labels[i]}: {shown(v)}')}</title></circle>" for i, v in points)
        row, column = divmod(number, 3)
        lx, ly = left + column * (right - left) / 3, bottom + 34 + 16 * row
        key = (f'<rect x="{lx:.1f}" y="{ly - 9:.1f}" width="12" height="4" fill="{colour}"/>'
               + _text(lx + 16, ly - 4, _clip(name, 20), small=True))
        parts.append(f'<g class="plot-series"><title>{_e(name)}</title>{lines}{dots}{key}</g>')
    parts.append(f'<text x="12" y="{(top + bottom) / 2:.1f}" text-anchor="middle" font-size="11" fill-opacity=".75" '
                 f'transform="rotate(-90 12 {(top + bottom) / 2:.1f})">{_e(y_label)}</text>')
    return "".join(parts) + "</svg>"


# --- pieces --------------------------------------------------------------------------------------

def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _num(value: float) -> str:
    """A short number: ``0.25``, ``12``, ``1.2k``, ``3.4M``."""
    size = abs(value)
    if size >= 1e6:
        return f"{value / 1e6:.3g}M"
    if size >= 1e4:
        return f"{value / 1e3:.3g}k"
    if float(value).is_integer():
        return f"{value:.0f}"
    return f"{value:.3g}"


def _clip(text: str, length: int) -> str:
    return text if len(text) <= length else text[:length - 1] + "…"


def _open(kind: str, height: float, title: str, described: str) -> str:
    return (f'<svg class="plot {kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height:.0f}" '
            f'width="100%" role="img" {_FONT} font-size="13" fill="currentColor" '
            f'style="max-width:{_WIDTH * 1.25:.0f}px;overflow:visible">'
            f"<title>{_e(title)}</title><desc>{_e(described)}</desc>")


def _text(x: float, y: float, text: str, *, anchor: str = "start", small: bool = False, weight: str = "") -> str:
    size = ' font-size="11" fill-opacity=".75"' if small else ""
    bold = f' font-weight="{weight}"' if weight else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{size}{bold}>{_e(text)}</text>'


def _hline(left: float, right: float, y: float) -> str:
    return f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{_GRID}" stroke-opacity=".35"/>'


def _round_up(value: float) -> float:
    """The round number (1, 2, 2.5 or 5 times a power of ten) at or above ``value`` (> 0)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    power: float = 10.0 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value * (1 - 1e-9))


def _ticks(low: float, high: float) -> list[float]:
    """Up to five round ticks from ``low`` to ``high`` (counts: whole numbers)."""
    if high <= low:
        return [low]
    raw = max(1.0, (high - low) / 4)
    step = 10 ** math.floor(math.log10(raw))
    step = next(s * step for s in (1, 2, 5, 10) if s * step >= raw)
    count = int((high - low) / step + 1e-9)
    return [low + step * i for i in range(count + 1)]


def _edge_ticks(edges: Sequence[float]) -> list[float]:
    """At most six of the bin edges, always the first and the last."""
    stride = max(1, math.ceil((len(edges) - 1) / 5))
    chosen = list(edges[::stride])
    if chosen[-1] != edges[-1]:
        chosen.append(edges[-1])
    return chosen


def _axis_labels(left: float, right: float, bottom: float, height: float, x_label: str, y_label: str) -> str:
    middle = (bottom + 30) / 2
    return (_text((left + right) / 2, height - 6, x_label, anchor="middle", small=True)
            + f'<text x="12" y="{middle:.1f}" text-anchor="middle" font-size="11" fill-opacity=".75" '
              f'transform="rotate(-90 12 {middle:.1f})">{_e(y_label)}</text>')
