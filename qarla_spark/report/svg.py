"""A small SVG plotting layer for the report's figures: pure Python string
building, no font metrics, no matplotlib (issue 36: matplotlib's layout
cost 0.25-1 s a figure, ten figures a task, so a run's report grew with its
tasks rather than its topics).

What it draws is what :mod:`qarla_spark.report.figures` needs: axes with
linear scales and "nice" ticks (:func:`nice_ticks`), tick labels (one
colour or weight per tick if asked), axis labels, titles, grid lines;
scatter markers (circle, diamond, star; filled or hollow, with edges),
horizontal and vertical segments, horizontal bars, polylines with markers,
lines across the axes and vertical bands, text annotations, legends (a
corner, or the one covering the fewest points: ``"best"``), and grids of
panels. Sizes are in points (1/72 inch) as in matplotlib: a figure 9
inches wide is 648 units wide, shown 864 pixels wide; a marker's ``size``
is its area in points², as matplotlib's ``s``.

Text is laid out from an estimate of its width (:func:`text_width`, from
its characters and the font size, on the generous side), so margins fit
the longest tick label without measuring a font. Output is deterministic:
numbers in attributes are rounded to 2 decimals, ids are made of the
figure's key (unique per figure), text stays ``<text>``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from html import escape
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

#: the font named in every figure (the width estimate is DejaVu Sans's)
FONT = "'DejaVu Sans', 'Bitstream Vera Sans', Arial, Helvetica, sans-serif"
INK = "#1d2330"
SPINE = "#3c4453"
GRID = "#e3e6ec"
TICK = 3.5                 # tick length
PAD = 5.0                  # between the cell's edge and what it holds
FONT_SIZE = 10.0
TITLE_SIZE = 11.0
#: matplotlib's dash patterns (scaled by the line width)
DASHES = {"--": (3.7, 1.6), ":": (1.0, 1.65), "-.": (6.4, 1.6, 1.0, 1.6)}


# ------------------------------------------------------------------ numbers and text

def fmt(value: float) -> str:
    """A coordinate: 2 decimals at most, no trailing zeros, never ``-0``
    (each value's text made once: a figure writes the same few again and
    again — its edges, tick lengths, widths)."""
    found = _FMT.get(value)
    if found is None:
        text = ("%.2f" % value).rstrip("0").rstrip(".")
        found = "0" if text == "-0" else text
        if len(_FMT) >= 65536:
            _FMT.clear()
        _FMT[value] = found
    return found


#: :func:`fmt`'s texts made so far, by value (0.0 and -0.0, one key, have
#: one text; NaN, never found again, is made each time)
_FMT: Dict[float, str] = {}


#: the text of the hundredths of a coordinate (``.5``, ``.05``, ``.25``...;
#: none for a whole number), by hundredths
_HUNDREDTHS = np.array(["" if d == 0 else (".%02d" % d).rstrip("0") for d in range(100)],
                       dtype=object)
#: every coordinate from 0 up as :func:`fmt` writes it, by its hundredths
#: (grown, by doubling, to the largest asked, at most :data:`_TABLED`)
_TEXTS = np.empty(0, dtype=object)
_TABLED = 2 ** 20
#: coordinates of at most this many hundredths are made by :func:`fmts`'s
#: integer way (beyond: by ``%``, one by one)
_LARGEST = 10 ** 9


def _fmt_each(values: List[float]) -> List[str]:
    out = [("%.2f" % v).rstrip("0").rstrip(".") for v in values]
    return [t if t != "-0" else "0" for t in out]


def _texts_of(hundredths: np.ndarray) -> np.ndarray:
    """The text of each count of hundredths (integers, 0 up)."""
    whole, rest = np.divmod(hundredths, 100)
    return np.array([str(k) for k in range(int(whole.max(initial=0)) + 1)],
                    dtype=object)[whole] + _HUNDREDTHS[rest]


def fmts(values) -> List[str]:
    """:func:`fmt` of many values (an array), in one go: the same text,
    made from each value's number of hundredths as an integer (``%.2f``
    rounds the double's exact value to the nearest hundredth; ``rint`` of
    the double ``100 * v`` is that hundredth whenever ``100 * v`` is not
    within 1e-6 of a half — its rounding error is below 1e-7 for the
    coordinates taken — and the few others, NaN and infinities are made by
    ``%`` one by one), its text looked up."""
    global _TEXTS
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or len(v) < 32:      # a few: numpy's set-up would cost more
        return _fmt_each(v.tolist())
    with np.errstate(invalid="ignore"):
        f = v * 100.0
        n = np.rint(f)
        ok = (np.abs(f - n) < 0.5 - 1e-6) & (np.abs(n) < _LARGEST)     # NaN: false
    n = np.where(ok, n, 0.0).astype(np.int64)
    a = np.abs(n)
    top = int(a.max())
    if top < _TABLED:
        if top >= len(_TEXTS):
            size = max(top + 1, 2 * len(_TEXTS), 4096)
            _TEXTS = _texts_of(np.arange(min(size, _TABLED), dtype=np.int64))
        text = _TEXTS[a]
    else:
        text = _texts_of(a)
    negative = n < 0
    if negative.any():
        text[negative] = "-" + text[negative]
    out = text.tolist()
    if not ok.all():
        bad = np.flatnonzero(~ok).tolist()
        for i, t in zip(bad, _fmt_each(v[bad].tolist())):
            out[i] = t
    return out


_SPECIAL = re.compile("[&<>\"']")


def esc(text: Any) -> str:
    text = str(text)
    # most labels hold nothing to escape: html.escape only where needed
    return escape(text, quote=True) if _SPECIAL.search(text) else text


# relative widths of DejaVu Sans's glyphs (em), by class; on the wide side
_NARROW = set("ijl.,:;'|!I `")
_SLIM = set("ftr()[]{}-/\\\"*1")
_WIDE = set("mwMW%@")


def text_width(text: str, size: float = FONT_SIZE, bold: bool = False) -> float:
    """The estimated width of ``text`` at font ``size`` (generous: 10% more
    than DejaVu Sans, so that a wider sans-serif still fits). Each text's
    width in em is found once (the tasks' figures label the same metrics,
    ticks and legends again and again)."""
    if type(text) is not str:       # 1, 1.0 and True are one key but three texts
        text = str(text)
    em = _EMS.get(text)
    if em is None:
        em = _em(text)
        if len(_EMS) >= 65536:
            _EMS.clear()
        _EMS[text] = em
    return em * size * (1.1 if bold else 1.0) * 1.1


#: :func:`_em` of the texts measured so far
_EMS: Dict[str, float] = {}


def _em(text: str) -> float:
    """The width of ``text`` in em (:func:`text_width`)."""
    em = 0.0
    for ch in text:
        if ch in _NARROW:
            em += 0.32
        elif ch in _SLIM:
            em += 0.42
        elif ch in _WIDE:
            em += 0.98
        elif ch.isupper():
            em += 0.76
        elif ord(ch) < 128:
            em += 0.64
        else:
            em += 1.0
    return em


def nice_step(span: float, target: int) -> float:
    """The step of about ``target`` intervals over ``span``: 1, 2, 2.5 or 5
    times a power of ten."""
    raw = span / max(1, target)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= m * magnitude * (1 + 1e-9):
            return m * magnitude
    return 10.0 * magnitude


def _multiples(low: float, high: float, step: float) -> List[float]:
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(k * step, 12) + 0.0 for k in range(first, last + 1)]


def nice_ticks(low: float, high: float, target: int = 6) -> List[float]:
    """Round values between ``low`` and ``high`` (both included when round):
    the multiples of the smallest step of 1, 2, 2.5 or 5 times a power of
    ten that gives at most ``target + 1`` of them (as matplotlib's
    MaxNLocator)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high < low:
        return []
    if high == low:
        return [low]
    step = nice_step(high - low, target)
    ticks = _multiples(low, high, step)
    # one notch smaller may still fit: the range's ends are rarely multiples
    magnitude = 10.0 ** math.floor(math.log10(step) + 1e-9)
    mantissa = round(step / magnitude, 6)
    smaller = {1.0: 0.5, 2.0: 1.0, 2.5: 2.0, 5.0: 2.5, 10.0: 5.0}.get(mantissa)
    if smaller is not None:
        finer = _multiples(low, high, smaller * magnitude)
        if len(finer) <= target + 1:
            return finer
    return ticks


