"""The statistics of one group, as rows: bootstrap intervals and paired
sign-flip tests (Deutsch et al.'s resampling of inputs) for a task's KING
or JACK (:func:`king_group`), a criterion's pooled AUC (:func:`auc_group`)
and a set's (or HBR's) correlations with a human criterion
(:func:`correlation_group`). Pure functions of a pandas frame of the
group's per-topic counts (numpy; no Spark): the statistics stage
(:mod:`qarla_spark.stages.statistics`) runs one per group on the executors.
The resampling itself — weights, exact weighted means, intervals, sign
flips — is :mod:`qarla_spark.measures.resampling`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, NamedTuple, Optional

import numpy as np

from qarla_spark.measures import agreement
from qarla_spark.measures import resampling as rs
from qarla_spark.names import FAMILIES

#: the unit of resampling
UNIT = "topics"


class StatRow(NamedTuple):
    """A row of :func:`king_group` and :func:`auc_group`: an interval of
    ``a``'s value (``kind``: king, jack, auc; ``method``: the interval's)
    or a paired comparison a − b (``comparison``: the difference, its
    interval, the p-value and its adjustment within ``family``)."""

    kind: str
    task: str
    family: Optional[str]
    criterion: Optional[str]
    a: str
    b: Optional[str]
    value_a: Optional[float]
    value_b: Optional[float]
    value: float
    method: str
    ci_low: float
    ci_high: float
    p_value: Optional[float]
    p_adjusted: Optional[float]


class CorrelationRow(NamedTuple):
    """A row of :func:`correlation_group`: one correlation (``kind``:
    pearson, spearman, kendall) of one (task, set, criterion) at one level,
    its interval by ``method``, resampling ``unit``."""

    task: str
    set_id: int
    criterion: str
    level: str
    kind: str
    value: float
    method: str
    ci_low: float
    ci_high: float
    unit: str


#: the columns of :class:`StatRow`
ROW_SCHEMA = ("kind string, task string, family string, criterion string, a string, b string, "
              "value_a double, value_b double, value double, method string, ci_low double, "
              "ci_high double, p_value double, p_adjusted double")
#: the ``method`` of a paired comparison's row
FLIP_METHOD = "sign flips over topics"


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    value_a: float
    value_b: float
    difference: float
    low: float
    high: float
    p_value: float
    p_adjusted: float

    @property
    def significant(self) -> bool:
        return self.p_adjusted < rs.ALPHA


def _ci_rows(kind, task, criterion, names, point, reps, jack):
    out = []
    found = rs.interval_columns(point, reps, jack)      # every column at once
    for j, name in enumerate(names):
        for method, (low, high) in found.items():
            out.append(StatRow(kind, task, None, criterion, name, None, None, None,
                               float(point[j]), method, float(low[j]), float(high[j]), None,
                               None))
    return out


def _comparison_rows(task, criterion, family, pairs, names, point, reps, diffs_of, flips):
    """Rows of one family of comparisons a − b (``pairs`` of column
    indices): the difference, its bootstrap interval, the sign-flip p-value
    and its max-T adjustment within the family."""
    if not pairs:
        return []
    ia_all, ib_all = (np.asarray(c, dtype=np.intp) for c in zip(*pairs))
    many = getattr(diffs_of, "many", None)
    if many is not None:                 # every pair's differences at once
        diffs, scale = many(ia_all, ib_all)
    else:
        columns = [diffs_of(ia, ib) for ia, ib in pairs]
        scale = columns[0][1]
        if any(c[1] != scale for c in columns):
            raise ValueError("the differences of a family must share one scale")
        diffs = np.column_stack([c[0].astype(np.int64) for c in columns])
    p, adjusted = rs.sign_flip_family(diffs, flips)
    lows, highs = rs.percentile_columns(reps[:, ia_all] - reps[:, ib_all])
    out = []
    for k, (ia, ib) in enumerate(pairs):
        out.append(StatRow("comparison", task, family, criterion, names[ia], names[ib],
                           float(point[ia]), float(point[ib]), int(diffs[:, k].sum()) / scale,
                           FLIP_METHOD, float(lows[k]), float(highs[k]), float(p[k]),
                           float(adjusted[k])))
    return out


def _matrix(rows, row_keys, col_keys):
    r_at = {k: i for i, k in enumerate(row_keys)}
    c_at = {k: i for i, k in enumerate(col_keys)}
    out = np.zeros((len(row_keys), len(col_keys)), dtype=np.int64)
    for r, c, v in rows:
        out[r_at[r], c_at[c]] = int(v)
    return out


@dataclass(frozen=True)
class RatioEstimates:
    """KING (or JACK) of every set of one task as a mean over topics of
    per-topic ratios: the counts (``wins``: T × sets, ``dens``: T), the
    point values, the bootstrap replicates (B × sets) and the jackknife's."""

    topics: list
    gids: list
    names: list
    wins: np.ndarray
    dens: np.ndarray
    point: np.ndarray
    reps: np.ndarray
    jack: np.ndarray


