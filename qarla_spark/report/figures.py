"""The report's figures: pure functions from small tables to static SVG,
drawn by the report's own plotting layer (:mod:`qarla_spark.report.svg`:
string building, a few milliseconds a figure; text stays text).

Each ``*_figure`` function takes the rows it draws (a pandas frame, or the
report's :class:`~qarla_spark.report.data.Columns`) and returns a
:class:`~qarla_spark.report.svg.Figure`; :func:`to_svg` makes it an inline
``<svg>`` element whose ids are unique to the figure's ``key``.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import numpy as np
import pandas as pd

from qarla_spark.names import HBR, queen_of
from qarla_spark.report.svg import Figure, Handle

WIDTH = 9.0                     # inches: 864 px in a browser
BLUE, ORANGE, RED, GREY, GREEN = "#2f6db5", "#e07b00", "#c62828", "#9aa3b2", "#2e7d32"
BLACK = "#000000"
CLUSTER_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


def to_svg(fig: Figure, key: str) -> str:
    """The figure as an ``<svg>`` element (no XML prolog, coordinates
    rounded to 0.01 pt; ids made of ``key``; ``aria-label``: ``key``)."""
    return fig.svg(key)


def new_figure(height: float, width: float = WIDTH, nrows: int = 1, ncols: int = 1) -> Figure:
    return Figure(height, width, nrows, ncols)


def cluster_colour(cluster) -> str:
    if cluster is None or (isinstance(cluster, float) and np.isnan(cluster)):
        return GREY
    return CLUSTER_COLOURS[int(cluster) % len(CLUSTER_COLOURS)]


# ------------------------------------------------------------------ the rows drawn

class _Rows:
    """A figure's rows, column by column as numpy arrays: of a pandas
    frame, or of :class:`~qarla_spark.report.data.Columns` (what the report
    passes: no frame made, no pandas operation per figure; issue 36)."""

    __slots__ = ("rows", "n")

    def __init__(self, rows):
        self.rows, self.n = rows, len(rows)

    def __getitem__(self, name: str) -> np.ndarray:
        found = self.rows[name]
        return found.to_numpy() if isinstance(found, pd.Series) else np.asarray(found)

    def floats(self, name: str) -> np.ndarray:
        return np.asarray(self[name], dtype=float)

    def equal(self, name: str, value) -> np.ndarray:
        """Where column ``name`` is ``value`` (pandas' ``==``: nowhere for
        ``None``)."""
        if value is None:
            return np.zeros(self.n, dtype=bool)
        return np.asarray(self[name] == value, dtype=bool)


def _order(keys, ascending, kind: str = "quicksort") -> np.ndarray:
    from qarla_spark.report.data import sort_order
    return sort_order(keys, ascending, kind)


def _true(values: np.ndarray) -> np.ndarray:
    """pandas' ``fillna(False).astype(bool)``: missing values false."""
    missing = pd.isna(values)
    return (np.where(missing, False, values) if missing.any() else values).astype(bool)


# ------------------------------------------------------------------ QARLA