def tick_labels(ticks: Sequence[float]) -> List[str]:
    """The ticks as text, all with the decimals their step needs (``−`` for
    minus, as matplotlib)."""
    if not ticks:
        return []
    step = min((b - a for a, b in zip(ticks, ticks[1:])), default=0.0)
    decimals = 0
    if step > 0:
        decimals = max(0, -math.floor(math.log10(step) + 1e-9))
        while decimals < 12 and abs(round(step, decimals) - step) > 1e-9 * step:
            decimals += 1
    elif ticks[0] != 0:
        decimals = max(0, 2 - math.floor(math.log10(abs(ticks[0]))))
    out = []
    for t in ticks:
        text = f"{t:.{decimals}f}"
        if float(text) == 0:
            text = text.lstrip("-")
        out.append(text.replace("-", "−"))
    return out


@dataclass
class Linear:
    """A linear scale: ``domain`` (data) to ``span`` (drawing units)."""

    domain: Tuple[float, float]
    span: Tuple[float, float]

    def __call__(self, value: float) -> float:
        (d0, d1), (r0, r1) = self.domain, self.span
        return r0 + (value - d0) * (r1 - r0) / (d1 - d0)


def limits(values: Iterable[float], low: Optional[float] = None,
           high: Optional[float] = None, margin: float = 0.05,
           sticky: Sequence[float] = ()) -> Tuple[float, float]:
    """The axis range of ``values``: their extent plus ``margin`` of it on
    each side (none beyond a ``sticky`` value at the extent's edge, as the
    zero of bars); ``low``/``high`` fixed when given. Nothing finite: 0..1."""
    values = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float)
    finite = values[np.isfinite(values)]
    if len(finite):
        a, b = float(finite.min()), float(finite.max())
    else:
        a, b = (0.0, 1.0)
    if a == b:
        a, b = (a - 0.5, b + 0.5) if a == 0 else (a - 0.05 * abs(a), b + 0.05 * abs(b))
    pad = margin * (b - a)
    lo = a if a in sticky else a - pad
    hi = b if b in sticky else b + pad
    lo, hi = (lo if low is None else float(low)), (hi if high is None else float(high))
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi


def _floats(values) -> np.ndarray:
    return np.asarray(list(values) if not hasattr(values, "__len__") else values,
                      dtype=float).ravel()


