"""The statistics stage (issue 11): is each difference real?

Bootstrap intervals (percentile and BCa, 95%) for KING of every evaluated
set, JACK of the detailed sets, the pooled AUC of every measure and of HBR,
and the system- and summary-level correlations with the human criteria;
paired sign-flip tests with bootstrap intervals of the difference for the
comparisons the run prints (best set vs best single metric, vs each
representative, vs every other subset of the representatives — adjusted
for the family with the max-T method — and HBR vs the best and the median
single measure per criterion). With judgments (issue 28), every
measure's agreement with each criterion (``metric_eval/``: correlations,
pairwise accuracy, soft pairwise accuracy, acc_eq, and the chance
baseline), the significance clusters of KING and of pairwise accuracy
(``metric_ranks/``) and KING against the judges (``king_vs_judges/``),
one group per (task, criterion) (:mod:`qarla_spark.measures.
judge_statistics`); with two tasks or more, the across-task answer
(``across/``, :mod:`qarla_spark.measures.across_tasks`) in a second reduce.

The unit of resampling is the topic (Deutsch et al.'s "inputs"); system-
level correlations are also resampled over systems and over both. Nothing
loops on the driver: the per-topic counts the QARLA and HBR stages already
hold are grouped per task (and criterion, set), and each group computes all
its replicates at once on an executor
(:mod:`qarla_spark.measures.group_statistics`;
:mod:`qarla_spark.measures.resampling`:
Poisson weights regenerated from (seed, task, topic), exact weighted means,
so the replicate with all weights 1 is the reported value). Results are
bit-identical under any partitioning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from qarla_spark import meta_statistics as ms
from qarla_spark.measures import resampling as rs
from qarla_spark.measures.clustering import subset_labels
from qarla_spark.measures import across_tasks as xt
from qarla_spark.measures import judge_statistics as js
from qarla_spark.measures.group_statistics import (UNIT, CiBlock, CompBlock, Comparison,
                                                   CorrelationRow, Interval, Paired, StatRow,
                                                   auc_counts, auc_group_of, correlation_groups,
                                                   distinct_ratio_estimates, king_distinct_group,
                                                   king_group, ratio_estimates_of)
from qarla_spark.measures.meta_eval import rank_clusters
from qarla_spark.names import FAMILIES, HBR, QUEEN
from qarla_spark.spark import cache
from qarla_spark.spark import rounds as rd
from qarla_spark.stages import judges
from qarla_spark.stages.judges import ACROSS, ranked_sets
from qarla_spark.stages.statistics_inputs import (FROM_HBR, FROM_QARLA, S_CORR, S_HX, S_JUDG,
                                                  HbrContext, HbrPlan, KingCase, QarlaContext,
                                                  StatisticsRun, TaskSets, judgment_records,
                                                  king_counts, rating_records)

@dataclass
class StatisticsResult:
    """Tables and the intervals and tests the run prints."""

    tables: Dict[str, Any]
    n_resamples: int
    seed: int
    king: Dict[Tuple[str, str], Interval] = field(default_factory=dict)     # (task, set)
    jack: Dict[Tuple[str, str], Interval] = field(default_factory=dict)
    auc: Dict[Tuple[str, str, str], Interval] = field(default_factory=dict)  # task, crit, measure
    #: system-level Pearson, resampling systems and topics ("both")
    correlation: Dict[Tuple[str, str, str, str], Interval] = field(default_factory=dict)
    comparisons: Dict[Tuple[str, str, str], List[Comparison]] = field(default_factory=dict)
    #: per task: (subsets whose KING is not significantly below the best
    #: set's, max-T adjusted at 5%, the best set included; subsets)
    subsets_kept: Dict[str, Tuple[int, int]] = field(default_factory=dict)
    #: (task, criterion, measure): system-level pairwise accuracy of the
    #: best set's QUEEN, the best single metric, HBR, and ``chance`` (its band)
    pairwise_accuracy: Dict[Tuple[str, str, str], Interval] = field(default_factory=dict)
    #: (task, criterion): Kendall's τ of KING against pairwise accuracy
    king_vs_judges: Dict[Tuple[str, str], Interval] = field(default_factory=dict)
    #: task: KING of a random metric, mean and 95% band over draws
    king_chance: Dict[str, Interval] = field(default_factory=dict)
    #: (task, criterion): Krippendorff's α among the raters, its interval,
    #: the units rated twice or more and the raters (issue 39)
    rater_alpha: Dict[Tuple[str, str], tuple] = field(default_factory=dict)
    #: (basis, criterion — "" for KING): the pooled best measure, its
    #: interval, the tasks it is best or tied in, the pooled top cluster
    across: Dict[Tuple[str, str], dict] = field(default_factory=dict)

    def info(self, config=None) -> Dict[str, Any]:
        """The ``statistics`` entry of ``run.json`` (``config``: unused;
        every stage's result takes it)."""
        return {"n_resamples": self.n_resamples, "seed": self.seed, "unit": UNIT,
                "bootstrap": "Poisson(1) weights per topic, seeded by (seed, task, topic)",
                "interval": "percentile and BCa, 95%",
                "test": "paired sign flips over topics (mid-p); max-T adjustment within each "
                        "family",
                "meta_evaluation": js.configuration()}


# ---------------------------------------------------------------------------
# the stage: one reduce per task over the QARLA and HBR stages' per-topic
# records (kept on the executors), one Spark job
# ---------------------------------------------------------------------------

@dataclass
class _Found:
    """What one group of :func:`_statistics_reduce` finds: its
    :class:`~qarla_spark.measures.group_statistics.StatRow` rows (king_ci,
    jack_ci, auc_ci, comparisons), its ``correlation_ci`` rows, the sizes
    of the sets of its king_ci rows, its other records (metric_eval,
    metric_ranks, king_vs_judges, the across-task inputs) and what the run
    prints of it besides what :func:`_printed` reads of its rows."""

    rows: List[StatRow] = field(default_factory=list)
    corr: List["CorrelationCi"] = field(default_factory=list)
    sizes: Dict[str, int] = field(default_factory=dict)
    extra: List[tuple] = field(default_factory=list)
    printed: Dict[str, Any] = field(default_factory=dict)


def _statistics_reduce(key, items, ctx):
    """The intervals and tests of one group of a task (its function in
    :data:`GROUPS`, by the key's second part): its tables' records and what
    the run prints."""
    task, group, *rest = rd.key_parts(key)
    found = GROUPS[group](key, task, rest, items, ctx) if group in GROUPS else None
    found = found or _Found()
    corr_records = [rd.table_record(key, "correlation_ci", found.corr)] if found.corr else []
    printed = {**_printed(task, found.rows, found.corr, ctx), **found.printed}
    # most groups print nothing (a correlation of a set that is not the
    # task's best): no record for them — 100 tasks make ~40,000 groups
    driver = [(key, "driver", (task, printed))] if printed else []
    return [*_table_records(key, found.rows, ctx.n, found.sizes), *corr_records,
            *found.extra, *driver]


def _king_stats(key, task, rest, items, ctx) -> Optional[_Found]:
    """``king``: KING's intervals of every set the task evaluated, its
    comparisons, its clusters (metric_ranks/), KING's chance band and (two
    tasks or more) the across-task records, from the task's KING cases."""
    q = ctx.qarla
    if q is None or task not in q.plans:
        return None
    seed, n = ctx.seed, ctx.n
    first, plan = list(q.first), q.plans[task]
    own = subset_labels(plan.reps)
    catalogue = task_catalogue(first, list(q.first_sizes), own)
    gid = {label: i for i, (label, _) in enumerate(catalogue)}
    task_sets = [first, [label for label, _ in own]]
    cases: List[KingCase] = [v for _, v in items]
    if not cases:
        return None
    # the counts of every (topic, set), a topic's record of each family at
    # once (a set of both families: the same counts)
    columns = [np.asarray([gid[label] for label in task_sets[f]], dtype=np.intp) for f in (0, 1)]
    counts = king_counts(cases, [(np.arange(len(c)), c) for c in columns], len(catalogue))
    topics, wins, dens = counts.topics, counts.wins, counts.dens
    present = np.flatnonzero(counts.seen.any(axis=0))
    labels = [label for label, _ in catalogue]
    # each distinct column of counts worked out once (1,023 subsets: ~780)
    estimates = distinct_ratio_estimates(task, topics, present.tolist(),
                                         [labels[g] for g in present], wins[:, present], dens,
                                         seed, n)
    gids = {"best": gid[plan.best], "best_single": gid[plan.best_single],
            "reps": [gid[r] for r in plan.reps if r in gid],
            "subsets": [gid[label] for label in task_sets[1]]}
    found = _Found(king_distinct_group(task, estimates, gids, seed, n), sizes=dict(catalogue))
    ranked = _king_ranked(estimates, first, plan.best)
    found.extra += _king_ranks(task, ranked)
    shapes = sorted({(v.topic, int(v.den), int(v.n_pairs) // int(v.den))
                     for v in cases if v.family == 0})
    # (QUEEN counted as the run counts it: every method gives the same counts)
    band = js.king_chance(seed, task, shapes, js.CHANCE_DRAWS, q.triples)
    found.rows.append(StatRow("king", task, None, None, js.CHANCE, None, None, None,
                              band.value, js.CHANCE, band.low, band.high, None, None))
    found.sizes[js.CHANCE] = 1
    found.printed = {"king_chance": {task: Interval(band.value, band.low, band.high)}}
    if ctx.n_tasks >= 2:
        # across tasks: the sets every task evaluates (the first family:
        # every single metric and the requested sets)
        in_first = set(first)
        shared = [label for label in ranked[0] if label in in_first]
        cols = [estimates.names.index(label) for label in shared]
        # the task's own across/ rows made here (its estimates' columns:
        # the same doubles as from its counts), not in the one group over
        # every task
        # (their percentile intervals: king_ci's rows of them, the same
        # doubles as percentile_columns of those columns)
        pct = {a: (low, high) for r in found.rows if isinstance(r, CiBlock) and r.kind == "king"
               for a, (_, low, high) in r.interval("percentile").items()}
        pct.update({r.a: (r.ci_low, r.ci_high) for r in found.rows
                    if isinstance(r, StatRow) and r.kind == "king"
                    and r.method == "percentile"})
        own = xt.task_found(xt.Estimates(tuple(shared), estimates.point[cols],
                                         estimates.reps_of(cols)),
                            percentile=([pct[label][0] for label in shared],
                                        [pct[label][1] for label in shared]))
        found.extra.append((rd.key_of(ACROSS, "king"), "x_king", xt.KingCounts(
            task, tuple(estimates.topics), tuple(shared), estimates.wins[:, cols],
            estimates.dens, own)))
    return found


def _jack_stats(key, task, rest, items, ctx) -> Optional[_Found]:
    """``jack``: JACK's intervals of the task's detailed sets."""
    q = ctx.qarla
    if q is None:
        return None
    detailed = list(q.detailed.get(task, ()))
    cases = [v for _, v in items]
    if not cases or not detailed:
        return None
    # the counts of every (topic, set): a topic's later record replaces an
    # earlier one
    topics = sorted({v.topic for v in cases})
    t_at = {t: i for i, t in enumerate(topics)}
    k = len(detailed)
    wins = np.zeros((len(topics), k), dtype=np.int64)
    dens = np.zeros(len(topics), dtype=np.int64)
    for v in cases:
        wins[t_at[v.topic]] = [int(v.jack[s]) for s in range(k)]
        dens[t_at[v.topic]] = int(v.n_models)
    estimates = ratio_estimates_of(task, topics, list(range(k)), detailed, wins, dens,
                                   ctx.seed, ctx.n)
    return _Found(king_group((task,), None, detailed, {}, ctx.seed, ctx.n, kind="jack",
                             estimates=estimates))


def _queen_correlations(key, task, rest, items, ctx) -> Optional[_Found]:
    """``corr``: the intervals of the correlations of one detailed set's
    QUEEN (the task's best) with each criterion."""
    q = ctx.qarla
    if q is None:
        return None
    s = int(rest[0])
    # per criterion: a row of each side per judgment of a peer with QUEEN
    sides: Dict[str, Tuple[list, list, list, list, list]] = {}
    for kind, v in items:
        if kind != S_CORR:
            continue
        at = {name: a for a, name in enumerate(v.peers)}
        j = v.judged
        # the topic's ratios and scores as Python numbers once (the same
        # ints and floats as int(v.num[a]), float(score) row by row)
        nums, dens = np.asarray(v.num).tolist(), np.asarray(v.den).tolist()
        for name, criterion, score in zip(j.summarizer, j.criterion,
                                          np.asarray(j.score, dtype=np.float64).tolist()):
            a = at.get(name)
            if a is None:
                continue
            topic_, name_, num, den, y = sides.setdefault(criterion, ([], [], [], [], []))
            topic_.append(v.topic)
            name_.append(name)
            num.append(int(nums[a]))
            den.append(int(dens[a]))
            y.append(score)
    label = q.detailed[task][s]
    parts = [(criterion, Paired(tuple(t), tuple(names), np.asarray(num, dtype=np.int64),
                                np.asarray(den, dtype=np.int64), tuple(t), tuple(names),
                                np.asarray(y, dtype=np.float64)))
             for criterion, (t, names, num, den, y) in sorted(sides.items())]
    return _Found(corr=[_correlation_ci(r, QUEEN, label, ctx.n)
                        for r in correlation_groups(task, s, parts, ctx.seed, ctx.n,
                                                    designs=judges.rater_designs(items))])


def _auc_stats(key, task, rest, items, ctx) -> Optional[_Found]:
    """``auc``: the intervals of every measure's pooled AUC of one
    criterion, and HBR's comparisons with the best and the median."""
    h = ctx.hbr
    if h is None:
        return None
    counts = auc_counts([v for _, v in items], list(h.names))
    if counts is None:
        return None
    return _Found(auc_group_of((task, rest[0]), *counts, h.plans, ctx.seed, ctx.n))


def _hbr_correlations(key, task, rest, items, ctx) -> Optional[_Found]:
    """``hcorr``: the intervals of the correlations of HBR's system scores
    with each criterion."""
    h = ctx.hbr
    if h is None:
        return None
    x = [(v.topic, name, num, den) for k, v in items if k == S_HX for name, _, num, den in v.rows]
    x_topic = tuple(r[0] for r in x)
    x_name = tuple(r[1] for r in x)
    x_num = np.asarray([int(r[2]) for r in x], dtype=np.int64)
    x_den = np.asarray([int(r[3]) for r in x], dtype=np.int64)
    y_rows: Dict[str, list] = {}
    for k, v in items:
        if k == S_JUDG:
            for topic, name, criterion, score in zip(v.topic, v.summarizer, v.criterion,
                                                     v.score):
                y_rows.setdefault(criterion, []).append((topic, name, float(score)))
    parts = [(criterion, Paired(x_topic, x_name, x_num, x_den, tuple(r[0] for r in rows),
                                tuple(r[1] for r in rows),
                                np.asarray([r[2] for r in rows], dtype=np.float64)))
             for criterion, rows in sorted(y_rows.items())]
    return _Found(corr=[_correlation_ci(r, HBR, h.label, ctx.n)
                        for r in correlation_groups(task, 0, parts, ctx.seed, ctx.n,
                                                    summary_level=False,
                                                    designs=judges.rater_designs(items))])


def _judges_meta(key, task, rest, items, ctx) -> _Found:
    """``meta``: metric_eval/, metric_ranks/ and king_vs_judges/ of the task
    (:func:`qarla_spark.stages.judges.meta_group`)."""
    extra, printed = judges.meta_group(key, task, items, ctx)
    return _Found(extra=extra, printed=printed)


def _rater_agreement(key, task, rest, items, ctx) -> _Found:
    """``alpha``: rater_agreement/ of the task (Krippendorff's α of each
    criterion its named raters rate twice or more, with its interval over
    topics: :func:`~qarla_spark.measures.krippendorff.alpha_rows`); what the
    run prints of it (issue 39, part 3)."""
    from qarla_spark.measures.krippendorff import alpha_rows
    cols: Dict[str, list] = {"topic": [], "summarizer": [], "criterion": [], "rater": [],
                             "score": []}
    for _, v in items:
        for name in cols:
            cols[name].extend(getattr(v, name))
    rows = alpha_rows(task, cols["topic"], cols["summarizer"], cols["criterion"],
                      cols["rater"], cols["score"], ctx.seed, ctx.n)
    if not rows:
        return _Found()
    printed = {(r[0], r[1]): (Interval(r[2], r[3], r[4]), r[6], r[8]) for r in rows}
    # the human ceiling: metric_eval/'s rows of measure "human" of each
    # criterion rated twice or more (issue 39, part 3)
    from qarla_spark.measures.ceiling import ceiling_rows
    from qarla_spark.names import HUMAN
    ceiling, primary = [], ms.statistic(ms.PRIMARY).key
    ceiling_printed = {}
    criteria = np.asarray(cols["criterion"], dtype=object)
    for criterion in sorted({r[1] for r in rows}):
        mine = np.flatnonzero(criteria == criterion)
        found_rows, found = ceiling_rows(
            task, criterion, *([cols[c][k] for k in mine]
                               for c in ("topic", "summarizer", "rater")),
            [cols["score"][k] for k in mine], ctx.seed, ctx.n)
        ceiling += found_rows
        if primary in found:
            e = found[primary]
            ceiling_printed[(task, criterion, HUMAN)] = Interval(e.value, e.low, e.high)
    extra = [rd.table_record(key, "rater_agreement", rows)]
    if ceiling:
        extra.append(rd.table_record(key, "metric_eval", ceiling))
    return _Found(extra=extra, printed={"rater_alpha": printed,
                                        "pairwise_accuracy": ceiling_printed})


def _judges_chance(key, task, rest, items, ctx) -> _Found:
    """``chance``: metric_eval/'s chance rows of one criterion
    (:func:`qarla_spark.stages.judges.chance_group`)."""
    extra, printed = judges.chance_group(key, task, rest[0], items, ctx)
    return _Found(extra=extra, printed=printed)


#: each group of the statistics stage (the second part of its key) and the
#: function that computes it: ``f(key, task, rest of the key, items, ctx)``
GROUPS = {"king": _king_stats, "jack": _jack_stats, "corr": _queen_correlations,
          "auc": _auc_stats, "hcorr": _hbr_correlations, "meta": _judges_meta,
          "chance": _judges_chance, "alpha": _rater_agreement}


# ---------------------------------------------------------------------------
# KING's clusters (metric_ranks/); the judge-based groups are
# :mod:`qarla_spark.stages.judges`'
# ---------------------------------------------------------------------------

def _king_ranked(e, first: List[str], best: str):
    """(labels, point, replicates) of the sets KING ranks: the first
    family's (every single metric, the requested sets) and the task's best
    set, those the task evaluated."""
    wanted = ranked_sets(first, best)
    at = {label: i for i, label in enumerate(e.names)}
    cols = [at[label] for label in wanted if label in at]
    return [e.names[c] for c in cols], e.point[cols], e.reps_of(cols)


def _king_ranks(task, ranked) -> List[tuple]:
    """metric_ranks/ rows of KING (criterion null)."""
    labels, point, reps = ranked
    keep = [k for k, v in enumerate(point) if np.isfinite(v)]
    if not keep:
        return []
    labels = [labels[k] for k in keep]
    point, reps = point[keep], reps[:, keep]
    ranks = rank_clusters(point, reps, labels).ranks
    rows = [(task, None, "king", label, float(v), int(r))
            for label, v, r in zip(labels, point, ranks)]
    return [rd.table_record(rd.key_of(task, "king"), "metric_ranks", rows)]


def _across_reduce(key, items, ctx):
    """across/ rows of one basis over every task (KING; or the pairwise
    accuracy of one criterion, the tasks that judge it), when two or more
    tasks have it; what the run prints of it."""
    parts = rd.key_parts(key)
    basis, criterion = parts[1], (parts[2] if len(parts) > 2 else None)
    if basis == "king":
        counts = [v for k, v in items if k == "x_king"]
        if len(counts) < 2:
            return []
        # each task's weights drawn once for both
        weights = xt.king_weights(counts, ctx.seed, ctx.n)
        found = xt.across_tasks(*xt.pooled_king(counts, ctx.seed, ctx.n, weights))
        # beside the pooled value, the equal-weight mean over tasks (issue 39)
        found = xt.with_mean(found, xt.mean_king(counts, ctx.seed, ctx.n, weights))
    else:
        counts = [v for k, v in items if k == "x_pa"]
        if len(counts) < 2:
            return []
        found = xt.across_tasks(*xt.pooled_counts(counts),
                                bounds=ms.statistic("pairwise_accuracy").recentred_within)
        found = xt.with_mean(found, xt.mean_counts(counts))
    rows = xt.across_rows(basis, criterion, found)
    printed = _across_printed(found)
    return [rd.table_record(key, "across", rows),
            (key, "driver", (ACROSS, {"across": {(basis, criterion or ""): printed}}))]


def across_costs(tasks) -> Dict[str, float]:
    """The across-task reduce's groups (KING; each judged criterion's
    pairwise accuracy) and their relative costs, for their placement: each
    in a partition of its own while there are partitions (with Spark's
    hash, a 100 × 10 run had its five groups in two of four partitions: the
    stage's one long task, 7.1 s on a loaded machine). KING's group, which
    draws each task's replicates again, counts double."""
    criteria = sorted({c for t in (tasks or ()) for c in (t.judgments or {})})
    costs = {rd.key_of(ACROSS, "king"): 2.0}
    costs.update({rd.key_of(ACROSS, "pairwise_accuracy", c): 1.0 for c in criteria})
    return costs


def _across_printed(found) -> dict:
    """The pooled top measure, its interval and the tasks it is best or tied
    in; the members of the pooled top cluster (by value)."""
    p = found.pooled
    ok = [m for m in range(len(p.names)) if found.pooled_ranks[m]]
    if not ok:
        return {}
    best = sorted(ok, key=lambda m: (-p.point[m], p.names[m]))
    top = [p.names[m] for m in best if found.pooled_ranks[m] == 1]
    m = best[0]
    low, high = found.interval(p, m)
    tied = found.best_or_tied()
    return {"best": p.names[m], "value": Interval(float(p.point[m]), low, high),
            "best_or_tied": tied[m], "n_tasks": len(found.tasks), "top": top,
            # the most often best or tied (ties: the higher pooled value)
            "most_tied": next((tied[k], p.names[k]) for k in sorted(
                ok, key=lambda k: (-tied[k], -p.point[k], p.names[k])))}


def task_catalogue(first: List[str], first_sizes: List[int],
                   own: List[Tuple[str, int]]) -> List[Tuple[str, int]]:
    """The sets whose KING one task's group resamples, (label, size) in
    their column order: the first family's (``first``, in order), then the
    task's subsets of its representatives (``own``: (label, size), as
    :func:`~qarla_spark.measures.clustering.subset_labels` makes them) not
    among them, in :attr:`~qarla_spark.measures.metric_sets.MetricSet.tie_key`'s order (size, then label).
    Made in the task's group from its representatives (100 tasks of ten
    representatives: 100,000 subsets, 13.8 MB in one broadcast before)."""
    out = dict(zip(first, first_sizes))
    for label, size in sorted(own, key=lambda s: (s[1], s[0])):     # MetricSet.tie_key
        out.setdefault(label, size)
    return list(out.items())


class CorrelationCi(NamedTuple):
    """A row of ``correlation_ci/`` (its columns, in order)."""

    task: str
    score: str                  # QUEEN or HBR
    metric_set: str
    criterion: str
    level: str
    correlation: str
    value: float
    method: str
    ci_low: float
    ci_high: float
    n_resamples: int
    unit: str


def _correlation_ci(r: CorrelationRow, score: str, label: str, n: int) -> CorrelationCi:
    """The ``correlation_ci/`` row of a correlation of ``score`` (QUEEN or
    HBR) of the set ``label``, of ``n`` replicates."""
    return CorrelationCi(r.task, score, label, r.criterion, r.level, r.kind, r.value, r.method,
                         r.ci_low, r.ci_high, n, r.unit)


def _table_records(key, rows: list, n, sizes):
    """The statistics' :class:`~qarla_spark.measures.group_statistics.StatRow`
    rows as records of the tables king_ci, jack_ci, auc_ci and comparisons
    (``n`` replicates; ``sizes`` of the sets of the king_ci rows)."""
    # each table's columns straight from the rows (no tuple per row: a
    # king group's thousands of rows; the same Arrow columns)
    by_kind: Dict[str, list] = {"king": [], "jack": [], "auc": [], "comparison": []}
    for r in rows:
        by_kind["comparison" if r.kind not in by_kind else r.kind].append(r)
    king = [r for r in by_kind["king"] if isinstance(r, CiBlock) or r.method == js.CHANCE
            or r.a in sizes]
    jack, auc, comp = by_kind["jack"], by_kind["auc"], by_kind["comparison"]
    fields = StatRow._fields

    def columns_of(found):
        """The rows' fields as columns, by name (one transposition, no
        attribute read per row and field; a CiBlock's or CompBlock's
        columns as they are, a CiBlock's rows of a set the table has)."""
        out: Dict[str, list] = {name: [] for name in fields}
        plain: List[StatRow] = []

        def flush():
            for name, column in zip(fields, zip(*plain)):
                out[name].extend(column)
            plain.clear()

        for r in found:
            if not isinstance(r, (CiBlock, CompBlock)):
                plain.append(r)
                continue
            flush()
            c = r.columns()
            keep = None if found is not king or all(a in sizes for a in r.names) else \
                [a in sizes for a in c["a"]]
            width = len(c["a"]) if keep is None else sum(keep)
            for name in fields:
                column = c.get(name)
                if column is None:
                    value = {"kind": r.kind, "task": r.task, "criterion": r.criterion}.get(name)
                    out[name].extend([value] * width)
                elif keep is None:
                    out[name].extend(column)
                else:
                    out[name].extend(v for v, k in zip(column, keep) if k)
        flush()
        return out

    def const(c, value):
        return [value] * len(c["task"])

    def king_columns():
        c = columns_of(king)
        chance = [m == js.CHANCE for m in c["method"]]
        return [c["task"], c["a"], [1 if h else sizes[a] for a, h in zip(c["a"], chance)],
                c["value"], c["method"], c["ci_low"], c["ci_high"],
                [js.CHANCE_DRAWS if h else n for h in chance],
                [js.CHANCE_UNIT if h else UNIT for h in chance]]

    def jack_columns():
        c = columns_of(jack)
        return [c["task"], c["a"], c["value"], c["method"], c["ci_low"], c["ci_high"],
                const(c, n), const(c, UNIT)]

    def auc_columns():
        c = columns_of(auc)
        return [c["task"], c["criterion"], c["a"], c["value"], c["method"], c["ci_low"],
                c["ci_high"], const(c, n), const(c, UNIT)]

    def comparison_columns():
        c = columns_of(comp)
        return [*(c[name] for name in ("task", "family", "criterion", "a", "b", "value_a",
                                       "value_b", "value", "ci_low", "ci_high", "p_value",
                                       "p_adjusted")),
                [bool(p < rs.ALPHA) for p in c["p_adjusted"]], c["method"], const(c, n),
                const(c, UNIT)]

    tables = {"king_ci": (king, king_columns), "jack_ci": (jack, jack_columns),
              "auc_ci": (auc, auc_columns), "comparisons": (comp, comparison_columns)}
    return [rd.table_record_columns(key, name, columns())
            for name, (found, columns) in tables.items() if found]



def _printed(task, rows: list, corr: List[CorrelationCi], ctx) -> dict:
    """The intervals and tests the run prints, of one task (small; only
    what the group found: empty when it prints nothing)."""
    wanted = set(ctx.wanted)
    best = ctx.best.get(task)
    king, jack, auc, comparisons = {}, {}, {}, {}
    n_subsets = kept = 0
    for r in rows:
        if isinstance(r, CiBlock):
            mine = {"king": king, "jack": jack}.get(r.kind)
            pct = next((m for m in r.methods if m[0] == "percentile"), None)
            if pct is None:
                continue
            for j, a in enumerate(r.names):
                if mine is not None and a in wanted:
                    mine[(task, a)] = Interval(r.values[j], pct[1][j], pct[2][j])
                elif r.kind == "auc":
                    auc[(task, r.criterion, a)] = Interval(r.values[j], pct[1][j], pct[2][j])
        elif r.kind in ("king", "jack") and r.a in wanted and r.method == "percentile":
            (king if r.kind == "king" else jack)[(task, r.a)] = Interval(r.value, r.ci_low,
                                                                         r.ci_high)
        elif r.kind == "auc" and r.method == "percentile":
            auc[(task, r.criterion, r.a)] = Interval(r.value, r.ci_low, r.ci_high)
        elif isinstance(r, CompBlock):
            if r.family == FAMILIES["subset"]:
                n_subsets += len(r.a)
                kept += sum(int(p >= rs.ALPHA) for p in r.p_adjusted)
            else:
                comparisons.setdefault((task, r.family, r.criterion or ""), []).extend(
                    Comparison(a, b, value_a, value_b, value, low, high, p, adjusted)
                    for a, b, value_a, value_b, value, low, high, p, adjusted in zip(
                        r.a, r.b, r.value_a, r.value_b, r.value, r.ci_low, r.ci_high,
                        r.p_value, r.p_adjusted))
        elif r.kind == "comparison":
            if r.family == FAMILIES["subset"]:
                n_subsets += 1
                kept += int(r.p_adjusted >= rs.ALPHA)
            else:
                comparisons.setdefault((task, r.family, r.criterion or ""), []).append(
                    Comparison(r.a, r.b, r.value_a, r.value_b, r.value, r.ci_low, r.ci_high,
                               r.p_value, r.p_adjusted))
    correlation = {}
    for c in corr:
        if c.level == "system" and c.correlation == "pearson" and c.method == "percentile" \
                and c.unit == "both" and (c.score == HBR or c.metric_set == best):
            correlation[(task, c.score, c.criterion, "pearson")] = Interval(c.value, c.ci_low,
                                                                            c.ci_high)
    for key in comparisons:
        comparisons[key].sort(key=lambda c: (c.a, c.b))
    out = {name: found for name, found in (("king", king), ("jack", jack), ("auc", auc),
                                            ("comparisons", comparisons),
                                            ("correlation", correlation)) if found}
    if n_subsets:
        out["subsets_kept"] = (kept + 1, n_subsets + 1)
    return out


def _n_groups(qarla, tasks) -> int:
    """How many groups the statistics of the run make (0: unknown)."""
    if tasks is None:
        return 0
    n = 0
    for t in tasks:
        criteria = len(t.judgments)
        # king, jack, HBR's correlations, metric_eval, (QARLA) the best
        # set's correlations; each criterion's AUC and chance baseline
        n += 2 + (2 + 2 * criteria if criteria else 0)
        if qarla is not None and criteria:
            n += 1
    return n


#: a group's cost in seconds of one core, per kind (the second part of its
#: key), measured on a task of 10 SummEval topics (16 systems, 61 measures,
#: 4 criteria, 1,000 replicates; replayed by devtools/replay_statistics.py,
#: 2026-11-28, after the compiled kernels): what :func:`group_costs`
#: spreads the groups over the partitions by (only their balance depends on
#: it, never a value)
GROUP_SECONDS = {"meta": 0.35, "king": 0.105, "corr": 0.056, "hcorr": 0.042, "chance": 0.031,
                 "auc": 0.007, "jack": 0.003}


def group_costs(tasks, ctx: StatisticsRun) -> Dict[str, float]:
    """The statistics' groups of the run by key and their estimated costs:
    :data:`GROUP_SECONDS` of the kind, × (topics + 10) / 20 of the task
    (a group's replicates are over its topics; a part of its cost is not).
    Empty without the tasks' description."""
    out: Dict[str, float] = {}
    q = ctx.qarla
    for t in tasks or ():
        size = (t.n_topics + 10) / 20
        criteria = sorted(t.judgments) if ctx.judged else []
        kinds: List[tuple] = []
        if q is not None:
            kinds += [("king",), ("jack",)]
            plan, labels = q.plans.get(t.task), q.detailed.get(t.task, ())
            if criteria and plan is not None and plan.best in labels:
                kinds.append(("corr", labels.index(plan.best)))
        if criteria:
            kinds.append(("meta",))
            kinds += [("chance", c) for c in criteria]
            if ctx.hbr is not None:
                kinds.append(("hcorr",))
                kinds += [("auc", c) for c in criteria]
        for kind in kinds:
            out[rd.key_of(t.task, *kind)] = GROUP_SECONDS[kind[0]] * size
    return out


def _qarla_context(qarla, config) -> QarlaContext:
    """What the groups read of the QARLA stage's result: a few names per
    task (each task's KING group makes its subsets: task_catalogue)."""
    return QarlaContext(
        first=tuple(s.label for s in qarla.first),
        first_sizes=tuple(s.size for s in qarla.first),
        requested=tuple(s.label for s in qarla.requested),
        detailed={task: tuple(s.label for s in sets) for task, sets in qarla.detailed.items()},
        plans={task: TaskSets(tuple(r.label for r in p.representatives), p.best.label,
                              p.best_single.label) for task, p in qarla.plans.items()},
        triples=getattr(config, "triples", "standard"))


def _hbr_context(hbr) -> HbrContext:
    """What the groups read of the HBR stage's result: its measures, its
    set's label, each (task, criterion)'s comparisons."""
    return HbrContext(tuple(hbr.measures) + (HBR,), hbr.measure_set.label,
                      {(task, c): HbrPlan(HBR, a.best[0], a.median[0])
                       for task, cs in hbr.auc.items() for c, a in cs.items()})


def _union(spark, sources):
    """The parts' records as one input: each part's map side only reads
    cached records and filters them — a few tasks each, not one per
    partition of every part (176 tasks of 25 ms with the 16-core plan on
    SummEval); coalesced under the union (a coalesce right under the
    reduce's shuffle would be dropped). Each part :func:`~qarla_spark.spark.
    rounds.detached` first: the union, the reduces and their persists are
    then planned over four scans, not over the QARLA and HBR stages' whole
    plans again at each step. The first part (the QARLA stage's records, the
    largest) keeps at least two partitions where there are two cores: parts
    each coalesced to one partition have the same partitioning, and Spark's
    union of them is one partition — the map side one task on one core
    (0.6 s reading ~170 MB of cached records at 40 × 10, half of it after)."""
    from qarla_spark.spark.partitioning import topic_partitions
    cores = topic_partitions(spark)
    share = max(1, cores // len(sources))
    sources = [rd.detached(s) for s in sources]
    inputs = sources[0].coalesce(max(share, min(2, cores)))
    for other in sources[1:]:
        inputs = inputs.unionByName(other.coalesce(share))
    return inputs


def _table_names(ctx: StatisticsRun) -> List[str]:
    """The tables the stage writes, in order (``across`` has rows only with
    two tasks or more)."""
    q, h, meta = ctx.qarla is not None, ctx.hbr is not None, ctx.judged
    names = (["king_ci", "jack_ci"] if q else []) + (["auc_ci"] if h else []) + \
        ["comparisons"] + (["correlation_ci", "metric_eval", "rater_agreement"] if meta
                           else []) + \
        (["metric_ranks"] if q or meta else [])
    if meta and q:
        names.append("king_vs_judges")
    return names + ["across"]


def _gather(result: StatisticsResult, reduced) -> None:
    """What the run prints, from the groups' ``driver`` records (small: a
    few intervals a task)."""
    for _, _, (key, value) in rd.collect(reduced, ["driver"]):
        result.pairwise_accuracy.update(value.get("pairwise_accuracy", {}))
        result.king_vs_judges.update(value.get("king_vs_judges", {}))
        result.across.update(value.get("across", {}))
        result.king_chance.update(value.get("king_chance", {}))
        result.rater_alpha.update(value.get("rater_alpha", {}))
        result.king.update(value.get("king", {}))
        result.jack.update(value.get("jack", {}))
        result.auc.update(value.get("auc", {}))
        result.correlation.update(value.get("correlation", {}))
        for k, comparisons in value.get("comparisons", {}).items():
            result.comparisons.setdefault(k, []).extend(comparisons)
        if "subsets_kept" in value:
            result.subsets_kept[key] = value["subsets_kept"]


class StatisticsInputs(NamedTuple):
    """What the statistics stage reduces: the QARLA and HBR stages' kept
    records of its kinds (``records``, lazy), what every group reads
    (``ctx``), the reduce's partitions and each group's (``placement``)."""

    records: Any
    ctx: StatisticsRun
    n_reduce: int
    placement: Dict[str, int]


def statistics_inputs(qarla, hbr, judgments, config, tasks=None,
                      ratings=None) -> Optional[StatisticsInputs]:
    """The statistics stage's inputs (:class:`StatisticsInputs`; None when
    neither stage kept records): what :func:`run_statistics` reduces, and
    what ``devtools.replay_statistics`` replays group by group."""
    from qarla_spark.spark.partitioning import topic_partitions
    n, seed = config.bootstrap, config.seed
    sources, q_ctx, h_ctx, spark = [], None, None, None
    if qarla is not None and qarla.records is not None:
        q_ctx = _qarla_context(qarla, config)
        sources.append(rd.of_kinds(qarla.records, list(FROM_QARLA)))
        spark = qarla.records.sparkSession
    if hbr is not None and hbr.records is not None and judgments is not None:
        h_ctx = _hbr_context(hbr)
        sources.append(rd.of_kinds(hbr.records, list(FROM_HBR)))
        sources.append(judgment_records(judgments, "hcorr"))
        spark = hbr.records.sparkSession
    if not sources:
        return None
    if ratings is not None and judgments is not None:
        # the agreement among named raters: one small group a task; and the
        # judge-based groups, whose intervals draw the raters too (unit
        # ``raters``: none without named raters)
        corr = {task: (q_ctx.detailed[task].index(p.best),)
                for task, p in (q_ctx.plans.items() if q_ctx is not None else ())
                if p.best in q_ctx.detailed.get(task, ())}
        sources.append(rating_records(ratings, ("alpha", "meta") + (("hcorr",) if h_ctx
                                                                     else ()), corr))
    inputs = _union(spark, sources)
    if q_ctx is not None:
        n_tasks = len(q_ctx.plans)
    elif tasks is not None:
        n_tasks = len(tasks)
    elif h_ctx is not None:
        n_tasks = judgments.select("task").distinct().count()
    else:
        n_tasks = 0
    plans = qarla.plans if q_ctx is not None else {}
    ctx = StatisticsRun(
        seed=seed, n=n, judged=judgments is not None, qarla=q_ctx, hbr=h_ctx,
        wanted=tuple(sorted({p.best.label for p in plans.values()}
                            | {p.best_single.label for p in plans.values()})),
        best={task: p.best.label for task, p in plans.items()},
        best_single={task: p.best_single.label for task, p in plans.items()},
        n_tasks=n_tasks)
    n_groups = _n_groups(qarla, tasks)
    # four partitions a core's share: the groups' costs differ (a task's
    # metric_eval group is ~0.4 s on 40 × 10 SummEval topics, a correlation
    # group 0.05 s)
    n_reduce = max(1, min(n_groups, 4 * topic_partitions(spark))) if n_groups \
        else topic_partitions(spark)
    # the groups spread by their costs, not by their keys' hashes (a
    # metric_eval group costs 40 AUC groups): the longest partition is
    # close to the mean (the 16-core plan's critical path)
    placement = rd.placement_by_cost(group_costs(tasks, ctx), n_reduce)
    return StatisticsInputs(inputs, ctx, n_reduce, placement)


def run_statistics(qarla, hbr, judgments, config, tasks=None, ratings=None) -> StatisticsResult:
    """Intervals and paired tests for what the QARLA stage (``qarla``, a
    :class:`~qarla_spark.stages.qarla.QarlaResult`, or None) and the HBR
    stage (``hbr`` or None) found; ``config.bootstrap`` replicates (and as
    many sign patterns), seeded by ``config.seed``. ``tasks``: the
    testbed's description (its tasks' criteria; without it, the HBR
    correlations are not computed). One reduce per (task, statistic) over
    the stages' per-topic records: one Spark job (and one more over its
    across-task records for a run of two tasks or more). ``ratings``: each
    rater's judgments (``judgments/``), for the agreement among the raters
    (rater_agreement/; none without named raters)."""
    from qarla_spark.spark.partitioning import topic_partitions
    result = StatisticsResult({}, config.bootstrap, config.seed)
    found = statistics_inputs(qarla, hbr, judgments, config, tasks, ratings)
    if found is None:
        return result
    ctx = found.ctx
    spark = found.records.sparkSession
    context = rd.broadcast(spark, ctx)
    # kept: the driver's records are collected, then the tables written
    reduced = cache.persist(rd.reduce_by_key(found.records, _statistics_reduce, found.n_reduce,
                                             context, found.placement))
    if ctx.n_tasks >= 2:
        # one reduce per across-task basis over what the first reduce's
        # groups kept: a second job, for runs of two tasks or more
        n_across = max(1, min(8, topic_partitions(spark)))
        later = cache.persist(rd.reduce_by_key(
            rd.of_kinds(reduced, ["x_king", "x_pa"]), _across_reduce, n_across, context,
            rd.placement_by_cost(across_costs(tasks), n_across)))
        reduced = reduced.unionByName(later)
    result.tables.update(rd.records_tables(reduced, _table_names(ctx)))
    _gather(result, reduced)
    return result
