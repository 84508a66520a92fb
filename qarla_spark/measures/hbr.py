"""Heterogeneity-Based Ranking (SPEC §8, paper 001).

Measures are evaluation scores of a summary against its topic's models:
x(s) = mean (option: max) over the models m ≠ s of x(s, m) — a model is
thus scored against the other models (jackknifed). Peers only, unless
models are asked for.

Heterogeneity of a measure set S, over ordered pairs (u, u') of summaries of
the same topic: with G = {x: x(u) > x(u')} and L = {x: x(u) < x(u')},

    H(S) = P( S ∩ G ≠ ∅  and  S ∩ L ≠ ∅ ),

estimated on a seeded sample of pairs (default 10,000, paper 001 §5.1), or
exactly on all of them; the standard error of a sampled estimate is
sqrt(H(1 − H)/n) (0 when exact). Then

    HBR_X(s) = mean over s' ≠ s of the same topic of H({x ∈ X: x(s) ≥ x(s')}),

and {x: x(s) ≥ x(s')} = X ∖ L(s, s'): the sets HBR needs are the complements
of the pairs' L masks. Masks are arrays of 63-bit words, as in QUEEN.

How it runs: one per-topic kernel over the topic cube gives each summary's
scores and each ordered pair's G and L masks (no shuffle); the sample is the
n pairs of a task with the smallest seeded hash (a Spark window); the
sample's (G, L) masks, counted per distinct pair of masks, are small (at most
n rows per task) and go to the executors with the kernel that counts, for
each distinct needed set S, the sampled pairs it splits; HBR is a join of
the pairs with H(S) and a grouped mean.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np

from qarla_spark.errors import ConfigError
from qarla_spark.measures.masks import pack
from qarla_spark.spark import cache

AGGREGATES = ("mean", "max")
DEFAULT_PAIRS = 10_000


# ---------------------------------------------------------------------------
# pure kernels
# ---------------------------------------------------------------------------

def topic_scores(roles, values, measures: Sequence[int], aggregate: str = "mean",
                 models: bool = False):
    """(summary indices, scores): scores[k, j] = x_j(s_k), the aggregate over
    the topic's models m ≠ s_k of values[s_k, m, measures[j]]; summaries are
    the peers (and the models if ``models``), in index order."""
    roles = np.asarray(roles)
    model_idx = np.flatnonzero(roles == "model")
    who = np.flatnonzero((roles == "peer") | ((roles == "model") & models))
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    v = values[np.ix_(who, model_idx, np.asarray(measures, dtype=np.int64))]  # S × M × X
    # the diagonal (a model against itself) is NaN in the cube: excluded
    import warnings
    with warnings.catch_warnings():   # a topic's only model scored against no one: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.nanmean(v, axis=1) if aggregate == "mean" else np.nanmax(v, axis=1)
    return who, out


def pair_masks(scores):
    """For every ordered pair (i, j), i ≠ j, of rows of ``scores``: indices
    and the packed masks G = {x: x_i > x_j}, L = {x: x_i < x_j}."""
    n = len(scores)
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return i, j, pack(scores[i] > scores[j]), pack(scores[i] < scores[j])


def complement(words, n_measures: int) -> np.ndarray:
    """X ∖ S for mask words over ``n_measures`` measures."""
    from qarla_spark.measures.masks import set_words
    full = np.asarray(set_words(range(n_measures), n_measures), dtype=np.int64)
    return np.asarray(words, dtype=np.int64) ^ full[None, :]


def split_counts(sets, g, l, weights) -> np.ndarray:
    """Σ weights over the pairs (rows of g, l) that S splits (S ∩ G ≠ ∅ and
    S ∩ L ≠ ∅), for each row S of ``sets`` (all mask words)."""
    sets = np.asarray(sets, dtype=np.int64)
    g, l = np.asarray(g, dtype=np.int64), np.asarray(l, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    out = np.zeros(len(sets))
    for lo in range(0, len(sets), 512):
        block = sets[lo:lo + 512]
        hit_g = np.zeros((len(block), len(g)), dtype=bool)
        hit_l = np.zeros((len(block), len(g)), dtype=bool)
        for w in range(sets.shape[1]):
            hit_g |= (block[:, w][:, None] & g[:, w][None, :]) != 0
            hit_l |= (block[:, w][:, None] & l[:, w][None, :]) != 0
        out[lo:lo + 512] = (hit_g & hit_l) @ weights
    return out


def hbr_exact(topics: Sequence[np.ndarray]) -> List[np.ndarray]:
    """HBR of every summary with H over all ordered pairs (pure numpy, the
    kernels the Spark stage uses): ``topics`` are score matrices (summaries
    × measures), one per topic; returns one HBR vector per topic."""
    k = topics[0].shape[1] if len(topics) else 0
    found = [pair_masks(np.asarray(x, dtype=np.float64)) for x in topics]
    g = np.concatenate([f[2] for f in found]) if found else np.zeros((0, 1), np.int64)
    l = np.concatenate([f[3] for f in found]) if found else np.zeros((0, 1), np.int64)
    out = []
    for x, (i, _, _, l_t) in zip(topics, found):
        h = split_counts(complement(l_t, k), g, l, np.ones(len(g))) / len(g)
        out.append(np.array([h[i == a].mean() if (i == a).any() else np.nan
                             for a in range(len(x))]))
    return out


# ---------------------------------------------------------------------------
# Spark
# ---------------------------------------------------------------------------

SCORE_SCHEMA = "task string, topic string, summarizer string, role string, x array<double>"
PAIR_SCHEMA = ("task string, topic string, s string, s2 string, g array<long>, l array<long>, "
               "need array<long>")


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


def summary_scores(cube, metrics: Sequence[str], measures: Sequence[str],
                   aggregate: str = "mean", models: bool = False):
    """(task, topic, summarizer, role, x) — x[j] = measures[j](summarizer)."""
    from qarla_spark.measures.masks import map_topics
    import pandas as pd

    idx = [list(metrics).index(m) for m in measures]

    def kernel(task, topic, names, roles, values):
        who, x = topic_scores(roles, values, idx, aggregate, models)
        if not len(who):
            return None
        return pd.DataFrame({"task": task, "topic": topic, "summarizer": names[who],
                             "role": roles[who], "x": list(x)})

    return map_topics(cube, kernel, SCORE_SCHEMA)


def summary_pairs(cube, metrics: Sequence[str], measures: Sequence[str],
                  aggregate: str = "mean", models: bool = False):
    """(task, topic, s, s2, g, l, need) for every ordered pair of scored
    summaries: G and L masks and the set HBR needs, X ∖ L."""
    from qarla_spark.measures.masks import map_topics
    import pandas as pd

    idx = [list(metrics).index(m) for m in measures]
    k = len(idx)

    def kernel(task, topic, names, roles, values):
        who, x = topic_scores(roles, values, idx, aggregate, models)
        if len(who) < 2:
            return None
        i, j, g, l = pair_masks(x)
        return pd.DataFrame({"task": task, "topic": topic, "s": names[who[i]],
                             "s2": names[who[j]], "g": list(g), "l": list(l),
                             "need": list(complement(l, k))})

    return map_topics(cube, kernel, PAIR_SCHEMA)


def sample_pairs(pairs, n_pairs: int, seed: int, exact: bool = False):
    """The pairs H is estimated on: all (``exact``) or, per task, the
    ``n_pairs`` with the smallest seeded 64-bit hash of (task, topic, s, s2)
    — a uniform sample without replacement, the same for the same seed."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    if exact:
        return pairs
    key = F.xxhash64(F.lit(int(seed)), "task", "topic", "s", "s2")
    w = Window.partitionBy("task").orderBy(key, "topic", "s", "s2")
    return pairs.withColumn("_r", F.row_number().over(w)).filter(F.col("_r") <= n_pairs) \
        .drop("_r")