def king_metrics_figure(rows, best_set: Optional[str] = None,
                        best_king: Optional[float] = None,
                        best_interval: Optional[Sequence[float]] = None,
                        best_single: Optional[str] = None) -> Figure:
    """KING of every single metric with its interval, sorted; colour =
    cluster, filled = representative. ``rows``: metric, king, low, high,
    cluster, representative."""
    rows = _Rows(rows)
    metric = rows["metric"]
    order = _order([rows["king"], metric], [True, False])
    king, metric = rows.floats("king")[order], metric[order]
    low, high = rows["low"][order], rows["high"][order]
    n = len(order)
    fig = new_figure(max(2.6, 0.16 * n + 1.3))
    ax = fig.axes[0]
    y = np.arange(n)
    colours = np.array([cluster_colour(c) for c in rows["cluster"][order].tolist()],
                       dtype=object)
    has_ci = ~np.asarray(pd.isna(low), dtype=bool) & ~np.asarray(pd.isna(high), dtype=bool)
    ax.hlines(y[has_ci], low[has_ci], high[has_ci], colour=list(colours[has_ci]), width=1.2)
    reps = _true(rows["representative"][order])
    ax.scatter(king[reps], y[reps], size=30, fill=list(colours[reps]), edge=BLACK,
               edge_width=0.7, z=3)
    ax.scatter(king[~reps], y[~reps], size=22, fill="white", edge=list(colours[~reps]),
               edge_width=1.2, z=3)
    labels = [f"{m} ★" if m == best_single else m for m in metric.tolist()]
    ax.set_yticks(y, labels, size=8, colours=list(colours))
    ax.ylim = (-0.8, n - 0.2)
    handles = [Handle("representative", marker="o", fill=GREY, edge=BLACK, edge_width=0.7,
                      size=30),
               Handle("other member", marker="o", fill="white", edge=GREY, edge_width=1.2,
                      size=22)]
    if best_king is not None:
        ax.axvline(best_king, colour=RED, dash="--", width=1.3)
        if best_interval and all(v is not None and not np.isnan(v) for v in best_interval):
            ax.axvspan(best_interval[0], best_interval[1], colour=RED, opacity=0.08)
        handles.append(Handle(f"best set {best_set}", line=RED, dash="--", line_width=1.3))
    ax.legend(handles, loc="lower right", size=8)
    ax.xlabel = "KING (share of held-out references QUEEN ranks above every system)"
    ax.ygrid = False
    return fig


def king_subsets_figure(rows, best_set: Optional[str] = None) -> Figure:
    """KING of every evaluated set against its size. ``rows``: metric_set,
    n_metrics, king, status (``kept``: not significantly below the best
    set; ``below``; ``untested``)."""
    rows = _Rows(rows)
    fig = new_figure(4.2)
    ax = fig.axes[0]
    rng = np.random.default_rng(0)
    sizes, king = rows["n_metrics"], rows.floats("king")
    x = np.asarray(sizes, dtype=float) + rng.uniform(-0.28, 0.28, rows.n)
    status = rows["status"]
    styles = (("untested", BLUE, "a set (not tested against the best)"),
              ("below", GREY, "significantly below the best set"),
              ("kept", ORANGE, "not significantly below the best set"))
    for value, colour, label in styles:
        mask = status == value
        if mask.any():
            ax.scatter(x[mask], king[mask], size=8, fill=colour, opacity=0.75, label=label)
    # the best KING of each size (pandas' groupby max: missing values skipped)
    groups = _by(rows, "n_metrics")
    tops = []
    for idx in groups.values():
        found = king[idx][~np.isnan(king[idx])]
        tops.append(found.max() if len(found) else np.nan)
    ax.plot(list(groups), tops, colour=BLUE, width=1, label="best of each size")
    best = rows.equal("metric_set", best_set)
    if best.any():
        ax.scatter(sizes[best], king[best], marker="*", size=170, fill=RED, edge=BLACK,
                   edge_width=0.5, z=4, label=f"best set {best_set}")
    ax.set_xticks(sorted(pd.unique(sizes)))
    ax.xlabel = "number of metrics in the set"
    ax.ylabel = "KING"
    ax.legend(size=8, loc="best")
    return fig


def ranking_figure(rows) -> Figure:
    """Models and systems ranked together by QUEEN. ``rows``: summarizer,
    role, queen."""
    rows = _Rows(rows)
    order = _order([rows["queen"], rows["summarizer"]], [True, False])
    roles = rows["role"][order].tolist()
    n = len(order)
    fig = new_figure(max(2.4, 0.2 * n + 1.0))
    ax = fig.axes[0]
    colours = [ORANGE if r == "model" else BLUE for r in roles]
    y = np.arange(n)
    ax.barh(y, rows["queen"][order], colour=colours, height=0.7)
    ax.set_yticks(y, rows["summarizer"][order].tolist(), size=8,
                  bold=[r == "model" for r in roles])
    ax.ylim = (-0.7, n - 0.3)
    ax.legend([Handle("reference (model)", line=ORANGE, line_width=6),
               Handle("system (peer)", line=BLUE, line_width=6)], loc="lower right", size=8)
    ax.xlabel = "QUEEN (mean over topics; a reference is scored against the others)"
    ax.ygrid = False
    return fig