def _per_point(value, n: int) -> List[Any]:
    """A style given once or per point, as a list of ``n``."""
    if value is None or isinstance(value, str):
        return [value] * n
    out = list(value)
    if len(out) != n:
        raise ValueError(f"{len(out)} styles for {n} points")
    return out


# ------------------------------------------------------------------ markers

def marker_shape(marker: str, x: float, y: float, size: float, attrs: str = "") -> str:
    """One marker of area ``size`` (points², matplotlib's ``s``) at (x, y)."""
    d = math.sqrt(max(size, 0.0))
    if marker == "o":
        return f'<circle cx="{fmt(x)}" cy="{fmt(y)}" r="{fmt(d / 2)}"{attrs}/>'
    if marker == "D":
        h = d * 0.56
        pts = [(x, y - h), (x + h, y), (x, y + h), (x - h, y)]
    elif marker == "*":
        outer, inner = d * 0.62, d * 0.62 * 0.382
        pts = [(x + (outer if k % 2 == 0 else inner) * math.sin(k * math.pi / 5),
                y - (outer if k % 2 == 0 else inner) * math.cos(k * math.pi / 5))
               for k in range(10)]
    elif marker == "s":
        h = d / 2
        pts = [(x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)]
    else:
        raise ValueError(f"unknown marker {marker!r}")
    path = "M" + "L".join(f"{fmt(a)} {fmt(b)}" for a, b in pts) + "Z"
    return f'<path d="{path}"{attrs}/>'


def _paint(fill=None, edge=None, width=None, opacity=None, dash=None) -> str:
    out = []
    if fill is not None:
        out.append(f' fill="{esc(fill)}"')
    if edge is not None:
        out.append(f' stroke="{esc(edge)}"')
    if width is not None:
        out.append(f' stroke-width="{fmt(width)}"')
    if opacity is not None and opacity < 1:
        out.append(f' opacity="{fmt(opacity)}"')
    if dash:
        out.append(f' stroke-dasharray="{" ".join(fmt(v * (width or 1)) for v in DASHES[dash])}"')
    return "".join(out)


# ------------------------------------------------------------------ legends

@dataclass
class Handle:
    """A legend entry: a marker, a line, or both (a line with markers)."""

    label: str
    marker: Optional[str] = None
    fill: Optional[str] = None
    edge: Optional[str] = None
    edge_width: float = 0.0
    size: float = 36.0
    line: Optional[str] = None          # the line's colour
    line_width: float = 1.5
    dash: Optional[str] = None
    opacity: float = 1.0

    def draw(self, x: float, y: float, length: float, room: float) -> str:
        out = []
        if self.line is not None:
            paint = _paint(edge=self.line, width=self.line_width, dash=self.dash,
                           opacity=self.opacity)
            out.append(f'<path d="M{fmt(x)} {fmt(y)}H{fmt(x + length)}" fill="none"{paint}/>')
        if self.marker is not None:
            size = min(self.size, room ** 2)
            edge = self.edge if self.edge_width else None
            out.append(marker_shape(self.marker, x + length / 2, y, size, _paint(
                self.fill or "none", edge, self.edge_width if edge else None, self.opacity)))
        return "".join(out)


#: matplotlib's order of the places a "best" legend may take
BEST_ORDER = ("upper right", "upper left", "lower left", "lower right", "right",
              "center left", "center right", "lower center", "upper center", "center")


# ------------------------------------------------------------------ axes

@dataclass
class _Item:
    kind: str
    z: float
    args: Dict[str, Any]
    label: Optional[str] = None
    handle: Optional[Handle] = None


