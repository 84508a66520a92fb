"""The HBR stage (SPEC §8-9) over a topic cube, every task at once.

One per-topic kernel gives each summary's scores and each ordered pair's G
and L masks (no shuffle); the sample is, per task, the n pairs with the
smallest seeded hash (a Spark window); the sample's (G, L) masks, counted
per distinct pair of masks, are small (at most n rows per task) and go to
the executors with the kernel that counts, for each distinct needed set S,
the sampled pairs it splits — H(S) = that count / n, kept as integers; HBR
and its system scores are exact means of those ratios
(:func:`~qarla_spark.spark.grouped.exact_mean`), the AUC tables ratios of
integer sums (:mod:`~qarla_spark.stages.auc`). The text the run prints is
in :mod:`qarla_spark.summary`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Sequence, Tuple

import numpy as np

from qarla_spark.measures import agreement, exact
from qarla_spark.measures.hbr import (complement, hbr_measures, pair_masks, split_counts,
                                      topic_scores)
from qarla_spark.measures.metric_sets import MetricSet
from qarla_spark.spark import cache
from qarla_spark.spark.cube import Topic, TopicCube
from qarla_spark.spark.grouped import exact_mean, per_group
from qarla_spark.stages.auc import (HBR, auc_table, hetero_curve_table, long_scores,
                                    robustness_table, topic_auc)

SCORE_SCHEMA = "task string, topic string, summarizer string, role string, x array<double>"
PAIR_SCHEMA = ("task string, topic string, s string, s2 string, g array<long>, l array<long>, "
               "need array<long>")
HETERO_SCHEMA = ("task string, need array<long>, measure_set string, h double, "
                 "std_error double, n_pairs long, exact boolean, n_split long")


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
    #: what the statistics stage resamples: per-topic AUC counts, the pairs
    #: with their H, the summaries' scores
    per_topic_auc: Any = None
    pairs: Any = None
    hetero: Any = None
    scores: Any = None

    @property
    def measure_set(self) -> MetricSet:
        return MetricSet(self.measures)

    def info(self) -> Dict[str, Any]:
        """The ``hbr`` entry of ``run.json``."""
        return {"measures": list(self.measures), "n_measures": len(self.measures),
                **self.settings,
                "samples": {t: {"n_pairs": s.n_pairs, "total_pairs": s.total, "exact": s.exact}
                            for t, s in sorted(self.samples.items())},
                "auc": {t: {c: {"hbr": a.hbr, "best_single": list(a.best),
                                "median_single": list(a.median),
                                "worst_single": list(a.worst)} for c, a in sorted(cs.items())}
                        for t, cs in sorted(self.auc.items())}}


def summary_scores(cube: TopicCube, measures: Sequence[str], aggregate: str = "mean",
                   models: bool = False):
    """(task, topic, summarizer, role, x) — x[j] = measures[j](summarizer)."""
    import pandas as pd
    idx = list(cube.indices(measures))

    def kernel(topic: Topic):
        who, x = topic_scores(topic.roles, topic.values, idx, aggregate, models)
        if not len(who):
            return None
        return pd.DataFrame({"task": topic.task, "topic": topic.topic,
                             "summarizer": topic.names[who], "role": topic.roles[who],
                             "x": list(x)})

    return cube.map_topics(kernel, SCORE_SCHEMA)


def summary_pairs(cube: TopicCube, measures: Sequence[str], aggregate: str = "mean",
                  models: bool = False):
    """(task, topic, s, s2, g, l, need) for every ordered pair of scored
    summaries: G and L masks and the set HBR needs, X ∖ L."""
    import pandas as pd
    idx = list(cube.indices(measures))
    k = len(idx)

    def kernel(topic: Topic):
        who, x = topic_scores(topic.roles, topic.values, idx, aggregate, models)
        if len(who) < 2:
            return None
        i, j, g, l = pair_masks(x)
        names = topic.names
        return pd.DataFrame({"task": topic.task, "topic": topic.topic, "s": names[who[i]],
                             "s2": names[who[j]], "g": list(g), "l": list(l),
                             "need": list(complement(l, k))})

    return cube.map_topics(kernel, PAIR_SCHEMA)


def sample_pairs(pairs, n_pairs: int, seed: int, exact_mode: bool = False):
    """The pairs H is estimated on: all (``exact_mode``) or, per task, the
    ``n_pairs`` with the smallest seeded 64-bit hash of (task, topic, s, s2)
    — a uniform sample without replacement, the same for the same seed
    whatever the partitioning."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    if exact_mode:
        return pairs
    key = F.xxhash64(F.lit(int(seed)), "task", "topic", "s", "s2")
    w = Window.partitionBy("task").orderBy(key, "topic", "s", "s2")
    return pairs.withColumn("_r", F.row_number().over(w)).filter(F.col("_r") <= n_pairs) \
        .drop("_r")