def ratio_estimates(task: str, frame, labels, seed: int, n: int) -> RatioEstimates:
    """:class:`RatioEstimates` of a frame of topic, gid, num, den (a row per
    topic and set; every set has the same topics; ``labels[gid]``: the
    set's name)."""
    topics = sorted(set(frame["topic"]))
    gids = sorted(set(int(g) for g in frame["gid"]))
    wins = _matrix(zip(frame["topic"], frame["gid"].astype(int), frame["num"]), topics, gids)
    dens = _matrix(zip(frame["topic"], frame["gid"].astype(int), frame["den"]), topics,
                   gids).max(axis=1)
    return ratio_estimates_of(task, topics, gids, [labels[g] for g in gids], wins, dens,
                              seed, n)


def ratio_estimates_of(task: str, topics, gids, names, wins, dens, seed: int,
                       n: int) -> RatioEstimates:
    """:class:`RatioEstimates` of the counts themselves: ``wins`` (T × sets,
    the columns ``gids`` named ``names``), ``dens`` (T,), topics sorted."""
    point = rs.weighted_ratio_means(wins, dens, np.ones((1, len(topics)), dtype=np.int64))[0]
    reps = rs.weighted_ratio_means(wins, dens, rs.poisson_weights(seed, task, topics, n))
    jack = rs.weighted_ratio_means(wins, dens, rs.jackknife_weights(len(topics)))
    return RatioEstimates(list(topics), list(gids), list(names), wins, dens, point, reps, jack)


def king_group(key, frame, labels, plans, seed: int, n: int, kind: str = "king",
               estimates: RatioEstimates = None):
    """KING (or JACK, ``kind``) intervals of every set of one task and the
    comparisons of its plan. ``frame``: topic, gid, num, den (a row per
    topic and set; every set has the same topics); ``labels[gid]``: the
    set's name; ``plans[task]``: gids of the best set, the best single
    metric, the representatives, the subsets; ``estimates``: the frame's
    :func:`ratio_estimates`, when the caller has them."""
    (task,) = key
    e = estimates if estimates is not None else ratio_estimates(task, frame, labels, seed, n)
    topics, gids, names, wins, dens = e.topics, e.gids, e.names, e.wins, e.dens
    point, reps = e.point, e.reps
    out = _ci_rows(kind, task, None, names, point, reps, e.jack)
    plan = plans.get(task) if kind == "king" else None
    if plan is None:
        return out
    flips = rs.sign_flips(seed, task, topics, n)
    at = {g: i for i, g in enumerate(gids)}

    def diffs_of(ia, ib):
        ints, lcm = rs.common_scale(wins[:, ia], wins[:, ib], dens)
        return ints, lcm * len(topics)

    lcm = math.lcm(*(int(d) for d in np.unique(dens)))
    factor = lcm // np.asarray(dens, dtype=np.int64)

    def many(ia, ib):
        # rs.common_scale of every pair at once (int64: the counts are small)
        if int(np.abs(wins).max(initial=0)) * int(factor.max(initial=1)) * 2 >= 2 ** 62:
            columns = [diffs_of(a, b) for a, b in zip(ia, ib)]
            return np.column_stack([c[0].astype(np.int64) for c in columns]), columns[0][1]
        return (wins[:, ia] - wins[:, ib]) * factor[:, None], lcm * len(topics)

    diffs_of.many = many

    best = plan["best"]
    for family, others in (("best_single", [plan["best_single"]]),
                           ("representative", plan["reps"]),
                           ("subset", [g for g in plan["subsets"] if g != best])):
        pairs = [(at[best], at[o]) for o in others if o in at and best in at]
        out += _comparison_rows(task, None, FAMILIES[family], pairs, names, point, reps,
                                diffs_of, flips)
    return out


