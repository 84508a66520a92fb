"""Judge-based meta-evaluation of one (task, criterion) (issue 28; SPEC
§11): every measure's agreement with the human scores, with bootstrap
intervals over topics, the chance baseline and the significance clusters
of pairwise accuracy: each statistic declared in
:mod:`qarla_spark.meta_statistics`, computed by its kernel here
(:data:`KERNELS`). A pure function of the group's score cube (numpy):
the statistics stage (:mod:`qarla_spark.stages.judges`) runs one group a
task, every criterion at once (:func:`meta_evaluations`), and the chance
baseline one a (task, criterion), on the executors. The statistics themselves are
:mod:`~qarla_spark.measures.meta_eval`'s; the resampling (Poisson weights
and sign patterns keyed by (seed, task, topic), exact means)
:mod:`~qarla_spark.measures.resampling`'s.

The data: a summary's score under a measure (a metric: its mean similarity
to the topic's references; ``QUEEN(<set>)`` with all references; ``HBR``)
and its human score (the mean of its judgments) for every (topic, system)
*cell* where the system's summary is judged and scored by every measure.
A system's score is the mean over its cells of its summary scores, its
human score the mean of its judgments' means — exact means, rounded once.
"""

from __future__ import annotations

import functools
import math
from collections import abc
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import agreement
from qarla_spark.measures import human as hu
from qarla_spark.measures import meta_eval as me
from qarla_spark.measures import resampling as rs
from qarla_spark.names import CHANCE  # noqa: F401  (the chance rows' measure name)

#: how many random measures the chance baseline draws
CHANCE_DRAWS = 100
#: a random measure's scores are multiples of 1 / CHANCE_GRID in [0, 1)
CHANCE_GRID = 2 ** 24
#: every statistic of ``metric_eval/``, (level, statistic), as declared
#: (:data:`qarla_spark.meta_statistics.STATISTICS`; the functions below
#: read the declarations when called)
STATISTICS = tuple(s.key for s in ms.STATISTICS)
#: the unit of the intervals, of the chance band
UNIT, CHANCE_UNIT = ms.TOPICS, "draws"
#: the chance rows' interval: their band
BAND = ms.BAND


@dataclass(frozen=True)
class JudgedScores:
    """The score cube of one (task, criterion): ``scores[t, s, m]`` of the
    summary of system s in topic t under measure m, ``human[t, s]`` its
    human score; NaN where missing. Topics and systems sorted."""

    topics: Tuple[str, ...]
    systems: Tuple[str, ...]
    measures: Tuple[str, ...]
    scores: np.ndarray
    human: np.ndarray

    @functools.cached_property
    def cells(self) -> np.ndarray:
        """(T × S) bool: judged and scored by every measure (made once,
        read-only: every kernel of the group reads it)."""
        found = np.isfinite(self.human) & np.isfinite(self.scores).all(axis=2)
        found.setflags(write=False)
        return found

    def used(self) -> "JudgedScores":
        """The topics and systems with a cell, cells only (NaN elsewhere)."""
        c = self.cells
        t, s = c.any(axis=1), c.any(axis=0)
        scores = np.where(c[:, :, None], self.scores, np.nan)[np.ix_(t, s)]
        human = np.where(c, self.human, np.nan)[np.ix_(t, s)]
        return JudgedScores(tuple(np.asarray(self.topics, dtype=object)[t]),
                            tuple(np.asarray(self.systems, dtype=object)[s]), self.measures,
                            scores, human)


@dataclass(frozen=True)
class Estimate:
    """A statistic's value, its 95% interval (or band) and, with bootstrap
    replicates, the replicates."""

    value: float
    low: float
    high: float
    replicates: np.ndarray = field(default=None, repr=False, compare=False)
    #: how low and high were made (INTERVALS), "" without an interval
    interval: str = ""


class EstimateColumns(abc.Sequence):
    """One statistic's :class:`Estimate` of every measure, kept as columns:
    the values, lows and highs (lists of floats) and the replicates (B × M,
    read-only, column m a measure's); a measure's :class:`Estimate` made
    when read (``[m]``, iteration: the same fields). The rows of
    ``metric_eval/`` read the columns, not an object per measure (issue
    36: thousands a task)."""

    __slots__ = ("values", "lows", "highs", "replicates", "interval")

    def __init__(self, values: list, lows: list, highs: list, replicates: np.ndarray,
                 interval: str):
        self.values, self.lows, self.highs = values, lows, highs
        self.replicates, self.interval = replicates, interval

    @classmethod
    def of(cls, found) -> "EstimateColumns":
        """A statistic's estimates of every measure as columns (values,
        lows, highs; the interval's name, or a list of them): ``found``
        itself when it is one, else its Estimates' fields read once (no
        replicates)."""
        if isinstance(found, cls):
            return found
        found = list(found)
        return cls([est.value for est in found], [est.low for est in found],
                   [est.high for est in found], None, [est.interval or None for est in found])

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, m):
        if isinstance(m, slice):
            return [self[k] for k in range(len(self))[m]]
        return _estimate(self.values[m], self.lows[m], self.highs[m], self.replicates[:, m],
                         self.interval)


@dataclass
class MetaEvaluation:
    """What one (task, criterion) gives: per (level, statistic), each
    measure's :class:`Estimate`; the chance baseline per (level,
    statistic); acc_eq's tie threshold per measure; the significance
    clusters of pairwise accuracy."""

    measures: Tuple[str, ...]
    n_topics: int
    n_systems: int
    n_resamples: int
    estimates: Dict[Tuple[str, str], Sequence[Estimate]]
    chance: Dict[Tuple[str, str], Estimate]
    epsilon: List[float]
    ranks: Tuple[int, ...] = ()
    #: pairwise accuracy's counts, row 0 the point, rows 1..n the
    #: replicates: agree2 ((n+1) × M), pairs2 (n+1)
    pa_counts: Tuple[np.ndarray, np.ndarray] = None
    #: per (level, statistic) with replicates, each measure's
    #: :class:`Estimate` with the raters drawn as well (unit ``raters``:
    #: :mod:`qarla_spark.measures.rater_draws`); empty without two named
    #: raters of the criterion
    raters: Dict[Tuple[str, str], List[Estimate]] = field(default_factory=dict)
    #: per (level, statistic) with replicates, the replicates of every
    #: measure (B × M, read-only: each Estimate's ``replicates`` a column)
    replicates: Dict[Tuple[str, str], np.ndarray] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# system scores
# ---------------------------------------------------------------------------

