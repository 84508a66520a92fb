"""Across tasks (issue 28; SPEC §11): which metric (set) to trust over all
of a run's tasks — each measure's value per task beside a pooled estimate
over all topics of all tasks, how many tasks it is best or tied in, and the
significance clusters of the pooled estimate. Pure functions of the tasks'
counts (numpy): the statistics stage runs one group per basis (KING; the
pairwise accuracy of each criterion) on an executor.

The pooled bootstrap is stratified by task: replicate b gives every topic
the Poisson weight keyed by (seed, task, topic)
(:func:`~qarla_spark.measures.resampling.poisson_weights`), so each task is
resampled on its own, with the same weights as its per-task intervals.

- KING pooled: the mean over all topics of all tasks of the per-topic KING
  ratios (a task weighs by its topics), exact and rounded once
  (:func:`pooled_king`).
- Pairwise accuracy pooled: the system pairs of every task counted together,
  Σ agree2 / Σ pairs2 (:func:`pooled_counts`): a task weighs by its judged
  pairs of systems.
- Beside the pooled value, the equal-weight mean over tasks (issue 39, part
  4; WMT24/25 average each statistic over their tasks so): the exact mean of
  the tasks' own values (:func:`mean_king`, :func:`mean_counts`), every task
  weighing alike, replicate b the mean of the tasks' replicates b.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from qarla_spark.measures import resampling as rs
from qarla_spark.measures.meta_eval import rank_clusters

#: the ``scope`` of a pooled row of ``across/``
POOLED = "pooled"
#: the ``scope`` of the equal-weight mean over tasks (issue 39, part 4)
MEAN = "mean"


@dataclass(frozen=True)
class Estimates:
    """Point values (M,) and replicates (B × M) of the measures ``names``."""

    names: Tuple[str, ...]
    point: np.ndarray
    reps: np.ndarray


@dataclass(frozen=True)
class TaskFound:
    """What ``across/`` says of one task's measures ``names``: their point
    values, 95% intervals and significance-cluster ranks (0: no value) —
    made by the task's own group (:func:`task_found`), so that the
    across-task group does not redo every task's work."""

    names: Tuple[str, ...]
    point: np.ndarray
    low: np.ndarray
    high: np.ndarray
    ranks: Tuple[int, ...]

    def of(self, names: Sequence[str]) -> Optional["TaskFound"]:
        """The same values for ``names`` in that order (None unless they
        are exactly this task's measures): each column's interval and rank
        do not depend on the others' order (:func:`_ranks` sorts by value,
        then name)."""
        if tuple(names) == self.names:     # (the same order: this one)
            return self
        if len(names) != len(self.names) or set(names) != set(self.names):
            return None
        at = {n: i for i, n in enumerate(self.names)}
        cols = [at[n] for n in names]
        return TaskFound(tuple(names), self.point[cols], self.low[cols], self.high[cols],
                         tuple(self.ranks[c] for c in cols))


def task_found(e: Estimates, bounds: Optional[Tuple[float, float]] = None,
               percentile: Optional[Tuple[np.ndarray, np.ndarray]] = None,
               interval: Optional[Tuple[np.ndarray, np.ndarray]] = None,
               ranks: Optional[Tuple[int, ...]] = None) -> TaskFound:
    """A task's :class:`TaskFound` from its estimates (``bounds``:
    :attr:`AcrossTasks.bounds`); ``percentile``: the (low, high) of
    :func:`~qarla_spark.measures.resampling.percentile_columns` of its
    replicates when the caller has them (``bounds`` None: the same
    doubles, not computed again); ``interval``: the (low, high) of
    :func:`~qarla_spark.measures.resampling.bootstrap_columns` of its point
    values and replicates within ``bounds`` when the caller has them (the
    same doubles); ``ranks``: :func:`_ranks` of ``e`` when the caller has
    them (the same clusters of the same values and replicates)."""
    if interval is not None:
        low, high = (np.asarray(v, dtype=np.float64) for v in interval)
    elif bounds is None and percentile is not None:
        low, high = (np.asarray(v, dtype=np.float64) for v in percentile)
    else:
        low, high = rs.bootstrap_columns(e.point, e.reps, bounds)
    return TaskFound(tuple(e.names), np.asarray(e.point), low, high,
                     _ranks(e) if ranks is None else tuple(ranks))


