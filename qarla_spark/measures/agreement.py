"""Agreement with human judgments and the human-summariser test (SPEC §7).

``correlations/``: task, metric_set, criterion, level, pearson, spearman, kendall

- ``level = system``: between a set's system scores (a peer system's mean
  QUEEN over topics with all models, SPEC §3) and the mean human score of
  each system; computed on the driver from one row per system (small);
- ``level = summary``: per topic, between the peers' QUEEN (all models) and
  their human scores, then averaged over the topics where both vary; in Spark
  (Pearson with ``corr``, Spearman as Pearson of average ranks, Kendall's
  tau-b from pair counts).

``human_test/``: task, measure, held_out_model, ranked_first. For each model
h: h is removed from the models and scored as one more peer, everyone with
M∖{h} over all topics with ≥ 4 models and a peer (the mean over topics);
``ranked_first`` says whether h scores strictly above every system (paper
004, Table 1). Measures: QUEEN of the detailed metric sets (``QUEEN(<set>)``)
and plain ROUGE recall baselines (``R-1.a``: a summary's mean over the
models of M∖{h} of R-1.a(e, m); :mod:`~qarla_spark.measures.plain`).
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np


def _system_level(rows) -> Dict[str, float]:
    from scipy import stats
    x = np.array([r[0] for r in rows], dtype=float)
    y = np.array([r[1] for r in rows], dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"pearson": float("nan"), "spearman": float("nan"), "kendall": float("nan")}
    return {"pearson": float(stats.pearsonr(x, y)[0]),
            "spearman": float(stats.spearmanr(x, y)[0]),
            "kendall": float(stats.kendalltau(x, y)[0])}


def _avg_rank(col: str, part: Sequence[str]):
    """Average rank (ties share the mean of their ranks) of ``col`` within
    ``part``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    w = Window.partitionBy(*part).orderBy(col)
    same = Window.partitionBy(*part, col)
    return F.rank().over(w) + (F.count(F.lit(1)).over(same) - 1) / 2.0


def correlations(queen, judgments):
    """The ``correlations/`` table (see module doc)."""
    from pyspark.sql import functions as F

    spark = queen.sparkSession
    full = (queen.filter(F.col("holdout").isNull() & (F.col("role") == "peer"))
            .select("task", "topic", "summarizer", "metric_set", F.col("queen").alias("x")))
    human = judgments.select("task", "topic", "summarizer", "criterion", F.col("score").alias("y"))
    joined = full.join(human, ["task", "topic", "summarizer"])

    # system level: one row per (task, set, criterion, system) -> driver
    per_system = (joined.groupBy("task", "metric_set", "criterion", "summarizer")
                  .agg(F.avg("x").alias("x"), F.avg("y").alias("y")).collect())
    groups: Dict[tuple, List[tuple]] = {}
    for r in per_system:
        groups.setdefault((r["task"], r["metric_set"], r["criterion"]), []).append((r["x"], r["y"]))
    system_rows = [(t, s, c, "system", v["pearson"], v["spearman"], v["kendall"])
                   for (t, s, c), pts in sorted(groups.items())
                   for v in [_system_level(pts)]]

    # summary level: per topic in Spark, then averaged over topics
    part = ["task", "metric_set", "criterion", "topic"]
    ranked = (joined.withColumn("rx", _avg_rank("x", part))
                    .withColumn("ry", _avg_rank("y", part)))
    a = ranked.select(*part, "summarizer", F.col("x").alias("x1"), F.col("y").alias("y1"))
    b = ranked.select(*part, F.col("summarizer").alias("s2"), F.col("x").alias("x2"),
                      F.col("y").alias("y2"))
    pairs = a.join(b, part).filter(F.col("summarizer") < F.col("s2"))
    dx = F.signum(F.col("x1") - F.col("x2"))
    dy = F.signum(F.col("y1") - F.col("y2"))
    kendall = (pairs.groupBy(*part).agg(
        F.sum(dx * dy).alias("s"), F.sum(F.abs(dx)).alias("nx"), F.sum(F.abs(dy)).alias("ny"))
        .select(*part, (F.col("s") / F.sqrt(F.col("nx") * F.col("ny"))).alias("kendall")))
    per_topic = (ranked.groupBy(*part).agg(F.corr("x", "y").alias("pearson"),
                                           F.corr("rx", "ry").alias("spearman"))
                 .join(kendall, part))
    finite = F.col("pearson").isNotNull() & ~F.isnan("pearson")
    summary = (per_topic.filter(finite)
               .groupBy("task", "metric_set", "criterion")
               .agg(F.avg("pearson").alias("pearson"), F.avg("spearman").alias("spearman"),
                    F.avg("kendall").alias("kendall"))
               .select("task", "metric_set", "criterion", F.lit("summary").alias("level"),
                       "pearson", "spearman", "kendall"))
    schema = ("task string, metric_set string, criterion string, level string, "
              "pearson double, spearman double, kendall double")
    return spark.createDataFrame(system_rows, schema).unionByName(summary)