def heterogeneity(pairs, sample, measures: Sequence[str], exact: bool):
    """The ``heterogeneity/`` rows: task, need (mask words), measure_set, h,
    std_error, n_pairs, exact — for every distinct set HBR needs. The
    sample's masks, counted per distinct (G, L), reach the driver (at most
    the sample size per task) and are shipped with the counting kernel."""
    import pandas as pd
    from pyspark.sql import functions as F

    spark = pairs.sparkSession
    grouped = sample.groupBy("task", "g", "l").agg(F.count(F.lit(1)).alias("c")).collect()
    # a sample that holds every pair of its task is exact (no sampling error)
    totals = {r["task"]: r["n"] for r in
              pairs.groupBy("task").agg(F.count(F.lit(1)).alias("n")).collect()}
    per_task: Dict[str, tuple] = {}
    for task in sorted({r["task"] for r in grouped}):
        rows = [r for r in grouped if r["task"] == task]
        per_task[task] = (np.array([r["g"] for r in rows], dtype=np.int64),
                          np.array([r["l"] for r in rows], dtype=np.int64),
                          np.array([r["c"] for r in rows], dtype=np.float64))
    names = np.asarray(measures, dtype=object)
    k = len(measures)
    schema = ("task string, need array<long>, measure_set string, h double, std_error double, "
              "n_pairs long, exact boolean")

    def names_of(need):
        from qarla_spark.measures.masks import set_indices
        return [",".join(sorted(names[[i for i in idx if i < k]])) for idx in set_indices(need)]

    def run(batches):
        for pdf in batches:
            parts = []
            for task, part in pdf.groupby("task", sort=False):
                g, l, c = per_task[task]
                need = np.stack(part["need"].to_numpy()).astype(np.int64)
                n = c.sum()
                h = split_counts(need, g, l, c) / n
                complete = exact or n >= totals.get(task, np.inf)
                se = np.zeros_like(h) if complete else np.sqrt(h * (1 - h) / n)
                parts.append(pd.DataFrame({
                    "task": task, "need": list(need), "measure_set": names_of(need),
                    "h": h, "std_error": se, "n_pairs": int(n), "exact": bool(complete)}))
            yield pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
                {c: [] for c in ["task", "need", "measure_set", "h", "std_error", "n_pairs",
                                 "exact"]})

    from qarla_spark.spark.partitioning import topic_partitions
    needed = (pairs.select("task", "need").distinct()
              .repartition(topic_partitions(spark), "task", "need"))
    if not per_task:
        return spark.createDataFrame([], schema)
    return needed.filter(F.col("task").isin(list(per_task))).mapInPandas(run, schema)


