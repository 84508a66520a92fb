"""The judge-based part of the statistics stage (issue 28; issue 37: a
module of its own): ``metric_eval/`` (every measure against each
criterion, and the chance baseline), the clusters of the primary statistic
(``metric_ranks/``) and KING against the judges (``king_vs_judges/``), one
group per task and one per (task, criterion)'s chance baseline. The
statistics are those declared in :mod:`qarla_spark.meta_statistics`,
computed by :mod:`qarla_spark.measures.judge_statistics`; the rows of
``metric_eval/`` read their declarations (level, interval, unit, tie
threshold, replicates) and name none of them. The groups' inputs are the QARLA and HBR stages' ``s_meta_*``
records (:mod:`qarla_spark.stages.statistics_inputs`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import across_tasks as xt
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures import meta_kernels as mk
from qarla_spark.measures import resampling as rs
from qarla_spark.measures.agreement import MIN_SYSTEMS, correlation_rows_shared
from qarla_spark.measures.clustering import subset_labels
from qarla_spark.measures.group_statistics import UNIT, Interval, ratio_estimates_of
from qarla_spark.measures.rater_draws import designs_of
from qarla_spark.names import HBR, RATERS, queen_of, queen_set
from qarla_spark.spark import rounds as rd
from qarla_spark.stages.statistics_inputs import (S_META_H, S_META_K, S_META_Q, S_RATE,
                                                  king_counts)

#: the first part of the keys of the across-task groups
ACROSS = "across"


def ranked_sets(first: List[str], best: str) -> List[str]:
    """The sets KING ranks and sets beside the judges: the first family's
    (every single metric, the requested sets) and the task's best set."""
    return list(dict.fromkeys([*first, best]))


def meta_measures(ctx, task: str) -> Tuple[List[str], List[str], List[str]]:
    """The measures of one task's metric_eval/ in column order, in three
    parts: the HBR stage's single measures, the QUEEN of each of the task's
    detailed sets (from the QARLA stage's records) and ``HBR``."""
    h, q = ctx.hbr, ctx.qarla
    singles = list(h.names[:-1]) if h else []
    queens = [queen_of(label) for label in q.detailed.get(task, ())] if q else []
    return singles, queens, ([h.names[-1]] if h else [])


def across_measures(ctx) -> List[str]:
    """The measures ``across/`` compares by pairwise accuracy: those every
    task has — HBR's single measures, the QUEEN of each requested set and
    ``HBR`` (a task's best set and representatives are its own)."""
    h, q = ctx.hbr, ctx.qarla
    singles = list(h.names[:-1]) if h else []
    queens = [queen_of(label) for label in q.requested] if q else []
    return singles + queens + ([h.names[-1]] if h else [])


def meta_data(task, items, ctx, index: dict = None) -> js.JudgedScores:
    """The score cube of one (task, criterion) from its topics' s_meta_h
    (singles and HBR) and s_meta_q (QUEEN of the detailed sets) records.
    ``index``: where each record's (kind, names) go in the cube, kept by
    the caller for its criteria (the same systems and measures: the same
    positions, not looked up again record by record)."""
    singles, queens, hbr = meta_measures(ctx, task)
    measures = singles + queens + hbr
    by_topic: Dict[str, Dict[str, Any]] = {}
    for kind, v in items:
        if kind in (S_META_H, S_META_Q):
            by_topic.setdefault(v.topic, {})[kind] = v
    topics = sorted(by_topic)
    systems = sorted({name for parts in by_topic.values() for v in parts.values()
                      for name in v.names})
    s_at = {name: i for i, name in enumerate(systems)}
    scores = np.full((len(topics), len(systems), len(measures)), np.nan)
    human = np.full((len(topics), len(systems)), np.nan)
    where = {S_META_H: [*range(len(singles)), *range(len(singles) + len(queens),
                                                     len(measures))],
             S_META_Q: list(range(len(singles), len(singles) + len(queens)))}
    index = {} if index is None else index
    shape = (tuple(systems), tuple(measures))
    for t, topic in enumerate(topics):
        for kind, v in by_topic[topic].items():
            # the record's systems and measures as np.ix_ gives them, once
            # per (systems, measures, kind)
            names = tuple(v.names)
            key = (kind, names, shape)
            at = index.get(key)
            if at is None:
                at = index[key] = np.ix_([s_at[name] for name in names], where[kind])
            mine = scores[t]                                  # a view
            mine[at] = v.scores
            human[t, at[0][:, 0]] = v.human
    return js.JudgedScores(tuple(topics), tuple(systems), tuple(measures), scores, human)