@dataclass(frozen=True)
class KingCounts:
    """One task's KING counts: ``wins[t, m]`` of topic t and set m over the
    topic's cases ``dens[t]``; ``found``: its own :class:`TaskFound`, when
    its group made it."""

    task: str
    topics: Tuple[str, ...]
    names: Tuple[str, ...]
    wins: np.ndarray
    dens: np.ndarray
    found: Optional[TaskFound] = None


def narrow_counts(counts) -> np.ndarray:
    """Integer ``counts`` in the narrowest signed integer type that holds
    them all (the same integers: every reader takes them as int64): a
    task's pairwise-accuracy counts for the across-task reduce are B + 1 ×
    M values below 2·(system pairs), int16 rather than int64 for any
    testbed's systems (issue 36: 1.6 MB a task of 40 × 10's records, a
    quarter of it now)."""
    a = np.asarray(counts)
    if a.dtype.kind not in "iu":
        raise TypeError(f"counts must be integers, not {a.dtype}")
    if not a.size:
        return a.astype(np.int16)
    lo, hi = int(a.min()), int(a.max())
    for dtype in (np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return a.astype(dtype)
    return a.astype(np.int64)


@dataclass(frozen=True)
class PairCounts:
    """One task's pairwise-accuracy counts: row 0 the point, rows 1..B the
    replicates; ``agree2`` (B+1 × M), ``pairs2`` (B+1); ``found``: its own
    :class:`TaskFound`, when its group made it."""

    task: str
    names: Tuple[str, ...]
    agree2: np.ndarray
    pairs2: np.ndarray
    found: Optional[TaskFound] = None


@dataclass(frozen=True)
class AcrossTasks:
    """The pooled estimate, each task's, and the clusters of both."""

    pooled: Estimates
    tasks: Dict[str, TaskFound]
    pooled_ranks: Tuple[int, ...]
    #: the statistic's range when its intervals are recentred (pairwise
    #: accuracy, a statistic of system scores); None: percentile (KING)
    bounds: Optional[Tuple[float, float]] = None
    #: the equal-weight mean over tasks and its clusters (:func:`with_mean`)
    mean: Optional[Estimates] = None
    mean_ranks: Tuple[int, ...] = ()

    @property
    def task_ranks(self) -> Dict[str, Tuple[int, ...]]:
        return {task: f.ranks for task, f in self.tasks.items()}

    @property
    def interval_name(self) -> str:
        return rs.interval_method(self.bounds)

    def interval(self, e: Estimates, m: int) -> Tuple[float, float]:
        """The 95% interval of measure m of ``e`` (the pooled estimate or a
        task's)."""
        return rs.bootstrap_interval(float(e.point[m]), e.reps[:, m], self.bounds)

    def intervals(self, e: Estimates) -> Tuple[np.ndarray, np.ndarray]:
        """(low, high) of every measure of ``e``: :meth:`interval` of each
        column at once."""
        return rs.bootstrap_columns(e.point, e.reps, self.bounds)

    def best_or_tied(self) -> List[int]:
        """Per measure: the tasks in which it is in the top cluster (counted
        over the tasks' ranks at once: measures × tasks Python steps, twice
        a group, were 1.5 ms of a 40-task one)."""
        n_m = len(self.pooled.names)
        if not self.tasks:
            return [0] * n_m
        ranks = np.array([f.ranks for f in self.tasks.values()], dtype=np.int64).reshape(-1, n_m)
        return [int(c) for c in (ranks == 1).sum(axis=0)]


def common_names(parts) -> Tuple[str, ...]:
    """The measures every task has, in the first task's order."""
    if not parts:
        return ()
    shared = set(parts[0].names).intersection(*(set(p.names) for p in parts[1:]))
    return tuple(n for n in parts[0].names if n in shared)


def _columns(part, names) -> List[int]:
    at = {n: i for i, n in enumerate(part.names)}
    return [at[n] for n in names]


def king_weights(parts: Sequence[KingCounts], seed: int, n: int) -> Dict[tuple, np.ndarray]:
    """Each task's topics' Poisson weights (by task and topics) of ``n`` replicates
    (:func:`~qarla_spark.measures.resampling.poisson_weights`), made once
    for :func:`pooled_king` and :func:`mean_king` (issue 36: a 40-task
    group drew each task's again, 80 draws of 1,000 × 10 uniforms; the
    weights' cache keeps 8)."""
    return {(p.task, tuple(p.topics)): rs.poisson_weights(seed, p.task, p.topics, n)
            for p in parts}


def pooled_king(parts: Sequence[KingCounts], seed: int, n: int,
                weights: Optional[Dict[tuple, np.ndarray]] = None) -> Tuple[
        Estimates, Dict[str, Union[Estimates, TaskFound]]]:
    """KING pooled over all topics of all tasks and each task's own, with
    ``n`` replicates (stratified by task), over the sets every task has (a
    task's own: its group's :class:`TaskFound` when it has exactly those
    sets, else its estimates); ``weights``: :func:`king_weights` of
    ``parts`` when the caller has them."""
    parts = sorted(parts, key=lambda p: p.task)
    names = common_names(parts)
    if weights is None:
        weights = king_weights(parts, seed, n)
    wins, dens, task_weights, tasks = [], [], [], {}
    for p in parts:
        cols = _columns(p, names)
        w = weights[(p.task, tuple(p.topics))]
        mine = np.asarray(p.wins, dtype=np.int64)[:, cols]
        den = np.asarray(p.dens, dtype=np.int64)
        own = p.found.of(names) if p.found is not None else None
        if own is not None:
            tasks[p.task] = own
        else:
            tasks[p.task] = Estimates(names, *king_estimates(mine, den, w))
        wins.append(mine)
        dens.append(den)
        task_weights.append(w)
    if not parts:
        return Estimates(names, np.zeros(0), np.zeros((n, 0))), tasks
    wins_all, dens_all = np.vstack(wins), np.concatenate(dens)
    w_all = np.hstack(task_weights)
    ones = np.ones((1, len(dens_all)), dtype=np.int64)
    pooled = Estimates(names, rs.weighted_ratio_means(wins_all, dens_all, ones)[0],
                       rs.weighted_ratio_means(wins_all, dens_all, w_all))
    return pooled, tasks


def king_estimates(wins, dens, weights) -> Tuple[np.ndarray, np.ndarray]:
    """A task's KING (point, replicates) from its counts and its topics'
    weights (every column on its own: a subset of the columns gives the
    same doubles)."""
    ones = np.ones((1, len(dens)), dtype=np.int64)
    return (rs.weighted_ratio_means(wins, dens, ones)[0],
            rs.weighted_ratio_means(wins, dens, weights))


def _ratio(num, den) -> np.ndarray:
    """num / den of int64 counts, correctly rounded (NaN where den ≤ 0):
    IEEE's quotient of the two doubles when both are integers below 2^53
    (each exact, the quotient rounded once — Python's integer true
    division's double), else Python's integers."""
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    if num.size and max(int(np.abs(num).max()), int(np.abs(den).max(initial=0))) < 2 ** 53:
        ok = den > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(ok, num.astype(np.float64) / np.where(ok, den, 1), np.nan)
    out = np.full(num.shape, np.nan)
    ok = np.broadcast_to(den, num.shape) > 0
    out[ok] = (num.astype(object)[ok] / np.broadcast_to(den, num.shape).astype(object)[ok]
               ).astype(np.float64)
    return out


def pair_estimates(names, agree2, pairs2) -> Estimates:
    """A task's pairwise accuracy (point, replicates) from its counts
    (``pairs2`` a column)."""
    ratio = _ratio(agree2, pairs2)
    return Estimates(tuple(names), ratio[0], ratio[1:])


def pooled_counts(parts: Sequence[PairCounts]) -> Tuple[
        Estimates, Dict[str, Union[Estimates, TaskFound]]]:
    """Pairwise accuracy pooled over the system pairs of all tasks, Σ agree2
    / Σ pairs2 per replicate (each task's replicate b drawn from its own
    topics' weights), and each task's own, over the measures every task
    has."""
    parts = sorted(parts, key=lambda p: p.task)
    names = common_names(parts)
    tasks = {}
    if not parts:
        return Estimates(names, np.zeros(0), np.zeros((0, 0))), tasks
    stack, pairs2 = _pair_stack(parts, names)
    for k, p in enumerate(parts):
        own = p.found.of(names) if p.found is not None else None
        tasks[p.task] = own if own is not None else pair_estimates(
            names, np.ascontiguousarray(stack[k].T, dtype=np.int64),
            pairs2[k][:, None].astype(np.int64))
    # Σ over tasks as int64 (the same integers as the sum task by task)
    agree = np.ascontiguousarray(stack.sum(axis=0, dtype=np.int64).T)
    pairs = pairs2.sum(axis=0, dtype=np.int64)[:, None]
    ratio = _ratio(agree, pairs)
    return Estimates(names, ratio[0], ratio[1:]), tasks


def _pair_stack(parts: Sequence[PairCounts], names) -> Tuple[np.ndarray, np.ndarray]:
    """(agree2 of ``names``: tasks × M × (1 + B), pairs2: tasks × (1 + B)),
    integers of the tasks' own types (a common one): each task's counts in
    their own layout (agree2 is a replicate column per measure, so measure
    by measure: one copy of each, not a cast and a gather per task)."""
    own = []
    for p in parts:
        a = np.asarray(p.agree2)
        cols = _columns(p, names)
        own.append((a if cols == list(range(a.shape[1])) else a[:, cols]).T)
    return np.stack(own), np.stack([np.asarray(p.pairs2) for p in parts])


def _task_mean(names, values, by_measure: bool = False) -> Estimates:
    """The equal-weight mean over tasks of ``values`` (tasks × (1 + B) × M,
    row 0 the points; ``by_measure``: tasks × M × (1 + B)): per row and
    measure the exact mean of the tasks' doubles with a value (NaN left
    out), rounded once — each cell's own base and two int64 words,
    compiled (:func:`~qarla_spark.measures.resampling.column_present_means`;
    issue 36: 41 ms of a 40-task group's ~55 ms by the reference,
    :func:`_task_mean_reference`, the same doubles)."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    n_k, n_a, n_b = v.shape
    mean = rs.column_present_means(v.reshape(n_k, n_a * n_b)).reshape(n_a, n_b)
    if by_measure:      # (rows C-contiguous, as the readers had them)
        mean = np.ascontiguousarray(mean.T)
    return Estimates(tuple(names), mean[0], mean[1:])


def _task_mean_reference(names, values) -> Estimates:
    """:func:`_task_mean` by
    :func:`~qarla_spark.measures.resampling.weighted_present_means` over
    every cell at once (the reference of the tests)."""
    v = np.asarray(values, dtype=np.float64)
    n_k, n_rows, n_m = v.shape
    flat = v.reshape(n_k, n_rows * n_m)
    present = np.isfinite(flat)
    mean = rs.weighted_present_means(np.where(present, flat, 0.0), present.astype(np.int64),
                                     np.ones((1, n_k), dtype=np.int64))[0]
    mean = mean.reshape(n_rows, n_m)
    return Estimates(tuple(names), mean[0], mean[1:])


def mean_king(parts: Sequence[KingCounts], seed: int, n: int,
              weights: Optional[Dict[tuple, np.ndarray]] = None) -> Estimates:
    """KING's equal-weight mean over tasks of the sets every task has: each
    task's KING (the exact mean over its topics, its replicates from its own
    topics' weights, as :func:`king_estimates`), then their exact mean;
    ``weights``: :func:`king_weights` of ``parts`` when the caller has
    them."""
    parts = sorted(parts, key=lambda p: p.task)
    names = common_names(parts)
    if not parts:
        return Estimates(names, np.zeros(0), np.zeros((n, 0)))
    if weights is None:
        weights = king_weights(parts, seed, n)
    # every task's (point, replicates) written into one stack, both in one
    # call: the point is the mean with every topic's weight 1, a row of
    # weights above the replicates' (each entry the exact ratio of sums
    # rounded once whatever the other rows: king_estimates' doubles, in
    # half its calls)
    values = np.empty((len(parts), n + 1, len(names)))
    for k, p in enumerate(parts):
        w = weights[(p.task, tuple(p.topics))]
        values[k] = rs.weighted_ratio_means(
            np.asarray(p.wins, dtype=np.int64)[:, _columns(p, names)],
            np.asarray(p.dens, dtype=np.int64),
            np.vstack([np.ones((1, w.shape[1]), dtype=np.int64), w]))
    return _task_mean(names, values)


def mean_counts(parts: Sequence[PairCounts]) -> Estimates:
    """Pairwise accuracy's equal-weight mean over tasks: each task's
    agree2 / pairs2 (per replicate; NaN without a pair), then their exact
    mean over the tasks with a value."""
    parts = sorted(parts, key=lambda p: p.task)
    names = common_names(parts)
    if not parts:
        return Estimates(names, np.zeros(0), np.zeros((0, 0)))
    # every task's counts stacked measure by measure (_pair_stack), cast
    # once (0.5 ms, not 3 cast task by task into rows for 40 × 1,001 ×
    # 49), as doubles (exact: integers below 2^53), then one division by
    # each replicate's pairs (IEEE's quotient of the two exact doubles:
    # the correctly rounded a / d, as each task's own was)
    stack, pairs2 = _pair_stack(parts, names)
    values = stack.astype(np.float64)                               # tasks × M × (1 + B)
    pairs = pairs2.astype(np.float64)[:, None, :]
    empty = pairs <= 0
    np.divide(values, np.maximum(pairs, 1.0), out=values)
    if empty.any():             # no pair: no value
        values[np.broadcast_to(empty, values.shape)] = np.nan
    return _task_mean(names, values, by_measure=True)


def with_mean(found: "AcrossTasks", mean: Estimates) -> "AcrossTasks":
    """``found`` with the equal-weight mean over tasks (its clusters made as
    the pooled estimate's)."""
    from dataclasses import replace
    if mean.names != found.pooled.names:
        raise ValueError("the mean and the pooled estimate must have the same measures")
    return replace(found, mean=mean, mean_ranks=_ranks(mean))


def _ranks(e: Estimates) -> Tuple[int, ...]:
    """Significance clusters of the measures with a value (0: none)."""
    keep = [m for m in range(len(e.names)) if np.isfinite(e.point[m])]
    ranks = [0] * len(e.names)
    if keep:
        found = rank_clusters(e.point[keep], e.reps[:, keep], [e.names[m] for m in keep])
        for m, r in zip(keep, found.ranks):
            ranks[m] = r
    return tuple(ranks)


def across_tasks(pooled: Estimates, tasks: Dict[str, Union[Estimates, TaskFound]],
                 bounds: Optional[Tuple[float, float]] = None) -> AcrossTasks:
    """The clusters of the pooled estimate and each task's found (its
    :class:`TaskFound`, made here from its estimates unless its group made
    it); ``bounds``: :attr:`AcrossTasks.bounds`."""
    return AcrossTasks(pooled, {task: e if isinstance(e, TaskFound) else task_found(e, bounds)
                                for task, e in sorted(tasks.items())},
                       _ranks(pooled), bounds)


def across_rows(basis: str, criterion, found: AcrossTasks) -> List[tuple]:
    """``across/`` rows: per measure, the pooled row (scope ``pooled``: its
    interval, cluster rank, the tasks it is best or tied in, of how many),
    the equal-weight mean's (scope ``mean``, when ``found`` has it: its own
    interval and rank, the same tasks) and one row per task (scope: the
    task; best_or_tied 1 when in the task's top cluster)."""
    rows = []
    best = found.best_or_tied()
    n_tasks = len(found.tasks)
    p = found.pooled
    # every measure's interval of an estimate at once (the same doubles)
    p_low, p_high = found.intervals(p)
    method = found.interval_name
    # each task's values as Python floats once (rows are measures × tasks)
    tasks = [(task, f.point.tolist(), f.low.tolist(), f.high.tolist(), f.ranks)
             for task, f in found.tasks.items()]
    mean = found.mean
    if mean is not None:
        m_low, m_high = found.intervals(mean)
    for m, name in enumerate(p.names):
        rank = found.pooled_ranks[m] or None
        rows.append((basis, criterion, name, POOLED, float(p.point[m]), float(p_low[m]),
                     float(p_high[m]), method, rank, best[m], n_tasks))
        if mean is not None:
            rows.append((basis, criterion, name, MEAN, float(mean.point[m]), float(m_low[m]),
                         float(m_high[m]), method, found.mean_ranks[m] or None, best[m],
                         n_tasks))
        for task, point, low, high, ranks in tasks:
            r = ranks[m]
            rows.append((basis, criterion, name, task, point[m], low[m], high[m], method,
                         r or None, int(r == 1), 1))
    return rows
