"""Issue 36: the report's own SVG plotting layer (qarla_spark.report.svg)
and the figures drawn with it (qarla_spark.report.figures).

Pure functions, no run directory: the scales and their ticks, the width
estimate that sizes the margins, and every figure of ``FIGURES`` on small
frames — valid XML, one marker per row, its legend's entries, ids unique
per key, deterministic, coordinates rounded, text as text.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from qarla_spark.report import figures as fg
from qarla_spark.report import svg

NS = "{http://www.w3.org/2000/svg}"


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def local(el: ET.Element) -> str:
    return el.tag.replace(NS, "")


def groups(root: ET.Element, cls: str):
    return [g for g in root.iter(f"{NS}g") if g.get("class") == cls]


def plot_markers(root: ET.Element) -> int:
    """Markers drawn in the plots (not in the legends)."""
    legend_marks = {id(e) for g in groups(root, "legend") for e in g.iter()}
    return sum(1 for g in groups(root, "markers") if id(g) not in legend_marks
               for e in g if local(e) in ("circle", "path"))


def legend_labels(root: ET.Element):
    """The entries of each legend, in order (one list per legend)."""
    return [[t.text for t in g.iter(f"{NS}text")] for g in groups(root, "legend")]


def tick_labels(root: ET.Element):
    return [t for g in groups(root, "ticks") for t in g.iter(f"{NS}text")]


# ---------------------------------------------------------------- scales and ticks

def test_nice_ticks_of_known_ranges():
    assert svg.nice_ticks(0, 1, 5) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert svg.nice_ticks(-0.23, 0.74, 5) == [-0.2, 0, 0.2, 0.4, 0.6]
    assert svg.nice_ticks(1, 10, 4) == [2, 4, 6, 8, 10]
    # a step of 0.1 would give 2 ticks; 0.05, still at most 6
    assert svg.nice_ticks(0.443, 0.69, 5) == [0.45, 0.5, 0.55, 0.6, 0.65]
    assert svg.nice_ticks(3, 3) == [3]
    assert svg.nice_ticks(2, 1) == [] and svg.nice_ticks(0, math.inf) == []


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6), st.floats(1e-6, 1e6), st.integers(2, 10))
def test_nice_ticks_are_round_evenly_spaced_and_inside(low, span, target):
    """(Ranges narrower than a millionth of their values are not for
    plots: floats cannot space their ticks evenly.)"""
    assume(span >= 1e-6 * max(1.0, abs(low)))
    high = low + span
    ticks = svg.nice_ticks(low, high, target)
    ulp = 4 * float(np.spacing(max(abs(low), abs(high))))      # what floats can tell apart
    assert 1 <= len(ticks) <= target + 1
    assert all(low - 1e-9 * span - ulp <= t <= high + 1e-9 * span + ulp for t in ticks)
    step = svg.nice_step(span, target)
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(math.isclose(mantissa, m, rel_tol=1e-9) for m in (1, 2, 2.5, 5, 10))
    assert span / target <= step * (1 + 1e-9) and step <= 2.5 * span / target
    if len(ticks) > 1:
        # the step, or one notch finer (1, 2, 2.5, 5: the one below)
        notch = {1: 0.5, 2: 1, 2.5: 2, 5: 2.5, 10: 5}[min((1, 2, 2.5, 5, 10),
                                                           key=lambda m: abs(m - mantissa))]
        finer = step / mantissa * notch
        spacing = min((step, finer), key=lambda s: abs(s - (ticks[1] - ticks[0])))
        assert np.allclose(np.diff(ticks), spacing, rtol=1e-6, atol=ulp)
        assert all(abs(t / spacing - round(t / spacing)) * spacing <= 2 * ulp + 1e-9 * spacing
                   for t in ticks)


def test_tick_labels_share_their_decimals_and_never_say_minus_zero():
    assert svg.tick_labels([0, 0.25, 0.5]) == ["0.00", "0.25", "0.50"]
    assert svg.tick_labels([-0.2, 0.0, 0.2]) == ["−0.2", "0.0", "0.2"]
    assert svg.tick_labels([0, 5, 10]) == ["0", "5", "10"]
    assert svg.tick_labels([-1e-17, 0.5]) == ["0.0", "0.5"]


def test_linear_scales_and_limits():
    scale = svg.Linear((0.0, 2.0), (100.0, 0.0))       # a y axis: up is smaller
    assert scale(0.0) == 100.0 and scale(2.0) == 0.0 and scale(0.5) == 75.0
    assert svg.limits([0, 10]) == (-0.5, 10.5)                    # 5% each side
    assert svg.limits([0, 10], sticky=[0.0]) == (0.0, 10.5)       # bars start at zero
    assert svg.limits([0, 10], high=1.02) == (-0.5, 1.02)
    assert svg.limits([np.nan, np.inf]) == (-0.05, 1.05)          # nothing finite
    assert svg.limits([3, 3])[0] < 3 < svg.limits([3, 3])[1]


def test_numbers_are_rounded_to_two_decimals():
    assert svg.fmt(1.23456) == "1.23" and svg.fmt(2.0) == "2" and svg.fmt(-0.001) == "0"
    assert svg.fmts(np.array([0.125001, 10.5, -3.0])) == ["0.13", "10.5", "-3"]


def _fmt_reference(value: float) -> str:
    """A coordinate as the report has always written it: ``%.2f``, trailing
    zeros and point stripped, ``-0`` as ``0``."""
    text = ("%.2f" % value).rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


#: values whose hundredth is a tie or near one (the integer way must hand
#: them to ``%``), non-finite ones, signed zeros, huge and tiny ones
_AWKWARD = [0.125, -0.125, 0.005, -0.005, 0.015, 1.005, 2.675, 0.0, -0.0, -0.001, -0.004999,
            0.004999, float("nan"), float("inf"), -float("inf"), 1e12, -1e12, 1e300, 5e-324,
            10485.755, 10485.76, -10485.76, 123456789.125, 1e7 + 0.005]


def test_fmts_is_fmt_of_each_value():
    """The integer way of :func:`svg.fmts` writes every value as ``%.2f``
    does: random coordinates, every hundredth and thousandth near the
    drawing's range, ties, non-finite values, values beyond its table."""
    rng = np.random.default_rng(7)
    cases = [rng.uniform(-1000, 1000, 50_000), rng.uniform(-1, 1, 50_000),
             np.arange(-120_000, 120_000) / 100.0, np.arange(-300_000, 300_000) / 1000.0,
             np.arange(-20_000, 20_000) / 200.0 + 1e-9, rng.normal(0, 1e7, 20_000),
             np.array(_AWKWARD * 3), np.array(_AWKWARD[:5])]
    for values in cases:
        expected = [_fmt_reference(v) for v in values.tolist()]
        assert svg.fmts(values) == expected
        assert svg.fmts(list(values)) == expected
        assert [svg.fmt(v) for v in values.tolist()] == expected
        assert [svg.fmt(v) for v in values.tolist()] == expected        # cached the second time


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0,
                max_size=40))