def auc_group(key, frame, plans, seed: int, n: int):
    """Pooled-AUC intervals of every measure of one (task, criterion), and
    HBR vs the best and the median single measure. ``frame``: topic,
    measure, wins2, n_pairs."""
    task, criterion = key
    topics = sorted(set(frame["topic"]))
    measures = sorted(set(frame["measure"]))
    wins = _matrix(zip(frame["topic"], frame["measure"], frame["wins2"]), topics, measures)
    pairs = _matrix(zip(frame["topic"], frame["measure"], frame["n_pairs"]), topics, measures)

    def pooled(weights):
        with np.errstate(invalid="ignore", divide="ignore"):
            return ((weights @ wins).astype(np.float64)
                    / (2 * (weights @ pairs)).astype(np.float64))

    point = pooled(np.ones((1, len(topics)), dtype=np.int64))[0]
    reps = pooled(rs.poisson_weights(seed, task, topics, n))
    jack = pooled(rs.jackknife_weights(len(topics)))
    out = _ci_rows("auc", task, criterion, measures, point, reps, jack)
    plan = plans.get((task, criterion))
    if plan is None or plan["hbr"] not in measures:
        return out
    flips = rs.sign_flips(seed, task, topics, n)
    h = measures.index(plan["hbr"])

    def diffs_of(ia, ib):
        if not np.array_equal(pairs[:, ia], pairs[:, ib]):
            raise ValueError("two measures judged on different pairs cannot be compared")
        return (wins[:, ia] - wins[:, ib]).astype(object), 2 * int(pairs[:, ia].sum())

    for family, name in (("hbr_best", plan["best"]), ("hbr_median", plan["median"])):
        if name in measures:
            out += _comparison_rows(task, criterion, FAMILIES[family],
                                    [(h, measures.index(name))], measures, point, reps,
                                    diffs_of, flips)
    return out