def _positions(data: JudgedScores):
    t_idx, s_idx = np.nonzero(data.cells)
    return t_idx, s_idx


def system_scores(data: JudgedScores, weights) -> Tuple[np.ndarray, np.ndarray]:
    """(B × S × M) measure scores and (B × S) human scores of the systems:
    each the weighted mean over the system's cells with the topics'
    ``weights`` (B × T; NaN where a system's weights are all 0): exact and
    rounded once for one row of weights (a point value), by
    :func:`~qarla_spark.measures.resampling.grouped_replicate_means` for
    replicates (deterministic, within a few ulp)."""
    return measure_scores(data, weights), human_scores(data, weights)


def _means(weights):
    return rs.grouped_real_means if len(weights) == 1 else rs.grouped_replicate_means


def measure_scores(data: JudgedScores, weights, means=None) -> np.ndarray:
    """The measures' side of :func:`system_scores` (B × S × M); ``means``:
    the function of the means (default: :func:`_means` of ``weights``)."""
    t_idx, s_idx = _positions(data)
    n_s, n_m = len(data.systems), len(data.measures)
    cols = (s_idx[:, None] * n_m + np.arange(n_m)[None, :]).ravel()
    x = (means or _means(weights))(data.scores[t_idx, s_idx, :].ravel(),
                                   (np.repeat(t_idx, n_m), cols), n_s * n_m, weights)
    return x.reshape(len(x), n_s, n_m)


def human_scores(data: JudgedScores, weights, means=None) -> np.ndarray:
    """The humans' side of :func:`system_scores` (B × S): the exact means of
    the cells' readings (:func:`~qarla_spark.measures.human.system_means`:
    thirds as thirds, issue 39 part 2), rounded once, point and replicates
    alike; the means of the doubles above when every score reads as its
    double (``means``: as :func:`measure_scores`')."""
    t_idx, s_idx = _positions(data)
    return hu.system_means(data.human[t_idx, s_idx], (t_idx, s_idx), len(data.systems),
                           weights, means or _means(weights))


# ---------------------------------------------------------------------------
# the statistics of given system scores: one kernel per declared statistic
# ---------------------------------------------------------------------------

@dataclass
class SystemScores:
    """What every statistic's kernel reads, for one criterion: the systems'
    measure scores ``x`` ((1 + B) × S × M) and human scores ``h`` ((1 + B)
    × S), row 0 the point value and rows 1.. the bootstrap replicates
    (none for the chance baseline); their Pearson and Spearman rows
    ``correlations`` ((1 + B) × M × 2) and the signs of every pair of
    systems ``signs`` (:class:`~qarla_spark.measures.meta_eval.SignSums`),
    made for every criterion at once by the caller; the criterion's cube
    ``data`` (its cells), the replicates' topic ``weights`` (B × T) and
    the sign patterns ``flips``. ``shared``: what the criteria with the
    same measures' cells compute once (:meth:`metric_upper`)."""

    data: JudgedScores
    x: np.ndarray
    h: np.ndarray
    correlations: np.ndarray
    signs: object
    weights: np.ndarray
    flips: np.ndarray
    shared: dict = field(default_factory=dict)
    memo: dict = field(default_factory=dict, repr=False)
    #: the criterion's name among ``shared["humans"]`` (the human scores
    #: of the criteria with the same cells: :meth:`topic_correlations` of
    #: them all at once)
    criterion: str = None
    #: the point values only (the chance baseline): :meth:`calibrations`
    #: without acc_eq's counts at ε (:func:`~qarla_spark.measures.meta_eval.
    #: tie_calibration_points`)
    points_only: bool = False

    @property
    def replicates(self) -> bool:
        return len(self.x) > 1

    def metric_upper(self) -> np.ndarray:
        """The measures' counts of the paired permutation test of Thompson
        et al. (2024) of the pairs i < j (K × pairs: each topic's scores of
        every system flipped by one sign pattern, the counts of "the
        difference of means is at least the observed one" decided exactly,
        :func:`~qarla_spark.measures.resampling.signed_mean_at_least_upper`),
        what soft pairwise accuracy reads. Shared by the criteria with the
        same cells."""
        if "metric_upper" not in self.shared:
            self.shared["metric_upper"] = rs.signed_mean_at_least_upper(
                self.data.scores, self.data.cells, self.flips)
        return self.shared["metric_upper"]

    def human_upper(self) -> np.ndarray:
        """The humans' counts of :meth:`metric_upper` (pairs,), decided on
        the scores' readings (:func:`~qarla_spark.measures.human.
        comparable`); every criterion with these cells in one call (each
        its own exact counts: a criterion's column compared with its own
        only)."""
        # (each criterion's reading of its human scores, when the caller
        # made it: ``shared["readings"]``)
        readings = self.shared.get("readings") or {}
        return self._of_criteria("human_upper", lambda humans, names: rs.signed_mean_at_least_upper(
            np.stack([hu.comparable(h, readings.get(c)) for h, c in zip(humans, names)], axis=2),
            self.data.cells, self.flips))

    def topic_correlations(self):
        """(T × M × 3 correlations, T × M defined): Pearson, Spearman and
        Kendall's τ_b of each measure with the human scores within each
        topic, over its cells' systems (``agreement.correlation_rows``,
        at least ``agreement.MIN_POINTS``; NaN when a side is constant),
        and where Pearson is defined (both sides vary)."""
        return self._of_criteria("topic_correlations",
                                 lambda humans, _: _topic_correlations(self.data, humans))

    def _of_criteria(self, name: str, compute):
        """``compute(humans, criteria)`` (one result per T × S human scores
        given, each its criterion's own) of this criterion, kept as
        ``name``: made once for every criterion with these cells
        (``shared["humans"]``), else of this criterion's scores alone."""
        if name not in self.memo:
            humans = self.shared.get("humans") or {}
            if self.criterion in humans:
                if name not in self.shared:
                    self.shared[name] = dict(zip(humans, compute(list(humans.values()),
                                                                 list(humans))))
                self.memo[name] = self.shared[name][self.criterion]
            else:
                self.memo[name] = compute([self.data.human], [None])[0]
        return self.memo[name]

    def summaries(self):
        """(topic positions, system positions, the cells' measure scores (N ×
        M), their grouping by topic (:func:`~qarla_spark.measures.meta_eval.
        group_pairs`)) of the cells, once for the criteria with the same
        cells (``shared``)."""
        if "summaries" not in self.shared:
            t_idx, s_idx = _positions(self.data)
            self.shared["summaries"] = (t_idx, s_idx, self.data.scores[t_idx, s_idx, :],
                                        me.group_pairs(t_idx))
        return self.shared["summaries"]

    def calibrations(self):
        """Tie calibration of every measure at summary level, grouped by
        topic (:func:`~qarla_spark.measures.meta_eval.tie_calibrations`,
        all at once): the calibrated statistic's ε and value per measure."""
        if "calibrations" not in self.memo:
            t_idx, s_idx, metrics, grouping = self.summaries()
            if self.points_only:
                self.memo["calibrations"] = me.tie_calibration_points(
                    metrics, self.data.human[t_idx, s_idx], grouping)
                return self.memo["calibrations"]
            if "calibration_side" not in self.shared and np.isfinite(metrics).all():
                # the measures' side (their pairs' differences, signs and
                # order), once for the criteria with the same cells
                self.shared["calibration_side"] = me.calibration_side(metrics, grouping)
            self.memo["calibrations"] = me.tie_calibrations(
                metrics, self.data.human[t_idx, s_idx], grouping,
                self.shared.get("calibration_side"))
        return self.memo["calibrations"]