def test_fmts_fuzzed(values):
    expected = [_fmt_reference(v) for v in values]
    assert svg.fmts(np.array(values, dtype=float)) == expected
    assert [svg.fmt(v) for v in values] == expected


def test_circles_joined_as_one_string_are_the_circles_one_by_one():
    rng = np.random.default_rng(3)
    px, py = rng.uniform(0, 600, 50), rng.uniform(0, 400, 50)
    shapes = svg._markers("o", px, py, 20.0)
    r = svg.fmt(math.sqrt(20.0) / 2)
    each = [f'<circle cx="{_fmt_reference(x)}" cy="{_fmt_reference(y)}" r="{r}"/>'
            for x, y in zip(px.tolist(), py.tolist())]
    assert "".join(shapes) == "".join(each)
    assert svg._markers("o", px[:0], py[:0], 20.0) == []
    coloured = svg._markers("o", px[:3], py[:3], 20.0, fills=["#fff", "#000", None])
    assert coloured[2] == f'<circle cx="{_fmt_reference(px[2])}" cy="{_fmt_reference(py[2])}" ' \
        f'r="{r}" fill="none"/>'


def test_text_width_grows_with_text_and_size():
    assert svg.text_width("") == 0
    assert svg.text_width("abc", 10) < svg.text_width("abcd", 10) < svg.text_width("abcd", 12)
    assert svg.text_width("WWW", 10) > svg.text_width("iii", 10)
    assert svg.text_width("ref01", 8, bold=True) > svg.text_width("ref01", 8)
    # generous: at least DejaVu Sans's own width (0.55-0.65 em for lower case)
    assert svg.text_width("abcdefghij", 10) >= 10 * 0.6 * 10


# ---------------------------------------------------------------- the layer

def test_a_long_tick_label_widens_the_margin_to_hold_it():
    """The plot starts right of the longest y tick label (its estimated
    width), whatever its length; the label is not clipped at the left."""
    for name in ("a", "a much, much longer metric set name − another one (criterion)"):
        fig = svg.Figure(3)
        ax = fig.axes[0]
        ax.scatter([0.1, 0.2], [0, 1])
        ax.set_yticks([0, 1], ["short", name], size=8)
        root = parse(fig.svg("k"))
        clip = root.find(f"{NS}defs/{NS}clipPath/{NS}rect")
        plot_left = float(clip.get("x"))
        label = [t for t in tick_labels(root) if t.text == name][0]
        assert float(label.get("x")) - svg.text_width(name, 8) >= 0
        assert plot_left >= svg.text_width(name, 8) + svg.TICK