@dataclass
class Axes:
    """One panel: what is drawn in it (in data units) and its decorations;
    laid out and drawn by :class:`Figure`."""

    items: List[_Item] = field(default_factory=list)
    title: Optional[str] = None
    xlabel: Optional[str] = None
    ylabel: Optional[str] = None
    xlim: Tuple[Optional[float], Optional[float]] = (None, None)
    ylim: Tuple[Optional[float], Optional[float]] = (None, None)
    xticks: Optional[List[Tuple[float, str]]] = None        # None: automatic
    yticks: Optional[List[Tuple[float, str]]] = None
    ytick_size: float = FONT_SIZE
    ytick_colours: Optional[List[str]] = None
    ytick_bold: Optional[List[bool]] = None
    xgrid: bool = True
    ygrid: bool = True
    legend_spec: Optional[Tuple[str, float, Optional[List[Handle]]]] = None
    visible: bool = True

    # -- what is drawn
    def scatter(self, x, y, size: float = 20.0, fill="#2f6db5", edge=None,
                edge_width: float = 0.0, marker: str = "o", opacity: float = 1.0,
                label: Optional[str] = None, z: float = 1.0) -> None:
        """Markers at (x, y) (non-finite points are not drawn); ``fill`` and
        ``edge``: a colour, or one per point; ``fill="white"``: hollow."""
        x, y = _floats(x), _floats(y)
        n = len(x)
        fills, edges = _per_point(fill, n), _per_point(edge, n)
        legend_fill = fill if isinstance(fill, str) or fill is None else (fills[0] if n else None)
        legend_edge = edge if isinstance(edge, str) or edge is None else (edges[0] if n else None)
        self.items.append(_Item("scatter", z, dict(x=x, y=y, size=size, fills=fills, edges=edges,
                                                   edge_width=edge_width, marker=marker,
                                                   opacity=opacity), label,
                                Handle(label or "", marker=marker, fill=legend_fill,
                                       edge=legend_edge, edge_width=edge_width, size=size,
                                       opacity=opacity)))

    def hlines(self, y, x0, x1, colour="#2f6db5", width: float = 1.0, z: float = 2.0) -> None:
        """Horizontal segments from (x0, y) to (x1, y)."""
        y, x0, x1 = _floats(y), _floats(x0), _floats(x1)
        self.items.append(_Item("hlines", z, dict(a=y, b0=x0, b1=x1,
                                                  colours=_per_point(colour, len(y)),
                                                  width=width)))

    def vlines(self, x, y0, y1, colour="#2f6db5", width: float = 1.0, z: float = 2.0) -> None:
        """Vertical segments from (x, y0) to (x, y1)."""
        x, y0, y1 = _floats(x), _floats(y0), _floats(y1)
        self.items.append(_Item("vlines", z, dict(a=x, b0=y0, b1=y1,
                                                  colours=_per_point(colour, len(x)),
                                                  width=width)))

    def barh(self, y, width, colour="#2f6db5", height: float = 0.8, z: float = 1.0) -> None:
        """Horizontal bars from 0 to ``width`` at ``y`` (``height``: in y units)."""
        y, w = _floats(y), _floats(width)
        self.items.append(_Item("barh", z, dict(y=y, w=w, colours=_per_point(colour, len(y)),
                                                height=height)))

    def plot(self, x, y, colour="#2f6db5", width: float = 1.5, dash: Optional[str] = None,
             marker: Optional[str] = None, marker_size: float = 6.0, opacity: float = 1.0,
             label: Optional[str] = None, z: float = 2.0) -> None:
        """A polyline through (x, y) (broken at non-finite points), with a
        marker of ``marker_size`` points across at each point if asked."""
        x, y = _floats(x), _floats(y)
        self.items.append(_Item("plot", z, dict(x=x, y=y, colour=colour, width=width, dash=dash,
                                                marker=marker, marker_size=marker_size,
                                                opacity=opacity), label,
                                Handle(label or "", marker=marker, fill=colour,
                                       size=marker_size ** 2, line=colour, line_width=width,
                                       dash=dash, opacity=opacity)))

    def axhline(self, y: float, colour: str = INK, width: float = 1.0,
                dash: Optional[str] = None, label: Optional[str] = None, z: float = 2.0) -> None:
        self.items.append(_Item("axhline", z, dict(v=float(y), colour=colour, width=width,
                                                   dash=dash), label,
                                Handle(label or "", line=colour, line_width=width, dash=dash)))

    def axvline(self, x: float, colour: str = INK, width: float = 1.0,
                dash: Optional[str] = None, label: Optional[str] = None, z: float = 2.0) -> None:
        self.items.append(_Item("axvline", z, dict(v=float(x), colour=colour, width=width,
                                                   dash=dash), label,
                                Handle(label or "", line=colour, line_width=width, dash=dash)))

    def axvspan(self, x0: float, x1: float, colour: str, opacity: float = 0.1,
                z: float = 0.5) -> None:
        self.items.append(_Item("axvspan", z, dict(x0=float(x0), x1=float(x1), colour=colour,
                                                   opacity=opacity)))

    def annotate(self, text: str, x: float, y: float, dx: float = 0.0, dy: float = 0.0,
                 size: float = 7.0) -> None:
        """``text`` from (x, y) moved ``dx`` right and ``dy`` up (points)."""
        self.items.append(_Item("text", 5.0, dict(text=str(text), x=float(x), y=float(y),
                                                  dx=dx, dy=dy, size=size)))

    # -- decorations
    def set_xticks(self, positions, labels: Optional[Sequence[str]] = None) -> None:
        """Ticks at ``positions`` (labelled by ``labels``, default their
        values); ``[]``: no ticks and no vertical grid lines."""
        positions = [float(p) for p in positions]
        labels = list(labels) if labels is not None else _value_labels(positions)
        self.xticks = list(zip(positions, map(str, labels)))

    def set_yticks(self, positions, labels: Optional[Sequence[str]] = None,
                   size: float = FONT_SIZE, colours: Optional[Sequence[str]] = None,
                   bold: Optional[Sequence[bool]] = None) -> None:
        """Ticks at ``positions``, their labels at font ``size``, each in its
        colour and weight if given."""
        positions = [float(p) for p in positions]
        labels = list(labels) if labels is not None else _value_labels(positions)
        self.yticks = list(zip(positions, map(str, labels)))
        self.ytick_size = size
        self.ytick_colours = list(colours) if colours is not None else None
        self.ytick_bold = [bool(b) for b in bold] if bold is not None else None

    def legend(self, handles: Optional[Sequence[Handle]] = None, loc: str = "best",
               size: float = 8.0) -> None:
        """A legend of ``handles`` (default: what was drawn with a label, in
        order) at ``loc``: a corner or side (``"lower right"``...), or
        ``"best"``: where it covers the fewest points drawn."""
        if loc != "best" and loc not in BEST_ORDER:
            raise ValueError(f"unknown legend place {loc!r}")
        self.legend_spec = (loc, size, list(handles) if handles is not None else None)

    def handles(self) -> List[Handle]:
        if self.legend_spec is None:
            return []
        if self.legend_spec[2] is not None:
            return self.legend_spec[2]
        return [i.handle for i in self.items if i.label and i.handle is not None]