def _topic_correlations(data: JudgedScores, humans: List[np.ndarray]) -> List[tuple]:
    """:meth:`SystemScores.topic_correlations` of ``data``'s measures against
    each of ``humans`` (T × S human scores with ``data``'s cells), the
    criteria against the same measures' rows in one call per batch of
    topics (each criterion's numbers its own)."""
    n_t, n_m = data.cells.shape[0], len(data.measures)
    rs_ = [np.full((n_t, n_m, len(agreement.KINDS)), np.nan) for _ in humans]
    systems = np.asarray(data.systems, dtype=object)
    # the topics with as many cells in one call, whatever their systems
    # (row by row: the numbers of one topic at a time; each topic's systems
    # in the order of their names, the order a call of its own puts them
    # in — the keys given here, 0..n−1, are in order already): 3 calls a
    # chance group of 10 topics instead of 6 (issue 36)
    batches: Dict[int, list] = {}
    for t, count in enumerate(data.cells.sum(axis=1).tolist()):
        if count:
            batches.setdefault(count, []).append(t)
    for count, mine in batches.items():
        sel = np.empty((len(mine), count), dtype=np.intp)
        for k, t in enumerate(mine):
            own = np.flatnonzero(data.cells[t])
            sel[k] = own[np.argsort(systems[own], kind="stable")]
        at = (np.asarray(mine, dtype=np.intp)[:, None], sel)
        found = agreement.correlation_rows_many(
            np.arange(count), data.scores[at].transpose(0, 2, 1),
            np.stack([h[at] for h in humans]), min_n=agreement.MIN_POINTS)
        for r, f in zip(rs_, found):
            r[mine] = f
    return [(r, np.isfinite(r[:, :, 0])) for r in rs_]


#: the kernel of each declared statistic (:data:`qarla_spark.meta_statistics.
#: STATISTICS`), by its key (level, name): ``kernel(scores)`` of a
#: :class:`SystemScores` gives (1 + B) × M values, row 0 the point values
#: and rows 1.. the replicates (one row for a statistic without replicates,
#: or when the scores have none: the chance baseline)
KERNELS: Dict[Tuple[str, str], Callable[[SystemScores], np.ndarray]] = {}


def kernel(name: str, level: str = "system"):
    """Register the decorated function as the kernel of statistic ``name``
    at ``level``."""
    def register(func):
        KERNELS[(level, name)] = func
        return func
    return register


@kernel("pearson")
def _pearson(scores: SystemScores) -> np.ndarray:
    return scores.correlations[:, :, 0]


@kernel("spearman")
def _spearman(scores: SystemScores) -> np.ndarray:
    return scores.correlations[:, :, 1]


@kernel("kendall")
def _kendall(scores: SystemScores) -> np.ndarray:
    """Kendall's τ_b from the signs of the pairs; NaN below
    ``agreement.MIN_SYSTEMS`` systems or when a row holds a NaN (a system
    without topic in a replicate)."""
    x, h = scores.x, scores.h
    if "complete_x" not in scores.shared:   # the measures' side, once for the criteria
        scores.shared["complete_x"] = np.isfinite(x).all(axis=1)
    complete = scores.shared["complete_x"] & np.isfinite(h).all(axis=1)[:, None]
    return np.where(complete & (x.shape[1] >= agreement.MIN_SYSTEMS),
                    scores.signs.kendall_b(), np.nan)


@kernel("pairwise_accuracy")
def _pairwise_accuracy(scores: SystemScores) -> np.ndarray:
    """The pairs the humans order that the measure orders alike (a metric
    tie ½) over those pairs; NaN without such a pair."""
    agree2, pairs2 = scores.signs.pairwise_accuracy_counts()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs2[:, None] > 0, agree2 / np.maximum(pairs2, 1)[:, None], np.nan)


@kernel("soft_pairwise_accuracy")
def _soft_pairwise_accuracy(scores: SystemScores) -> np.ndarray:
    """Soft pairwise accuracy of each measure (Thompson et al. 2024) from
    the p-values under the sign patterns of the pairs i < j
    (:meth:`SystemScores.metric_upper`, :meth:`SystemScores.human_upper`):
    its point value only."""
    return np.array([me.soft_pairwise_accuracy_upper(scores.metric_upper(), len(scores.flips),
                                                     scores.human_upper())],
                    dtype=np.float64).reshape(1, -1)


@kernel("acc_eq", "summary")
def _acc_eq(scores: SystemScores) -> np.ndarray:
    """acc_eq at the ε calibrated once on all topics
    (:meth:`SystemScores.calibrations`) and its replicates: the weighted
    mean over topics of each topic's share of correct pairs at that ε
    (:func:`~qarla_spark.measures.meta_eval.acc_eq_by_groups`)."""
    cals = scores.calibrations()
    point = np.asarray([cal.value for cal in cals], dtype=np.float64)
    if not scores.replicates:
        return point[None, :]
    t_idx, s_idx, metrics, grouping = scores.summaries()
    at, correct, pairs = me.acc_eq_by_groups(
        metrics, scores.data.human[t_idx, s_idx], grouping, [c.epsilon for c in cals],
        scores.shared.get("calibration_side"))
    replicates = rs.weighted_ratio_means(correct, pairs, scores.weights[:, at]) if len(at) \
        else np.full((len(scores.weights), len(point)), np.nan)
    return np.vstack([point[None, :], replicates])