def jack_curve_figure(rows, best_set: Optional[str] = None) -> Figure:
    """JACK as systems are added. ``rows``: metric_set, n_peers, jack."""
    rows = _Rows(rows)
    fig = new_figure(3.8)
    ax = fig.axes[0]
    sets, peers, jack = rows["metric_set"], rows["n_peers"], rows["jack"]
    ordered = _order([sets, peers], True, "stable")
    names = sets[ordered]
    x, y = np.asarray(peers[ordered], dtype=float), np.asarray(jack[ordered], dtype=float)
    starts = [0, *(np.flatnonzero(names[1:] != names[:-1]) + 1).tolist(), len(names)]
    others = False
    for a, b in zip(starts, starts[1:]):
        if a == b or names[a] == best_set:
            continue
        ax.plot(x[a:b], y[a:b], colour=GREY, width=0.9, opacity=0.8,
                label=None if others else "a representative / requested set")
        others = True
    best = np.flatnonzero(rows.equal("metric_set", best_set))
    if len(best):
        best = best[_order([peers[best]], True)]
        ax.plot(peers[best], jack[best], colour=RED, width=2.4, marker="o",
                marker_size=3.5, label=f"best set {best_set}")
    ax.xlabel = "number of systems in the testbed"
    ax.ylabel = "JACK"
    ax.ylim = (0, 1.02)
    ax.legend(size=8, loc="lower right")
    return fig


def _panels(n: int, height_each: float = 2.9):
    cols = 2 if n > 1 else 1
    nrows = int(np.ceil(n / cols)) if n else 1
    fig = new_figure(height_each * nrows + 0.4, nrows=nrows, ncols=cols)
    for ax in fig.axes[n:]:
        ax.visible = False
    return fig, fig.axes


def _by(rows, column: str) -> Dict[object, np.ndarray]:
    """The positions of ``rows`` of each value of ``column``, in value
    order, missing values left out (pandas' ``groupby(column).indices``)."""
    return _groups((rows if isinstance(rows, _Rows) else _Rows(rows))[column])


def _groups(values: np.ndarray) -> Dict[object, np.ndarray]:
    """The positions of each value of ``values`` (:func:`_by`)."""
    codes, distinct = pd.factorize(values, sort=True)       # missing values: -1
    if not len(distinct):
        return {}
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(-1, len(distinct)) + 0.5)
    return {key: order[a:b] for key, a, b in
            zip(distinct.tolist(), bounds[:-1].tolist(), bounds[1:].tolist())}


def king_pearson_figure(rows, best_set: Optional[str] = None) -> Figure:
    """KING vs system-level Pearson, one panel per criterion. ``rows``:
    metric_set, n_metrics, king, criterion, pearson."""
    rows = _Rows(rows)
    groups = _by(rows, "criterion")
    fig, axes = _panels(len(groups))
    king, pearson = rows.floats("king"), rows.floats("pearson")
    single = np.asarray(rows["n_metrics"] == 1, dtype=bool)
    best = rows.equal("metric_set", best_set)
    for ax, (criterion, idx) in zip(axes, groups.items()):
        sets, singles, bests = idx[~single[idx]], idx[single[idx]], idx[best[idx]]
        ax.scatter(king[sets], pearson[sets], size=6, fill=GREY, opacity=0.6,
                   label="a set of metrics")
        ax.scatter(king[singles], pearson[singles], size=12, fill=BLUE, label="a single metric")
        if len(bests):
            ax.scatter(king[bests], pearson[bests], marker="*", size=150, fill=RED, edge=BLACK,
                       edge_width=0.5, z=4, label="best set")
        ax.title = str(criterion)
        ax.xlabel = "KING"
        ax.ylabel = "system-level Pearson"
    axes[0].legend(size=7.5, loc="best")
    return fig