def _value_labels(positions: Sequence[float]) -> List[str]:
    if all(float(p).is_integer() for p in positions):
        return [str(int(p)).replace("-", "−") for p in positions]
    return tick_labels(positions)


# ------------------------------------------------------------------ the figure

class Figure:
    """A figure of ``nrows`` × ``ncols`` panels (``axes``, row by row),
    ``width`` × ``height`` inches; :meth:`svg` draws it."""

    def __init__(self, height: float, width: float = 9.0, nrows: int = 1, ncols: int = 1):
        self.width, self.height = 72.0 * width, 72.0 * height
        self.nrows, self.ncols = nrows, ncols
        self.axes = [Axes() for _ in range(nrows * ncols)]

    def svg(self, key: str) -> str:
        """The figure as an ``<svg>`` element (``key``: its label, and the
        stem of its ids)."""
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", str(key)) or "f"
        cell_w, cell_h = self.width / self.ncols, self.height / self.nrows
        body = []
        clips = []
        for i, ax in enumerate(self.axes):
            if not ax.visible:
                continue
            r, c = divmod(i, self.ncols)
            clip = f"{stem}-clip{i}"
            drawn, rect = _draw_axes(ax, c * cell_w, r * cell_h, cell_w, cell_h, clip)
            clips.append(f'<clipPath id="{clip}"><rect x="{fmt(rect[0])}" y="{fmt(rect[1])}" '
                         f'width="{fmt(rect[2])}" height="{fmt(rect[3])}"/></clipPath>')
            body.append(f'<g class="axes">{drawn}</g>')
        w, h = self.width, self.height
        return (f'<svg role="img" aria-label="{esc(key)}" xmlns="http://www.w3.org/2000/svg" '
                f'width="{fmt(w * 4 / 3)}" height="{fmt(h * 4 / 3)}" '
                f'viewBox="0 0 {fmt(w)} {fmt(h)}" font-family="{FONT}" '
                f'font-size="{fmt(FONT_SIZE)}" fill="{INK}">'
                f'<defs>{"".join(clips)}</defs>'
                f'<rect width="{fmt(w)}" height="{fmt(h)}" fill="#fff"/>'
                f'{"".join(body)}</svg>')


def _text(x: float, y: float, text: str, size: Optional[float] = None, anchor: str = "start",
          colour: Optional[str] = None, bold: bool = False, rotate: bool = False) -> str:
    attrs = [f'x="{fmt(x)}"', f'y="{fmt(y)}"']
    if size is not None and size != FONT_SIZE:
        attrs.append(f'font-size="{fmt(size)}"')
    if anchor != "start":
        attrs.append(f'text-anchor="{anchor}"')
    if colour is not None and colour != INK:
        attrs.append(f'fill="{esc(colour)}"')
    if bold:
        attrs.append('font-weight="bold"')
    if rotate:
        attrs.append(f'transform="rotate(-90 {fmt(x)} {fmt(y)})"')
    return f'<text {" ".join(attrs)}>{esc(text)}</text>'


def _fit(text: str, size: float, room: float, smallest: float = 7.0) -> float:
    """The font size at most ``size`` at which ``text`` fits ``room``."""
    width = text_width(text, size)
    if width <= room:
        return size
    return max(smallest, size * room / width)


def _extent(ax: Axes) -> Tuple[np.ndarray, np.ndarray, List[float]]:
    """The x and y values the axes' ranges must hold, and the x values
    that stay at a range's edge (the zero of bars)."""
    xs: List[Any] = [np.empty(0)]
    ys: List[Any] = [np.empty(0)]
    sticky: List[float] = []
    for item in ax.items:
        a = item.args
        if item.kind in ("scatter", "plot"):
            ok = np.isfinite(a["x"]) & np.isfinite(a["y"])
            xs.append(a["x"][ok])
            ys.append(a["y"][ok])
        elif item.kind in ("hlines", "vlines"):
            ok = np.isfinite(a["a"]) & np.isfinite(a["b0"]) & np.isfinite(a["b1"])
            along, across = (ys, xs) if item.kind == "hlines" else (xs, ys)
            along.append(a["a"][ok])
            across += [a["b0"][ok], a["b1"][ok]]
        elif item.kind == "barh":
            ys += [a["y"] - a["height"] / 2, a["y"] + a["height"] / 2]
            xs += [a["w"], [0.0]]
            sticky.append(0.0)
        elif item.kind == "axhline":
            ys.append([a["v"]])
        elif item.kind == "axvline":
            xs.append([a["v"]])
        elif item.kind == "axvspan":
            xs.append([a["x0"], a["x1"]])
    return np.concatenate(xs), np.concatenate(ys), sticky