def _summary_level(scores: SystemScores, k: int) -> np.ndarray:
    """Correlation ``k`` (agreement.KINDS) at summary level, as SummEval
    and SacreROUGE's ``summary_level_corr``: per topic over its cells'
    systems (:meth:`SystemScores.topic_correlations`), the mean over the
    topics where both sides vary (Pearson defined, as ``correlations/``'s
    summary level) — exact and rounded once for the point value, the
    replicates' weighted means by
    :func:`~qarla_spark.measures.resampling.replicate_sums`
    (deterministic, within a few ulp); NaN without such a topic. The three
    correlations at once (the memo ``summary_level``)."""
    if "summary_level" not in scores.memo:
        r, defined = scores.topic_correlations()
        n_t, n_m, n_k = r.shape
        values = np.where(defined[:, :, None], r, 0.0).reshape(n_t, n_m * n_k)      # T × (M·K)
        present = np.repeat(defined.astype(np.int64), n_k, axis=1)
        ones = np.ones((1, n_t), dtype=np.int64)
        out = rs.weighted_present_means(values, present, ones)
        if scores.replicates:
            w = np.asarray(scores.weights, dtype=np.int64)
            # the counts as a double matrix product (small integers: exact,
            # and BLAS's, unlike int64's)
            counts = w.astype(np.float64) @ present.astype(np.float64)
            point, out = out, np.empty((1 + len(w), out.shape[1]), dtype=np.float64)
            out[0] = point[0]
            with np.errstate(invalid="ignore", divide="ignore"):
                # the quotients written in place (not a B × M·K copy by vstack)
                np.divide(rs.replicate_sums(values, w), counts, out=out[1:])
        scores.memo["summary_level"] = out.reshape(len(out), n_m, n_k)
    return scores.memo["summary_level"][:, :, k]


@kernel("pearson", "summary")
def _summary_pearson(scores: SystemScores) -> np.ndarray:
    return _summary_level(scores, 0)


@kernel("spearman", "summary")
def _summary_spearman(scores: SystemScores) -> np.ndarray:
    return _summary_level(scores, 1)


@kernel("kendall", "summary")
def _summary_kendall(scores: SystemScores) -> np.ndarray:
    return _summary_level(scores, 2)


@kernel("pairwise_accuracy_wmt")
def _pairwise_accuracy_wmt(scores: SystemScores) -> np.ndarray:
    """mt-metrics-eval's ``Agreement`` (the pairwise accuracy WMT
    publishes): every pair of systems with human scores, human ties
    counted, a pair agreeing when its signs are equal
    (:func:`~qarla_spark.measures.meta_eval.wmt_agreement_counts`: the sign
    sums and the pairs the humans tie, every row and measure at once); NaN
    without a pair."""
    if "finite_x" not in scores.shared:     # the measures' side, once for the criteria
        fin = np.isfinite(scores.x)
        scores.shared["finite_x"] = (fin.all(axis=2), fin.any(axis=2))
    agree, pairs = me.wmt_agreement_counts(scores.x, scores.h, scores.signs,
                                           scores.shared["finite_x"])
    with np.errstate(invalid="ignore", divide="ignore"):
        # integers below 2^53: the double quotient is correctly rounded
        return np.where(pairs[:, None] > 0, agree / np.maximum(pairs, 1)[:, None], np.nan)


@kernel("pdp", "summary")
def _pdp(scores: SystemScores) -> np.ndarray:
    """Pairwise Difference Pearson (DiIanni & Deutsch 2025): every pair of
    systems within a topic, Σ d_m·d_h / √(Σ d_h² · Σ d_m²) pooled over the
    topics; each topic's three sums of every measure at once
    (:func:`~qarla_spark.measures.meta_eval.pdp_sums`), a replicate's the
    sums weighted by its topics' weights
    (:func:`~qarla_spark.measures.resampling.replicate_sums`: the point
    row and every replicate in one call, deterministic, within a few ulp);
    NaN when a side has no difference."""
    data = scores.data
    t_idx, s_idx, metrics, _ = scores.summaries()    # row-major: sorted by topic
    n_t, n_m = len(data.topics), len(data.measures)
    # the measures' pairs and differences, once for the criteria that
    # share their cells (``shared``)
    if "pdp_side" not in scores.shared:
        scores.shared["pdp_side"] = me.pdp_side(metrics, t_idx, n_t)
    side = scores.shared["pdp_side"]
    cross, hh = me.pdp_human_sums(side, data.human[t_idx, s_idx])
    mm = side.mm
    if "pdp_w" not in scores.shared:        # the same rows for the criteria
        w = np.ones((1, n_t), dtype=np.int64)
        if scores.replicates:
            w = np.vstack([w, np.asarray(scores.weights, dtype=np.int64)])
        scores.shared["pdp_w"] = w
    w = scores.shared["pdp_w"]
    # the measures' Σ d_m² depends on their cells only: once for the
    # criteria that share them (``shared``)
    if "pdp_mm" not in scores.shared:
        scores.shared["pdp_mm"] = rs.replicate_sums(mm, w)                # rows × M
    sums = rs.replicate_sums(np.hstack([cross, hh[:, None]]), w)          # rows × (M + 1)
    den = np.sqrt(sums[:, n_m:] * scores.shared["pdp_mm"])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, sums[:, :n_m] / den, np.nan)


# ---------------------------------------------------------------------------
# the group
# ---------------------------------------------------------------------------

def _estimates(points, reps, bounds=None, matrices: dict = None, key=None) -> List[Estimate]:
    """An :class:`Estimate` of each column (``points`` (M,), ``reps`` B ×
    M): recentred within ``bounds`` when given (a statistic of system
    scores), else percentile; the intervals of every column at once
    (:func:`~qarla_spark.measures.resampling.bootstrap_columns`)."""
    low, high = rs.bootstrap_columns(points, reps, bounds)
    method = rs.interval_method(bounds)
    # one copy, column-major: each measure's replicates a contiguous column
    # of it, read-only (not a copy each: 2,880 of them a task)
    columns = np.array(reps, dtype=np.float64, order="F")
    columns.setflags(write=False)
    if matrices is not None:
        matrices[key] = columns
    return [_estimate(v, a, b, columns[:, m], method)
            for m, (v, a, b) in enumerate(zip(np.asarray(points, dtype=np.float64).tolist(),
                                              low.tolist(), high.tolist()))]


def _estimate(value: float, low: float, high: float, replicates, interval: str) -> Estimate:
    """``Estimate(value, low, high, replicates, interval)`` of Python floats,
    its fields set as the frozen dataclass's own ``__init__`` sets them
    (object's ``__setattr__``: its instance dict) without that call's
    cost (a task makes thousands)."""
    e = object.__new__(Estimate)
    e.__dict__.update(value=value, low=low, high=high, replicates=replicates,
                      interval=interval)
    return e


