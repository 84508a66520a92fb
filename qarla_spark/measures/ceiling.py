"""The human ceiling (issue 39, part 3; WMT's "human as a metric"): how
close a measure can get to the judges — each rater's scores meta-evaluated
like a measure against the mean of the other raters, with every statistic
of ``metric_eval/`` (:mod:`qarla_spark.measures.judge_statistics`), then
averaged over the raters: ``metric_eval/``'s rows of measure ``human``.

For a criterion and a named rater r: the cells are the (topic, summarizer)
pairs r rated and at least one other rater rated too; r's score there is
its rating, the humans' the exact mean of the other raters' ratings'
readings (:func:`qarla_spark.measures.human.mean`). Each statistic's value
is the exact mean over the raters with a value of their values, rounded
once; a replicate's the mean of the raters' replicates (each rater's from
the run's Poisson weights of its cells' topics, keyed by (seed, task,
topic): the same weight for a topic in every rater's evaluation); the
interval the statistic's own (recentred or percentile) of those means.
Statistics without replicates (soft pairwise accuracy) have the mean only;
a calibrated statistic's tie threshold differs by rater and is not given.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import resampling as rs
from qarla_spark.measures.human import mean as human_mean
from qarla_spark.names import HUMAN


def rater_cubes(topics: Sequence, summarizers: Sequence, raters: Sequence,
                scores: Sequence[float]) -> List[Tuple[str, js.JudgedScores]]:
    """(rater, its cube) of one criterion's ratings: measure ``human`` the
    rater's ratings, the humans' score the exact mean of the others'
    readings, on the cells where another rater rated too; raters in name
    order, only those with such a cell."""
    by_cell: Dict[tuple, Dict[str, float]] = {}
    for t, s, r, v in zip(topics, summarizers, raters, scores):
        by_cell.setdefault((str(t), str(s)), {})[str(r)] = float(v)
    topic_names = sorted({t for t, _ in by_cell})
    systems = sorted({s for _, s in by_cell})
    t_at = {t: i for i, t in enumerate(topic_names)}
    s_at = {s: i for i, s in enumerate(systems)}
    out = []
    for rater in sorted({str(r) for r in raters}):
        x = np.full((len(topic_names), len(systems), 1), np.nan)
        h = np.full((len(topic_names), len(systems)), np.nan)
        for (t, s), found in by_cell.items():
            if rater in found and len(found) >= 2:
                x[t_at[t], s_at[s], 0] = found[rater]
                h[t_at[t], s_at[s]] = human_mean([v for r, v in sorted(found.items())
                                                  if r != rater])
        if np.isfinite(h).any():
            out.append((rater, js.JudgedScores(tuple(topic_names), tuple(systems), (HUMAN,),
                                               x, h)))
    return out


def ceiling_rows(task: str, criterion: str, topics: Sequence, summarizers: Sequence,
                 raters: Sequence, scores: Sequence[float], seed: int, n: int
                 ) -> Tuple[List[tuple], Dict[Tuple[str, str], js.Estimate]]:
    """``metric_eval/``'s rows of measure ``human`` for one (task,
    criterion) (the module doc) and the estimate of each (level, statistic);
    none with fewer than two raters of a cell."""
    cubes = rater_cubes(topics, summarizers, raters, scores)
    if not cubes:
        return [], {}
    evaluations = [js.meta_evaluation(task, criterion, data, seed, n, draws=0)
                   for _, data in cubes]
    rows, found = [], {}
    n_topics = len({t for _, d in cubes for t in d.used().topics})
    n_systems = len({s for _, d in cubes for s in d.used().systems})
    for st in ms.STATISTICS:
        ests = [e.estimates[st.key][0] for e in evaluations]
        points = np.asarray([[est.value] for est in ests])                     # raters × 1
        point = _mean_over_raters(points)[0]
        if st.replicates:
            reps = np.stack([np.asarray(est.replicates, dtype=np.float64) for est in ests])
            mean_reps = _mean_over_raters(reps)                                # B
            low, high = rs.bootstrap_columns(np.asarray([point]), mean_reps[:, None],
                                             st.recentred_within)
            est = js.Estimate(float(point), float(low[0]), float(high[0]), mean_reps,
                              rs.interval_method(st.recentred_within))
        else:
            est = js.Estimate(float(point), np.nan, np.nan)
        found[st.key] = est
        rows.append((task, criterion, HUMAN, st.level, st.name, est.value, est.low, est.high,
                     est.interval or None, None, n_topics, n_systems, n, st.unit))
    return rows, found


def _mean_over_raters(values) -> np.ndarray:
    """The exact mean over the first axis (raters) of the values with a
    value, rounded once, per column (NaN without one)."""
    v = np.asarray(values, dtype=np.float64)
    present = np.isfinite(v)
    return rs.weighted_present_means(np.where(present, v, 0.0), present.astype(np.int64),
                                     np.ones((1, v.shape[0]), dtype=np.int64))[0]