def _draw_axes(ax: Axes, left: float, top: float, width: float, height: float,
               clip: str) -> Tuple[str, Tuple[float, float, float, float]]:
    """The axes drawn in the cell (left, top, width, height); returns the
    SVG and the plot's rectangle (x, y, w, h)."""
    xs, ys, sticky = _extent(ax)
    xlo, xhi = limits(xs, *ax.xlim, sticky=sticky)
    ylo, yhi = limits(ys, *ax.ylim)
    tick_size = FONT_SIZE
    # vertical: title, plot, x tick labels, x label
    top_room = PAD + (TITLE_SIZE * 1.35 + 3 if ax.title else 0) + 0.6 * ax.ytick_size
    has_xticks = ax.xticks is None or len(ax.xticks) > 0
    bottom_room = PAD + (TICK + 2 + tick_size * 1.25 if has_xticks else 2) + \
        (FONT_SIZE * 1.35 + 2 if ax.xlabel else 0)
    plot_h = max(20.0, height - top_room - bottom_room)
    # y ticks, then the left margin that holds their longest label
    if ax.yticks is None:
        yt = nice_ticks(ylo, yhi, max(2, min(8, int(plot_h / 30))))
        yticks = list(zip(yt, tick_labels(yt)))
    else:
        yticks = [(p, t) for p, t in ax.yticks if ylo - 1e-9 <= p <= yhi + 1e-9]
    bold = ax.ytick_bold or []
    label_w = max([text_width(t, ax.ytick_size, i < len(bold) and bold[i])
                   for i, (_, t) in enumerate(yticks)] or [0.0])
    ylabel_size = _fit(ax.ylabel, FONT_SIZE, plot_h) if ax.ylabel else FONT_SIZE
    left_room = PAD + (ylabel_size * 1.35 + 2 if ax.ylabel else 0) + \
        (label_w + TICK + 3 if yticks else 2)
    # x ticks, whose last label may pass the plot's right edge
    right_room = PAD + 4
    plot_w = max(20.0, width - left_room - right_room)
    xticks: List[Tuple[float, str]] = []
    for _ in range(2):
        if ax.xticks is None:
            target = max(2, min(10, int(plot_w / 60)))
            while True:
                xt = nice_ticks(xlo, xhi, target)
                xticks = list(zip(xt, tick_labels(xt)))
                widest = max([text_width(t, tick_size) for _, t in xticks] or [0.0])
                if target <= 2 or (widest + 8) * len(xticks) <= plot_w:
                    break
                target -= 1
        else:
            xticks = [(p, t) for p, t in ax.xticks if xlo - 1e-9 <= p <= xhi + 1e-9]
        sx = Linear((xlo, xhi), (left + left_room, left + left_room + plot_w))
        over = max([sx(p) + text_width(t, tick_size) / 2 - (left + left_room + plot_w)
                    for p, t in xticks] or [0.0])
        if over <= right_room - PAD:
            break
        right_room = PAD + over + 1
        plot_w = max(20.0, width - left_room - right_room)
    x0, y0 = left + left_room, top + top_room
    x1, y1 = x0 + plot_w, y0 + plot_h
    sx = Linear((xlo, xhi), (x0, x1))
    sy = Linear((ylo, yhi), (y1, y0))
    out = []
    # grid lines under everything
    grid = []
    if ax.xgrid:
        grid += [f"M{fmt(sx(p))} {fmt(y0)}V{fmt(y1)}" for p, _ in xticks]
    if ax.ygrid:
        grid += [f"M{fmt(x0)} {fmt(sy(p))}H{fmt(x1)}" for p, _ in yticks]
    if grid:
        out.append(f'<path d="{"".join(grid)}" fill="none" stroke="{GRID}" '
                   'stroke-width="0.6"/>')
    # what is drawn, by z then order, clipped to the plot
    covered = _Covered(ax.legend_spec is not None and ax.legend_spec[0] == "best")
    drawn = []
    texts = []
    for item in sorted(ax.items, key=lambda i: i.z):      # stable: order kept within a z
        if item.kind == "text":
            a = item.args
            if math.isfinite(a["x"]) and math.isfinite(a["y"]):
                texts.append(_text(sx(a["x"]) + a["dx"], sy(a["y"]) - a["dy"], a["text"],
                                   a["size"]))
            continue
        drawn.append(_draw_item(item, sx, sy, (x0, y0, x1, y1), covered))
    out.append(f'<g clip-path="url(#{clip})">{"".join(drawn)}</g>')
    # spines, ticks and their labels
    ticks = [f"M{fmt(sx(p))} {fmt(y1)}v{fmt(TICK)}" for p, _ in xticks]
    ticks += [f"M{fmt(x0)} {fmt(sy(p))}h{fmt(-TICK)}" for p, _ in yticks]
    out.append(f'<path d="M{fmt(x0)} {fmt(y0)}V{fmt(y1)}H{fmt(x1)}{"".join(ticks)}" '
               f'fill="none" stroke="{SPINE}" stroke-width="0.8"/>')
    labels = [_text(sx(p), y1 + TICK + 2 + tick_size * 0.95, t, tick_size, "middle")
              for p, t in xticks]
    colours = ax.ytick_colours or []
    for i, (p, t) in enumerate(yticks):
        labels.append(_text(x0 - TICK - 3, sy(p) + ax.ytick_size * 0.35, t, ax.ytick_size, "end",
                            colours[i] if i < len(colours) else None,
                            i < len(bold) and bold[i]))
    out.append(f'<g class="ticks">{"".join(labels)}</g>')
    if ax.xlabel:
        room = width - 2 * PAD
        size = _fit(ax.xlabel, FONT_SIZE, room)
        centre = (x0 + x1) / 2
        half = text_width(ax.xlabel, size) / 2
        centre = min(max(centre, left + PAD + half), left + width - PAD - half)
        out.append(_text(centre, top + height - PAD - 0.3 * size, ax.xlabel, size, "middle"))
    if ax.ylabel:
        out.append(_text(left + PAD + ylabel_size, (y0 + y1) / 2, ax.ylabel, ylabel_size,
                         "middle", rotate=True))
    if ax.title:
        out.append(_text((x0 + x1) / 2, top + PAD + TITLE_SIZE, ax.title, TITLE_SIZE, "middle"))
    out.extend(texts)
    legend = _legend(ax, (x0, y0, x1, y1), covered)
    if legend:
        out.append(legend)
    return "".join(out), (x0, y0, plot_w, plot_h)