def orange_figure(rows, best_orange: Optional[float] = None,
                  labelled: Sequence[str] = ()) -> Figure:
    """ORANGE of each metric's QUEEN against ORANGE of its plain score.
    ``rows``: metric, plain, queen."""
    rows = _Rows(rows)
    fig = new_figure(4.6, 6.2)
    ax = fig.axes[0]
    plain, queen = rows.floats("plain"), rows.floats("queen")
    above = queen > plain
    ax.scatter(plain[above], queen[above], size=18, fill=GREEN,
               label="QUEEN better than plain")
    ax.scatter(plain[~above], queen[~above], size=18, fill=GREY,
               label="QUEEN not better")
    values = np.concatenate([plain, queen])
    values = values[~np.isnan(values)]
    if len(values):
        lo, hi = float(values.min()), float(values.max())
        pad = 0.03 * (hi - lo or 1)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], colour=BLACK, width=0.8, dash=":",
                label="equal")
    if best_orange is not None and not np.isnan(best_orange):
        ax.axhline(best_orange, colour=RED, dash="--", width=1.2, label="QUEEN of the best set")
    shown = np.flatnonzero(pd.Series(rows["metric"], dtype=object).isin(labelled).to_numpy())
    for m, x, y in zip(rows["metric"][shown].tolist(), plain[shown].tolist(),
                       queen[shown].tolist()):
        ax.annotate(m, x, y, dx=3, dy=2, size=7)
    ax.xlabel = "ORANGE of the plain score (mean similarity to the references)"
    ax.ylabel = "ORANGE of QUEEN"
    ax.legend(size=8, loc="best")
    return fig


# ------------------------------------------------------------------ HBR

def auc_figure(rows) -> Figure:
    """AUC of every measure and of HBR with intervals, one panel per
    criterion. ``rows``: criterion, measure, auc, low, high."""
    rows = _Rows(rows)
    groups = _by(rows, "criterion")
    fig, axes = _panels(len(groups))
    measure = np.asarray(rows["measure"], dtype=object)
    auc, low, high = (rows.floats(c) for c in ("auc", "low", "high"))
    for ax, (criterion, idx) in zip(axes, groups.items()):
        # best first (an undefined AUC last), then by name
        order = np.array(sorted(idx.tolist(), key=lambda i: (np.isnan(auc[i]), -auc[i]
                                                             if not np.isnan(auc[i]) else 0,
                                                             measure[i])), dtype=int)
        x = np.arange(len(order))
        hbr = measure[order] == HBR
        ci = ~np.isnan(low[order])
        a, lo, hi = auc[order], low[order], high[order]
        ax.vlines(x[ci & ~hbr], lo[ci & ~hbr], hi[ci & ~hbr], colour=GREY, width=1)
        ax.scatter(x[~hbr], a[~hbr], size=10, fill=BLUE, z=3, label="a single measure")
        if hbr.any():
            ax.vlines(x[ci & hbr], lo[ci & hbr], hi[ci & hbr], colour=RED, width=2)
            ax.scatter(x[hbr], a[hbr], size=60, marker="D", fill=RED, z=4, label=HBR)
            ax.axhline(float(a[hbr][0]), colour=RED, width=0.7, dash=":")
        if (~hbr).any():
            first = int(np.flatnonzero(~hbr)[0])
            ax.annotate(f"best: {measure[order][first]}", first, a[first], dx=6, dy=4,
                        size=7.5)
        ax.axhline(0.5, colour=BLACK, width=0.7)
        ax.title = str(criterion)
        ax.xlabel = "measures, best first"
        ax.ylabel = "AUC"
        ax.set_xticks([])
    axes[0].legend(size=7.5, loc="upper right")
    return fig


def robustness_figure(rows) -> Figure:
    """Pooled AUC against the worst-10%-topics rank, per criterion.
    ``rows``: criterion, measure, auc, worst10_rank."""
    rows = _Rows(rows)
    groups = _by(rows, "criterion")
    fig, axes = _panels(len(groups))
    auc, rank = rows.floats("auc"), rows.floats("worst10_rank")
    is_hbr = rows.equal("measure", HBR)
    for ax, (criterion, idx) in zip(axes, groups.items()):
        hbr, others = idx[is_hbr[idx]], idx[~is_hbr[idx]]
        ax.scatter(auc[others], rank[others], size=12, fill=BLUE, label="a single measure")
        if len(hbr):
            ax.scatter(auc[hbr], rank[hbr], size=70, marker="D", fill=RED, z=4, label=HBR)
        ax.title = str(criterion)
        ax.xlabel = "AUC, all topics"
        ax.ylabel = "mean rank in its worst 10% topics"
    axes[0].legend(size=7.5, loc="best")
    return fig