def correlation_group(key, frame, seed: int, n: int, summary_level: bool = True,
                      memo: Optional[dict] = None):
    """Intervals of the correlations of one (task, set or HBR, criterion):
    system level (resampling topics, systems, both) and, with
    ``summary_level``, summary level (topics). ``frame``: part ("x": topic,
    summarizer, num, den — a system's score in a topic as a ratio; "y": topic,
    summarizer, score — a human score). ``memo``: a dict shared by the
    calls of one group (the criteria of a set): the systems' x means of the
    same x rows and systems are computed once."""
    task, set_id, criterion = key
    x_rows = frame[frame["part"] == "x"]
    y_rows = frame[frame["part"] == "y"]
    topics = sorted(set(frame["topic"]))
    t_at = {t: i for i, t in enumerate(topics)}
    systems = sorted(set(x_rows["summarizer"]) & set(y_rows["summarizer"]))
    weights = rs.poisson_weights(seed, task, topics, n)
    ones = np.ones((1, len(topics)), dtype=np.int64)
    jack = rs.jackknife_weights(len(topics))

    def batched(rows):
        """Every system's rows at once when each (topic, system) has one
        row (:func:`~qarla_spark.measures.resampling.grouped_ratio_means`):
        the same exact means as one system at a time."""
        rows = rows[rows["summarizer"].isin(systems)]
        s_at = {name: j for j, name in enumerate(systems)}
        t_idx = [t_at[t] for t in rows["topic"]]
        s_idx = [s_at[name] for name in rows["summarizer"]]
        if len(set(zip(t_idx, s_idx))) != len(t_idx):
            return None
        return rows, (t_idx, s_idx)

    def system_means(rows, value_of, grouped=None):
        """(B × systems) exact weighted means over each system's topics, for
        the weights ones, the replicates, the jackknife."""
        found = batched(rows) if grouped is not None else None
        if found is not None:
            mine, where = found
            return [grouped(mine, where, w) for w in (ones, weights, jack)]
        outs = [np.empty((1, len(systems))), np.empty((n, len(systems))),
                np.empty((len(topics), len(systems)))]
        by_system = dict(tuple(rows.groupby("summarizer")))
        for j, name in enumerate(systems):
            mine = by_system[name]
            cols = [t_at[t] for t in mine["topic"]]
            for out, w in zip(outs, (ones, weights, jack)):
                out[:, j] = value_of(mine, w[:, cols])[:, 0]
        return outs

    def x_means():
        return system_means(x_rows, lambda r, w: rs.weighted_ratio_means(
            r["num"].to_numpy(np.int64)[:, None], r["den"].to_numpy(np.int64), w),
            lambda r, where, w: rs.grouped_ratio_means(
                r["num"].to_numpy(np.int64), r["den"].to_numpy(np.int64), where, len(systems),
                w))

    if memo is None:
        xs = x_means()
    else:
        # the same x rows and systems (the criteria judging the same peers)
        mine = x_rows[x_rows["summarizer"].isin(systems)]
        found_key = (task, tuple(systems), tuple(topics), tuple(zip(
            mine["topic"], mine["summarizer"], mine["num"].astype(np.int64).tolist(),
            mine["den"].astype(np.int64).tolist())))
        xs = memo.get(found_key)
        if xs is None:
            xs = memo[found_key] = x_means()
    ys = system_means(y_rows, lambda r, w: rs.weighted_real_means(
        r["score"].to_numpy(np.float64)[:, None], w),
        lambda r, where, w: rs.grouped_real_means(
            r["score"].to_numpy(np.float64), where, len(systems), w))
    kinds = agreement.KINDS

    def corr(x, y, keys=systems):
        return agreement.correlation_rows(keys, x, y)

    point = corr(xs[0], ys[0])[0]
    # systems resampled with replacement (seeded per replicate); the points
    # of a replicate are taken in the order drawn
    picks = rs.system_picks(seed, task, len(systems), n)
    keys = [f"{k:06d}" for k in range(len(systems))]
    rows = np.arange(n)[:, None]
    by_unit = {
        "topics": corr(xs[1], ys[1]),
        "systems": corr(xs[0][0][picks], ys[0][0][picks], keys),
        "both": corr(xs[1][rows, picks], ys[1][rows, picks], keys),
    }
    jack_c = corr(xs[2], ys[2])
    out = []
    for unit, reps in by_unit.items():
        for k, kind in enumerate(kinds):
            cis = rs.intervals(point[k], reps[:, k], jack_c[:, k]) if unit == "topics" \
                else {"percentile": rs.percentile_interval(reps[:, k])}
            for method, (low, high) in cis.items():
                out.append(CorrelationRow(task, set_id, criterion, "system", kind,
                                          float(point[k]), method, low, high, unit))
    if not summary_level:
        return out
    per_topic, cols = [], []
    x_by_topic: Dict[str, dict] = {}
    y_by_topic: Dict[str, dict] = {}
    for topic, name, num, den in zip(x_rows["topic"], x_rows["summarizer"], x_rows["num"],
                                     x_rows["den"]):
        x_by_topic.setdefault(topic, {})[name] = int(num) / int(den)
    for topic, name, score in zip(y_rows["topic"], y_rows["summarizer"], y_rows["score"]):
        y_by_topic.setdefault(topic, {})[name] = score
    # the topics with the same summarizers correlated in one call (row by
    # row, the numbers of one call per topic)
    batches: Dict[tuple, list] = {}
    for topic in topics:
        x_of, y_t = x_by_topic.get(topic, {}), y_by_topic.get(topic, {})
        names = tuple(sorted(s for s in x_of if s in y_t))
        if names:
            batches.setdefault(names, []).append(topic)
    found: Dict[str, np.ndarray] = {}
    for names, mine in batches.items():
        rows_x = [[x_by_topic[t][s] for s in names] for t in mine]
        rows_y = [[y_by_topic[t][s] for s in names] for t in mine]
        r = agreement.correlation_rows(names, rows_x, rows_y, min_n=agreement.MIN_POINTS)
        found.update(zip(mine, r))
    for topic in topics:
        r = found.get(topic)
        if r is not None and np.isfinite(r[0]):
            per_topic.append(tuple(float(v) for v in r))
            cols.append(t_at[topic])
    if not per_topic:
        return out
    values = np.asarray(per_topic, dtype=np.float64)
    point_s = rs.weighted_real_means(values, np.ones((1, len(cols)), dtype=np.int64))[0]
    reps_s = rs.weighted_real_means(values, weights[:, cols])
    jack_s = rs.weighted_real_means(values, rs.jackknife_weights(len(cols)))
    for k, kind in enumerate(kinds):
        for method, (low, high) in rs.intervals(point_s[k], reps_s[:, k], jack_s[:, k]).items():
            out.append(CorrelationRow(task, set_id, criterion, "summary", kind,
                                      float(point_s[k]), method, low, high, "topics"))
    return out