class _Covered:
    """The drawing's points a "best" legend should not cover (arrays of x
    and y, in drawing units); kept only when ``active`` (a "best" legend)."""

    def __init__(self, active: bool = True):
        self.active = active
        self.xs: List[np.ndarray] = []
        self.ys: List[np.ndarray] = []

    def add(self, x, y) -> None:
        if not self.active:
            return
        x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
        if len(x) != len(y):
            x, y = np.broadcast_arrays(x, y) if len(x) == 1 or len(y) == 1 else (x[:0], y[:0])
        self.xs.append(x)
        self.ys.append(y)

    def count(self, x0: float, y0: float, x1: float, y1: float) -> int:
        if not self.xs:
            return 0
        if len(self.xs) > 1:
            self.xs, self.ys = [np.concatenate(self.xs)], [np.concatenate(self.ys)]
        x, y = self.xs[0], self.ys[0]
        return int(((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)).sum())


def _markers(marker: str, px: np.ndarray, py: np.ndarray, size: float,
             fills: Optional[List[Any]] = None, edges: Optional[List[Any]] = None) -> List[str]:
    """Markers at the drawing points (px, py), each of its own fill and edge
    colour when given per point."""
    xs, ys = fmts(px), fmts(py)
    extra = [""] * len(xs)
    if fills is not None or edges is not None:
        extra = [_paint(f or "none" if fills is not None else None,
                        e or "none" if edges is not None else None)
                 for f, e in zip(fills or [None] * len(xs), edges or [None] * len(xs))]
    if marker == "o":
        r = fmt(math.sqrt(max(size, 0.0)) / 2)
        if fills is None and edges is None and xs:
            # one string for all (the same text as a circle each): x and y
            # joined by what comes between them, the circles by what ends
            # one and starts the next
            return ['<circle cx="' + f'" r="{r}"/><circle cx="'.join(
                map('" cy="'.join, zip(xs, ys))) + f'" r="{r}"/>']
        return [f'<circle cx="{x}" cy="{y}" r="{r}"{e}/>' for x, y, e in zip(xs, ys, extra)]
    return [marker_shape(marker, x, y, size, e) for x, y, e in zip(px.tolist(), py.tolist(),
                                                                    extra)]