def hetero_curve_figure(rows) -> Figure:
    """P(quality increase) against heterogeneity, one line per criterion.
    ``rows``: criterion, bin, mean_h, p_quality_increase."""
    rows = _Rows(rows)
    fig = new_figure(3.8)
    ax = fig.axes[0]
    # the rows in bin order (pandas' sort_values("bin")), then per criterion
    order = _order([rows["bin"]], True)
    mean_h, share = rows["mean_h"][order], rows["p_quality_increase"][order]
    for i, (criterion, idx) in enumerate(_groups(rows["criterion"][order]).items()):
        ax.plot(mean_h[idx], share[idx], width=1.3, marker="o",
                marker_size=2.5, colour=CLUSTER_COLOURS[i % len(CLUSTER_COLOURS)],
                label=criterion)
    ax.axhline(0.5, colour=BLACK, width=0.7, dash=":")
    ax.xlabel = "heterogeneity H of the measures saying s ≥ s' (mean of a bin of pairs)"
    ax.ylabel = "P(human score of s ≥ s')"
    ax.legend(size=8, loc="best")
    return fig


# ------------------------------------------------------------------ statistics

def comparisons_figure(rows) -> Figure:
    """Differences a − b with their intervals. ``rows``: label, difference,
    ci_low, ci_high, significant."""
    rows = _Rows(rows)
    fig = new_figure(max(2.2, 0.24 * rows.n + 1.0))
    ax = fig.axes[0]
    y = np.arange(rows.n)[::-1]
    sig = _true(rows["significant"])
    colours = [RED if s else BLUE for s in sig]
    ax.hlines(y, rows["ci_low"], rows["ci_high"], colour=colours, width=1.6)
    ax.scatter(rows["difference"], y, fill=colours, size=22, z=3)
    ax.axvline(0, colour=BLACK, width=0.8)
    ax.set_yticks(y, rows["label"].tolist(), size=8)
    ax.legend([Handle("significant (5%)", marker="o", fill=RED, line=RED),
               Handle("not significant", marker="o", fill=BLUE, line=BLUE)],
              size=8, loc="best")
    ax.xlabel = "difference a − b with its 95% bootstrap interval"
    ax.ygrid = False
    return fig


FIGURES: Dict[str, object] = {
    "king_metrics": king_metrics_figure, "king_subsets": king_subsets_figure,
    "ranking": ranking_figure, "jack_curve": jack_curve_figure,
    "king_pearson": king_pearson_figure, "orange": orange_figure, "auc": auc_figure,
    "robustness": robustness_figure, "hetero_curve": hetero_curve_figure,
    "comparisons": comparisons_figure,
}


# ------------------------------------------------------------------ plan