def metric_eval_rows(task: str, criterion: str, e: js.MetaEvaluation, n: int) -> List[tuple]:
    """``metric_eval/`` rows of one (task, criterion)'s
    :class:`~qarla_spark.measures.judge_statistics.MetaEvaluation` (``n``
    replicates): :func:`metric_eval_columns` as rows."""
    return list(zip(*metric_eval_columns(task, criterion, e, n)))


def metric_eval_columns(task: str, criterion: str, e: js.MetaEvaluation, n: int
                        ) -> List[list]:
    """``metric_eval/``'s columns (in the table's order, a value per row) of
    one (task, criterion)'s :class:`~qarla_spark.measures.judge_statistics.
    MetaEvaluation` (``n`` replicates): every declared statistic it holds,
    in the declared order, each measure's value, interval (none without
    replicates), tie threshold (a calibrated statistic's) and unit, as
    declared; then, with two named raters or more, the statistics with
    replicates again, the raters drawn as well (unit ``raters``; issue 39,
    part 3). Read from the statistics' columns, no tuple per row."""
    columns: List[list] = [[] for _ in range(14)]
    (tasks, criteria, measures, levels, names, values, lows, highs, intervals, epsilons,
     topics, systems, resamples, units) = columns

    def add(st, found, unit):
        found = js.EstimateColumns.of(found)
        k = min(len(e.measures), len(found.values))
        tasks.extend([task] * k)
        criteria.extend([criterion] * k)
        measures.extend(e.measures[:k])
        levels.extend([st.level] * k)
        names.extend([st.name] * k)
        values.extend(found.values[:k])
        lows.extend(found.lows[:k])
        highs.extend(found.highs[:k])
        if isinstance(found.interval, str):
            intervals.extend([found.interval or None] * k)
        else:                                           # an Estimate's own, per measure
            intervals.extend(found.interval[:k])
        epsilons.extend(e.epsilon[:k] if st.calibrated else [None] * k)
        topics.extend([e.n_topics] * k)
        systems.extend([e.n_systems] * k)
        resamples.extend([n] * k)
        units.extend([unit] * k)

    for st in ms.STATISTICS:
        add(st, e.estimates.get(st.key) or (), st.unit)
    for st in ms.STATISTICS:
        add(st, e.raters.get(st.key, ()), RATERS)
    return columns


def chance_rows(task: str, criterion: str, found, n_topics: int,
                n_systems: int) -> List[tuple]:
    """``metric_eval/``'s chance rows of one (task, criterion): the band of
    each declared statistic in ``found`` (:func:`~qarla_spark.measures.
    judge_statistics.chance_baseline`), in the declared order."""
    return [(task, criterion, js.CHANCE, st.level, st.name, band.value, band.low, band.high,
             band.interval, None, n_topics, n_systems, js.CHANCE_DRAWS, js.CHANCE_UNIT)
            for st in ms.STATISTICS for band in [found.get(st.key)] if band is not None]


def rater_designs(items) -> Dict[str, Any]:
    """Each criterion's ratings by two named raters or more, of a group's
    ``s_rate`` records (:func:`~qarla_spark.measures.rater_draws.
    designs_of`; empty without)."""
    cols: Dict[str, list] = {"topic": [], "summarizer": [], "criterion": [], "rater": [],
                             "score": []}
    for kind, v in items:
        if kind == S_RATE:
            for name in cols:
                cols[name].extend(getattr(v, name))
    return designs_of(*cols.values()) if cols["rater"] else {}


