"""The statistics of one group, as rows: bootstrap intervals and paired
sign-flip tests (Deutsch et al.'s resampling of inputs) for a task's KING
or JACK (:func:`king_group`), a criterion's pooled AUC (:func:`auc_group`)
and a set's (or HBR's) correlations with a human criterion
(:func:`correlation_groups`, every criterion at once). Pure functions of
the group's per-topic counts (numpy; no Spark): the statistics stage
(:mod:`qarla_spark.stages.statistics`) runs one per group on the executors.
The resampling itself — weights, exact weighted means, intervals, sign
flips — is :mod:`qarla_spark.measures.resampling`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from qarla_spark.measures import agreement
from qarla_spark.measures import human as hu
from qarla_spark.measures import resampling as rs
from qarla_spark.names import FAMILIES, RATERS

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


class CiBlock(NamedTuple):
    """:class:`StatRow` interval rows of one kind as columns (no object per
    row: a task's KING of ~1,000 sets): row ``j·M + m`` is ``names[j]``'s
    interval by ``methods[m]`` — (method, lows, highs), a value per name —
    of value ``values[j]``, the rows :meth:`rows` gives."""

    kind: str
    task: str
    criterion: Optional[str]
    names: list
    values: list
    methods: list

    def rows(self) -> List[StatRow]:
        return [StatRow(self.kind, self.task, None, self.criterion, name, None, None, None,
                        self.values[j], method, low[j], high[j], None, None)
                for j, name in enumerate(self.names) for method, low, high in self.methods]

    def columns(self) -> Dict[str, list]:
        """a, value, method, ci_low, ci_high of :meth:`rows`, in order."""
        n_m = len(self.methods)
        out: Dict[str, list] = {"a": [], "value": [], "method": [], "ci_low": [],
                                "ci_high": []}
        if not n_m:
            return out
        # interleaved: each name's rows of every method in turn
        for key, per_method in (("ci_low", [m[1] for m in self.methods]),
                                ("ci_high", [m[2] for m in self.methods])):
            column = [None] * (len(self.names) * n_m)
            for m, found in enumerate(per_method):
                column[m::n_m] = found
            out[key] = column
        out["a"] = [name for name in self.names for _ in range(n_m)]
        out["value"] = [v for v in self.values for _ in range(n_m)]
        out["method"] = [m[0] for m in self.methods] * len(self.names)
        return out

    def interval(self, method: str) -> Dict[str, tuple]:
        """name → (value, low, high) of one method's intervals."""
        for found, low, high in self.methods:
            if found == method:
                return {name: (self.values[j], low[j], high[j])
                        for j, name in enumerate(self.names)}
        return {}


class CompBlock(NamedTuple):
    """:class:`StatRow` comparison rows of one family as columns (no object
    per row: a task's KING of ~1,000 subsets against its best set): row
    ``k`` compares ``a[k]`` with ``b[k]``, its numbers each column's
    ``k``-th, the rows :meth:`rows` gives."""

    kind: str
    task: str
    family: str
    criterion: Optional[str]
    a: list
    b: list
    value_a: list
    value_b: list
    value: list
    method: str
    ci_low: list
    ci_high: list
    p_value: list
    p_adjusted: list

    def rows(self) -> List[StatRow]:
        return [StatRow(self.kind, self.task, self.family, self.criterion, *fields[:5],
                        self.method, *fields[5:])
                for fields in zip(self.a, self.b, self.value_a, self.value_b, self.value,
                                  self.ci_low, self.ci_high, self.p_value, self.p_adjusted)]

    def columns(self) -> Dict[str, list]:
        """Every field of :meth:`rows` but kind, task and criterion, a list
        each, in order."""
        n = len(self.a)
        return {"family": [self.family] * n, "a": self.a, "b": self.b,
                "value_a": self.value_a, "value_b": self.value_b, "value": self.value,
                "method": [self.method] * n, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "p_value": self.p_value, "p_adjusted": self.p_adjusted}


class CorrelationRow(NamedTuple):
    """A row of :func:`correlation_groups`: one correlation (``kind``:
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


def _ci_rows(kind, task, criterion, names, point, reps, jack, same=None):
    """The interval rows of every column; ``same``: an id per column, equal
    for columns of the same counts (the same point, replicates and
    jackknife): the intervals of each distinct column worked out once (a
    column's intervals are its own alone)."""
    first = None
    if same is not None:
        same = np.asarray(same, dtype=np.int64)
        _, first, inverse = np.unique(same, return_index=True, return_inverse=True)
        if first.size == same.size:
            first = None
    if first is None:
        found = rs.interval_columns(point, reps, jack)      # every column at once
    else:
        found = {method: (low[inverse], high[inverse])
                 for method, (low, high) in rs.interval_columns(
                     np.asarray(point)[first], reps[:, first], jack[:, first]).items()}
    values = np.asarray(point, dtype=np.float64).tolist()
    methods = [(method, low.tolist(), high.tolist()) for method, (low, high) in found.items()]
    return [StatRow(kind, task, None, criterion, name, None, None, None, values[j], method,
                    low[j], high[j], None, None)
            for j, name in enumerate(names) for method, low, high in methods]


def _comparison_rows(task, criterion, family, pairs, names, point, reps, diffs_of, flips,
                     same=None):
    """Rows of one family of comparisons a − b (``pairs`` of column
    indices): the difference, its bootstrap interval, the sign-flip p-value
    and its max-T adjustment within the family. ``same``: an id per column,
    equal for columns of the same counts (hence the same values, replicates
    and differences): each distinct pair is worked out once — a pair's
    numbers are its columns' alone, and the family's largest statistic of
    each sign pattern is the same over the distinct pairs."""
    if not pairs:
        return []
    if same is not None:
        same = np.asarray(same, dtype=np.int64)
        ids = [(int(same[a]), int(same[b])) for a, b in pairs]
        at: Dict[tuple, int] = {}
        first = [at.setdefault(key, k) for k, key in enumerate(ids)]
        if len(at) < len(pairs):
            distinct = sorted(at.values())
            rows = _comparison_rows(task, criterion, family, [pairs[k] for k in distinct],
                                    names, point, reps, diffs_of, flips)
            of = {k: r for k, r in zip(distinct, rows)}
            out = []
            for (ia, ib), k in zip(pairs, first):
                r = of[k]
                out.append(r if (ia, ib) == pairs[k] else
                           r._replace(a=names[ia], b=names[ib]))
            return out
    numbers = _comparison_numbers(pairs, point, reps, diffs_of, flips)
    return [StatRow("comparison", task, family, criterion, names[ia], names[ib],
                    value_a, value_b, total, FLIP_METHOD, low, high, pk, ak)
            for (ia, ib), value_a, value_b, total, low, high, pk, ak in zip(pairs, *numbers)]


def _comparison_numbers(pairs, point, reps, diffs_of, flips, rows=None):
    """The numbers of :func:`_comparison_rows`' rows, a list each (one value
    per pair, in order): value_a, value_b, the difference, its interval
    (low, high), p and its max-T adjustment within the family. ``rows``:
    the replicates a column's in a row (D × B), in place of ``reps``."""
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
    # one column a when every pair shares it (the best set against others):
    # the same differences, broadcast
    if rows is not None:        # each difference's replicates in a row (the same doubles)
        first = rows[ia_all[:1]] if (ia_all == ia_all[0]).all() else rows[ia_all]
        other = rows[ib_all]
        lows, highs = rs.percentile_rows(np.subtract(first, other, out=other))
    else:
        first = reps[:, ia_all[:1]] if (ia_all == ia_all[0]).all() else reps[:, ia_all]
        lows, highs = rs.percentile_columns(first - reps[:, ib_all])
    # each difference's exact sum (int64, as Python integers) over the scale
    totals = [int(v) / scale for v in diffs.sum(axis=0).tolist()]
    points = point.tolist() if isinstance(point, np.ndarray) else [float(v) for v in point]
    return ([float(points[ia]) for ia, _ in pairs], [float(points[ib]) for _, ib in pairs],
            totals, lows.tolist(), highs.tolist(), p.tolist(), adjusted.tolist())


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


def _ratio_diffs(wins, dens, n_topics: int):
    """The paired differences of two sets' ratios, topic by topic, on a
    common integer scale (:func:`~qarla_spark.measures.resampling.common_scale`)
    and that scale times the topics: ``diffs_of(ia, ib)`` for one pair of
    columns of ``wins`` (T × S; ``dens`` (T,)), ``diffs_of.many(ia, ib)``
    for many at once (int64 while the products fit; else pair by pair)."""
    lcm = math.lcm(*(int(d) for d in np.unique(dens)))
    factor = lcm // np.asarray(dens, dtype=np.int64)

    def diffs_of(ia, ib):
        ints, scale = rs.common_scale(wins[:, ia], wins[:, ib], dens)
        return ints, scale * n_topics

    def many(ia, ib):
        # rs.common_scale of every pair at once (int64: the counts are small)
        if int(np.abs(wins).max(initial=0)) * int(factor.max(initial=1)) * 2 >= 2 ** 62:
            columns = [diffs_of(a, b) for a, b in zip(ia, ib)]
            return np.column_stack([c[0].astype(np.int64) for c in columns]), columns[0][1]
        return (wins[:, ia] - wins[:, ib]) * factor[:, None], lcm * n_topics

    diffs_of.many = many
    return diffs_of


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
    # the sets of the same counts in every topic (the same values):
    # their intervals and comparisons worked out once
    same = np.unique(np.asarray(wins, dtype=np.int64), axis=1, return_inverse=True)[1] \
        .reshape(-1) if np.ndim(wins) == 2 and np.shape(wins)[1] else None
    out = _ci_rows(kind, task, None, names, point, reps, e.jack, same)
    plan = plans.get(task) if kind == "king" else None
    if plan is None:
        return out
    flips = rs.sign_flips(seed, task, topics, n)
    at = {g: i for i, g in enumerate(gids)}

    diffs_of = _ratio_diffs(wins, dens, len(topics))

    best = plan["best"]
    for family, others in (("best_single", [plan["best_single"]]),
                           ("representative", plan["reps"]),
                           ("subset", [g for g in plan["subsets"] if g != best])):
        pairs = [(at[best], at[o]) for o in others if o in at and best in at]
        out += _comparison_rows(task, None, FAMILIES[family], pairs, names, point, reps,
                                diffs_of, flips, same)
    return out


@dataclass(frozen=True)
class DistinctEstimates:
    """:class:`RatioEstimates` of a task's sets worked out once per distinct
    column of counts (sets with the same wins in every topic have the same
    values, replicates and jackknife, column by column): ``column[s]``, the
    distinct column of set ``s``; of the distinct columns, their ``d_wins``
    (T × D), ``d_point`` (D), ``d_rows`` (D × B: the replicates, a column's
    in a row) and ``d_jack`` (T × D)."""

    topics: list
    gids: list
    names: list
    wins: np.ndarray
    dens: np.ndarray
    column: np.ndarray
    d_wins: np.ndarray
    d_point: np.ndarray
    d_rows: np.ndarray
    d_jack: np.ndarray

    @property
    def point(self) -> np.ndarray:
        return self.d_point[self.column]

    def reps_of(self, cols) -> np.ndarray:
        """The replicates (B × len(cols), C-contiguous, as ``reps[:, cols]``
        of :class:`RatioEstimates`) of the sets ``cols``."""
        return np.ascontiguousarray(self.d_rows[self.column[np.asarray(cols, dtype=np.intp)]].T)


def distinct_ratio_estimates(task: str, topics, gids, names, wins, dens, seed: int,
                             n: int) -> DistinctEstimates:
    """:func:`ratio_estimates_of` of each distinct column of ``wins`` once
    (the distinct columns in the order of their first set), the replicates
    a column's in a row (:func:`~qarla_spark.measures.resampling.
    weighted_ratio_rows`): the same doubles as every column's (each
    column's means its own)."""
    wins = np.asarray(wins, dtype=np.int64)
    if wins.shape[1]:
        _, first, inverse = np.unique(wins, axis=1, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")          # distinct ids by first set
        rank = np.empty(order.size, dtype=np.intp)
        rank[order] = np.arange(order.size)
        column = rank[np.asarray(inverse).reshape(-1)]
        kept = first[order]
    else:
        column = kept = np.zeros(0, dtype=np.intp)
    d_wins = wins[:, kept]
    point = rs.weighted_ratio_means(d_wins, dens, np.ones((1, len(topics)), dtype=np.int64))[0]
    rows = rs.weighted_ratio_rows(d_wins, dens, rs.poisson_weights(seed, task, topics, n))
    jack = rs.weighted_ratio_means(d_wins, dens, rs.jackknife_weights(len(topics)))
    return DistinctEstimates(list(topics), list(gids), list(names), wins, dens, column, d_wins,
                             point, rows, jack)


def king_distinct_group(task: str, e: DistinctEstimates, plan, seed: int, n: int):
    """:func:`king_group` (KING of every set, ``plan``: gids of the best
    set, the best single metric, the representatives and the subsets, or
    None) from :func:`distinct_ratio_estimates`: the intervals and each
    family's comparisons worked out on the distinct columns, the rows of
    every set and pair — the rows king_group gives (the intervals' as one
    :class:`CiBlock`, first; each family's comparisons as one
    :class:`CompBlock`)."""
    column, names = e.column, e.names
    # (the replicates sorted in a copy: the comparisons read them in order)
    found = rs.interval_rows(e.d_point, e.d_rows.copy(), e.d_jack)
    values = e.d_point[column].tolist()
    methods = [(method, low[column].tolist(), high[column].tolist())
               for method, (low, high) in found.items()]
    # the intervals' rows as columns (a CiBlock), the comparisons' as rows
    out = [CiBlock("king", task, None, list(names), values, methods)]
    if plan is None:
        return out
    topics, wins, dens = e.topics, e.d_wins, e.dens
    flips = rs.sign_flips(seed, task, topics, n)
    at = {g: i for i, g in enumerate(e.gids)}
    diffs_of = _ratio_diffs(wins, dens, len(topics))
    best = plan["best"]
    for family, others in (("best_single", [plan["best_single"]]),
                           ("representative", plan["reps"]),
                           ("subset", [g for g in plan["subsets"] if g != best])):
        pairs = [(at[best], at[o]) for o in others if o in at and best in at]
        if not pairs:
            continue
        # each distinct pair of columns once (in the order of its first pair)
        ids = [(int(column[a]), int(column[b])) for a, b in pairs]
        slot: Dict[tuple, int] = {}
        which = [slot.setdefault(key, len(slot)) for key in ids]
        numbers = _comparison_numbers(list(slot), e.d_point, None, diffs_of, flips,
                                      rows=e.d_rows)
        # the family's rows as columns (a CompBlock), each pair's numbers
        # its distinct pair's
        value_a, value_b, total, low, high, p, adjusted = (
            [v[k] for k in which] for v in numbers)
        out.append(CompBlock("comparison", task, FAMILIES[family], None,
                             [names[ia] for ia, _ in pairs], [names[ib] for _, ib in pairs],
                             value_a, value_b, total, FLIP_METHOD, low, high, p, adjusted))
    return out


def auc_group(key, frame, plans, seed: int, n: int):
    """Pooled-AUC intervals of every measure of one (task, criterion), and
    HBR vs the best and the median single measure (``plans[(task,
    criterion)]``: ``hbr``, ``best``, ``median`` names). ``frame``: topic,
    measure, wins2, n_pairs."""
    topics = sorted(set(frame["topic"]))
    measures = sorted(set(frame["measure"]))
    wins = _matrix(zip(frame["topic"], frame["measure"], frame["wins2"]), topics, measures)
    pairs = _matrix(zip(frame["topic"], frame["measure"], frame["n_pairs"]), topics, measures)
    return auc_group_of(key, topics, measures, wins, pairs, plans, seed, n)


def auc_counts(cases, names):
    """(topics, measures, wins, pairs) of :func:`auc_group_of` from each
    topic's counts (``cases``: objects with ``topic``, ``wins2`` — one per
    measure of ``names``, in order — and ``n_pairs``; a later case of a
    topic replaces an earlier one, as the frame's rows do), no frame;
    None without a row."""
    cases = list(cases)
    widths = [min(len(names), len(c.wins2)) for c in cases]
    if not any(widths):
        return None
    measures = sorted(set(names[:max(widths)]))
    topics = sorted({c.topic for c, k in zip(cases, widths) if k})
    m_at = {m: j for j, m in enumerate(measures)}
    t_at = {t: i for i, t in enumerate(topics)}
    columns = np.asarray([m_at[m] for m in names[:max(widths)]], dtype=np.intp)
    wins = np.zeros((len(topics), len(measures)), dtype=np.int64)
    pairs = np.zeros((len(topics), len(measures)), dtype=np.int64)
    unique = len(set(names)) == len(names)
    for c, k in zip(cases, widths):
        if not k:
            continue
        t = t_at[c.topic]
        if unique:
            wins[t, columns[:k]] = [int(w) for w in c.wins2[:k]]
            pairs[t, columns[:k]] = int(c.n_pairs)
            continue
        for j, w in zip(columns[:k].tolist(), c.wins2[:k]):
            wins[t, j] = int(w)
            pairs[t, j] = int(c.n_pairs)
    return topics, measures, wins, pairs


def auc_group_of(key, topics, measures, wins, pairs, plans, seed: int, n: int):
    """:func:`auc_group` of the counts themselves: ``wins``, ``pairs`` (T ×
    measures int64) of the sorted ``topics`` and ``measures``."""
    task, criterion = key

    def pooled(weights):
        with np.errstate(invalid="ignore", divide="ignore"):
            return (rs.int_matmul(weights, wins).astype(np.float64)
                    / (2 * rs.int_matmul(weights, pairs)).astype(np.float64))

    point = pooled(np.ones((1, len(topics)), dtype=np.int64))[0]
    reps = pooled(rs.poisson_weights(seed, task, topics, n))
    jack = pooled(rs.jackknife_weights(len(topics)))
    out = _ci_rows("auc", task, criterion, measures, point, reps, jack)
    plan = plans.get((task, criterion))
    if plan is None or plan.hbr not in measures:
        return out
    flips = rs.sign_flips(seed, task, topics, n)
    h = measures.index(plan.hbr)

    def diffs_of(ia, ib):
        if not np.array_equal(pairs[:, ia], pairs[:, ib]):
            raise ValueError("two measures judged on different pairs cannot be compared")
        return (wins[:, ia] - wins[:, ib]).astype(object), 2 * int(pairs[:, ia].sum())

    for family, name in (("hbr_best", plan.best), ("hbr_median", plan.median)):
        if name in measures:
            out += _comparison_rows(task, criterion, FAMILIES[family],
                                    [(h, measures.index(name))], measures, point, reps,
                                    diffs_of, flips)
    return out


class Paired(NamedTuple):
    """The rows of one criterion's correlations of one (task, set or HBR):
    x — a system's score in a topic as a ratio (``x_topic``,
    ``x_name``, ``x_num``, ``x_den``; its value is the double num / den,
    correctly rounded), y — a human score (``y_topic``,
    ``y_name``, ``y_score``). A (topic, system) may have several rows of
    a side (one per judgment): its mean then weighs each row."""

    x_topic: tuple
    x_name: tuple
    x_num: np.ndarray
    x_den: np.ndarray
    y_topic: tuple
    y_name: tuple
    y_score: np.ndarray


def _side_means(topic, name, t_at, systems, weights_all, grouped, single):
    """(point 1 × S, replicates B × S, jackknife T × S) exact weighted means
    over each system's rows (the rows of ``systems`` only): every system at
    once (``grouped``, of every weight matrix: a list) when each (topic,
    system) has one row, else system by system (``single``, its rows'
    topic positions)."""
    s_at = {n: j for j, n in enumerate(systems)}
    keep = [r for r, n in enumerate(name) if n in s_at]
    t_idx = [t_at[topic[r]] for r in keep]
    s_idx = [s_at[name[r]] for r in keep]
    if len(set(zip(t_idx, s_idx))) == len(t_idx):
        return grouped(keep, (t_idx, s_idx), weights_all)
    outs = [np.empty((w.shape[0], len(systems))) for w in weights_all]
    mine: Dict[int, list] = {}
    for r, j in zip(keep, s_idx):
        mine.setdefault(j, []).append(r)
    for j in range(len(systems)):
        rows = mine[j]
        cols = [t_at[topic[r]] for r in rows]
        for out, w in zip(outs, weights_all):
            out[:, j] = single(rows, w[:, cols])[:, 0]
    return outs


def _reading_rows(v, pq, rows) -> "hu.Reading":
    """:func:`~qarla_spark.measures.human.reading` of ``v[rows]`` from the
    fractions ``pq`` of every value of ``v``."""
    rows = np.asarray(rows, dtype=np.intp)
    if not rows.size:
        return hu.reading(v[rows])
    return hu.reading_of(v[rows], pq[0][rows], pq[1][rows])


def _correlation_stack(keys, x, ys) -> np.ndarray:
    """(C × B × kinds): ``agreement.correlation_rows_many(keys, x[:, None],
    ys)[:, :, 0]`` — every kind of each row x[b] (B × n) against ys[c, b]
    (C × B × n) — by the compiled pass of all three kinds at once
    (:func:`~qarla_spark.measures.compiled_rows.three_correlations`, the
    same doubles; tests/test_compiled_rows.py) when it runs."""
    from qarla_spark.measures import compiled_rows
    if compiled_rows.backend() == "numba" and tuple(agreement.KINDS) == (
            "pearson", "spearman", "kendall") and len(keys) >= agreement.MIN_SYSTEMS:
        order = np.argsort(np.asarray(keys, dtype=object), kind="stable")
        if (order == np.arange(len(order))).all():
            # the keys in order already (a task's sorted systems, the drawn
            # systems' positions): no gathered copies of x and ys (C × B ×
            # n, issue 36: ~0.5 ms a correlation group)
            return compiled_rows.three_correlations(x, ys)
        return compiled_rows.three_correlations(x[:, order], ys[:, :, order])
    return agreement.correlation_rows_many(keys, x[:, None, :], ys)[:, :, 0, :]


def _correlation_rows(keys, x, y, min_n: int) -> np.ndarray:
    """``agreement.correlation_rows(keys, x, y, min_n)`` (rows × kinds) by
    :func:`_correlation_stack`'s compiled pass when it runs (the same
    doubles; tests/test_compiled_rows.py)."""
    from qarla_spark.measures import compiled_rows
    if compiled_rows.backend() == "numba" and tuple(agreement.KINDS) == (
            "pearson", "spearman", "kendall") and len(keys) >= min_n and len(x):
        order = np.argsort(np.asarray(keys, dtype=object), kind="stable")
        x = np.asarray(x, dtype=np.float64).reshape(-1, len(order))[:, order]
        y = np.asarray(y, dtype=np.float64).reshape(-1, len(order))[:, order]
        return compiled_rows.three_correlations(x, y[None])[0]
    return agreement.correlation_rows(keys, x, y, min_n=min_n)


def correlation_groups(task: str, set_id, parts, seed: int, n: int,
                       summary_level: bool = True,
                       designs: Optional[Dict[str, object]] = None) -> List[CorrelationRow]:
    """Intervals of the correlations of one (task, set or HBR) with each
    criterion of ``parts`` ((criterion, :class:`Paired`), in order): system
    level (resampling topics, systems, both; and raters, for a criterion
    of ``designs`` — its ratings by two named raters or more,
    :class:`~qarla_spark.measures.rater_draws.RaterDesign`) and, with
    ``summary_level``, summary level (topics). The criteria with the same
    topics, systems and x rows share the x side's means (computed once)
    and have their correlations and intervals computed together (row by
    row and column by column: the numbers of one criterion at a time)."""
    kinds = agreement.KINDS
    found: Dict[str, List[CorrelationRow]] = {}
    batches: Dict[tuple, list] = {}
    seen: list = []             # (Paired, systems, x_key) of the criteria before
    for criterion, p in parts:
        topics = tuple(sorted(set(p.x_topic) | set(p.y_topic)))
        systems = tuple(sorted(set(p.x_name) & set(p.y_name)))
        # the x rows of a criterion before with the same systems: its key
        # (a task's criteria share their system scores; not built again)
        x_key = next((k for q, sys_q, k in seen if sys_q == systems and _same_x(q, p)), None)
        if x_key is None:
            chosen = set(systems)
            x_key = tuple((t, s, int(a), int(b)) for t, s, a, b in zip(
                p.x_topic, p.x_name, p.x_num, p.x_den) if s in chosen)
            seen.append((p, systems, x_key))
        batches.setdefault((topics, systems, x_key), []).append((criterion, p))
    for (topics, systems, _), mine in batches.items():
        t_at = {t: i for i, t in enumerate(topics)}
        weights = rs.poisson_weights(seed, task, topics, n)
        weights_all = (np.ones((1, len(topics)), dtype=np.int64), weights,
                       rs.jackknife_weights(len(topics)))
        p0 = mine[0][1]
        # a summary's score is its one double, num / den correctly rounded
        # (the export's, metric_eval's); a system's, the exact mean of those
        x_val = (np.asarray(p0.x_num, dtype=np.int64).astype(object)
                 / np.asarray(p0.x_den, dtype=np.int64).astype(object)).astype(np.float64)
        xs = _side_means(
            p0.x_topic, p0.x_name, t_at, systems, weights_all,
            lambda rows, where, ws: [rs.grouped_real_means(x_val[rows], where, len(systems), w)
                                     for w in ws],
            lambda rows, w: rs.weighted_real_means(x_val[rows][:, None], w))
        ys_all = []
        scores = [np.asarray(p.y_score, dtype=np.float64) for _, p in mine]
        # every criterion's readings found at once (each value's its own)
        pqs = hu.fractions_many(scores)
        for (_, p), score, pq in zip(mine, scores, pqs):
            # a system's human score: the exact mean of its summaries'
            # readings (thirds as thirds: issue 39, part 2)
            ys_all.append(_side_means(
                p.y_topic, p.y_name, t_at, systems, weights_all,
                lambda rows, where, ws, v=score, pq=pq: hu.system_means_many(
                    v[rows], where, len(systems), ws, rs.grouped_real_means,
                    read=_reading_rows(v, pq, rows)),
                lambda rows, w, v=score: hu.weighted_mean(v[rows], w)))
        n_c, n_k = len(mine), len(kinds)

        def corr(xs_, ys_, keys=systems):
            """correlation_rows of each x (rows × systems) against each
            criterion's rows (``ys_[c]``: the same shapes), stacked: a list
            of (C × rows × kinds), one per x — one call over every row
            (row by row: the numbers of each alone), x's side worked out
            once for every criterion (correlation_rows_many: the numbers of
            correlation_rows of x tiled)."""
            sizes = [np.shape(x)[0] for x in xs_]
            x = np.concatenate([np.asarray(v, dtype=np.float64) for v in xs_])
            # each criterion's rows copied into their place once (not
            # concatenated, then stacked: a second copy of C × rows × n)
            y = np.empty((len(ys_),) + x.shape)
            ends = np.cumsum(sizes)
            for c, ys_c in enumerate(ys_):
                for v, k, e in zip(ys_c, sizes, ends):
                    y[c, e - k:e] = v
            stacked = _correlation_stack(keys, x, y)
            return [stacked[:, e - k:e] for k, e in zip(sizes, ends)]

        # systems resampled with replacement (seeded per replicate); the
        # points of a replicate are taken in the order drawn
        picks = rs.system_picks(seed, task, len(systems), n)
        keys = [f"{k:06d}" for k in range(len(systems))]
        rows_b = np.arange(n)[:, None]
        point, by_topics, jack_c = corr(xs, ys_all)           # C × (1, B, T) × K
        point = point[:, 0]                                   # C × K
        by_systems, by_both = corr(
            [xs[0][0][picks], xs[1][rows_b, picks]],
            [[y[0][0][picks], y[1][rows_b, picks]] for y in ys_all], keys)

        def columns(a):                             # C × B × K -> B × (C·K)
            return np.ascontiguousarray(a.transpose(1, 0, 2).reshape(a.shape[1], n_c * n_k))

        flat_point = point.reshape(n_c * n_k)
        topics_ci = rs.interval_columns(flat_point, columns(by_topics), columns(jack_c))
        systems_ci = rs.percentile_columns(columns(by_systems))
        both_ci = rs.percentile_columns(columns(by_both))
        # the raters drawn as well (issue 39, part 3): the topics and systems
        # of ``both``, each summary's human score the mean of its drawn
        # raters' readings (rater_draws)
        rated = {}
        for c, (criterion, p) in enumerate(mine):
            design = (designs or {}).get(criterion)
            y = _rater_side(task, criterion, p, t_at, systems, weights, design, seed, n) \
                if design is not None and n else None
            if y is not None:
                rated[c] = y
        if rated:
            x_both = xs[1][rows_b, picks]
            stacked = agreement.correlation_rows(
                keys, np.tile(x_both, (len(rated), 1)),
                np.concatenate([y[rows_b, picks] for y in rated.values()]))
            low, high = rs.percentile_columns(np.ascontiguousarray(
                stacked.reshape(len(rated), n, n_k).transpose(1, 0, 2)
                .reshape(n, len(rated) * n_k)))
            raters_ci = {c: (low[i * n_k:(i + 1) * n_k], high[i * n_k:(i + 1) * n_k])
                         for i, c in enumerate(rated)}
        summaries = _summary_levels(task, set_id, mine, topics, t_at, weights) \
            if summary_level else {}
        for c, (criterion, p) in enumerate(mine):
            rows = found.setdefault(criterion, [])
            units = [("topics", topics_ci, c * n_k), ("systems", {"percentile": systems_ci},
                                                      c * n_k),
                     ("both", {"percentile": both_ci}, c * n_k)]
            if c in rated:
                units.append((RATERS, {"percentile": raters_ci[c]}, 0))
            for unit, cis, start in units:
                for k, kind in enumerate(kinds):
                    at = start + k
                    for method, (low, high) in cis.items():
                        rows.append(CorrelationRow(task, set_id, criterion, "system", kind,
                                                   float(point[c, k]), method, float(low[at]),
                                                   float(high[at]), unit))
            if summary_level:
                rows += summaries.get(c, [])
    return [r for criterion, _ in parts for r in found.pop(criterion, [])]


def _rater_side(task, criterion, p: Paired, t_at, systems, weights, design, seed: int,
                n: int) -> Optional[np.ndarray]:
    """(B × S): the systems' human scores of each replicate with the raters
    drawn (:func:`~qarla_spark.measures.rater_draws.design_scores`): the
    exact weighted mean over a system's rows (the topics' Poisson
    ``weights``) of each row's mean over its drawn raters, rows without a
    drawn rater left out; a row judged without a named rater keeps its
    score. None when no row has a named rater, or a (topic, system) has
    two rows."""
    from qarla_spark.measures import rater_draws
    s_at = {name: j for j, name in enumerate(systems)}
    keep = [r for r, name in enumerate(p.y_name) if name in s_at]
    t_idx = np.asarray([t_at[p.y_topic[r]] for r in keep], dtype=np.int64)
    s_idx = np.asarray([s_at[p.y_name[r]] for r in keep], dtype=np.int64)
    if len(set(zip(t_idx.tolist(), s_idx.tolist()))) != len(keep):
        return None
    u_idx = rater_draws.summary_positions(design, [p.y_topic[r] for r in keep],
                                          [p.y_name[r] for r in keep])
    if not (u_idx >= 0).any():
        return None
    score = np.asarray(p.y_score, dtype=np.float64)[keep]
    values, groups = rater_draws.design_scores(design, seed, task, criterion, n)
    out = np.empty((n, len(systems)))
    for g, found in enumerate(values):
        rows = np.flatnonzero(groups == g)
        v = rater_draws.with_drawn(found, u_idx, score)
        ok = np.isfinite(v)
        out[rows] = hu.system_means(v[ok], (t_idx[ok], s_idx[ok]), len(systems), weights[rows],
                                    rs.grouped_real_means)
    return out


def _same_x(a: Paired, b: Paired) -> bool:
    """Whether two criteria's :class:`Paired` have the same x rows (the
    same topics, systems and ratios, in the same order)."""
    return (a.x_topic == b.x_topic and a.x_name == b.x_name
            and np.array_equal(a.x_num, b.x_num) and np.array_equal(a.x_den, b.x_den))


def _summary_levels(task, set_id, mine, topics, t_at, weights) -> Dict[int, list]:
    """The summary-level rows (each topic's correlations over its systems
    with both sides, their exact means over topics, the intervals over
    resampled topics) of each criterion of ``mine`` ((criterion,
    :class:`Paired`), the same topics), by position: the topics of every
    criterion with the same summarizers correlated in one call, and the
    exact means over topics of every criterion's values at once (each
    criterion's topics its own: zeros elsewhere, counted out), the same
    doubles (row by row, column by column)."""
    kinds = agreement.KINDS
    n_k = len(kinds)
    sides = []
    batches: Dict[tuple, list] = {}
    x_of_side: Optional[Tuple[Paired, Dict[str, dict]]] = None
    for c, (_, p) in enumerate(mine):
        if x_of_side is not None and _same_x(x_of_side[0], p):
            # the x rows of the criterion before (a task's criteria share
            # their system scores): its dictionary, not the same one again
            x_by_topic = x_of_side[1]
        else:
            x_by_topic = {}
            for topic, name, num, den in zip(p.x_topic, p.x_name, np.asarray(p.x_num).tolist(),
                                             np.asarray(p.x_den).tolist()):
                x_by_topic.setdefault(topic, {})[name] = int(num) / int(den)
            x_of_side = (p, x_by_topic)
        y_by_topic: Dict[str, dict] = {}
        for topic, name, score in zip(p.y_topic, p.y_name,
                                      np.asarray(p.y_score, dtype=np.float64).tolist()):
            y_by_topic.setdefault(topic, {})[name] = float(score)
        sides.append((x_by_topic, y_by_topic))
        for topic in topics:
            x_of, y_t = x_by_topic.get(topic, {}), y_by_topic.get(topic, {})
            names = tuple(sorted(s for s in x_of if s in y_t))
            if names:
                batches.setdefault(names, []).append((c, topic))
    found: Dict[tuple, np.ndarray] = {}
    for names, at in batches.items():
        rows_x = [[sides[c][0][t][s] for s in names] for c, t in at]
        rows_y = [[sides[c][1][t][s] for s in names] for c, t in at]
        r = _correlation_rows(names, rows_x, rows_y, agreement.MIN_POINTS)
        found.update(zip(at, r))
    n_c, n_t = len(mine), len(topics)
    values = np.zeros((n_t, n_c * n_k))
    present = np.zeros((n_t, n_c * n_k), dtype=np.int64)
    cols_of: Dict[int, list] = {}
    for c in range(n_c):
        cols = []
        for topic in topics:
            r = found.get((c, topic))
            if r is not None and np.isfinite(r[0]):
                t = t_at[topic]
                values[t, c * n_k:(c + 1) * n_k] = r
                present[t, c * n_k:(c + 1) * n_k] = 1
                cols.append(t)
        if cols:
            cols_of[c] = cols
    if not cols_of:
        return {}
    if not np.isfinite(values).all():
        raise ValueError("weighted_real_means needs finite values")
    point_all = rs.weighted_present_means(values, present, np.ones((1, n_t), dtype=np.int64))[0]
    reps_all = rs.weighted_present_means(values, present, weights)
    # leave-one-topic-out over all topics; a criterion's rows: its topics'
    jack_all = rs.weighted_present_means(values, present, rs.jackknife_weights(n_t))
    out: Dict[int, list] = {}
    # the criteria with the same topics: their intervals in one call (each
    # column's numbers its own: interval_columns gives every column the
    # doubles of percentile_interval and bca_interval of that column, with
    # an infinity anywhere or not)
    same_topics: Dict[tuple, list] = {}
    for c, cols in cols_of.items():
        same_topics.setdefault(tuple(cols), []).append(c)
    intervals: Dict[int, list] = {}
    for cols, cs in same_topics.items():
        idx = np.concatenate([np.arange(c * n_k, (c + 1) * n_k) for c in cs])
        together = rs.interval_columns(point_all[idx], reps_all[:, idx],
                                       jack_all[np.ix_(list(cols), idx)])
        for i, c in enumerate(cs):
            intervals[c] = [(method, low[i * n_k:(i + 1) * n_k].tolist(),
                             high[i * n_k:(i + 1) * n_k].tolist())
                            for method, (low, high) in together.items()]
    for c, cols in cols_of.items():
        span = slice(c * n_k, (c + 1) * n_k)
        point_s = point_all[span]
        found_ci = intervals[c]
        criterion = mine[c][0]
        values_s = point_s.tolist()
        out[c] = [CorrelationRow(task, set_id, criterion, "summary", kind, values_s[k], method,
                                 low[k], high[k], "topics")
                  for k, kind in enumerate(kinds) for method, low, high in found_ci]
    return out


