"""Server-side SVG charts: line charts (with bands, shaded areas and markers), stacked bars,
horizontal bars and heat maps. Plain strings out; no JavaScript, no fonts fetched, no network.

These functions only lay out what they are given (scales, ticks, positions); the numbers they draw
are prepared by `gpuplan.render.report_data`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from html import escape

# Okabe-Ito: distinguishable for colour-blind readers and in greyscale print.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
MODE_COLORS = {"bare-metal": "#0072B2", "container": "#E69F00", "hybrid": "#009E73"}
FONT = (
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', "
    "'PingFang SC', 'Microsoft YaHei', sans-serif"
)

Fmt = Callable[[float], str]


def _e(s: object) -> str:
    return escape(str(s), quote=True)


def _n(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def text_width(s: str, size: float = 12.0) -> float:
    """Approximate rendered width: CJK and other wide characters take a full em, the rest ~0.6 em."""
    return sum(size if ord(ch) > 0x2E80 else size * 0.6 for ch in s)


def fit(s: str, px: float, size: float = 12.0) -> str:
    """`s` cut to about `px` wide at font `size`, ending in an ellipsis when cut (the full text goes in a
    `<title>` beside it): labels never run into their neighbours."""
    if text_width(s, size) <= px:
        return s
    out = ""
    for ch in s:
        if text_width(out + ch + "…", size) > px:
            break
        out += ch
    return out + "…"


def _left(y_labels: Iterable[str]) -> int:
    """The left margin: the widest y tick label right-aligned 6 px from the axis, clear of the rotated
    axis title (centred at x = 14, about 16 px tall); at least 78 px."""
    return max(78, 30 + int(max((text_width(s) for s in y_labels), default=0.0)) + 6)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About `n` round tick values covering [lo, hi] (1, 2, 2.5, 5 x 10^k steps)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi < lo:
        lo, hi = hi, lo
    if hi - lo < 1e-12:
        pad = abs(hi) * 0.1 or 1.0
        # all values equal: widen around them, but never below 0 when they are >= 0 (a wait of 0 h
        # on every point draws 0..1, not -1..1)
        lo, hi = (max(0.0, lo - pad) if lo >= 0 else lo - pad), hi + pad
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    if start > lo:
        start -= step
    n = max(1, math.ceil((hi - start) / step - 1e-9))
    if start + n * step < hi:
        n += 1
    ticks = [round(start + k * step, 12) for k in range(n + 1)]
    return ticks


@dataclass(frozen=True)
class Line:
    label: str
    points: Sequence[tuple[float, float]]
    color: str = PALETTE[0]
    dash: bool = False
    dots: bool = False
    point_labels: Sequence[str] = ()
    width: float = 2.0


@dataclass(frozen=True)
class Band:
    """A shaded region between `lower` and `upper` (same x values)."""

    label: str
    lower: Sequence[tuple[float, float]]
    upper: Sequence[tuple[float, float]]
    color: str = PALETTE[0]
    opacity: float = 0.18


@dataclass(frozen=True)
class VMarker:
    x: float
    label: str
    color: str = "#444444"
    dash: bool = True


@dataclass(frozen=True)
class PointMarker:
    x: float
    y: float
    label: str
    color: str = "#D55E00"


@dataclass(frozen=True)
class Chart:
    title: str
    x_label: str
    y_label: str
    x_fmt: Fmt = _n
    y_fmt: Fmt = _n
    width: int = 680
    height: int = 320
    y_zero: bool = True
    x_ticks: Sequence[float] = ()
    lines: Sequence[Line] = field(default_factory=tuple)
    bands: Sequence[Band] = field(default_factory=tuple)
    vmarkers: Sequence[VMarker] = field(default_factory=tuple)
    points: Sequence[PointMarker] = field(default_factory=tuple)


def _open(width: int, height: int, title: str, cls: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {cls}" viewBox="0 0 {width} {height}" '
        f'width="100%" role="img" aria-label="{_e(title)}" font-family="{_e(FONT)}" font-size="12">',
        f"<title>{_e(title)}</title>",
    ]


def _legend(items: Sequence[tuple[str, str, str]], x: float, y: float, width: float) -> list[str]:
    """One row (wrapping) of legend swatches: (label, colour, kind in line|dash|box)."""
    out: list[str] = []
    cx, cy = x, y
    for label, color, kind in items:
        w = 30 + text_width(label)
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + 18
        if kind in ("box", "solid", "hatch"):
            fill = "url(#hatch)" if kind == "hatch" else color
            op = "0.35" if kind == "box" else "1"
            out.append(
                f'<rect x="{_n(cx)}" y="{_n(cy - 9)}" width="14" height="10" fill="{fill}" '
                f'fill-opacity="{op}" stroke="{color}"/>'
            )
        else:
            dash = ' stroke-dasharray="5 3"' if kind == "dash" else ""
            out.append(
                f'<line x1="{_n(cx)}" y1="{_n(cy - 4)}" x2="{_n(cx + 16)}" y2="{_n(cy - 4)}" '
                f'stroke="{color}" stroke-width="2.5"{dash}/>'
            )
        out.append(f'<text x="{_n(cx + 20)}" y="{_n(cy)}" fill="#222">{_e(label)}</text>')
        cx += w
    return out


def _legend_rows(items: Sequence[tuple[str, str, str]], width: float) -> int:
    rows, cx = 1, 0.0
    for label, _c, _k in items:
        w = 30 + text_width(label)
        if cx + w > width and cx > 0:
            rows, cx = rows + 1, 0.0
        cx += w
    return rows if items else 0


def line_chart(c: Chart) -> str:
    """Lines over a shared x axis, optional shaded bands, vertical markers and labelled points."""
    xs = [p[0] for ln in c.lines for p in ln.points] + [p[0] for b in c.bands for p in (*b.lower, *b.upper)]
    ys = [p[1] for ln in c.lines for p in ln.points] + [p[1] for b in c.bands for p in (*b.lower, *b.upper)]
    xs += [m.x for m in c.vmarkers] + [p.x for p in c.points]
    ys += [p.y for p in c.points]
    xs = [x for x in xs if math.isfinite(x)]
    ys = [y for y in ys if math.isfinite(y)]
    if not xs or not ys:
        return ""
    legend = [(ln.label, ln.color, "dash" if ln.dash else "line") for ln in c.lines if ln.label]
    legend += [(b.label, b.color, "box") for b in c.bands if b.label]
    xt = list(c.x_ticks) if c.x_ticks else nice_ticks(min(xs), max(xs))
    yt = nice_ticks(min(0.0, min(ys)) if c.y_zero else min(ys), max(ys))
    left, right, top = _left(c.y_fmt(v) for v in yt), 18, 14
    inner_w = c.width - left - right
    rows = _legend_rows(legend, inner_w)
    bottom = 44 + 18 * rows
    inner_h = c.height - top - bottom
    x0, x1 = xt[0], xt[-1]
    y0, y1 = yt[0], yt[-1]

    def sx(x: float) -> float:
        return left + (x - x0) / ((x1 - x0) or 1) * inner_w

    def sy(y: float) -> float:
        return top + inner_h - (y - y0) / ((y1 - y0) or 1) * inner_h

    out = _open(c.width, c.height, c.title, "line")
    for v in yt:
        out.append(
            f'<line x1="{left}" y1="{_n(sy(v))}" x2="{left + inner_w}" y2="{_n(sy(v))}" stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{_n(sy(v) + 4)}" text-anchor="end" fill="#555">{_e(c.y_fmt(v))}</text>'
        )
    last_right = -math.inf
    for v in xt:
        out.append(
            f'<line x1="{_n(sx(v))}" y1="{top + inner_h}" x2="{_n(sx(v))}" y2="{top + inner_h + 4}" '
            'stroke="#888"/>'
        )
        label = c.x_fmt(v)
        half = text_width(label) / 2
        if sx(v) - half < last_right + 4:  # would touch the previous label: the tick stays, its label goes
            continue
        last_right = sx(v) + half
        out.append(
            f'<text x="{_n(sx(v))}" y="{top + inner_h + 17}" text-anchor="middle" fill="#555">'
            f"{_e(label)}</text>"
        )
    out.append(
        f'<line x1="{left}" y1="{top + inner_h}" x2="{left + inner_w}" y2="{top + inner_h}" stroke="#888"/>'
    )
    out.append(
        f'<text x="{left + inner_w / 2}" y="{top + inner_h + 33}" text-anchor="middle" fill="#333">'
        f"{_e(c.x_label)}</text>"
    )
    out.append(
        f'<text transform="translate(14 {top + inner_h / 2}) rotate(-90)" text-anchor="middle" '
        f'fill="#333">{_e(c.y_label)}</text>'
    )
    for b in c.bands:
        pts = [(sx(x), sy(y)) for x, y in b.upper] + [(sx(x), sy(y)) for x, y in reversed(b.lower)]
        if pts:
            d = " ".join(f"{_n(x)},{_n(y)}" for x, y in pts)
            out.append(
                f'<polygon class="band" points="{d}" fill="{b.color}" '
                f'fill-opacity="{b.opacity}" stroke="none"/>'
            )
    for ln in c.lines:
        pts = [(x, y) for x, y in ln.points if math.isfinite(x) and math.isfinite(y)]
        if not pts:
            continue
        d = " ".join(f"{_n(sx(x))},{_n(sy(y))}" for x, y in pts)
        dash = ' stroke-dasharray="6 4"' if ln.dash else ""
        out.append(
            f'<polyline class="series" data-label="{_e(ln.label)}" points="{d}" fill="none" '
            f'stroke="{ln.color}" stroke-width="{ln.width}" stroke-linejoin="round"{dash}/>'
        )
        if ln.dots:
            for i, (x, y) in enumerate(pts):
                out.append(f'<circle cx="{_n(sx(x))}" cy="{_n(sy(y))}" r="3.2" fill="{ln.color}"/>')
                if i < len(ln.point_labels) and ln.point_labels[i]:
                    out.append(
                        f'<text x="{_n(sx(x) + 5)}" y="{_n(sy(y) - 6)}" fill="#333" font-size="10">'
                        f"{_e(ln.point_labels[i])}</text>"
                    )
    placed: list[tuple[int, float, float]] = []  # (row, left, right) of each marker label
    for m in c.vmarkers:
        x = sx(m.x)
        anchor = "end" if x > left + inner_w * 0.7 else "start"
        span = text_width(m.label) * 1.1 + 4  # bold: about a tenth wider
        lo, hi = (x - span, x) if anchor == "end" else (x, x + span)
        row = 0  # the first row where the label touches no label placed before it
        while any(r == row and lo < b and a < hi for r, a, b in placed):
            row += 1
        placed.append((row, lo, hi))
        dash = ' stroke-dasharray="4 3"' if m.dash else ""
        out.append(
            f'<line class="marker" x1="{_n(x)}" y1="{top}" x2="{_n(x)}" y2="{top + inner_h}" '
            f'stroke="{m.color}" stroke-width="1.5"{dash}/>'
        )
        dx = -4 if anchor == "end" else 4
        out.append(
            f'<text class="marker-label" x="{_n(x + dx)}" y="{top + 12 + 15 * row}" text-anchor="{anchor}" '
            f'fill="{m.color}" font-weight="600">{_e(m.label)}</text>'
        )
    for p in c.points:
        out.append(
            f'<circle class="point-marker" cx="{_n(sx(p.x))}" cy="{_n(sy(p.y))}" r="5.5" fill="none" '
            f'stroke="{p.color}" stroke-width="2.5"/>'
        )
        anchor = "end" if sx(p.x) > left + inner_w * 0.7 else "start"
        dx = -9 if anchor == "end" else 9
        out.append(
            f'<text x="{_n(sx(p.x) + dx)}" y="{_n(sy(p.y) + 16)}" text-anchor="{anchor}" fill="{p.color}" '
            f'font-weight="600">{_e(p.label)}</text>'
        )
    out += _legend(legend, left, c.height - 18 * rows + 6, inner_w)
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True)
class Stack:
    label: str
    color: str
    values: Sequence[float]
    pattern: bool = False


def stacked_bars(
    title: str,
    categories: Sequence[str],
    stacks: Sequence[Stack],
    y_label: str,
    y_fmt: Fmt = _n,
    totals: Sequence[str] = (),
    width: int = 680,
    height: int = 300,
) -> str:
    """Vertical bars, one per category, each the sum of `stacks` (drawn bottom to top)."""
    if not categories:
        return ""
    sums = [sum(max(0.0, s.values[i]) for s in stacks) for i in range(len(categories))]
    legend = [(s.label, s.color, "hatch" if s.pattern else "solid") for s in stacks]
    yt = nice_ticks(0.0, max(sums) or 1.0)
    left, right, top = _left(y_fmt(v) for v in yt), 18, 22
    inner_w = width - left - right
    rows = _legend_rows(legend, inner_w)
    bottom = 34 + 18 * rows
    inner_h = height - top - bottom
    y1 = yt[-1] or 1.0

    def sy(y: float) -> float:
        return top + inner_h - y / y1 * inner_h

    out = _open(width, height, title, "bars")
    out.append(
        '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="3"/></pattern></defs>'
    )
    for v in yt:
        out.append(
            f'<line x1="{left}" y1="{_n(sy(v))}" x2="{left + inner_w}" y2="{_n(sy(v))}" stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{_n(sy(v) + 4)}" text-anchor="end" fill="#555">{_e(y_fmt(v))}</text>'
        )
    out.append(
        f'<text transform="translate(14 {top + inner_h / 2}) rotate(-90)" text-anchor="middle" '
        f'fill="#333">{_e(y_label)}</text>'
    )
    slot = inner_w / len(categories)
    bw = min(90.0, slot * 0.55)
    for i, cat in enumerate(categories):
        x = left + slot * i + (slot - bw) / 2
        base = 0.0
        for s in stacks:
            v = max(0.0, s.values[i])
            if v <= 0:
                continue
            fill = "url(#hatch)" if s.pattern else s.color
            out.append(
                f'<rect class="seg" data-label="{_e(s.label)}" x="{_n(x)}" y="{_n(sy(base + v))}" '
                f'width="{_n(bw)}" height="{_n(max(0.5, sy(base) - sy(base + v)))}" fill="{fill}" '
                f'stroke="{s.color}" stroke-width="1"><title>{_e(s.label)}: {_e(y_fmt(v))}</title></rect>'
            )
            base += v
        if i < len(totals):
            out.append(
                f'<text x="{_n(x + bw / 2)}" y="{_n(sy(base) - 5)}" text-anchor="middle" fill="#222" '
                f'font-weight="600">{_e(totals[i])}</text>'
            )
        shown = fit(cat, slot - 6)
        tip = f"<title>{_e(cat)}</title>" if shown != cat else ""
        out.append(
            f'<text x="{_n(x + bw / 2)}" y="{top + inner_h + 16}" text-anchor="middle" fill="#333">'
            f"{tip}{_e(shown)}</text>"
        )
    out.append(
        f'<line x1="{left}" y1="{top + inner_h}" x2="{left + inner_w}" y2="{top + inner_h}" stroke="#888"/>'
    )
    out += _legend(legend, left, height - 18 * rows + 6, inner_w)
    out.append("</svg>")
    return "\n".join(out)


def hbars(title: str, items: Sequence[tuple[str, float, str, str]], x_label: str, width: int = 680) -> str:
    """Horizontal bars: (label, value, colour, value text)."""
    if not items:
        return ""
    row = 30
    right = min(120, int(width * 0.3))  # the value text after the bar
    widest = 14 + int(max(text_width(lab) for lab, *_ in items))
    left = max(min(90, int(width * 0.3)), min(300, width - right - 90, widest))  # >= 90 px left for the bars
    top = 8
    height = top + row * len(items) + 30
    inner_w = width - left - right
    vmax = max(v for _, v, _, _ in items) or 1.0
    out = _open(width, height, title, "hbars")
    for i, (label, v, color, text) in enumerate(items):
        y = top + i * row
        w = max(1.0, v / vmax * inner_w)
        shown = fit(label, left - 12)
        tip = f"<title>{_e(label)}</title>" if shown != label else ""
        out.append(f'<text x="{left - 8}" y="{y + 19}" text-anchor="end" fill="#333">{tip}{_e(shown)}</text>')
        out.append(
            f'<rect x="{left}" y="{y + 5}" width="{_n(w)}" height="{row - 10}" fill="{color}" rx="2"/>'
        )
        out.append(f'<text x="{_n(left + w + 6)}" y="{y + 19}" fill="#222">{_e(text)}</text>')
    out.append(
        f'<text x="{left + inner_w / 2}" y="{height - 8}" text-anchor="middle" fill="#555">'
        f"{_e(x_label)}</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def _heat_color(v: float) -> str:
    """0 -> pale red (idle), 0.5 -> amber, 1 -> deep green (busy)."""
    v = min(1.0, max(0.0, v))
    stops = (
        (0.0, (0xF6, 0xD5, 0xCF)),
        (0.35, (0xF2, 0xB4, 0x4C)),
        (0.7, (0x8F, 0xC9, 0x6B)),
        (1.0, (0x1B, 0x7A, 0x3E)),
    )
    for (a, ca), (b, cb) in zip(stops, stops[1:], strict=False):
        if v <= b:
            k = (v - a) / (b - a)
            return "#" + "".join(f"{round(ca[j] + (cb[j] - ca[j]) * k):02x}" for j in range(3))
    return "#1b7a3e"


def heatmap(
    title: str,
    rows: Sequence[str],
    cells: Sequence[Sequence[float | None]],
    col_labels: Sequence[str],
    legend_low: str,
    legend_high: str,
    gap_label: str,
    width: int = 760,
) -> str:
    """Rows x columns of values in [0, 1]; None is a gap (no data), drawn hatched grey."""
    if not rows or not cells:
        return ""
    ncol = max(len(r) for r in cells) or 1
    left = max(min(80, int(width * 0.3)), min(260, int(width * 0.35), 14 + int(max(text_width(r) for r in rows))))
    top, right = 8, 12
    ch = 16 if len(rows) <= 32 else max(4, 512 // len(rows))
    inner_w = width - left - right
    cw = inner_w / ncol
    height = top + ch * len(rows) + 62
    out = _open(width, height, title, "heatmap")
    out.append(
        '<defs><pattern id="gap" width="5" height="5" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="5" height="5" fill="#eee"/>'
        '<line x1="0" y1="0" x2="0" y2="5" stroke="#bbb" stroke-width="2"/></pattern></defs>'
    )
    for i, (name, vals) in enumerate(zip(rows, cells, strict=False)):
        y = top + i * ch
        if ch >= 10:
            out.append(
                f'<text x="{left - 6}" y="{_n(y + ch * 0.72)}" text-anchor="end" fill="#333" '
                f'font-size="{min(12, ch - 3)}">{_e(name)}</text>'
            )
        for j, v in enumerate(vals):
            fill = "url(#gap)" if v is None else _heat_color(v)
            out.append(
                f'<rect x="{_n(left + j * cw)}" y="{y}" width="{_n(cw + 0.3)}" '
                f'height="{ch - 1}" fill="{fill}"/>'
            )
    ny = top + ch * len(rows)
    step = max(1, math.ceil(len(col_labels) / 8))
    for j in range(0, len(col_labels), step):
        out.append(
            f'<text x="{_n(left + j * cw)}" y="{ny + 14}" fill="#555" font-size="10">'
            f"{_e(col_labels[j])}</text>"
        )
    ly = ny + 30
    for k in range(11):
        out.append(
            f'<rect x="{left + k * 16}" y="{ly}" width="16" height="10" fill="{_heat_color(k / 10)}"/>'
        )
    out.append(
        f'<text x="{left - 6}" y="{ly + 9}" text-anchor="end" fill="#555" font-size="10">'
        f"{_e(legend_low)}</text>"
    )
    out.append(
        f'<text x="{left + 11 * 16 + 6}" y="{ly + 9}" fill="#555" font-size="10">{_e(legend_high)}</text>'
    )
    gx = left + 11 * 16 + 24 + 7 * len(legend_high)
    out.append(f'<rect x="{gx}" y="{ly}" width="16" height="10" fill="url(#gap)"/>')
    out.append(f'<text x="{gx + 22}" y="{ly + 9}" fill="#555" font-size="10">{_e(gap_label)}</text>')
    out.append("</svg>")
    return "\n".join(out)