def meta_group(key, task, items, ctx):
    """The metric_eval/, metric_ranks/ and king_vs_judges/ rows of one task,
    every criterion (:func:`~qarla_spark.measures.judge_statistics.
    meta_evaluations`: the measures' side worked out once for the criteria
    that judge the same summaries), the records of the across-task reduce
    (runs of two tasks or more), what the run prints."""
    seed, n = ctx.seed, ctx.n
    by_criterion: Dict[str, list] = {}
    for kind, v in items:
        if kind in (S_META_H, S_META_Q):
            by_criterion.setdefault(v.criterion, []).append((kind, v))
    index: dict = {}
    datas = {c: meta_data(task, found, ctx, index) for c, found in sorted(by_criterion.items())}
    datas = {c: d for c, d in datas.items() if d.cells.any()}
    if not datas:
        return [], {}
    evaluations = js.meta_evaluations(task, datas, seed, n, designs=rater_designs(items))
    king = _king_of_ranked(task, items, ctx)
    singles, queens, _ = meta_measures(ctx, task)
    # KING ranks sets: QUEEN(S) is S, a single metric its own set
    kinglike = {**{m: m for m in singles}, **{q: queen_set(q) for q in queens}}
    wanted = {ctx.best.get(task), ctx.best_single.get(task)}
    records: List[tuple] = []
    printed: Dict[str, dict] = {"pairwise_accuracy": {}}
    judged: List[tuple] = []                # king_vs_judges' inputs, every criterion
    for criterion, e in evaluations.items():
        pa = js.EstimateColumns.of(e.estimates[ms.statistic(ms.PRIMARY).key])
        ranks = [(task, criterion, ms.PRIMARY, name, value, int(r))
                 for name, value, r in zip(e.measures, pa.values, e.ranks) if r]
        cols = [m for m, name in enumerate(e.measures) if name in kinglike]
        # the statistics with replicates, set against KING's: point values
        # and replicates (B × measures: e.replicates', its columns ``cols``
        # read where they are used)
        stats = {st.name: (np.asarray(js.EstimateColumns.of(e.estimates[st.key]).values,
                                      dtype=np.float64)[cols],
                           e.replicates[st.key], np.asarray(cols, dtype=np.intp))
                 for st in ms.STATISTICS if cols and st.replicates and st.against_king}
        if cols and king is not None:
            judged.append((criterion, [kinglike[e.measures[m]] for m in cols], stats))
        records.append(rd.table_record_columns(key, "metric_eval",
                                               metric_eval_columns(task, criterion, e, n)))
        if ctx.n_tasks >= 2:
            # across tasks: the measures every task has (HBR's measures, the
            # QUEEN of the requested sets, HBR), not a task's own sets
            shared = set(across_measures(ctx))
            keep = [m for m, name in enumerate(e.measures) if name in shared]
            names = tuple(e.measures[m] for m in keep)
            # the task's own across/ rows made here, not in the one group
            # over every task
            pa_key = ms.statistic("pairwise_accuracy").key
            acc = js.EstimateColumns.of(e.estimates[pa_key])
            every = len(keep) == len(e.measures) and pa_key in e.replicates
            if every:
                # every measure kept: the quotients of the counts are the
                # statistic's own values and replicates (its kernel's
                # quotients of the same counts), not made again
                est = xt.Estimates(names, np.asarray(acc.values, dtype=np.float64),
                                   e.replicates[pa_key])
            else:
                est = xt.pair_estimates(names,
                                        np.asarray(e.pa_counts[0], dtype=np.int64)[:, keep],
                                        np.asarray(e.pa_counts[1], dtype=np.int64)[:, None])
            # (its intervals: the metric_eval/ rows' own — the same
            # quotients of the same counts, within the same bounds; its
            # clusters, when it keeps every measure, metric_ranks/' own —
            # rank_clusters of the same values, replicates and names, not
            # made again: ~2.7 ms a task of 4 criteria)
            own = xt.task_found(est, ms.statistic("pairwise_accuracy").recentred_within,
                                interval=(np.asarray(acc.lows, dtype=np.float64)[keep],
                                          np.asarray(acc.highs, dtype=np.float64)[keep]),
                                ranks=e.ranks if every and ms.PRIMARY == "pairwise_accuracy"
                                else None)
            records.append((rd.key_of(ACROSS, "pairwise_accuracy", criterion), "x_pa",
                            xt.PairCounts(task, names, xt.narrow_counts(e.pa_counts[0][:, keep]),
                                          xt.narrow_counts(e.pa_counts[1]), own)))
        if ranks:
            records.append(rd.table_record(key, "metric_ranks", ranks))
        for name, value, low, high in zip(e.measures, pa.values, pa.lows, pa.highs):
            label = kinglike.get(name)
            if name == HBR or (label in wanted and label is not None):
                printed["pairwise_accuracy"][(task, criterion, name)] = Interval(
                    value, low, high)
    if judged:
        tau_rows, tau_printed = _king_vs_judges(task, king, judged, n)
        if tau_rows:
            records.append(rd.table_record(key, "king_vs_judges", tau_rows))
        if tau_printed:
            printed["king_vs_judges"] = tau_printed
    return records, printed


def chance_group(key, task, criterion, items, ctx):
    """The chance baseline's metric_eval/ rows of one (task, criterion) (the
    cells of its measures' group) and its printed band."""
    data = meta_data(task, items, ctx).used()
    if not data.cells.any():
        return [], {}
    flips = rs.sign_flips(ctx.seed, task, data.topics, ctx.n)
    found = js.chance_baseline(task, criterion, data, ctx.seed, flips, js.CHANCE_DRAWS)
    rows = chance_rows(task, criterion, found, len(data.topics), len(data.systems))
    band = found.get(ms.statistic(ms.PRIMARY).key)
    printed = {"pairwise_accuracy": {(task, criterion, js.CHANCE): Interval(
        band.value, band.low, band.high)}} if band is not None else {}
    return [rd.table_record(key, "metric_eval", rows)], printed