def test_a_best_legend_goes_where_there_is_no_data():
    fig = svg.Figure(3)
    ax = fig.axes[0]
    along = np.linspace(0, 1, 30)
    ax.scatter(np.concatenate([along, np.zeros(30)]), np.concatenate([np.ones(30), along]),
               label="points")                      # along the top and the left edges
    ax.legend(loc="best")
    root = parse(fig.svg("k"))
    box = [g for g in groups(root, "legend")][0].find(f"{NS}rect")
    clip = root.find(f"{NS}defs/{NS}clipPath/{NS}rect")
    middle_x = float(clip.get("x")) + float(clip.get("width")) / 2
    middle_y = float(clip.get("y")) + float(clip.get("height")) / 2
    assert float(box.get("x")) > middle_x and float(box.get("y")) > middle_y   # lower right


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e4, 1e4), st.just(math.nan), st.just(math.inf)),
                min_size=0, max_size=40), st.sampled_from(["o", "D", "*"]))
def test_a_scatter_draws_its_finite_points_and_stays_valid_xml(values, marker):
    x = np.array(values, dtype=float)
    y = x[::-1].copy()
    fig = svg.Figure(2.5)
    fig.axes[0].scatter(x, y, marker=marker, label="p")
    fig.axes[0].legend()
    root = parse(fig.svg("key"))
    assert plot_markers(root) == int((np.isfinite(x) & np.isfinite(y)).sum())
    assert legend_labels(root) == [["p"]]


# ---------------------------------------------------------------- every figure

def rows_of_each_figure():
    """(figure name, positional arguments, rows drawn as markers, legend)."""
    rng = np.random.default_rng(5)
    king = pd.DataFrame({"metric": ["R-1", "R-2", "BERT", "TVM.4"], "king": [0.3, 0.1, 0.2, 0.25],
                         "low": [0.2, 0.05, np.nan, 0.2], "high": [0.4, 0.15, np.nan, 0.3],
                         "cluster": [0, 1, 0, np.nan],
                         "representative": [True, True, False, False]})
    subsets = pd.DataFrame({"metric_set": ["a", "b", "a,b", "c", "a,c"],
                            "n_metrics": [1, 1, 2, 1, 2], "king": [0.2, 0.1, 0.3, 0.15, 0.25],
                            "status": ["kept", "below", "kept", "untested", "below"]})
    ranking = pd.DataFrame({"summarizer": ["M1", "M2", "ref0", "ref1"],
                            "role": ["peer", "peer", "model", "model"],
                            "queen": [0.1, 0.2, 0.4, 0.3]})
    jack = pd.DataFrame({"metric_set": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
                         "n_peers": [2, 3, 4] * 3, "jack": rng.uniform(0, 1, 9)})
    pearson = pd.DataFrame({"metric_set": ["a", "b", "a,b"] * 2, "n_metrics": [1, 1, 2] * 2,
                            "king": [0.1, 0.2, 0.3] * 2, "criterion": ["q"] * 3 + ["r"] * 3,
                            "pearson": rng.uniform(-1, 1, 6)})
    orange = pd.DataFrame({"metric": ["a", "b", "c"], "plain": [0.3, 0.5, 0.6],
                           "queen": [0.4, 0.45, 0.7]})
    auc = pd.DataFrame({"criterion": ["q"] * 3 + ["r"] * 3, "measure": ["HBR", "a", "b"] * 2,
                        "auc": [0.61, 0.7, 0.4] * 2, "low": [0.5, 0.6, np.nan] * 2,
                        "high": [0.7, 0.8, np.nan] * 2})
    robust = pd.DataFrame({"criterion": ["q"] * 3 + ["r"] * 3, "measure": ["HBR", "a", "b"] * 2,
                           "auc": [0.61, 0.7, 0.4] * 2, "worst10_rank": [0.5, 0.2, 0.1] * 2})
    hetero = pd.DataFrame({"criterion": ["q"] * 4 + ["r"] * 4, "bin": [0, 1, 2, 3] * 2,
                           "mean_h": [0.1, 0.3, 0.5, 0.7] * 2,
                           "p_quality_increase": rng.uniform(0.3, 0.9, 8)})
    comparisons = pd.DataFrame({"label": ["a − b", "a − c", "HBR − a (q)"],
                                "difference": [0.1, -0.05, 0.02], "ci_low": [0.05, -0.1, -0.01],
                                "ci_high": [0.15, 0.0, 0.05], "significant": [True, False, False]})
    return {
        "king_metrics": ((king, "R-1,R-2", 0.35, (0.3, 0.4), "R-1"), 4,
                         [["representative", "other member", "best set R-1,R-2"]]),
        "king_subsets": ((subsets, "a,b"), 5 + 1,         # the sets, the best's star
                         [["a set (not tested against the best)",
                           "significantly below the best set",
                           "not significantly below the best set", "best of each size",
                           "best set a,b"]]),
        "ranking": ((ranking,), 0, [["reference (model)", "system (peer)"]]),
        "jack_curve": ((jack, "b"), 3, [["a representative / requested set", "best set b"]]),
        "king_pearson": ((pearson, "a,b"), 6 + 2,
                         [["a set of metrics", "a single metric", "best set"]]),
        "orange": ((orange, 0.65, ["b"]), 3, [["QUEEN better than plain", "QUEEN not better",
                                              "equal", "QUEEN of the best set"]]),
        "auc": ((auc,), 6, [["a single measure", "HBR"]]),
        "robustness": ((robust,), 6, [["a single measure", "HBR"]]),
        "hetero_curve": ((hetero,), 8, [["q", "r"]]),
        "comparisons": ((comparisons,), 3, [["significant (5%)", "not significant"]]),
    }