def _band(draws) -> Estimate:
    d = np.asarray(draws, dtype=np.float64)
    d = d[np.isfinite(d)]
    if not d.size:
        return Estimate(math.nan, math.nan, math.nan)
    low, high = rs.percentile_interval(d)
    return Estimate(math.fsum(d) / d.size, low, high, interval=BAND)


def _bands(values) -> List[Estimate]:
    """:func:`_band` of each column of ``values`` (draws × K), the same
    doubles: every column's percentiles at once
    (:func:`~qarla_spark.measures.resampling.percentile_columns`)."""
    finite = np.isfinite(values)
    low, high = rs.percentile_columns(values)
    out = []
    for k in range(values.shape[1]):
        d = values[finite[:, k], k]
        out.append(Estimate(math.fsum(d) / d.size, float(low[k]), float(high[k]),
                            interval=BAND) if d.size else Estimate(math.nan, math.nan, math.nan))
    return out


def meta_evaluation(task: str, criterion: str, data: JudgedScores, seed: int, n: int,
                    draws: int = CHANCE_DRAWS) -> MetaEvaluation:
    """Every statistic of every measure of one (task, criterion), with
    intervals from ``n`` Poisson replicates over topics (seeded
    by (seed, task, topic), as every interval of the run), soft pairwise
    accuracy from ``n`` sign patterns (no interval: its p-values are
    themselves resampled), acc_eq with its tie threshold calibrated once
    on all topics, the chance baseline over ``draws`` random measures, and
    the significance clusters of pairwise accuracy."""
    return meta_evaluations(task, {criterion: data}, seed, n, draws)[criterion]


def _same_cells(a: JudgedScores, b: JudgedScores) -> bool:
    """Two criteria's used cubes hold the same measures' cells (the work on
    the measures' side is the same)."""
    return (a.topics == b.topics and a.systems == b.systems and a.measures == b.measures
            and np.array_equal(a.cells, b.cells)
            and np.array_equal(a.scores, b.scores, equal_nan=True))


def meta_evaluations(task: str, datas: Dict[str, JudgedScores], seed: int, n: int,
                     draws: int = 0, designs: Dict[str, object] = None
                     ) -> Dict[str, MetaEvaluation]:
    """:func:`meta_evaluation` of each criterion of one task (``datas``:
    criterion → its score cube), the same numbers, the measures' side —
    their system scores and replicates, their signs of every pair of
    systems, their ranks, their sign-flip counts — computed once for the
    criteria whose cells are the same (every criterion judges the same
    summaries in most testbeds: issue 36). ``designs``: the criteria's
    ratings by named raters (:class:`~qarla_spark.measures.rater_draws.
    RaterDesign`), whose estimates with the raters drawn as well
    (``MetaEvaluation.raters``) are made beside."""
    used = {c: d.used() for c, d in sorted(datas.items())}
    groups: List[List[str]] = []
    for c, d in used.items():
        for g in groups:
            if _same_cells(used[g[0]], d):
                g.append(c)
                break
        else:
            groups.append([c])
    out: Dict[str, MetaEvaluation] = {}
    for criteria in groups:
        out.update(_evaluate_shared(task, {c: used[c] for c in criteria}, seed, n, draws,
                                    designs or {}))
    return out


def _human_scores_read(used: Dict[str, JudgedScores], weights
                       ) -> Tuple[Dict[str, np.ndarray], Dict[str, "hu.Reading"]]:
    """The human scores ((1 + B) × S: the point row, then the replicates of
    ``weights``) of each criterion of ``used`` (the same cells: the same
    positions) and the reading of its cells' scores: each criterion's
    readings found once (one :func:`~qarla_spark.measures.human.
    fractions_many` for them all) for its point row, its replicates and
    its sign-flip counts (:meth:`SystemScores.human_upper`), not three
    times each — the numbers of :func:`human_scores` with one row of ones,
    then with ``weights``, and of ``hu.comparable``. (~2.5 ms of a task's
    meta group of 4 criteria, measured.)"""
    data = next(iter(used.values()))
    t_idx, s_idx = _positions(data)
    ones = np.ones((1, len(data.topics)), dtype=np.int64)
    cells = {c: d.human[t_idx, s_idx] for c, d in used.items()}
    readings = {c: hu.reading_of(v, p, q) if v.size else hu.Reading(hu.DOUBLES, None, 1)
                for (c, v), (p, q) in zip(cells.items(),
                                          hu.fractions_many(list(cells.values())))}
    hs = {c: np.concatenate(hu.system_means_many(
              v, (t_idx, s_idx), len(data.systems), [ones, weights],
              lambda x, cols, n_s, w: _means(w)(x, cols, n_s, w), readings[c]))
          for c, v in cells.items()}
    return hs, readings


def _evaluate_shared(task: str, used: Dict[str, JudgedScores], seed: int, n: int,
                     draws: int, designs: Dict[str, object] = None
                     ) -> Dict[str, MetaEvaluation]:
    """The criteria of :func:`meta_evaluations` with the same cells: every
    declared statistic by its kernel (:data:`KERNELS`), an interval of the
    replicates of those that have them."""
    data = next(iter(used.values()))
    topics, systems = data.topics, data.systems
    n_m = len(data.measures)
    ones = np.ones((1, len(topics)), dtype=np.int64)
    weights = rs.poisson_weights(seed, task, topics, n)
    flips = rs.sign_flips(seed, task, topics, n)
    x = np.concatenate([measure_scores(data, ones), measure_scores(data, weights)])
    names = list(used)
    hs, readings = _human_scores_read(used, weights)
    signs_all = me.sign_sums_many(x, [hs[c] for c in names])
    # Pearson and Spearman of the point row and every replicate, each
    # criterion against the same measures' rows
    corr = agreement.correlation_rows_many(systems, x.transpose(0, 2, 1),
                                           np.stack([hs[c] for c in names]),
                                           kinds=("pearson", "spearman"))
    # the measures' p-values, once for the criteria; their human scores
    # (the topics' correlations of every criterion at once)
    shared: dict = {"humans": {c: used[c].human for c in names}, "readings": readings}
    primary = ms.statistic(ms.PRIMARY).key
    out = {}
    runs = [(SystemScores(used[c], x, hs[c], corr[k], signs_all[k], weights, flips, shared,
                          criterion=c), {}) for k, c in enumerate(names)]
    # every criterion's statistics, then all their intervals at once
    for k, (c, (scores, matrices), estimates) in enumerate(zip(names, runs,
                                                               _estimates_all(runs))):
        d, signs = used[c], signs_all[k]
        pa = EstimateColumns.of(estimates[primary]).values
        ranked = [m for m, v in enumerate(pa) if math.isfinite(v)]
        ranks = [0] * n_m
        if ranked:
            found = me.rank_clusters([pa[m] for m in ranked],
                                     matrices[primary][:, ranked],
                                     [d.measures[m] for m in ranked])
            for m, r in zip(ranked, found.ranks):
                ranks[m] = r
        epsilon = [cal.epsilon for cal in scores.calibrations()] \
            if any(st.calibrated for st in ms.STATISTICS) else []
        design = (designs or {}).get(c)
        raters = _rater_estimates(task, c, d, design, seed, n, x, weights, flips, scores,
                                  estimates) if design is not None and n else {}
        out[c] = MetaEvaluation(d.measures, len(topics), len(systems), n, estimates,
                                chance_baseline(task, c, d, seed, flips, draws) if draws else {},
                                epsilon, tuple(ranks), signs.pairwise_accuracy_counts(), raters,
                                matrices)
    return out