def king_pearson(king, peer_scores, judgments, cube):
    """The ``king_pearson/`` table (the paper's Fig. 5): task, metric_set,
    n_metrics, king, criterion, pearson — for every set whose KING was
    computed (single metrics, subsets of representatives, requested sets),
    the system-level Pearson between its system scores (a peer system's
    mean QUEEN over topics with all models, ``peer_scores``) and the mean
    human score of each system over its judged summaries in the same topics
    (those of the topic ``cube``). Computed with Spark's ``corr`` per group
    (null when fewer than 2 systems or a constant side)."""
    from pyspark.sql import functions as F
    topics = cube.select("task", "topic")
    human = (judgments.join(topics, ["task", "topic"])
             .groupBy("task", "summarizer", "criterion").agg(F.avg("score").alias("y")))
    pearson = (peer_scores.join(human, ["task", "summarizer"])
               .groupBy("task", "metric_set", "criterion")
               .agg(F.corr("queen", "y").alias("pearson")))
    return (king.select("task", "metric_set", "n_metrics", "king")
            .join(pearson, ["task", "metric_set"])
            .select("task", "metric_set", "n_metrics", "king", "criterion",
                    F.when(F.isnan("pearson"), None).otherwise(F.col("pearson"))
                    .alias("pearson")))


def human_test(queen, plain):
    """The ``human_test/`` table (see module doc). ``plain``: the rows of
    :func:`~qarla_spark.measures.plain.plain_results` (its ``score`` rows
    are the plain baselines)."""
    from pyspark.sql import functions as F

    jk = queen.filter(F.col("holdout").isNotNull())
    q_scores = (jk.groupBy("task", "metric_set", "holdout", "summarizer", "role", "topic")
                .agg(F.avg("queen").alias("q"))
                .groupBy("task", "metric_set", "holdout", "summarizer", "role")
                .agg(F.avg("q").alias("score"))
                .select("task", F.concat(F.lit("QUEEN("), "metric_set", F.lit(")")).alias("measure"),
                        "holdout", "summarizer", "role", "score"))
    p_scores = (plain.filter(F.col("kind") == "score")
                .groupBy("task", "metric", "holdout", "summarizer", "role")
                .agg(F.avg("score").alias("score"))
                .select("task", F.col("metric").alias("measure"), "holdout", "summarizer", "role",
                        "score"))
    scores = q_scores.unionByName(p_scores)
    held = (scores.filter((F.col("role") == "model") & (F.col("summarizer") == F.col("holdout")))
            .select("task", "measure", "holdout", F.col("score").alias("h_score")))
    best_peer = (scores.filter(F.col("role") == "peer")
                 .groupBy("task", "measure", "holdout").agg(F.max("score").alias("peer_best")))
    return (held.join(best_peer, ["task", "measure", "holdout"])
            .select("task", "measure", F.col("holdout").alias("held_out_model"),
                    (F.col("h_score") > F.col("peer_best")).alias("ranked_first")))