CASES = rows_of_each_figure()


def test_every_figure_has_a_case():
    assert set(CASES) == set(fg.FIGURES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_figure_is_valid_lean_svg(name):
    args, markers, legends = CASES[name]
    text = fg.to_svg(fg.FIGURES[name](*args), f"task-x-{name}")
    root = parse(text)                                      # well-formed XML
    assert text.startswith("<svg ") and "<?xml" not in text
    assert root.get("role") == "img" and root.get("aria-label") == f"task-x-{name}"
    assert root.get("viewBox") and float(root.get("width")) > 100 < float(root.get("height"))
    assert plot_markers(root) == markers                    # one marker per row drawn
    assert legend_labels(root) == legends
    # every id is the key's, and every reference is to an id of this figure
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert ids and len(ids) == len(set(ids))
    assert all(i.startswith(f"task-x-{name}-") for i in ids)
    assert set(re.findall(r"url\(#([^)]+)\)", text)) == set(ids)
    # numbers in attributes rounded to 2 decimals; text stays text
    for el in root.iter():
        for attr, value in el.attrib.items():
            if attr not in ("aria-label", "font-family", "class", "id"):
                assert not re.search(r"\d\.\d{3}", value), (attr, value)
    assert len(list(root.iter(f"{NS}text"))) > 3
    assert fg.to_svg(fg.FIGURES[name](*args), f"task-x-{name}") == text     # deterministic


@pytest.mark.parametrize("name", sorted(CASES))
def test_ids_are_unique_per_key(name):
    args, _, _ = CASES[name]
    one, two = (fg.to_svg(fg.FIGURES[name](*args), key) for key in ("one", "two"))
    ids = [set(re.findall(r' id="([^"]+)"', text)) for text in (one, two)]
    assert ids[0] and not ids[0] & ids[1]
    assert one.replace('"one', '"two').replace("#one", "#two") == two


def test_the_king_figure_colours_its_labels_and_draws_hollow_members():
    args, _, _ = CASES["king_metrics"]
    root = parse(fg.to_svg(fg.king_metrics_figure(*args), "k"))
    labels = {t.text: t.get("fill") for t in tick_labels(root)}
    assert labels["R-1 ★"] == fg.CLUSTER_COLOURS[0]             # ★: the best single metric
    assert labels["R-2"] == fg.CLUSTER_COLOURS[1] and labels["TVM.4"] == fg.GREY
    marks = [g for g in groups(root, "markers")]
    filled, hollow = marks[0], marks[1]
    assert filled.get("stroke") == fg.BLACK and len(filled) == 2
    assert hollow.get("fill") == "white" and len(hollow) == 2
    assert {c.get("stroke") for c in hollow} == {fg.CLUSTER_COLOURS[0], fg.GREY}
    # the interval of the best set: a band, and its KING a dashed line
    assert any(r.get("fill") == fg.RED and r.get("fill-opacity") for r in root.iter(f"{NS}rect"))
    assert any(p.get("stroke") == fg.RED and p.get("stroke-dasharray")
               for p in root.iter(f"{NS}path"))


def test_the_ranking_figure_bolds_references_and_draws_a_bar_each():
    args, _, _ = CASES["ranking"]
    root = parse(fg.to_svg(fg.ranking_figure(*args), "r"))
    bold = {t.text for t in tick_labels(root) if t.get("font-weight") == "bold"}
    assert bold == {"ref0", "ref1"}
    bars = [r for g in groups(root, "bars") for r in g]
    assert len(bars) == 4
    assert sorted(r.get("fill") for r in bars) == sorted([fg.ORANGE] * 2 + [fg.BLUE] * 2)
    widths = sorted(float(r.get("width")) for r in bars)
    assert widths[-1] == pytest.approx(4 * widths[0], rel=0.01)      # 0.4 vs 0.1: one scale


def test_rows_with_undefined_values_are_not_drawn():
    args, _, _ = CASES["king_metrics"]
    rows = args[0].copy()
    rows.loc[1, "king"] = np.nan
    root = parse(fg.to_svg(fg.king_metrics_figure(rows, *args[1:]), "k"))
    assert plot_markers(root) == 3


def test_panels_two_columns_and_one_legend():
    args, _, _ = CASES["auc"]
    rows = args[0]
    three = pd.concat([rows, rows[rows["criterion"] == "q"].assign(criterion="s")])
    root = parse(fg.to_svg(fg.auc_figure(three), "a"))
    assert len(groups(root, "axes")) == 3 and len(groups(root, "legend")) == 1
    titles = [t.text for t in root.iter(f"{NS}text") if t.text in ("q", "r", "s")]
    assert titles == ["q", "r", "s"]
    assert "best: a" in fg.to_svg(fg.auc_figure(three), "a")


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_figure_of_columns_is_the_figure_of_the_frame(name):
    """The report passes its figures columns (report.data.Columns), not
    pandas frames (issue 36): the same rows draw the same figure, rows in
    any order of index, with ties, NaN and None included."""
    from qarla_spark.report.data import Columns
    args, _, _ = CASES[name]
    frame = args[0]
    rng = np.random.default_rng(3)
    shuffled = frame.iloc[rng.permutation(len(frame))]
    tied = pd.concat([shuffled, shuffled.iloc[:2]])               # repeated rows: ties
    gaps = tied.astype({c: object for c in tied.columns if tied[c].dtype == bool})
    for column in gaps.columns:                # a missing value in each column (None in text)
        gaps.iloc[1, gaps.columns.get_loc(column)] = None
    for rows in (frame, shuffled.set_index(np.arange(len(frame))[::-1] + 7), tied, gaps):
        columns = Columns.of({c: rows[c].to_numpy() for c in rows.columns})
        expected = fg.to_svg(fg.FIGURES[name](rows, *args[1:]), "k")
        assert fg.to_svg(fg.FIGURES[name](columns, *args[1:]), "k") == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["q", "r", "a", None, float("nan")]), max_size=30),
       st.lists(st.sampled_from([True, False, None, float("nan")]), max_size=30))