def mask_counts(table) -> Dict[str, Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per task, in task order: the distinct (G, L) mask rows of its
    sample and how many sampled pairs have each, as int64 arrays (g and l
    of shape (rows, words), sorted by g then l), from an Arrow table
    (task, g, l, c). Made from Arrow's columns, not from a Python row per
    pair of masks: they reach the driver, at most the sample size per
    task."""
    import pyarrow.compute as pc
    if table.num_rows == 0:
        return {}
    table = table.combine_chunks()

    def words(column):
        flat = np.asarray(pc.list_flatten(column), dtype=np.int64)
        return flat.reshape(table.num_rows, -1)
    g, l = words(table["g"]), words(table["l"])
    c = np.asarray(table["c"], dtype=np.int64)
    tasks = pc.dictionary_encode(table["task"]).chunk(0)
    codes = np.asarray(tasks.indices, dtype=np.int64)
    names = tasks.dictionary.to_pylist()
    out: Dict[str, Tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for name in sorted(names):
        rows = np.flatnonzero(codes == names.index(name))
        # by g, then l (lexsort: the last key first)
        rows = rows[np.lexsort([*l[rows].T[::-1], *g[rows].T[::-1]])]
        out[name] = (g[rows], l[rows], c[rows])
    return out


def heterogeneity(pairs, sample, measures: Sequence[str], exact_mode: bool):
    """(rows, samples): the heterogeneity rows (HETERO_SCHEMA) of every
    distinct set HBR needs — h = n_split / n_pairs — and, per task, the
    :class:`Sample` H rests on. The sample's masks, counted per distinct
    (G, L), reach the driver (at most the sample size per task) and are
    shipped with the counting kernel."""
    import pandas as pd
    from pyspark.sql import functions as F

    from qarla_spark.measures.masks import set_indices
    from qarla_spark.spark.grouped import empty_frame
    from qarla_spark.spark.partitioning import topic_partitions

    spark = pairs.sparkSession
    counted = sample.groupBy("task", "g", "l").agg(F.count(F.lit(1)).alias("c"))
    per_task = mask_counts(counted.toArrow())
    totals = {r["task"]: int(r["n"]) for r in
              pairs.groupBy("task").agg(F.count(F.lit(1)).alias("n")).collect()}
    samples: Dict[str, Sample] = {}
    for task, (_, _, c) in per_task.items():
        n = int(c.sum())
        # a sample that holds every pair of its task is exact (no sampling error)
        samples[task] = Sample(n, totals[task], exact_mode or n >= totals[task])
    names = tuple(measures)
    k = len(names)
    complete = {t: s.exact for t, s in samples.items()}

    def run(batches):
        for pdf in batches:
            parts = []
            for task, part in pdf.groupby("task", sort=False):
                g, l, c = per_task[task]
                need = np.stack(part["need"].to_numpy()).astype(np.int64)
                n = int(c.sum())
                n_split = split_counts(need, g, l, c)
                h = n_split / n
                se = np.zeros_like(h) if complete[task] else np.sqrt(h * (1 - h) / n)
                parts.append(pd.DataFrame({
                    "task": task, "need": list(need),
                    "measure_set": [MetricSet.from_indices([i for i in idx if i < k], names).label
                                    for idx in set_indices(need)],
                    "h": h, "std_error": se, "n_pairs": n, "exact": complete[task],
                    "n_split": n_split}))
            yield pd.concat(parts, ignore_index=True) if parts else empty_frame(HETERO_SCHEMA)

    if not per_task:
        return spark.createDataFrame([], HETERO_SCHEMA), samples
    needed = (pairs.select("task", "need").distinct()
              .repartition(topic_partitions(spark), "task", "need"))
    return (needed.filter(F.col("task").isin(list(per_task))).mapInPandas(run, HETERO_SCHEMA),
            samples)


def hbr_table(pairs, hetero, measure_set: MetricSet):
    """The ``hbr/`` table: task, topic, summarizer, measure_set, hbr (the
    exact mean of H over the summary's pairs), std_error — the mean of the
    standard errors of the H it averages (a bound on HBR's sampling error,
    reached if their errors were perfectly correlated; 0 when exact)."""
    schema = "task string, topic string, summarizer string, hbr double, std_error double"
    joined = pairs.join(hetero.select("task", "need", "n_split", "n_pairs", "std_error"),
                        ["task", "need"]).select("task", "topic", "s", "n_split", "n_pairs",
                                                 "std_error")

    def rows(key, frame):
        hbr = exact.mean(exact.ratio(a, b) for a, b in zip(frame["n_split"], frame["n_pairs"]))
        se = exact.mean(exact.real(v) for v in frame["std_error"])
        return [(*key, exact.to_float(hbr), exact.to_float(se))]

    from pyspark.sql import functions as F
    return (per_group(joined, ["task", "topic", "s"], rows, schema)
            .select("task", "topic", "summarizer", F.lit(measure_set.label).alias("measure_set"),
                    "hbr", "std_error"))


def hbr_systems(pairs, hetero, scores, measure_set: MetricSet):
    """The ``hbr_systems/`` table: a summarizer's mean HBR over its topics
    (exact: H averaged over a summary's pairs, then over topics)."""
    from pyspark.sql import functions as F
    roles = scores.select("task", "topic", F.col("summarizer").alias("s"), "role")
    joined = (pairs.join(hetero.select("task", "need", "n_split", "n_pairs"), ["task", "need"])
              .join(roles, ["task", "topic", "s"]).withColumnRenamed("s", "summarizer"))
    return (exact_mean(joined, ["task", "summarizer", "role"], "hbr", num="n_split",
                       den="n_pairs", within=["topic"])
            .select("task", "summarizer", "role", F.lit(measure_set.label).alias("measure_set"),
                    "hbr"))


def hbr_correlations(systems, judgments, measure_set: MetricSet):
    """``hbr_correlations/``: system level Pearson, Spearman, Kendall of HBR
    system scores with each system's mean human score."""
    from pyspark.sql import functions as F
    human = exact_mean(judgments, ["task", "summarizer", "criterion"], "y", value="score")
    joined = systems.join(human, ["task", "summarizer"])
    schema = ("task string, criterion string, pearson double, spearman double, "
              "kendall double")

    def rows(key, frame):
        return [(*key, *agreement.correlations(list(frame["summarizer"]), frame["hbr"],
                                               frame["y"]))]

    return (per_group(joined, ["task", "criterion"], rows, schema)
            .select("task", F.lit(measure_set.label).alias("measure_set"), "criterion",
                    F.lit("system").alias("level"), "pearson", "spearman", "kendall"))


def _auc_summaries(auc) -> Dict[str, Dict[str, AucSummary]]:
    from pyspark.sql import functions as F
    by: Dict[tuple, Dict[str, float]] = {}
    for r in (auc.filter(F.col("scope") == "all")
              .select("task", "criterion", "measure", "auc").collect()):
        by.setdefault((r["task"], r["criterion"]), {})[r["measure"]] = r["auc"]
    out: Dict[str, Dict[str, AucSummary]] = {}
    for (task, criterion), values in sorted(by.items()):
        singles = {m: v for m, v in values.items() if m != HBR}
        if not singles or HBR not in values:
            continue
        ranked = sorted(singles, key=lambda m: (-singles[m], m))
        best = ranked[0]
        worst = min(singles, key=lambda m: (singles[m], m))
        median = ranked[len(ranked) // 2]
        out.setdefault(task, {})[criterion] = AucSummary(
            values[HBR], (best, singles[best]), (worst, singles[worst]),
            (median, singles[median]))
    return out


def run_hbr(cube: TopicCube, judgments, config) -> HbrResult:
    """HBR of every scored summary, the heterogeneity of every set it needs,
    system scores and, when there are judgments, the AUC tables and the
    system-level agreement of HBR with each criterion. ``config`` gives
    ``hbr_measures``, ``hbr_pairs``, ``hbr_exact``, ``seed``,
    ``hbr_aggregate`` and ``hbr_models``."""
    measures = tuple(hbr_measures(cube.metrics, list(config.hbr_measures) or None))
    named = MetricSet(measures)
    aggregate, models = config.hbr_aggregate, config.hbr_models
    scores = cache.persist(summary_scores(cube, measures, aggregate, models))
    pairs = cache.persist(summary_pairs(cube, measures, aggregate, models))
    sample = sample_pairs(pairs, config.hbr_pairs, config.seed, config.hbr_exact)
    hetero, samples = heterogeneity(pairs, sample, measures, config.hbr_exact)
    hetero = cache.persist(hetero)
    hbr = cache.persist(hbr_table(pairs, hetero, named))
    systems = cache.persist(hbr_systems(pairs, hetero, scores, named))
    tables = {"hbr": hbr, "heterogeneity": hetero, "hbr_systems": systems}
    settings = {"pairs": None if config.hbr_exact else config.hbr_pairs,
                "exact": config.hbr_exact, "seed": config.seed, "aggregate": aggregate,
                "models": models}
    result = HbrResult(tables, measures, samples, settings=settings, pairs=pairs,
                       hetero=hetero, scores=scores)
    if judgments is not None:
        long = long_scores(scores, measures, hbr)
        per_topic = cache.persist(topic_auc(long, judgments))
        auc = cache.persist(auc_table(per_topic))
        tables.update({"auc": auc, "robustness": robustness_table(per_topic),
                       "hetero_curve": hetero_curve_table(pairs, hetero, judgments),
                       "hbr_correlations": hbr_correlations(systems, judgments, named)})
        result.auc = _auc_summaries(auc)
        result.per_topic_auc = per_topic
    return result