def _king_of_ranked(task, items, ctx):
    """(labels, point, replicates) of KING of the sets KING ranks (every
    single metric, the requested sets, the task's best set), from the KING
    cases the metric_eval group also receives (``s_meta_k``): the numbers of
    the task's KING group (the same cases, topics and weights)."""
    q = ctx.qarla
    plan = q.plans.get(task) if q is not None else None
    cases = [v for k, v in items if k == S_META_K]
    if plan is None or not cases:
        return None
    first = list(q.first)
    own = [label for label, _ in subset_labels(plan.reps)] if plan.best not in first else []
    wanted = ranked_sets(first, plan.best)
    gid = {label: g for g, label in enumerate(wanted)}
    # the counts of every (topic, set), as the KING group makes them
    family_columns = []
    for labels in (first, own):
        src = [s for s, label in enumerate(labels) if label in gid]
        family_columns.append((np.asarray(src, dtype=np.intp),
                               np.asarray([gid[labels[s]] for s in src], dtype=np.intp)))
    counts = king_counts(cases, family_columns, len(wanted))
    present = np.flatnonzero(counts.seen.any(axis=0))
    if not present.size:
        return None
    e = ratio_estimates_of(task, counts.topics, present.tolist(), [wanted[g] for g in present],
                           counts.wins[:, present], counts.dens, ctx.seed, ctx.n)
    keep = [c for c, v in enumerate(e.point) if np.isfinite(v)]
    return [e.names[c] for c in keep], e.point[keep], e.reps[:, keep]


def _king_vs_judges(task, king, entries, n):
    """king_vs_judges/ rows of one task, each criterion of ``entries``
    ((criterion, names, stats) — a set's name per statistic column, and per
    statistic its point values and replicates, a row of B per set):
    Kendall's τ between the sets' KING and each judge-based statistic of their QUEEN (a single
    metric is its own set), over the sets both have, with a recentred
    interval (within Kendall's declared range) from the same Poisson replicates
    (keyed by topic: replicate b resamples the topics both share alike);
    what the run prints (the primary statistic). Every criterion's statistics
    with the same sets against the same KING row at once (τ is symmetric)."""
    labels, point_k, reps_k = king
    bounds = ms.statistic("kendall").recentred_within
    at = {name: i for i, name in enumerate(labels)}
    rows: List[tuple] = []
    printed: Dict[Tuple[str, str], Interval] = {}
    batches: Dict[tuple, list] = {}
    for criterion, names, stats in entries:
        batches.setdefault(tuple(names), []).append((criterion, stats))
    for names, found in batches.items():
        both = [m for m, name in enumerate(names) if name in at]
        common = [names[m] for m in both]
        kcols = [at[name] for name in common]
        cols = [(criterion, stat, stats[stat]) for criterion, stats in found
                for stat in sorted(stats)]
        taus = correlation_rows_shared(
            common, np.stack([v[0][both] for _, _, v in cols])[None], point_k[kcols][None],
            kinds=("kendall",))[0, :, 0]
        # rows × sets × B: each statistic's replicates of those sets, one
        # gather each (a column-major matrix's columns as contiguous rows;
        # a row-major one's rows gathered, then transposed in cache), and
        # Kendall's counts with the replicates innermost (the numbers of
        # correlation_rows_shared on B × rows × sets)
        x = np.empty((len(cols), len(both), reps_k.shape[0]), dtype=np.float64)
        for r, (_, _, (_, reps, idx)) in enumerate(cols):
            if reps.T.flags.c_contiguous:
                np.take(reps.T, idx[both], axis=0, out=x[r])
            else:
                x[r] = reps[:, idx[both]].T
        reps_all = mk.kendall_replicates(x, reps_k[:, kcols].T, MIN_SYSTEMS)
        # every row's interval at once: bootstrap_interval's doubles
        lows, highs = rs.bootstrap_columns(taus, reps_all, bounds)
        method = rs.interval_method(bounds)
        for (criterion, stat, _), tau, low, high in zip(cols, taus.tolist(), lows.tolist(),
                                                         highs.tolist()):
            rows.append((task, criterion, stat, len(common), tau, low, high, method, n, UNIT))
            if stat == ms.PRIMARY:
                printed[(task, criterion)] = Interval(tau, low, high)
    return rows, printed