def _rater_estimates(task: str, criterion: str, data: JudgedScores, design, seed: int,
                     n: int, x, weights, flips, run: SystemScores,
                     estimates: Dict[Tuple[str, str], List[Estimate]]
                     ) -> Dict[Tuple[str, str], List[Estimate]]:
    """Each statistic with replicates of every measure of one criterion with
    the raters drawn as well as the topics (unit ``raters``,
    :mod:`qarla_spark.measures.rater_draws`): replicate b weighs the topics
    by the ``topics`` unit's Poisson weights and gives each cell the exact
    mean of its drawn raters' readings (missing: no cell of the
    replicate); the replicates with the same human scores at once, through
    the statistics' own kernels (their cells' system scores by the
    ``topics`` unit's means; the measures' replicates of the run where no
    cell is missing; acc_eq at the run's calibrated ε). The values are the
    run's (``estimates``), the intervals the statistic's own."""
    from qarla_spark.measures import rater_draws
    t_idx, s_idx = _positions(data)
    u_idx = rater_draws.summary_positions(design, [data.topics[t] for t in t_idx],
                                          [data.systems[s] for s in s_idx])
    if not (u_idx >= 0).any():
        return {}
    values, groups = rater_draws.design_scores(design, seed, task, criterion, n)
    means = _means(weights)                 # the topics unit's, whatever a group's size
    replicated = [st for st in ms.STATISTICS if st.replicates]
    n_m = len(data.measures)
    reps = {st.key: np.full((n, n_m), np.nan) for st in replicated}
    ones = np.ones((1, len(data.topics)), dtype=np.int64)
    cals = run.calibrations() if any(st.calibrated for st in replicated) else None
    for g, found in enumerate(values):
        rows = np.flatnonzero(groups == g)
        human = np.array(data.human, dtype=np.float64)
        human[t_idx, s_idx] = rater_draws.with_drawn(found, u_idx, data.human[t_idx, s_idx])
        drawn = JudgedScores(data.topics, data.systems, data.measures, data.scores, human)
        w = weights[rows]
        if np.array_equal(drawn.cells, data.cells):
            xs = np.concatenate([x[:1], x[1 + rows]])
        else:
            xs = np.concatenate([measure_scores(drawn, ones), measure_scores(drawn, w, means)])
        hs = np.concatenate([human_scores(drawn, ones), human_scores(drawn, w, means)])
        signs = me.sign_sums_many(xs, [hs])[0]
        corr = agreement.correlation_rows_many(data.systems, xs.transpose(0, 2, 1), hs[None],
                                               kinds=("pearson", "spearman"))[0]
        scores = SystemScores(drawn, xs, hs, corr, signs, w, flips, {})
        if cals is not None:
            scores.memo["calibrations"] = cals          # the run's ε
        for st in replicated:
            reps[st.key][rows] = KERNELS[st.key](scores)[1:]
    out = {}
    for st in replicated:
        points = np.asarray([e.value for e in estimates[st.key]], dtype=np.float64)
        out[st.key] = _estimates(points, reps[st.key], st.recentred_within)
    return out


def _estimates_of(scores: SystemScores, matrices: dict = None
                  ) -> Dict[Tuple[str, str], List[Estimate]]:
    """Each declared statistic's :class:`Estimate` of every measure, in the
    declared order: its kernel's values, with the interval its declaration
    names when it has replicates (recentred within its range, or
    percentile), without one when it has none. ``matrices``: where to keep
    each statistic's replicates (B × M) too."""
    return _estimates_all([(scores, matrices)])[0]


def _estimates_all(runs) -> List[Dict[Tuple[str, str], List[Estimate]]]:
    """:func:`_estimates_of` of each (scores, matrices) of ``runs`` (the
    criteria of a group), the same Estimates: every kernel of each, then
    the intervals of every run's statistics with replicates at once (one
    :func:`_estimates_many` per number of replicates)."""
    founds = [{st.key: KERNELS[st.key](scores) for st in ms.STATISTICS} for scores, _ in runs]
    outs: List[Dict[Tuple[str, str], List[Estimate]]] = [{} for _ in runs]
    # the statistics with replicates, B of them each, side by side: every
    # interval at once (:func:`_estimates_many`), a run's with infinity not
    candidates: Dict[int, list] = {}
    for r, found in enumerate(founds):
        blocks = [(st, found[st.key]) for st in ms.STATISTICS if st.replicates]
        n_b = max((len(v) - 1 for _, v in blocks), default=0)
        together = [(r, st, v) for st, v in blocks if len(v) - 1 == n_b and n_b]
        if together:
            candidates.setdefault(n_b, []).extend(together)
    for blocks in candidates.values():
        found = _estimates_many(blocks, [matrices for _, matrices in runs])
        for (r, st, _), est in zip(blocks, found):
            if est is not None:
                outs[r][st.key] = est
    for (_, matrices), found, out in zip(runs, founds, outs):
        for st in ms.STATISTICS:
            values = found[st.key]
            if st.key in out:
                continue
            if st.replicates:
                out[st.key] = _estimates(values[0], values[1:], st.recentred_within, matrices,
                                         st.key)
            else:
                out[st.key] = [Estimate(float(v), math.nan, math.nan) for v in values[0]]
    return [{st.key: out[st.key] for st in ms.STATISTICS} for out in outs]


