"""The report's figures: pure functions from small DataFrames to static SVG
(matplotlib's SVG backend, no pyplot, no display; text stays text).

Each ``*_figure`` function takes the rows it draws and returns a
:class:`matplotlib.figure.Figure`; :func:`to_svg` makes it an inline
``<svg>`` element whose ids are unique to the figure's ``key``.
"""

from __future__ import annotations

import functools
import io
import re
from typing import Dict, Optional, Sequence

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

WIDTH = 9.0                     # inches: 864 px in a browser
BLUE, ORANGE, RED, GREY, GREEN = "#2f6db5", "#e07b00", "#c62828", "#9aa3b2", "#2e7d32"
CLUSTER_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
RC = {"svg.fonttype": "none", "font.size": 10, "axes.titlesize": 11,
      "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
      "grid.color": "#e3e6ec", "grid.linewidth": 0.6, "axes.axisbelow": True,
      "font.family": ["DejaVu Sans", "sans-serif"], "path.simplify": True}

_NUMBER = re.compile(r"(-?\d+\.\d{2})\d+")


def to_svg(fig: Figure, key: str) -> str:
    """The figure as an ``<svg>`` element (no XML prolog, no metadata,
    coordinates rounded to 0.01 pt; ids salted with ``key``)."""
    buffer = io.StringIO()
    with rc_context({**RC, "svg.hashsalt": key}):
        FigureCanvasSVG(fig).print_svg(buffer, metadata={"Date": None, "Creator": None,
                                                         "Format": None, "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    # round coordinates in drawing attributes only, never in visible text
    text = re.sub(r'( (?:d|x|y|x1|x2|y1|y2|width|height|points|transform)="[^"]*")',
                  lambda m: _NUMBER.sub(r"\1", m.group(1)), text)
    # ids nothing refers to (figure_1, axes_1, ...) would repeat across figures: dropped
    used = set(re.findall(r"#([A-Za-z_][\w.-]*)", text))
    text = re.sub(r' id="([^"]+)"', lambda m: m.group(0) if m.group(1) in used else "", text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{key}" ', 1)


def styled(func):
    """Draw under the report's style (rcParams are read as artists are made)."""
    @functools.wraps(func)
    def draw(*args, **kwargs) -> Figure:
        with rc_context(RC):
            return func(*args, **kwargs)
    return draw


def new_figure(height: float, width: float = WIDTH) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _axes(fig: Figure, *args, **kwargs):
    return fig.subplots(*args, **kwargs)


def cluster_colour(cluster) -> str:
    if cluster is None or (isinstance(cluster, float) and np.isnan(cluster)):
        return GREY
    return CLUSTER_COLOURS[int(cluster) % len(CLUSTER_COLOURS)]


# ------------------------------------------------------------------ QARLA

@styled
def king_metrics_figure(rows: pd.DataFrame, best_set: Optional[str] = None,
                        best_king: Optional[float] = None,
                        best_interval: Optional[Sequence[float]] = None,
                        best_single: Optional[str] = None) -> Figure:
    """KING of every single metric with its interval, sorted; colour =
    cluster, filled = representative. ``rows``: metric, king, low, high,
    cluster, representative."""
    rows = rows.sort_values(["king", "metric"], ascending=[True, False]).reset_index(drop=True)
    fig = new_figure(max(2.6, 0.16 * len(rows) + 1.3))
    ax = _axes(fig)
    y = np.arange(len(rows))
    colours = [cluster_colour(c) for c in rows["cluster"]]
    has_ci = rows["low"].notna() & rows["high"].notna()
    ax.hlines(y[has_ci], rows["low"][has_ci], rows["high"][has_ci], colors=np.array(colours)[
        has_ci.to_numpy()], linewidth=1.2)
    reps = rows["representative"].fillna(False).astype(bool).to_numpy()
    ax.scatter(rows["king"][reps], y[reps], c=np.array(colours)[reps], s=30, zorder=3,
               edgecolors="black", linewidths=0.7)
    ax.scatter(rows["king"][~reps], y[~reps], facecolors="white", s=22, zorder=3,
               edgecolors=np.array(colours)[~reps], linewidths=1.2)
    labels = [f"{m} ★" if m == best_single else m for m in rows["metric"]]
    ax.set_yticks(y, labels, fontsize=8)
    for tick, colour in zip(ax.get_yticklabels(), colours):
        tick.set_color(colour)
    ax.set_ylim(-0.8, len(rows) - 0.2)
    handles = [Line2D([], [], marker="o", ls="", mfc=GREY, mec="black", label="representative"),
               Line2D([], [], marker="o", ls="", mfc="white", mec=GREY, label="other member")]
    if best_king is not None:
        ax.axvline(best_king, color=RED, ls="--", lw=1.3)
        if best_interval and all(v is not None and not np.isnan(v) for v in best_interval):
            ax.axvspan(best_interval[0], best_interval[1], color=RED, alpha=0.08, lw=0)
        handles.append(Line2D([], [], color=RED, ls="--", label=f"best set {best_set}"))
    ax.legend(handles=handles, loc="lower right", fontsize=8, framealpha=0.9)
    ax.set_xlabel("KING (share of held-out references QUEEN ranks above every system)")
    ax.grid(axis="y", visible=False)
    return fig


@styled
def king_subsets_figure(rows: pd.DataFrame, best_set: Optional[str] = None) -> Figure:
    """KING of every evaluated set against its size. ``rows``: metric_set,
    n_metrics, king, status (``kept``: not significantly below the best
    set; ``below``; ``untested``)."""
    fig = new_figure(4.2)
    ax = _axes(fig)
    rng = np.random.default_rng(0)
    x = rows["n_metrics"].to_numpy(float) + rng.uniform(-0.28, 0.28, len(rows))
    status = rows["status"].to_numpy()
    styles = (("untested", BLUE, "a set (not tested against the best)"),
              ("below", GREY, "significantly below the best set"),
              ("kept", ORANGE, "not significantly below the best set"))
    for value, colour, label in styles:
        mask = status == value
        if mask.any():
            ax.scatter(x[mask], rows["king"][mask], s=8, color=colour, alpha=0.75, lw=0,
                       label=label)
    top = rows.groupby("n_metrics")["king"].max()
    ax.plot(top.index, top.to_numpy(), color=BLUE, lw=1, label="best of each size")
    best = rows[rows["metric_set"] == best_set]
    if len(best):
        ax.scatter(best["n_metrics"], best["king"], marker="*", s=170, color=RED, zorder=4,
                   edgecolors="black", linewidths=0.5, label=f"best set {best_set}")
    ax.set_xticks(sorted(rows["n_metrics"].unique()))
    ax.set_xlabel("number of metrics in the set")
    ax.set_ylabel("KING")
    ax.legend(fontsize=8, loc="best")
    return fig


@styled
def ranking_figure(rows: pd.DataFrame) -> Figure:
    """Models and systems ranked together by QUEEN. ``rows``: summarizer,
    role, queen."""
    rows = rows.sort_values(["queen", "summarizer"], ascending=[True, False]).reset_index(
        drop=True)
    fig = new_figure(max(2.4, 0.2 * len(rows) + 1.0))
    ax = _axes(fig)
    colours = [ORANGE if r == "model" else BLUE for r in rows["role"]]
    y = np.arange(len(rows))
    ax.barh(y, rows["queen"], color=colours, height=0.7)
    ax.set_yticks(y, rows["summarizer"], fontsize=8)
    for tick, role in zip(ax.get_yticklabels(), rows["role"]):
        if role == "model":
            tick.set_fontweight("bold")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.legend(handles=[Line2D([], [], color=ORANGE, lw=6, label="reference (model)"),
                       Line2D([], [], color=BLUE, lw=6, label="system (peer)")],
              loc="lower right", fontsize=8)
    ax.set_xlabel("QUEEN (mean over topics; a reference is scored against the others)")
    ax.grid(axis="y", visible=False)
    return fig


@styled
def jack_curve_figure(rows: pd.DataFrame, best_set: Optional[str] = None) -> Figure:
    """JACK as systems are added. ``rows``: metric_set, n_peers, jack."""
    fig = new_figure(3.8)
    ax = _axes(fig)
    others = False
    for name, part in rows.sort_values("n_peers").groupby("metric_set", sort=True):
        if name == best_set:
            continue
        ax.plot(part["n_peers"], part["jack"], color=GREY, lw=0.9, alpha=0.8,
                label=None if others else "a representative / requested set")
        others = True
    best = rows[rows["metric_set"] == best_set].sort_values("n_peers")
    if len(best):
        ax.plot(best["n_peers"], best["jack"], color=RED, lw=2.4, marker="o", ms=3.5,
                label=f"best set {best_set}")
    ax.set_xlabel("number of systems in the testbed")
    ax.set_ylabel("JACK")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def _panels(n: int, height_each: float = 2.9):
    cols = 2 if n > 1 else 1
    nrows = int(np.ceil(n / cols))
    fig = new_figure(height_each * nrows + 0.4)
    axes = np.atleast_1d(_axes(fig, nrows, cols, squeeze=False)).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes


@styled
def king_pearson_figure(rows: pd.DataFrame, best_set: Optional[str] = None) -> Figure:
    """KING vs system-level Pearson, one panel per criterion. ``rows``:
    metric_set, n_metrics, king, criterion, pearson."""
    criteria = sorted(rows["criterion"].unique())
    fig, axes = _panels(len(criteria))
    for ax, criterion in zip(axes, criteria):
        part = rows[rows["criterion"] == criterion]
        single = part["n_metrics"] == 1
        ax.scatter(part["king"][~single], part["pearson"][~single], s=6, color=GREY, lw=0,
                   alpha=0.6, label="a set of metrics")
        ax.scatter(part["king"][single], part["pearson"][single], s=12, color=BLUE, lw=0,
                   label="a single metric")
        best = part[part["metric_set"] == best_set]
        if len(best):
            ax.scatter(best["king"], best["pearson"], marker="*", s=150, color=RED, zorder=4,
                       edgecolors="black", linewidths=0.5, label="best set")
        ax.set_title(criterion)
        ax.set_xlabel("KING")
        ax.set_ylabel("system-level Pearson")
    axes[0].legend(fontsize=7.5, loc="best")
    return fig


@styled
def orange_figure(rows: pd.DataFrame, best_orange: Optional[float] = None,
                  labelled: Sequence[str] = ()) -> Figure:
    """ORANGE of each metric's QUEEN against ORANGE of its plain score.
    ``rows``: metric, plain, queen."""
    fig = new_figure(4.6, 6.2)
    ax = _axes(fig)
    above = (rows["queen"] > rows["plain"]).to_numpy()
    ax.scatter(rows["plain"][above], rows["queen"][above], s=18, color=GREEN,
               label="QUEEN better than plain")
    ax.scatter(rows["plain"][~above], rows["queen"][~above], s=18, color=GREY,
               label="QUEEN not better")
    values = pd.concat([rows["plain"], rows["queen"]]).dropna()
    if len(values):
        lo, hi = float(values.min()), float(values.max())
        pad = 0.03 * (hi - lo or 1)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="black", lw=0.8, ls=":",
                label="equal")
    if best_orange is not None and not np.isnan(best_orange):
        ax.axhline(best_orange, color=RED, ls="--", lw=1.2, label="QUEEN of the best set")
    for r in rows[rows["metric"].isin(labelled)].itertuples():
        ax.annotate(r.metric, (r.plain, r.queen), fontsize=7, xytext=(3, 2),
                    textcoords="offset points")
    ax.set_xlabel("ORANGE of the plain score (mean similarity to the references)")
    ax.set_ylabel("ORANGE of QUEEN")
    ax.legend(fontsize=8, loc="best")
    return fig


# ------------------------------------------------------------------ HBR

@styled
def auc_figure(rows: pd.DataFrame) -> Figure:
    """AUC of every measure and of HBR with intervals, one panel per
    criterion. ``rows``: criterion, measure, auc, low, high."""
    criteria = sorted(rows["criterion"].unique())
    fig, axes = _panels(len(criteria))
    for ax, criterion in zip(axes, criteria):
        part = rows[rows["criterion"] == criterion].sort_values(
            ["auc", "measure"], ascending=[False, True]).reset_index(drop=True)
        x = np.arange(len(part))
        hbr = (part["measure"] == "HBR").to_numpy()
        ci = part["low"].notna().to_numpy()
        ax.vlines(x[ci & ~hbr], part["low"][ci & ~hbr], part["high"][ci & ~hbr], color=GREY,
                  lw=1)
        ax.scatter(x[~hbr], part["auc"][~hbr], s=10, color=BLUE, zorder=3,
                   label="a single measure")
        if hbr.any():
            ax.vlines(x[ci & hbr], part["low"][ci & hbr], part["high"][ci & hbr], color=RED,
                      lw=2)
            ax.scatter(x[hbr], part["auc"][hbr], s=60, marker="D", color=RED, zorder=4,
                       label="HBR")
            ax.axhline(float(part["auc"][hbr].iloc[0]), color=RED, lw=0.7, ls=":")
        singles = part[~hbr]
        if len(singles):
            ax.annotate(f"best: {singles['measure'].iloc[0]}",
                        (int(singles.index[0]), singles["auc"].iloc[0]), fontsize=7.5,
                        xytext=(6, 4), textcoords="offset points")
        ax.axhline(0.5, color="black", lw=0.7)
        ax.set_title(criterion)
        ax.set_xlabel("measures, best first")
        ax.set_ylabel("AUC")
        ax.set_xticks([])
    axes[0].legend(fontsize=7.5, loc="upper right")
    return fig


@styled
def robustness_figure(rows: pd.DataFrame) -> Figure:
    """Pooled AUC against the worst-10%-topics rank, per criterion.
    ``rows``: criterion, measure, auc, worst10_rank."""
    criteria = sorted(rows["criterion"].unique())
    fig, axes = _panels(len(criteria))
    for ax, criterion in zip(axes, criteria):
        part = rows[rows["criterion"] == criterion]
        hbr = (part["measure"] == "HBR").to_numpy()
        ax.scatter(part["auc"][~hbr], part["worst10_rank"][~hbr], s=12, color=BLUE,
                   label="a single measure")
        if hbr.any():
            ax.scatter(part["auc"][hbr], part["worst10_rank"][hbr], s=70, marker="D",
                       color=RED, zorder=4, label="HBR")
        ax.set_title(criterion)
        ax.set_xlabel("AUC, all topics")
        ax.set_ylabel("mean rank in its worst 10% topics")
    axes[0].legend(fontsize=7.5, loc="best")
    return fig


@styled
def hetero_curve_figure(rows: pd.DataFrame) -> Figure:
    """P(quality increase) against heterogeneity, one line per criterion.
    ``rows``: criterion, bin, mean_h, p_quality_increase."""
    fig = new_figure(3.8)
    ax = _axes(fig)
    for i, (criterion, part) in enumerate(rows.sort_values("bin").groupby("criterion")):
        ax.plot(part["mean_h"], part["p_quality_increase"], lw=1.3, marker="o", ms=2.5,
                color=CLUSTER_COLOURS[i % len(CLUSTER_COLOURS)], label=criterion)
    ax.axhline(0.5, color="black", lw=0.7, ls=":")
    ax.set_xlabel("heterogeneity H of the measures saying s ≥ s' (mean of a bin of pairs)")
    ax.set_ylabel("P(human score of s ≥ s')")
    ax.legend(fontsize=8, loc="best")
    return fig


# ------------------------------------------------------------------ statistics

@styled
def comparisons_figure(rows: pd.DataFrame) -> Figure:
    """Differences a − b with their intervals. ``rows``: label, difference,
    ci_low, ci_high, significant."""
    rows = rows.reset_index(drop=True)
    fig = new_figure(max(2.2, 0.24 * len(rows) + 1.0))
    ax = _axes(fig)
    y = np.arange(len(rows))[::-1]
    sig = rows["significant"].fillna(False).astype(bool).to_numpy()
    colours = np.where(sig, RED, BLUE)
    ax.hlines(y, rows["ci_low"], rows["ci_high"], colors=colours, lw=1.6)
    ax.scatter(rows["difference"], y, color=colours, s=22, zorder=3)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(y, rows["label"], fontsize=8)
    ax.legend(handles=[Line2D([], [], color=RED, marker="o", label="significant (5%)"),
                       Line2D([], [], color=BLUE, marker="o", label="not significant")],
              fontsize=8, loc="best")
    ax.set_xlabel("difference a − b with its 95% bootstrap interval")
    ax.grid(axis="y", visible=False)
    return fig


FIGURES: Dict[str, object] = {
    "king_metrics": king_metrics_figure, "king_subsets": king_subsets_figure,
    "ranking": ranking_figure, "jack_curve": jack_curve_figure,
    "king_pearson": king_pearson_figure, "orange": orange_figure, "auc": auc_figure,
    "robustness": robustness_figure, "hetero_curve": hetero_curve_figure,
    "comparisons": comparisons_figure,
}