def hbr_table(pairs, hetero, measure_set: str):
    """The ``hbr/`` table: task, topic, summarizer, measure_set, hbr,
    std_error — the mean of the standard errors of the H it averages (a
    bound on HBR's sampling error, reached if their errors were perfectly
    correlated; 0 in exact mode)."""
    from pyspark.sql import functions as F
    return (pairs.join(hetero.select("task", "need", "h", "std_error"), ["task", "need"])
            .groupBy("task", "topic", F.col("s").alias("summarizer"))
            .agg(F.avg("h").alias("hbr"), F.avg("std_error").alias("std_error"))
            .select("task", "topic", "summarizer", F.lit(measure_set).alias("measure_set"),
                    "hbr", "std_error"))


# ---------------------------------------------------------------------------
# the HBR stage of a run
# ---------------------------------------------------------------------------

class HbrRun:
    """Tables (lazy DataFrames) and the printed summary of the HBR stage."""

    def __init__(self, tables, lines, info):
        self.tables, self.lines, self.info = tables, lines, info


def run_hbr(cube, metrics: Sequence[str], judgments=None, measures=None,
            n_pairs: int = DEFAULT_PAIRS, exact: bool = False, seed: int = 13,
            aggregate: str = "mean", models: bool = False) -> HbrRun:
    """HBR of every scored summary, the heterogeneity of every set it needs,
    system scores and, when there are judgments, the AUC tables and the
    system-level agreement of HBR with each criterion."""
    from pyspark.sql import functions as F

    from qarla_spark.measures.agreement import _system_level
    from qarla_spark.measures.auc import (HBR, auc_table, hetero_curve_table, long_scores,
                                          robustness_table, topic_auc)
    from qarla_spark.metrics.registry import metric_set_name

    if n_pairs < 1:
        raise ConfigError(f"--hbr-pairs must be at least 1, not {n_pairs}")
    if aggregate not in AGGREGATES:
        raise ConfigError(f"--hbr-aggregate must be one of {', '.join(AGGREGATES)}")
    X = hbr_measures(metrics, measures)
    name = metric_set_name(X)
    spark = cube.sparkSession
    scores = cache.persist(summary_scores(cube, metrics, X, aggregate, models))
    pairs = cache.persist(summary_pairs(cube, metrics, X, aggregate, models))
    sample = sample_pairs(pairs, n_pairs, seed, exact)
    hetero = cache.persist(heterogeneity(pairs, sample, X, exact))
    hbr = cache.persist(hbr_table(pairs, hetero, name))
    roles = scores.select("task", "topic", "summarizer", "role")
    systems = (hbr.join(roles, ["task", "topic", "summarizer"])
               .groupBy("task", "summarizer", "role", "measure_set")
               .agg(F.avg("hbr").alias("hbr")))
    tables = {"hbr": hbr,
              "heterogeneity": hetero.select("task", "measure_set", "h", "std_error", "n_pairs",
                                             "exact"),
              "hbr_systems": systems}
    info = {"measures": list(X), "n_measures": len(X), "pairs": None if exact else n_pairs,
            "exact": exact, "seed": seed, "aggregate": aggregate, "models": models}
    lines = [f"HBR over {len(X)} measures ({'all pairs' if exact else f'{n_pairs:,} sampled pairs'}"
             f", seed {seed})"]
    if judgments is not None:
        long = long_scores(scores, X, hbr)
        per_topic = cache.persist(topic_auc(long, judgments))
        auc = cache.persist(auc_table(per_topic))
        tables.update({"auc": auc, "robustness": robustness_table(per_topic),
                       "hetero_curve": hetero_curve_table(pairs, hetero, judgments)})
        # system level agreement of HBR (one row per system and criterion)
        human = judgments.groupBy("task", "summarizer", "criterion").agg(F.avg("score").alias("y"))
        rows = (systems.join(human, ["task", "summarizer"])
                .select("task", "criterion", "hbr", "y").collect())
        groups: Dict[tuple, list] = {}
        for r in rows:
            groups.setdefault((r["task"], r["criterion"]), []).append((r["hbr"], r["y"]))
        corr_rows = [(t, name, c, "system", v["pearson"], v["spearman"], v["kendall"])
                     for (t, c), pts in sorted(groups.items()) for v in [_system_level(pts)]]
        tables["hbr_correlations"] = spark.createDataFrame(
            corr_rows, "task string, measure_set string, criterion string, level string, "
                       "pearson double, spearman double, kendall double")
        pooled = auc.filter(F.col("scope") == "all").select("task", "criterion", "measure",
                                                            "auc").collect()
        by: Dict[tuple, Dict[str, float]] = {}
        for r in pooled:
            by.setdefault((r["task"], r["criterion"]), {})[r["measure"]] = r["auc"]
        for (task, criterion), values in sorted(by.items()):
            singles = {m: v for m, v in values.items() if m != HBR}
            if not singles or HBR not in values:
                continue
            best = max(sorted(singles), key=lambda m: singles[m])
            worst = min(sorted(singles), key=lambda m: singles[m])
            lines.append(f"  task {task}, {criterion}: AUC of HBR {values[HBR]:.3f}; best single "
                         f"{best} {singles[best]:.3f}, worst {worst} {singles[worst]:.3f}")
            info.setdefault("auc", {}).setdefault(task, {})[criterion] = {
                "hbr": values[HBR], "best_single": [best, singles[best]],
                "worst_single": [worst, singles[worst]]}
    return HbrRun(tables, lines, info)