def _estimates_many(blocks, matrices: list) -> List[EstimateColumns]:
    """:func:`_estimates` of each (run, statistic, values) of ``blocks``
    (values (1 + B) × M, the same B), the same Estimates — None for every
    block of a run whose replicates hold an infinity (the caller's path
    then): each statistic's replicates a read-only view of its kernel's
    rows 1.. (kept in its run's ``matrices[run]`` when not None), every
    interval by one selection of the order statistics it reads, each
    column read where it lies (:func:`~qarla_spark.measures.resampling.
    selected_blocks`: the percentiles' neighbours, and the median's of a
    recentred statistic) and one
    :func:`~qarla_spark.measures.resampling.bootstrap_sorted_many`."""
    widths = [v.shape[1] for _, _, v in blocks]
    starts = np.concatenate(([0], np.cumsum(widths))).astype(int)
    # each statistic's replicates as its kernel gave them (a read-only
    # view: rows 1..), not copied into one column-major matrix (~3 ms a
    # task of 2,400 columns): the selection reads each column where it lies
    mats = []
    for _, _, v in blocks:
        mine = np.asarray(v, dtype=np.float64)[1:]
        mine.setflags(write=False)
        mats.append(mine)
    # every column's order statistics selected once (with its finite
    # values and infinities counted in the selection's pass)
    recentred = np.zeros(int(starts[-1]), dtype=bool)
    for (_, st, _), a, b in zip(blocks, starts[:-1], starts[1:]):
        recentred[a:b] = st.recentred_within is not None
    ordered, n_finite, inf = rs.selected_blocks(mats, recentred)
    if inf.any():
        # a run with an infinity: every block of it by the caller's path
        bad = {r for (r, _, _), a, b in zip(blocks, starts[:-1], starts[1:]) if inf[a:b].any()}
        keep = [k for k, (r, _, _) in enumerate(blocks) if r not in bad]
        found = _estimates_many([blocks[k] for k in keep], matrices) if keep else []
        out: List[EstimateColumns] = [None] * len(blocks)
        for k, est in zip(keep, found):
            out[k] = est
        return out
    points = np.empty(int(starts[-1]), dtype=np.float64)
    lower = np.full(int(starts[-1]), math.nan)
    upper = np.full(int(starts[-1]), math.nan)
    for (_, st, v), a, b in zip(blocks, starts[:-1], starts[1:]):
        points[a:b] = v[0]
        bounds = st.recentred_within
        if bounds is not None:
            lower[a:b], upper[a:b] = bounds
    low, high = rs.bootstrap_sorted_many(points, ordered, n_finite, lower, upper)
    values, lows, highs = points.tolist(), low.tolist(), high.tolist()
    out = []
    for (r, st, _), mine, a, b in zip(blocks, mats, starts[:-1], starts[1:]):
        if matrices[r] is not None:
            matrices[r][st.key] = mine
        out.append(EstimateColumns(values[a:b], lows[a:b], highs[a:b], mine,
                                   rs.interval_method(st.recentred_within)))
    return out