def test_the_figures_group_and_fill_as_pandas(keys, flags):
    """The figures' groups (figures._by: pandas' groupby(...).indices, in
    key order, missing keys left out) and their missing flags
    (figures._true: pandas' fillna(False).astype(bool))."""
    import warnings
    frame = pd.DataFrame({"k": pd.Series(keys, dtype=object)})
    expected = dict(sorted(frame.groupby("k", sort=True).indices.items()))
    found = fg._by(frame, "k")
    assert list(found) == list(expected)
    assert all(found[k].tolist() == expected[k].tolist() for k in expected)
    flags = pd.Series(flags, dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)       # pandas' downcasting notice
        assert fg._true(flags.to_numpy()).tolist() == flags.fillna(False).astype(bool).tolist()


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=12), st.integers(), st.floats(), st.none()))
def test_text_is_escaped_as_html_escape_escapes_it(value):
    """svg.esc skips html.escape when nothing needs it: the same text."""
    from html import escape
    assert svg.esc(value) == escape(str(value), quote=True)
    assert svg.esc(f"{value}<&'\">") == escape(f"{value}<&'\">", quote=True)


def test_text_widths_cached_are_the_widths_measured():
    """text_width caches each text's width in em: the same width the first
    time and after, for str and for other values written as text."""
    svg._EMS.clear()
    for text in ["rouge-1", "WWW", "x ★", 1, 1.0, True, "1"]:
        first = svg.text_width(text, 8, bold=True)
        assert first == svg._em(str(text)) * 8 * 1.1 * 1.1
        assert svg.text_width(text, 8, bold=True) == first
    assert svg.text_width(1.0) != svg.text_width(True)      # "1.0" and "True", not one key