def power_figure(rows, testbed_topics: Optional[int] = None) -> Figure:
    """The plan's curves (``power/`` rows of one task): a panel per measure
    with each adjacent pair's power (grey) and the ranking's stability
    (red) against the number of topics; a panel ``KING`` with the
    probability that the best set stays best and the power of its lead
    over the best single metric; 80% dashed, the testbed's topics a
    vertical line (beyond it, extrapolated: shaded); a panel of the
    interval widths (:func:`_width_panel`)."""
    rows = _Rows(rows)
    question, measure = rows["question"], rows["measure"]
    n, p_same, p_sig = rows.floats("n_topics"), rows.floats("p_same_order"), \
        rows.floats("p_significant")
    adjacent = _true(rows["adjacent"])
    measures = list(dict.fromkeys(measure[question == "pair"].tolist()))
    if np.any(question == "best_set"):
        measures.append("KING")
    widths = np.any(question == "pairwise_accuracy") or (
        np.any(question == "best_set") and np.isfinite(rows.floats("ci_width")[
            question == "best_set"]).any())
    fig, axes = _panels(len(measures) + bool(widths), 2.6)
    if widths:
        _width_panel(axes[len(measures)], rows, testbed_topics)
    for ax, name in zip(axes, measures):
        mine = measure == name
        top = float(np.nanmax(n[mine])) if mine.any() else 1.0
        if testbed_topics and testbed_topics < top:
            ax.axvspan(testbed_topics, top, GREY, opacity=0.12)
            ax.axvline(testbed_topics, colour=GREY, width=0.8)
        ax.axhline(0.8, colour=BLACK, width=0.8, dash="--", label="80%")
        if name == "KING":
            for q, colour, label in (("best_set", RED, "best set stays best"),
                                     ("best_vs_single", BLUE, "power: best set > best single")):
                idx = np.flatnonzero(mine & (question == q))
                idx = idx[np.argsort(n[idx], kind="stable")]
                y = p_same[idx] if q == "best_set" else p_sig[idx]
                if len(idx):
                    ax.plot(n[idx], y, colour=colour, width=2.0, marker="o", marker_size=3.0,
                            label=label)
        else:
            pairs = np.flatnonzero(mine & (question == "pair") & adjacent)
            keys = list(zip(rows["a"][pairs].tolist(), rows["b"][pairs].tolist()))
            first = True
            for key in dict.fromkeys(keys):
                idx = pairs[[k == key for k in keys]]
                idx = idx[np.argsort(n[idx], kind="stable")]
                ax.plot(n[idx], p_sig[idx], colour=GREY, width=0.9, opacity=0.8,
                        label="power, an adjacent pair" if first else None)
                first = False
            idx = np.flatnonzero(mine & (question == "ranking"))
            idx = idx[np.argsort(n[idx], kind="stable")]
            if len(idx):
                ax.plot(n[idx], p_same[idx], colour=RED, width=2.0, marker="o",
                        marker_size=3.0, label="ranking stable (halves agree)")
        ax.title = str(name)
        ax.xlabel = "topics"
        ax.ylabel = "probability"
        ax.ylim = (0, 1.02)
    if measures:
        axes[0].legend(size=7.0, loc="best")
        if measures[-1] == "KING" and len(measures) > 1:
            axes[len(measures) - 1].legend(size=7.0, loc="best")
    return fig


def _width_panel(ax, rows, testbed_topics: Optional[int]) -> None:
    """The plan's interval widths against n: the best set's KING (its
    t-interval over the drawn topics) and its QUEEN's pairwise accuracy
    against each criterion (the central 95% of the trials')."""
    question, measure, n = rows["question"], rows["measure"], rows.floats("n_topics")
    width = rows.floats("ci_width")
    top = float(np.nanmax(n)) if len(n) else 1.0
    if testbed_topics and testbed_topics < top:
        ax.axvspan(testbed_topics, top, GREY, opacity=0.12)
        ax.axvline(testbed_topics, colour=GREY, width=0.8)
    best = np.flatnonzero(question == "best_set")
    if len(best):
        idx = best[np.argsort(n[best], kind="stable")]
        ax.plot(n[idx], width[idx], colour=RED, width=2.0, marker="o", marker_size=3.0,
                label="KING of the best set")
    wanted = queen_of(rows["a"][best[0]]) if len(best) else None
    accuracy = np.flatnonzero((question == "pairwise_accuracy") & (measure == wanted))
    criteria = list(dict.fromkeys(rows["a"][accuracy].tolist()))
    for k, criterion in enumerate(criteria):
        idx = accuracy[rows["a"][accuracy] == criterion]
        idx = idx[np.argsort(n[idx], kind="stable")]
        ax.plot(n[idx], width[idx], colour=CLUSTER_COLOURS[k % len(CLUSTER_COLOURS)],
                width=1.2, label=f"pairwise accuracy, {criterion}")
    ax.title = "95% interval width"
    ax.xlabel = "topics"
    ax.ylabel = "width"
    shown = width[np.concatenate([best, accuracy]).astype(np.int64)]
    shown = shown[np.isfinite(shown)]
    ax.ylim = (0, max(0.05, 1.05 * float(shown.max())) if shown.size else 1.0)
    ax.legend(size=7.0, loc="best")
