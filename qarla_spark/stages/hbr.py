"""The HBR stage (SPEC §8-9) over a topic cube, every task at once, in two
rounds (:mod:`qarla_spark.spark.rounds`):

1. per topic, each scored summary's measures and each ordered pair's G and
   L masks and sampling key (Spark's ``xxhash64(seed, task, topic, s,
   s2)``), the topic's pairs with the smallest keys; per task, the sample —
   the ``n`` pairs with the smallest keys, (key, topic, s, s2) ascending, a
   uniform sample without replacement, the same for the same seed whatever
   the partitioning — counted per distinct (G, L);
2. per topic (the task's sample at hand, a broadcast variable), H of the
   set each pair needs, X ∖ L, as integer counts (pairs split / n), HBR of
   each summary as an exact mean, the AUC counts of every measure and of
   HBR; per task, the heterogeneity table, system scores, the pooled AUC
   tables, robustness, the heterogeneity curve and the agreement of HBR
   with each criterion.

Every value is exact or a ratio of integer sums, so the tables do not
depend on the partitioning. The text the run prints is in
:mod:`qarla_spark.summary`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from qarla_spark.errors import ConfigError
from qarla_spark.measures import agreement, exact
from qarla_spark.measures import human as hu
from qarla_spark.measures.hbr import (auc_counts, complement, ntile, pair_keys,
                                      pair_masks, smallest_pairs, split_counts, topic_scores)
from qarla_spark.measures.metric_sets import MetricSet
from qarla_spark.names import HBR
from qarla_spark.spark import cache
from qarla_spark.spark import rounds as rd
from qarla_spark.stages.cube import TopicCube, topic_of
from qarla_spark.stages.records import (AucRow, AucTopic, CorrelationsRow, CurveTopic,
                                        EveryPair, HbrFound, HbrMeta, HbrRow, HbrSystemRow,
                                        HbrTopic, NeedCounts, PairSample, SampledPairs,
                                        TopicAucRow)
from qarla_spark.stages.statistics_inputs import (StatisticsContext, judgment_records,
                                                  statistics_wanted, with_statistics)


@dataclass(frozen=True)
class Sample:
    """The pairs H was estimated on, for one task."""

    n_pairs: int        # pairs in the sample
    total: int          # ordered pairs of scored summaries in the task
    exact: bool         # the sample holds every pair (no sampling error)


@dataclass(frozen=True)
class AucSummary:
    """Pooled AUC of HBR and of the best, median and worst single measures
    (ties: name order; median: the lower middle one) for one task and
    criterion."""

    hbr: float
    best: Tuple[str, float]
    worst: Tuple[str, float]
    median: Tuple[str, float]


@dataclass
class HbrResult:
    tables: Dict[str, Any]
    measures: Tuple[str, ...]
    samples: Dict[str, Sample]
    auc: Dict[str, Dict[str, AucSummary]] = field(default_factory=dict)
    settings: Dict[str, Any] = field(default_factory=dict)
    #: the per-topic records of the second round (kept on the executors):
    #: ``auc_topic`` (every measure's AUC counts per topic and criterion) and
    #: ``hbr_x`` (each summary's HBR as a ratio), read by the statistics stage
    records: Any = None
    #: how many tasks the cube's topics belong to (when known)
    n_tasks: Optional[int] = None

    @property
    def measure_set(self) -> MetricSet:
        return MetricSet(self.measures)

    def info(self, config=None) -> Dict[str, Any]:
        """The ``hbr`` entry of ``run.json`` (``config``: unused; every
        stage's result takes it)."""
        return {"measures": list(self.measures), "n_measures": len(self.measures),
                **self.settings,
                "samples": {t: {"n_pairs": s.n_pairs, "total_pairs": s.total, "exact": s.exact}
                            for t, s in sorted(self.samples.items())},
                "auc": {t: {c: {"hbr": a.hbr, "best_single": list(a.best),
                                "median_single": list(a.median),
                                "worst_single": list(a.worst)} for c, a in sorted(cs.items())}
                        for t, cs in sorted(self.auc.items())}}


# ---------------------------------------------------------------------------
# per topic
# ---------------------------------------------------------------------------

def hbr_measures(metrics: Sequence[str], chosen=None) -> List[str]:
    """The measure set: ``chosen`` (names or patterns, resolved against the
    similarity table's metrics) or, by default, the R, Rpre and F variants
    present plus every metric that is not built in (bring-your-own)."""
    from fnmatch import fnmatch

    from qarla_spark.metrics import registry
    metrics = list(metrics)
    if chosen:
        out: List[str] = []
        for item in registry.split_names(chosen):
            found = [m for m in metrics if fnmatch(m, item)]
            if not found:
                raise ConfigError(f"--hbr-measures: {item!r} matches no metric of the "
                                  "similarity table")
            out += [m for m in found if m not in out]
        return out
    keep = [m for m in metrics
            if m not in registry.BUILTIN or registry.BUILTIN[m].family in ("rouge", "f")]
    if not keep:
        raise ConfigError("no HBR measure: the similarity table has no R, Rpre or F metric "
                          "(choose some with --hbr-measures)")
    return keep


# ---------------------------------------------------------------------------
# the rounds' contexts (broadcast)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class HbrSample:
    """Round 1, the sample of pairs: the HBR measures' metric indices in the
    cube, a summary's score over the models (``aggregate``), whether the
    models are scored too (``models``), every pair (``exact``) or a sample
    of ``n_pairs`` keyed by ``seed``."""

    idx: List[int]
    aggregate: str
    models: bool
    exact: bool
    n_pairs: int
    seed: int


@dataclass(frozen=True)
class HbrRound(HbrSample):
    """Round 2, HBR and AUC: round 1's and each task's sample (``samples``),
    the measures and their set's label, whether the run has judgments, the
    heterogeneity curve's bins, what the statistics read (None: no
    statistics)."""

    samples: Dict[str, PairSample] = field(default_factory=dict)
    measures: Tuple[str, ...] = ()
    label: str = ""
    judged: bool = False
    bins: int = 100
    statistics: Optional[StatisticsContext] = None


def _scored(row, ctx: "HbrSample"):
    """(topic, who, x, pairs) of a cube row: the scored summaries, their
    measures and, with two or more, the ordered pairs (i, j, G, L)."""
    topic = topic_of(row)
    who, x = topic_scores(topic.roles, topic.values, ctx.idx, ctx.aggregate,
                          ctx.models)
    pairs = pair_masks(x) if len(who) >= 2 else None
    return topic, who, x, pairs


def _sample_kernel(row, ctx: "HbrSample"):
    topic, who, x, pairs = _scored(row, ctx)
    if pairs is None:
        return []
    i, j, g, l = pairs
    names = topic.names[who]
    task = topic.task
    if ctx.exact:
        gl = np.concatenate([g, l], axis=1)
        distinct, counts = np.unique(gl, axis=0, return_counts=True)
        return [(task, "pairs", EveryPair(len(i), distinct, counts.astype(np.int64)))]
    keys = pair_keys(ctx.seed, task, topic.topic, names[i], names[j])
    order = smallest_pairs(keys, np.full(len(keys), topic.topic, dtype=object), names[i],
                           names[j], ctx.n_pairs)
    return [(task, "pairs", SampledPairs(len(i), topic.topic, keys[order], names[i][order],
                                         names[j][order], g[order], l[order]))]


def _sample_reduce(task, items, ctx: "HbrSample"):
    parts = [v for k, v in items if k == "pairs"]
    total = int(sum(v.total for v in parts))
    if not parts:
        return []
    words = parts[0].g.shape[1] if not ctx.exact else parts[0].gl.shape[1] // 2
    if ctx.exact:
        gl = np.concatenate([v.gl for v in parts])
        c = np.concatenate([v.c for v in parts])
        distinct, inverse = np.unique(gl, axis=0, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=c, minlength=len(distinct)).astype(np.int64)
    else:
        keys = np.concatenate([v.key for v in parts])
        topics = np.concatenate([np.full(len(v.key), v.topic, dtype=object) for v in parts])
        s = np.concatenate([v.s for v in parts])
        s2 = np.concatenate([v.s2 for v in parts])
        order = smallest_pairs(keys, topics, s, s2, ctx.n_pairs)
        gl = np.concatenate([np.concatenate([v.g for v in parts]),
                             np.concatenate([v.l for v in parts])], axis=1)[order]
        distinct, counts = np.unique(gl, axis=0, return_counts=True)
        counts = counts.astype(np.int64)
    n = int(counts.sum())
    return [(task, "sample", PairSample(distinct[:, :words], distinct[:, words:], counts, n,
                                        total, bool(ctx.exact or n >= total)))]


def _measure_label(need_words, names: Sequence[str]) -> List[str]:
    """The label of each set given as a row of mask words over ``names``
    (MetricSet's: the names sorted, joined), the rows' bits read at once."""
    from qarla_spark.measures.masks import WORD_BITS, unpack
    from qarla_spark.names import SEPARATOR
    words = np.asarray(need_words, dtype=np.int64)
    k = len(names)
    if not len(words):
        return []
    if not words.size:
        return [MetricSet([]).label for _ in range(len(words))]
    words = words.reshape(len(words), -1)
    bits = unpack(words, words.shape[1] * WORD_BITS)[:, :k]
    by_name = sorted(range(k), key=lambda i: names[i])     # MetricSet's order
    ordered = np.asarray([names[i] for i in by_name], dtype=object)
    chosen = bits[:, by_name]
    return [SEPARATOR.join(ordered[row]) for row in chosen]


def _hbr_kernel(row, ctx: "HbrRound"):
    task = row["task"]
    sample = ctx.samples.get(task)
    topic, who, x, pairs = _scored(row, ctx)
    if pairs is None or sample is None:
        return []
    names, roles = topic.names[who], topic.roles[who]
    i, j, g, l = pairs
    n = sample.n
    need = complement(l, len(ctx.measures))
    distinct, inverse = np.unique(need, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    n_split_u = split_counts(distinct, sample.g, sample.l, sample.c)
    h_u = n_split_u / n
    se_u = np.zeros_like(h_u) if sample.exact else np.sqrt(h_u * (1 - h_u) / n)
    n_split = n_split_u[inverse]
    hbr_rows, x_rows = _summary_hbr(task, topic.topic, names, roles, ctx.label, i, n,
                                    n_split, se_u[inverse])
    import pandas as pd
    hbr_frame = pd.DataFrame.from_records(hbr_rows, columns=list(HbrRow._fields))
    out = [(task, "hbr", hbr_frame),
           (task, "hbr_x", HbrTopic(topic.topic, x_rows,
                                    # the judged summaries' measures, for metric_eval/
                                    HbrMeta(list(names), list(roles), x, topic.judged)
                                    if ctx.statistics is not None and topic.judged is not None
                                    else None)),
           (task, "needs", NeedCounts(distinct, n_split_u))]
    if topic.judged is not None:
        out += _judged_records(task, topic, names, x, hbr_rows, i, j, n_split)
    return with_statistics(out, ctx.statistics)


def _summary_hbr(task, topic, names, roles, label, i, n, n_split, se):
    """(``hbr/`` rows, (name, role, num, den) ratios) of a topic's scored
    summaries ``names``: HBR of each, the exact mean of H over its pairs
    (``i``: each pair's first summary; ``n_split`` and ``se``: each pair's
    split count of the ``n`` sampled pairs and H's standard error)."""
    counts = np.bincount(i, minlength=len(names))
    sums = np.bincount(i, weights=n_split.astype(np.float64), minlength=len(names))
    hbr_rows, x_rows = [], []
    for a in range(len(names)):
        if not counts[a]:
            continue
        mine = i == a
        num, den = int(round(sums[a])), n * int(counts[a])
        hbr = exact.to_float(exact.ratio(num, den))
        std_error = exact.to_float(exact.mean(exact.real(v) for v in se[mine]))
        hbr_rows.append(HbrRow(task, topic, names[a], label, hbr, std_error))
        x_rows.append((names[a], roles[a], num, den))
    return hbr_rows, x_rows


def _judged_records(task, topic, names, x, hbr_rows, i, j, n_split) -> List[tuple]:
    """A judged topic's ``auc_topic`` record (every measure's and HBR's AUC
    counts per criterion) and ``curve`` record (the heterogeneity curve's
    pairs per criterion; none without a pair)."""
    judged = topic.judged
    by_name = {r.summarizer: r.hbr for r in hbr_rows}
    hbr_value = np.asarray([by_name.get(s, np.nan) for s in names], dtype=np.float64)
    values = np.column_stack([x, hbr_value])                   # who × (k + 1)
    at = {s: a for a, s in enumerate(names)}
    pair_at = {(int(p), int(q)): t for t, (p, q) in enumerate(zip(i, j))}
    auc, curve = [], []
    for criterion in sorted(set(judged["criterion"])):
        sel = judged["criterion"] == criterion
        q_of: Dict[str, list] = {}
        for s, q in zip(judged["summarizer"][sel], judged["score"][sel]):
            if s in at:
                q_of.setdefault(s, []).append(float(q))
        scored = sorted(q_of)
        wins2, n_auc = auc_counts(values[[at[s] for s in scored]], [q_of[s] for s in scored])
        if n_auc:
            auc.append((criterion, wins2, n_auc))
        rows = _curve_pairs(scored, q_of, at, pair_at, n_split)
        if rows:
            curve.append((criterion, rows))
    out = [(task, "auc_topic", AucTopic(topic.topic, auc))]
    if curve:
        out.append((task, "curve", CurveTopic(topic.topic, curve)))
    return out


def _curve_pairs(scored, q_of, at, pair_at, n_split) -> List[tuple]:
    """The heterogeneity curve's pairs of one topic and criterion: every
    ordered pair of judged scored summaries and of their judgments,
    (n_split, s, s2, whether s's judgment is at least s2's)."""
    rows = []
    for s in scored:
        for s2 in scored:
            t = pair_at.get((at[s], at[s2])) if s != s2 else None
            if t is None:
                continue
            for q1 in q_of[s]:
                for q2 in q_of[s2]:
                    rows.append((int(n_split[t]), s, s2, q1 >= q2))
    return rows


# ---------------------------------------------------------------------------
# per task
# ---------------------------------------------------------------------------

def _hbr_reduce(task, items, ctx: "HbrRound"):
    """The tables of one task from its topics' records, one function a
    table, and what the run prints (:func:`_auc_summaries`)."""
    sample = ctx.samples[task]
    out = _heterogeneity(task, items, sample, list(ctx.measures))
    systems = _hbr_systems(task, items, ctx.label)
    out.append(rd.table_record(task, "hbr_systems", systems))
    if not ctx.judged:
        return out
    auc_rows, robust_rows = _auc_rows(task, _topic_aucs(items, list(ctx.measures)))
    out += [rd.table_record(task, "auc", auc_rows),
            rd.table_record(task, "robustness", robust_rows),
            rd.table_record(task, "hetero_curve", _hetero_curve(task, items, sample.n,
                                                                ctx.bins)),
            rd.table_record(task, "hbr_correlations",
                            _hbr_correlations(task, items, systems, ctx.label)),
            (task, "driver", HbrFound(_auc_summaries(auc_rows)))]
    return out


def _heterogeneity(task, items, sample: PairSample, measures: List[str]) -> List[tuple]:
    """``heterogeneity/``: every distinct set the task's pairs need (its
    ``needs`` records), H and its standard error (none: no record)."""
    n = sample.n
    needs = {}
    for k, v in items:
        if k == "needs":
            for need, n_split in zip(v.need, v.n_split):
                needs.setdefault(tuple(int(w) for w in need), int(n_split))
    if not needs:
        return []
    keys = sorted(needs)
    need_arr = np.asarray(keys, dtype=np.int64).reshape(len(keys), -1)
    n_split = np.asarray([needs[k_] for k_ in keys], dtype=np.int64)
    h = n_split / n
    se = np.zeros_like(h) if sample.exact else np.sqrt(h * (1 - h) / n)
    import pandas as pd
    return [(task, "heterogeneity", pd.DataFrame({
        "task": task, "need": [list(map(int, w)) for w in need_arr],
        "measure_set": _measure_label(need_arr, measures), "h": h, "std_error": se,
        "n_pairs": np.full(len(keys), n, dtype=np.int64),
        "exact": np.full(len(keys), sample.exact, dtype=bool), "n_split": n_split}))]


def _hbr_systems(task, items, label: str) -> List[HbrSystemRow]:
    """``hbr_systems/``: the exact mean over topics of each summary's HBR
    (its ``hbr_x`` records), rounded once: of the summaries' doubles (num /
    den correctly rounded: ``hbr/``'s, the export's, metric_eval's)."""
    means: Dict[Tuple[str, str], exact.Mean] = {}
    for k, v in items:
        if k == "hbr_x":
            for name, role, num, den in v.rows:
                means.setdefault((name, role), exact.Mean()).add_real(int(num) / int(den))
    return [HbrSystemRow(task, name, role, label, exact.to_float(m.value()))
            for (name, role), m in sorted(means.items())]


def _topic_aucs(items, measures: List[str]) -> List[TopicAucRow]:
    """Every measure's and HBR's AUC counts per topic and criterion (the
    task's ``auc_topic`` records)."""
    per_topic = []
    names = measures + [HBR]
    for k, v in items:
        if k == "auc_topic":
            for criterion, wins2, n_pairs in v.auc:
                for m, w in zip(names, wins2):
                    per_topic.append(TopicAucRow(criterion, v.topic, m, int(w), int(n_pairs)))
    return per_topic


def _hetero_curve(task, items, n: int, n_bins: int) -> List[tuple]:
    """``hetero_curve/``: per criterion, the task's judged pairs (its
    ``curve`` records) by H in ``n_bins`` ntile bins, each bin's mean H
    (of ``n`` sampled pairs) and how often quality increases."""
    by_criterion: Dict[str, list] = {}
    for k, v in items:
        if k == "curve":
            for criterion, rows in v.pairs:
                by_criterion.setdefault(criterion, []).extend(
                    (ns, v.topic, s, s2, up) for ns, s, s2, up in rows)
    curve_rows = []
    for criterion in sorted(by_criterion):
        rows = sorted(by_criterion[criterion], key=lambda r: r[:4])   # not by up
        bins = ntile(len(rows), n_bins)
        # ntile's bins are runs of consecutive rows: each run summed once
        n_split = np.asarray([ns for ns, *_ in rows], dtype=np.int64)
        ups_all = np.asarray([bool(up) for *_, up in rows], dtype=np.int64)
        values, starts, sizes = np.unique(bins, return_index=True, return_counts=True)
        for b, start, size in zip(values, starts, sizes):
            mine = slice(int(start), int(start) + int(size))
            mean_h = exact.to_float(exact.Mean().add_ratio(
                int(n_split[mine].sum()), n, int(size)).value())
            ups = int(ups_all[mine].sum())
            curve_rows.append((task, criterion, int(b), mean_h, ups / int(size)))
    return curve_rows


def _hbr_correlations(task, items, systems: Sequence[HbrSystemRow],
                      label: str) -> List[CorrelationsRow]:
    """``hbr_correlations/``: HBR's system scores against each criterion's
    mean human score (the task's ``judgments`` record)."""
    keys, scores = [], []
    for k, v in items:
        if k == "judgments":
            for name, criterion, score in zip(v.summarizer, v.criterion, v.score):
                keys.append((criterion, name))
                scores.append(float(score))
    # the exact mean of the summaries' readings (issue 39, part 2)
    human = hu.means_by_key(keys, scores)
    corr = []
    for criterion in sorted({c for c, _ in human}):
        who = [(r.summarizer, r.hbr) for r in systems if (criterion, r.summarizer) in human]
        if not who:
            continue
        ys = [human[(criterion, name)] for name, _ in who]
        corr.append(CorrelationsRow(task, label, criterion, "system", *agreement.correlations(
            [name for name, _ in who], [value for _, value in who], ys)))
    return corr


def _auc_summaries(auc_rows: Sequence[AucRow]) -> Dict[str, AucSummary]:
    """What the run prints of a task's AUC: per criterion, HBR's pooled AUC
    and the best, median and worst single measures'."""
    summaries = {}
    for criterion in sorted({r.criterion for r in auc_rows}):
        values = {r.measure: r.auc for r in auc_rows
                  if r.criterion == criterion and r.scope == "all"}
        singles = {m: value for m, value in values.items() if m != HBR}
        if not singles or HBR not in values:
            continue
        ranked = sorted(singles, key=lambda m: (-singles[m], m))
        best = ranked[0]
        worst = min(singles, key=lambda m: (singles[m], m))
        median = ranked[len(ranked) // 2]
        summaries[criterion] = AucSummary(values[HBR], (best, singles[best]),
                                          (worst, singles[worst]), (median, singles[median]))
    return summaries


def _auc_rows(task: str, per_topic: Sequence[TopicAucRow], share: float = 0.1):
    """(``auc/`` rows, ``robustness/`` rows) of one task from its per-topic
    AUC counts: AUC = wins2 / (2·pairs), pooled as ratios of integer
    sums."""
    rows = []
    pooled: Dict[tuple, list] = {}
    margin: Dict[tuple, int] = {}
    for criterion, topic, m, w, p in per_topic:
        rows.append(AucRow(task, criterion, m, topic, w / (2 * p), p))
        acc = pooled.setdefault((criterion, m, "all"), [0, 0])
        acc[0] += w
        acc[1] += p
        if m != HBR:
            key = (criterion, topic)
            margin[key] = min(margin.get(key, w - p), w - p)
    for criterion, topic, m, w, p in per_topic:
        key = (criterion, topic)
        if key not in margin:
            continue
        kind = "consistent" if margin[key] > 0 else "inconsistent"
        acc = pooled.setdefault((criterion, m, kind), [0, 0])
        acc[0] += w
        acc[1] += p
    rows += [AucRow(task, criterion, m, scope, w / (2 * p), p)
             for (criterion, m, scope), (w, p) in sorted(pooled.items())]
    # robustness: per (criterion, topic) the measures ranked by AUC (average
    # ranks), scaled to [0, 1]; per measure the exact mean over its worst
    # ceil(10%) topics (ties between topics by topic id)
    by_topic: Dict[tuple, list] = {}
    for criterion, topic, m, w, p in per_topic:
        by_topic.setdefault((criterion, topic), []).append((m, w / (2 * p)))
    scaled: Dict[tuple, list] = {}
    for (criterion, topic), entries in by_topic.items():
        n = len(entries)
        aucs = np.asarray([a for _, a in entries], dtype=np.float64)
        ordered = np.sort(aucs)
        below = np.searchsorted(ordered, aucs, side="left")     # #{b < a}
        equal = np.searchsorted(ordered, aucs, side="right") - below
        for (m, _), less, same in zip(entries, below.tolist(), equal.tolist()):
            rank = 1 + less
            twice_r = 2 * rank + same - 1
            num, den = (twice_r - 2, 2 * (n - 1)) if n > 1 else (1, 1)
            scaled.setdefault((criterion, m), []).append((num / den, topic, num, den))
    robust = []
    for (criterion, m), entries in sorted(scaled.items()):
        k = math.ceil(len(entries) * share)
        worst = sorted(entries, key=lambda e: (e[0], e[1]))[:k]
        mean = exact.Mean()
        for _, _, num, den in worst:
            mean.add_ratio(num, den)
        robust.append((task, criterion, m, exact.to_float(mean.value())))
    return rows, robust


# ---------------------------------------------------------------------------
# the stage
# ---------------------------------------------------------------------------

def run_hbr(cube: TopicCube, judgments, config) -> HbrResult:
    """HBR of every scored summary, the heterogeneity of every set it needs,
    system scores and, when there are judgments, the AUC tables and the
    system-level agreement of HBR with each criterion. ``config`` gives
    ``hbr_measures``, ``hbr_pairs``, ``hbr_exact``, ``seed``,
    ``hbr_aggregate`` and ``hbr_models``."""
    from qarla_spark.spark.partitioning import topic_partitions
    measures = tuple(hbr_measures(cube.metrics, list(config.hbr_measures) or None))
    named = MetricSet(measures)
    spark = cube.spark
    if judgments is not None:
        cube = cube.with_judgments(judgments)
    n_reduce = topic_partitions(spark)
    if cube.n_tasks:
        n_reduce = max(1, min(cube.n_tasks, n_reduce))
    base = HbrSample(list(cube.indices(measures)), config.hbr_aggregate, config.hbr_models,
                     bool(config.hbr_exact), int(config.hbr_pairs), int(config.seed))
    ctx1 = rd.broadcast(spark, base)
    map1 = rd.over_topics(cube.frame, _sample_kernel, ctx1)
    red1 = rd.reduce_by_key(map1, _sample_reduce, n_reduce, ctx1)
    samples_found = {key: value for key, _, value in rd.collect(red1, ["sample"])}
    samples = {task: Sample(v.n, v.total, v.exact) for task, v in samples_found.items()}

    ctx2 = rd.broadcast(spark, HbrRound(
        **vars(base), samples=samples_found, measures=measures, label=named.label,
        judged=judgments is not None, bins=100,
        statistics=StatisticsContext(judgments is not None) if statistics_wanted(config)
        else None))
    map2 = cache.persist(rd.over_topics(cube.frame, _hbr_kernel, ctx2))
    inputs = rd.of_kinds(map2, ["needs", "hbr_x", "auc_topic", "curve"])
    if judgments is not None:
        inputs = inputs.unionByName(judgment_records(judgments))
    red2 = cache.persist(rd.reduce_by_key(inputs, _hbr_reduce, n_reduce, ctx2))
    # the tables of a few rows per task and the heterogeneity and AUC
    # tables written together by the executors; HBR of each summary on its
    # own
    small = ["hbr_systems"] + (["robustness", "hetero_curve", "hbr_correlations"]
                               if judgments is not None else [])
    found = {key: value for key, _, value in rd.collect(red2, ["driver"])}

    tables = {**rd.records_tables(map2, ["hbr"]),
              **rd.records_tables(red2, ["heterogeneity", *small]
                                  + (["auc"] if judgments is not None else []))}
    settings = {"pairs": None if config.hbr_exact else config.hbr_pairs,
                "exact": config.hbr_exact, "seed": config.seed,
                "aggregate": config.hbr_aggregate, "models": config.hbr_models}
    result = HbrResult(tables, measures, samples, settings=settings, records=map2,
                       n_tasks=cube.n_tasks)
    if judgments is not None:
        result.auc = {task: v.auc for task, v in sorted(found.items()) if v.auc}
    return result
