"""HTML pieces of the report: escaping, numbers, sortable tables, figures
with captions, notes, and the page (inline style and script, no network)."""

from __future__ import annotations

import html
import math
import re
from typing import Iterable, List, Optional, Sequence

import numpy as np

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 color:#1d2330;margin:0;background:#f6f7f9}
main{max-width:960px;margin:0 auto;padding:8px 24px 60px;background:#fff}
header{border-bottom:2px solid #dfe3ea;margin-bottom:12px}
h1{font-size:26px;margin:14px 0 4px}h2{font-size:22px;margin:34px 0 6px;
 border-bottom:1px solid #dfe3ea}h3{font-size:17px;margin:22px 0 6px}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0 12px;
 font-size:14px}dl.meta dt{color:#5a6475}dl.meta dd{margin:0;overflow-wrap:anywhere}
nav.toc{font-size:14px;margin:8px 0}nav.toc a{margin-right:10px}
figure{margin:10px 0 18px}figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:13.5px;color:#3c4453;margin-top:4px;max-width:860px}
p.note{background:#fff7e0;border-left:4px solid #e0b000;padding:6px 10px;font-size:14px}
p.lead{font-size:15px}
table{border-collapse:collapse;font-size:13px;margin:8px 0 14px}
th,td{padding:3px 8px;border-bottom:1px solid #e6e9ef;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;user-select:none;background:#eef1f6;position:sticky;top:0}
table.sortable th:after{content:" \\2195";color:#9aa3b2;font-size:11px}
table.sortable th[aria-sort=ascending]:after{content:" \\25B2";color:#1d2330}
table.sortable th[aria-sort=descending]:after{content:" \\25BC";color:#1d2330}
tr.hl td{background:#fff1e6;font-weight:600}tr.ref td{background:#eef6ee}
.yes{color:#1a7f37;font-weight:700}.no{color:#b42318}
.wrap{max-height:420px;overflow:auto;display:inline-block;border:1px solid #e6e9ef}
details{margin:6px 0 14px}summary{cursor:pointer;color:#2457a6}
section.task{margin-top:10px}div.scroll{max-width:100%;overflow-x:auto}
.wrap div.scroll{overflow:visible}
"""

SCRIPT = """
(function(){
 function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent.trim();
  var x=parseFloat(v);return (v!==''&&!isNaN(x)&&isFinite(v))?x:v.toLowerCase();}
 function sortBy(table,col,th){
  var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
  var asc=th.getAttribute('aria-sort')!=='ascending';
  rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);
   if(typeof x!==typeof y){x=String(x);y=String(y);}
   return (x<y?-1:x>y?1:0)*(asc?1:-1);});
  rows.forEach(function(r){body.appendChild(r);});
  Array.prototype.forEach.call(th.parentNode.cells,function(c){c.removeAttribute('aria-sort');});
  th.setAttribute('aria-sort',asc?'ascending':'descending');}
 document.querySelectorAll('table.sortable').forEach(function(table){
  var head=table.tHead;if(!head)return;
  Array.prototype.forEach.call(head.rows[0].cells,function(th,i){
   th.title='click to sort';th.addEventListener('click',function(){sortBy(table,i,th);});});});
})();
"""


_SPECIAL = re.compile("[&<>\"']")


def esc(value) -> str:
    text = "" if value is None else str(value)
    # most cells hold nothing to escape: html.escape only where needed
    return html.escape(text, quote=True) if _SPECIAL.search(text) else text


def isnum(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        not (isinstance(value, float) and math.isnan(value))


def num(value, digits: int = 3) -> str:
    """A number as shown; ``n/a`` when undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return f"{value:,}"
    return f"{float(value):.{digits}f}"


#: per number of decimals: every count of units of the last decimal from
#: 0 up as ``%.<digits>f`` writes it (grown, by doubling, to the largest
#: asked, at most :data:`_TABLED` entries)
_FIXED: dict = {}
_TABLED = 2 ** 17


def _fixed_texts(units: np.ndarray, digits: int) -> np.ndarray:
    scale = 10 ** digits
    whole, rest = np.divmod(units, scale)
    wholes = np.array([str(k) for k in range(int(whole.max(initial=0)) + 1)], dtype=object)
    if not digits:
        return wholes[whole]
    rests = np.array([".%0*d" % (digits, k) for k in range(scale)], dtype=object)
    return wholes[whole] + rests[rest]


def fixed(values, digits: int = 3) -> List[str]:
    """``"%.<digits>f" % v`` of each value (an array of floats), in one go:
    made from the value's count of units of its last decimal as an integer
    (``%`` rounds the double's exact value; ``rint`` of the double
    ``v * 10**digits`` is that count whenever the product is not within
    1e-6 of a half, its rounding error being below 1e-7 for the counts
    taken), its text looked up; the few others, NaN and infinities by
    ``%`` one by one. The sign is the double's (``-0.000`` for a small
    negative value, as ``%`` writes it)."""
    v = np.asarray(values, dtype=float)
    form = f"%.{digits}f"
    if v.ndim != 1 or len(v) < 32 or not 0 <= digits <= 6:    # a few: by %
        return [form % x for x in v.tolist()]
    with np.errstate(invalid="ignore", over="ignore"):
        f = v * float(10 ** digits)
        n = np.rint(f)
        ok = (np.abs(f - n) < 0.5 - 1e-6) & (np.abs(n) < 1e9)       # NaN: false
    a = np.abs(np.where(ok, n, 0.0)).astype(np.int64)
    top = int(a.max())
    if top < _TABLED:
        table = _FIXED.get(digits)
        if table is None or top >= len(table):
            size = min(max(top + 1, 2 * (0 if table is None else len(table)), 1024), _TABLED)
            table = _FIXED[digits] = _fixed_texts(np.arange(size, dtype=np.int64), digits)
        text = table[a]
    else:
        text = _fixed_texts(a, digits)
    negative = np.signbit(v) & ok
    if negative.any():
        text[negative] = "-" + text[negative]
    out = text.tolist()
    if not ok.all():
        for i in np.flatnonzero(~ok).tolist():
            out[i] = form % v[i]
    return out


def interval(value, low=None, high=None, digits: int = 3) -> str:
    """``0.325 [0.280, 0.373]`` (the interval only when known)."""
    text = num(value, digits)
    if low is not None and high is not None and isnum(low) and isnum(high):
        text += f" [{num(low, digits)}, {num(high, digits)}]"
    return text


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(name)).strip("-") or "x"


class Cell:
    """A table cell: shown text (already HTML), the value it sorts by, a class."""

    __slots__ = ("shown", "sort", "cls")

    def __init__(self, shown: str, sort=None, cls: str = ""):
        self.shown, self.sort, self.cls = shown, sort, cls


def cell(value, digits: int = 3) -> Cell:
    """Numbers right-aligned and sorted by value; booleans as yes/no."""
    kind = type(value)
    if kind is float:                    # the most common cells first (a report has 10^5)
        if value != value:               # NaN
            return Cell("n/a", "", "n")
        return Cell(f"{value:.{digits}f}", repr(value), "n")
    if kind is str:
        return Cell(esc(value))
    if kind is Cell:
        return value
    if isinstance(value, Cell):
        return value
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):   # numpy scalar
        value = value.item()
    if value is None:
        return Cell("")
    if isinstance(value, bool):
        return Cell('<span class="yes">yes</span>' if value else '<span class="no">no</span>',
                    int(value))
    if isnum(value):
        return Cell(esc(num(value, digits)), repr(float(value)), "n")
    if isinstance(value, float):  # NaN
        return Cell("n/a", "", "n")
    return Cell(esc(value))


def td(c: Cell) -> str:
    """A cell's ``<td>``."""
    cls = f" class={c.cls}" if c.cls else ""
    if c.sort is None:
        return f"<td{cls}>{c.shown}</td>"
    return f'<td{cls} data-v="{esc(c.sort)}">{c.shown}</td>'


#: the ``<td>`` of an undefined number, of true and of false
NA_TD = '<td class=n data-v="">n/a</td>'
YES_TD = '<td data-v="1"><span class="yes">yes</span></td>'
NO_TD = '<td data-v="0"><span class="no">no</span></td>'


class Rendered:
    """A table's column already made: its ``<td>`` strings and whether it
    is numeric (every cell right-aligned, or ``n/a``)."""

    __slots__ = ("tds", "numeric")

    def __init__(self, tds: List[str], numeric: bool):
        self.tds, self.numeric = tds, numeric


def column(values: Iterable, digits: int = 3) -> Rendered:
    """The ``<td>`` of each value of a table's column (those of
    :func:`cell`: floats and strings made here, the rest by :func:`cell`).
    A column of floats only or strings only makes each distinct value's
    once (a table's columns repeat values: a set's KING on every row)."""
    values = values if type(values) is list else list(values)
    kinds = set(map(type, values))
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind is float:
            form = f'<td class=n data-v="%r">%.{digits}f</td>'
            # distinct values: NaN's are each their own (looked up by identity)
            distinct = list(dict.fromkeys(values))
            made = {v: f'<td class=n data-v="{v!r}">{t}</td>' if v == v else NA_TD
                    for v, t in zip(distinct, fixed(distinct, digits))}
            if 0.0 in made:             # 0.0 and -0.0 are one key but two cells
                return Rendered([made[v] if v else form % (v, v) for v in values], True)
            return Rendered([made[v] for v in values], True)
        if kind is str:
            distinct = dict.fromkeys(values)
            if _SPECIAL.search("".join(distinct)):
                made = {v: f"<td>{esc(v)}</td>" for v in distinct}
            else:                           # nothing to escape in any (one search)
                made = {v: f"<td>{v}</td>" for v in distinct}
            return Rendered([made[v] for v in values], all(v == "n/a" for v in made))
    out: List[str] = []
    add = out.append
    numeric = True
    for v in values:
        kind = type(v)
        if kind is float:
            add(f'<td class=n data-v="{v!r}">{v:.{digits}f}</td>' if v == v else NA_TD)
        elif kind is str:
            shown = esc(v)
            add(f"<td>{shown}</td>")
            if numeric and shown != "n/a":
                numeric = False
        elif kind is int:
            add(f'<td class=n data-v="{float(v)!r}">{v:,}</td>')
        elif kind is bool:
            add(YES_TD if v else NO_TD)
            numeric = False
        else:
            c = cell(v, digits)
            add(td(c))
            if numeric and c.cls != "n" and c.shown != "n/a":
                numeric = False
    return Rendered(out, numeric)


def table(headers: Sequence[str], rows: Iterable[Sequence], row_classes: Optional[Sequence[str]]
          = None, digits: int = 3, sortable: bool = True, table_id: str = "") -> str:
    """A table whose columns sort when their header is clicked."""
    rows = rows if isinstance(rows, list) else list(rows)
    width = len(headers)
    if not width or any(len(r) != width for r in rows):      # ragged: cell by cell
        cells = [[cell(v, digits) for v in r] for r in rows]
        numeric = [bool(cells) and all(r[i].cls == "n" or r[i].shown == "n/a" for r in cells)
                   for i in range(width)]
        lines = ["".join(td(c) for c in r) for r in cells]
        return _table(headers, numeric, lines, row_classes, sortable, table_id)
    return table_of(headers, list(zip(*rows)) if rows else [[] for _ in headers], row_classes,
                    digits, sortable, table_id)


def table_of(headers: Sequence[str], columns: Sequence, row_classes: Optional[Sequence[str]]
             = None, digits: int = 3, sortable: bool = True, table_id: str = "") -> str:
    """:func:`table` of its columns (each a sequence of values, or
    :class:`Rendered`), one per header, all of one length."""
    made = [c if isinstance(c, Rendered) else column(c, digits) for c in columns]
    n = len(made[0].tds) if made else 0
    numeric = [bool(n) and c.numeric for c in made]
    lines = ["".join(r) for r in zip(*(c.tds for c in made))] if made else []
    return _table(headers, numeric, lines, row_classes, sortable, table_id)


def _table(headers, numeric, lines, row_classes, sortable, table_id) -> str:
    head = "".join(f'<th{" class=n" if numeric[i] else ""} scope="col">{esc(h)}</th>'
                   for i, h in enumerate(headers))
    if row_classes:
        body = "".join(f"<tr class={row_classes[i]}>{t}</tr>" if row_classes[i] else
                       f"<tr>{t}</tr>" for i, t in enumerate(lines))
    elif lines:
        body = "<tr>" + "</tr><tr>".join(lines) + "</tr>"
    else:
        body = ""
    ident = f' id="{esc(table_id)}"' if table_id else ""
    klass = ' class="sortable"' if sortable else ""
    return (f'<div class="scroll"><table{ident}{klass}><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def figure(svg: str, caption: str, name: str) -> str:
    return (f'<figure data-figure="{esc(name)}">{svg}'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def section(ident: str, title: str, body: str, level: int = 3) -> str:
    return (f'<section id="{esc(ident)}" class="part"><h{level}>{esc(title)}</h{level}>'
            f"{body}</section>")


def page_start(title: str, header: str) -> str:
    """The page up to its body (then the body, then :func:`page_end`)."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><link rel=\"icon\" href=\"data:,\">"
            f"<style>{STYLE}</style></head><body><main>"
            f"<header>{header}</header>")


def page_end() -> str:
    return f"</main><script>{SCRIPT}</script></body></html>\n"