def chance_system_scores(cube: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """(S × K) the system scores of random measures on the chance grid
    (``cube`` T × S × K, multiples of 1 / CHANCE_GRID in [0, 1) at the
    ``cells`` T × S): each the mean over its system's cells, exact and
    rounded once (:func:`measure_scores`' doubles; NaN for a system
    without a cell). The sum of T such values is a multiple of 2^-24
    below T, exact in doubles in any order (T < 2^29), so numpy's sum over
    the topics divided by the count is the once-rounded quotient —
    without the exact means' general path (0.45 ms of the chance group's
    ~9, issue 36)."""
    cube = np.asarray(cube, dtype=np.float64)
    cells = np.asarray(cells, dtype=bool)
    placed = np.where(cells[:, :, None], cube, 0.0)
    if cube.shape[0] >= 2 ** 29 or not ((placed >= 0.0) & (placed < 1.0)).all() or \
            not (np.floor(placed * CHANCE_GRID) == placed * CHANCE_GRID).all():
        raise ValueError("chance_system_scores needs values on the chance grid")
    counts = cells.sum(axis=0)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        # (numpy's NaN, as the exact means', not 0 / 0's negative one)
        return np.where(counts > 0, placed.sum(axis=0) / counts, np.nan)


def chance_baseline(task: str, criterion: str, data: JudgedScores, seed: int, flips,
                    draws: int) -> Dict[Tuple[str, str], Estimate]:
    """Each declared statistic of ``draws`` random measures (uniform scores
    per cell, keyed by (seed, task, criterion, draw):
    :func:`~qarla_spark.measures.meta_eval.chance_scores`), by its kernel:
    the mean over the draws and the 2.5-97.5% band."""
    t_idx, s_idx = _positions(data)
    if not draws or not t_idx.size:
        return {}
    shape = (len(data.topics), len(data.systems))
    # on a grid of 2^24 values (ties all but impossible, exact sums short)
    drawn = me.chance_scores_many(seed, [(task, criterion, str(d)) for d in range(draws)],
                                  shape)                             # draws × T × S
    cube = np.floor(np.moveaxis(drawn, 0, 2) * CHANCE_GRID) / CHANCE_GRID
    cube = np.where(data.cells[:, :, None], cube, np.nan)
    random = JudgedScores(data.topics, data.systems, tuple(map(str, range(draws))), cube,
                          data.human)
    ones = np.ones((1, len(data.topics)), dtype=np.int64)
    # the human scores' reading once, for their system means and the sign
    # flips' counts (:meth:`SystemScores.human_upper`): the cells' values
    # in row-major order, what both would read themselves
    judged = data.human[t_idx, s_idx]
    read = hu.reading(judged)
    h = hu.system_means_many(judged, (t_idx, s_idx), len(data.systems), [ones],
                             rs.grouped_real_means, read)[0]
    x = chance_system_scores(cube, data.cells)[None]
    r = agreement.correlation_rows_shared(data.systems, x.transpose(0, 2, 1), h,
                                          kinds=("pearson", "spearman"))
    # (a reading is its cells' only where they are the finite human scores)
    shared = {"readings": {None: read}} if np.array_equal(np.isfinite(data.human),
                                                          data.cells) else {}
    scores = SystemScores(random, x, h, r, me.sign_sums(x, h), np.zeros((0, len(data.topics))),
                          flips, shared, points_only=True)
    values = np.stack([np.asarray(KERNELS[st.key](scores)[0], dtype=np.float64)
                       for st in ms.STATISTICS], axis=1)                # draws × statistics
    return dict(zip((st.key for st in ms.STATISTICS), _bands(values)))


def configuration(draws: int = CHANCE_DRAWS) -> dict:
    """How metric_eval/, metric_ranks/ and king_vs_judges/ are computed
    (``run.json``, the report), each statistic's sentence its declaration's
    (:data:`qarla_spark.meta_statistics.STATISTICS`)."""
    return {
        "scores": "a summary's score: its mean similarity to the topic's references (a "
                  "metric), its QUEEN with all references (QUEEN(<set>)), its HBR; its human "
                  "score: the mean of its judgments; cells: (topic, system) judged and scored "
                  "by every measure",
        "system_score": "the mean over the system's cells (exact, rounded once)",
        # the statistics as declared: the correlations' titles on one line,
        # then each other statistic's sentence
        "correlations": ", ".join(st.title for st in ms.STATISTICS if not st.explains)
                        + " of the system scores",
        **{ms.label(st): st.explains for st in ms.STATISTICS if st.explains},
        "interval": "95%, Poisson bootstrap over topics (the run's replicates): system "
                    "level recentred (the percentile interval moved by the value minus "
                    "the replicates' median, within the statistic's range), summary "
                    "level (acc_eq, the correlations) percentile",
        "chance": f"{draws} measures of uniform random scores per cell, seeded by (seed, "
                  "task, criterion, draw): mean and 2.5-97.5% band",
        "clusters": "mt-metrics-eval's greedy rank assignment; paired bootstrap p-values "
                    "(1 + #{r: a <= b}) / (1 + B) of every pair in sorted order, "
                    "Benjamini-Hochberg adjusted, significant at <= 0.05",
        "king_vs_judges": "Kendall tau-b between the sets' KING and each statistic of their "
                          "QUEEN (a single metric is its own set), interval from the same "
                          "replicates",
    }



# ---------------------------------------------------------------------------
# KING's chance baseline
# ---------------------------------------------------------------------------

#: random topics simulated per (models, peers) configuration
KING_CHANCE_TOPICS = 100


@functools.lru_cache(maxsize=16)
def king_chance_pool(seed: int, n_models: int, n_peers: int, triples: str = "standard",
                     method: str = "auto", size: int = KING_CHANCE_TOPICS) -> np.ndarray:
    """(size,) int64: KING's wins (held-out references that beat every
    system, of ``n_models``) in each of ``size`` random topics of that
    shape: one metric whose similarities are random scores on the chance
    grid (keyed by (seed, "king", models, peers, topic)), through the run's
    own QUEEN and KING kernels. Remembered per worker (a run's topics share
    a few shapes).

    The random topics share their shape, so they go through the kernels at
    once, each as one metric of a single topic (one singleton set per random
    topic): the samples' structure is made once, not once per topic — each
    metric's counts are the integers a topic of its own gives
    (:func:`king_chance_pool_each`, kept as the reference; ``method``: the
    direct and zeta counts are the same integers, and the singleton sets take
    the direct one). ~200 → ~30 ms a shape, in every Python worker's first
    KING group (issue 36)."""
    from qarla_spark.measures.masks import set_words
    from qarla_spark.measures.queen import king_cases, queen_counts
    n = n_models + n_peers
    roles = np.array(["model"] * n_models + ["peer"] * n_peers)
    out = np.zeros(size, dtype=np.int64)
    if size:
        values = np.concatenate([_king_chance_topic(seed, n_models, n_peers, r)
                                 for r in range(size)], axis=2)
        words = np.asarray([set_words([r], size) for r in range(size)], dtype=np.int64)
        q = queen_counts(roles, values, words, triples, "direct")
        cases = king_cases(q) if q is not None else None
        if cases is not None:
            out[:] = cases[0]
    out.setflags(write=False)
    return out


def _king_chance_topic(seed: int, n_models: int, n_peers: int, r: int) -> np.ndarray:
    """(n, n, 1): the similarities of KING's ``r``-th random topic of the
    shape, on the chance grid, its diagonal NaN."""
    n = n_models + n_peers
    values = np.floor(me.chance_scores(seed, ("king", str(n_models), str(n_peers), str(r)),
                                       (n, n, 1)) * CHANCE_GRID) / CHANCE_GRID
    values[np.arange(n), np.arange(n), 0] = np.nan
    return values


def king_chance_pool_each(seed: int, n_models: int, n_peers: int, triples: str = "standard",
                          method: str = "auto", size: int = KING_CHANCE_TOPICS) -> np.ndarray:
    """:func:`king_chance_pool` one random topic at a time (each its own
    call of the kernels, with ``method``): the reference its batch is tested
    against."""
    from qarla_spark.measures.masks import set_words
    from qarla_spark.measures.queen import king_cases, queen_counts
    n = n_models + n_peers
    roles = np.array(["model"] * n_models + ["peer"] * n_peers)
    words = np.asarray([set_words([0], 1)], dtype=np.int64)
    out = np.zeros(size, dtype=np.int64)
    for r in range(size):
        values = _king_chance_topic(seed, n_models, n_peers, r)
        q = queen_counts(roles, values, words, triples, method)
        cases = king_cases(q) if q is not None else None
        out[r] = int(cases[0][0]) if cases is not None else 0
    return out


def king_chance(seed: int, task: str, topics: Sequence[Tuple[str, int, int]],
                draws: int = CHANCE_DRAWS, triples: str = "standard",
                method: str = "auto") -> Estimate:
    """KING of a random metric over a task's ``topics`` ((topic, models,
    peers) of each topic KING uses): in each of ``draws`` draws, every topic
    takes the outcome of one random topic of its shape
    (:func:`king_chance_pool`, picked by uniforms keyed by (seed, task,
    topic)), KING the exact mean over topics of wins / models; the mean
    over draws and the 2.5-97.5% band."""
    if not topics or not draws:
        return Estimate(math.nan, math.nan, math.nan)
    wins = np.empty((len(topics), draws), dtype=np.int64)
    dens = np.empty(len(topics), dtype=np.int64)
    picks = rs.uniforms_many(seed, [("king chance", task, topic) for topic, _, _ in topics],
                             draws)                                  # every topic's stream
    for t, (topic, n_models, n_peers) in enumerate(topics):
        pool = king_chance_pool(int(seed), int(n_models), int(n_peers), triples, method)
        pick = np.minimum((picks[t] * pool.size).astype(np.int64), pool.size - 1)
        wins[t] = pool[pick]
        dens[t] = n_models
    ones = np.ones((1, len(topics)), dtype=np.int64)
    return _band(rs.weighted_ratio_means(wins, dens, ones)[0])