def _draw_item(item: _Item, sx: Linear, sy: Linear, box, covered: _Covered) -> str:
    """One thing drawn; the points it covers are added to ``covered``."""
    a = item.args
    x0, y0, x1, y1 = box
    if item.kind == "scatter":
        ok = np.isfinite(a["x"]) & np.isfinite(a["y"])
        px, py = sx(a["x"][ok]), sy(a["y"][ok])
        covered.add(px, py)
        keep = np.flatnonzero(ok).tolist()
        fills, edges = set(a["fills"]), set(a["edges"])
        one_fill, one_edge = len(fills) <= 1, len(edges) <= 1
        shapes = _markers(a["marker"], px, py, a["size"],
                          None if one_fill else [a["fills"][i] for i in keep],
                          None if one_edge else [a["edges"][i] for i in keep])
        group = _paint((next(iter(fills)) or "none") if one_fill and fills else None,
                       (next(iter(edges)) or "none") if one_edge and edges else None,
                       a["edge_width"] if edges - {None} else None, a["opacity"])
        return f'<g class="markers"{group}>{"".join(shapes)}</g>'
    if item.kind in ("hlines", "vlines"):
        ok = np.isfinite(a["a"]) & np.isfinite(a["b0"]) & np.isfinite(a["b1"])
        scale_a, scale_b = (sy, sx) if item.kind == "hlines" else (sx, sy)
        p, q0, q1 = scale_a(a["a"][ok]), scale_b(a["b0"][ok]), scale_b(a["b1"][ok])
        if item.kind == "hlines":
            covered.add(np.concatenate([q0, q1, (q0 + q1) / 2]), np.concatenate([p, p, p]))
            d = [f"M{u} {v}H{w}" for u, v, w in zip(fmts(q0), fmts(p), fmts(q1))]
        else:
            covered.add(np.concatenate([p, p, p]), np.concatenate([q0, q1, (q0 + q1) / 2]))
            d = [f"M{v} {u}V{w}" for u, v, w in zip(fmts(q0), fmts(p), fmts(q1))]
        by_colour: Dict[str, List[str]] = {}
        for path, colour in zip(d, [c for c, k in zip(a["colours"], ok.tolist()) if k]):
            by_colour.setdefault(colour, []).append(path)
        return "".join(f'<path class="segments" d="{"".join(d)}" fill="none"'
                       f'{_paint(edge=c, width=a["width"])}/>' for c, d in by_colour.items())
    if item.kind == "barh":
        ok = np.isfinite(a["y"]) & np.isfinite(a["w"])
        ends = sx(a["w"][ok])
        zero = float(sx(0.0))
        left, right = np.minimum(ends, zero), np.maximum(ends, zero)
        top, bottom = sy(a["y"][ok] + a["height"] / 2), sy(a["y"][ok] - a["height"] / 2)
        mid = (top + bottom) / 2
        covered.add(np.concatenate([left, right, (left + right) / 2]), np.tile(mid, 3))
        colours = [c for c, k in zip(a["colours"], ok.tolist()) if k]
        bars = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{esc(c)}"/>'
                for x, y, w, h, c in zip(fmts(left), fmts(top), fmts(right - left),
                                         fmts(bottom - top), colours)]
        return f'<g class="bars">{"".join(bars)}</g>'
    if item.kind == "plot":
        ok = np.isfinite(a["x"]) & np.isfinite(a["y"])
        px, py = sx(a["x"]), sy(a["y"])
        out = []
        # runs of finite points: a polyline each
        edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(int), [0]])))
        for start, stop in zip(edges[::2].tolist(), edges[1::2].tolist()):
            rx, ry = px[start:stop], py[start:stop]
            covered.add(rx, ry)
            if stop - start > 1:
                for t in (0.25, 0.5, 0.75):          # along each segment
                    covered.add(rx[:-1] + t * (rx[1:] - rx[:-1]), ry[:-1] + t * (ry[1:] - ry[:-1]))
                pts = " ".join(f"{u},{v}" for u, v in zip(fmts(rx), fmts(ry)))
                out.append(f'<polyline points="{pts}" fill="none"'
                           f'{_paint(edge=a["colour"], width=a["width"], dash=a["dash"])}'
                           ' stroke-linejoin="round"/>')
        if a["marker"]:
            marks = _markers(a["marker"], px[ok], py[ok], a["marker_size"] ** 2)
            out.append(f'<g class="markers"{_paint(fill=a["colour"])} stroke="none">'
                       f'{"".join(marks)}</g>')
        body = "".join(out)
        if a["opacity"] < 1:
            body = f'<g opacity="{fmt(a["opacity"])}">{body}</g>'
        return body
    if item.kind == "axhline":
        if not math.isfinite(a["v"]):
            return ""
        y = sy(a["v"])
        covered.add(np.linspace(x0, x1, 9), y)
        return (f'<path d="M{fmt(x0)} {fmt(y)}H{fmt(x1)}" fill="none"'
                f'{_paint(edge=a["colour"], width=a["width"], dash=a["dash"])}/>')
    if item.kind == "axvline":
        if not math.isfinite(a["v"]):
            return ""
        x = sx(a["v"])
        covered.add(x, np.linspace(y0, y1, 9))
        return (f'<path d="M{fmt(x)} {fmt(y0)}V{fmt(y1)}" fill="none"'
                f'{_paint(edge=a["colour"], width=a["width"], dash=a["dash"])}/>')
    if item.kind == "axvspan":
        if not (math.isfinite(a["x0"]) and math.isfinite(a["x1"])):
            return ""
        left, right = sorted((sx(a["x0"]), sx(a["x1"])))
        return (f'<rect x="{fmt(left)}" y="{fmt(y0)}" width="{fmt(right - left)}" '
                f'height="{fmt(y1 - y0)}" fill="{esc(a["colour"])}" '
                f'fill-opacity="{fmt(a["opacity"])}"/>')
    raise ValueError(f"unknown item {item.kind!r}")


def legend_box(loc: str, box, w: float, h: float, inset: float = 4.0
               ) -> Tuple[float, float]:
    """The top-left corner of a ``w`` × ``h`` legend at ``loc`` in the plot
    ``box`` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    vertical, _, horizontal = loc.partition(" ") if " " in loc else ("center", "", loc)
    if loc == "center":
        vertical, horizontal = "center", "center"
    if loc == "right":
        vertical, horizontal = "center", "right"
    x = {"left": x0 + inset, "right": x1 - inset - w,
         "center": (x0 + x1 - w) / 2}[horizontal]
    y = {"upper": y0 + inset, "lower": y1 - inset - h, "center": (y0 + y1 - h) / 2}[vertical]
    return x, y


def _legend(ax: Axes, box, covered: _Covered) -> str:
    handles = ax.handles()
    if not handles:
        return ""
    loc, size, _ = ax.legend_spec
    row = size * 1.5
    length = size * 2.0
    w = 2 * 4 + length + size * 0.6 + max(text_width(h.label, size) for h in handles)
    h = 2 * 3 + row * len(handles)
    if loc == "best":
        best = None
        for place in BEST_ORDER:
            lx, ly = legend_box(place, box, w, h)
            count = covered.count(lx, ly, lx + w, ly + h)
            if best is None or count < best[0]:
                best = (count, lx, ly)
            if count == 0:
                break
        _, lx, ly = best
    else:
        lx, ly = legend_box(loc, box, w, h)
    out = [f'<g class="legend" font-size="{fmt(size)}">',
           f'<rect x="{fmt(lx)}" y="{fmt(ly)}" width="{fmt(w)}" height="{fmt(h)}" rx="2" '
           'fill="#fff" fill-opacity="0.9" stroke="#ccd2dc" stroke-width="0.6"/>']
    for k, handle in enumerate(handles):
        cy = ly + 3 + row * (k + 0.5)
        out.append(f'<g class="entry">{handle.draw(lx + 4, cy, length, row * 0.8)}'
                   f'{_text(lx + 4 + length + size * 0.6, cy + size * 0.35, handle.label)}</g>')
    out.append("</g>")
    return "".join(out)
