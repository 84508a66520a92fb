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
M∖{h} over all topics (the mean over topics); ``ranked_first`` says whether h
scores strictly above every system (paper 004, Table 1). Measures: QUEEN of
the detailed metric sets (``QUEEN(<set>)``) and plain ROUGE recall baselines
(``R-1.a``: a summary's mean over the models of M∖{h} of R-1.a(e, m)).
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


def human_test(queen, similarities, summaries, baselines: Sequence[str] = ("R-1.a", "R-2.a")):
    """The ``human_test/`` table (see module doc)."""
    from pyspark.sql import functions as F

    jk = queen.filter(F.col("holdout").isNotNull())
    q_scores = (jk.groupBy("task", "metric_set", "holdout", "summarizer", "role", "topic")
                .agg(F.avg("queen").alias("q"))
                .groupBy("task", "metric_set", "holdout", "summarizer", "role")
                .agg(F.avg("q").alias("score"))
                .select("task", F.concat(F.lit("QUEEN("), "metric_set", F.lit(")")).alias("measure"),
                        "holdout", "summarizer", "role", "score"))
    roles = summaries.select("task", "topic", "summarizer", "role")
    models = roles.filter(F.col("role") == "model").select(
        "task", "topic", F.col("summarizer").alias("holdout"))
    present = [r["metric"] for r in similarities.select("metric").distinct().collect()]
    plain = []
    for metric in [b for b in baselines if b in present]:
        vs_models = (similarities.filter(F.col("metric") == metric)
                     .join(roles.filter(F.col("role") == "model")
                           .select("task", "topic", F.col("summarizer").alias("summarizer_r")),
                           ["task", "topic", "summarizer_r"]))
        # score of e against M∖{h}: for every held-out h of the topic, the mean over m ≠ h
        per = (vs_models.join(models, ["task", "topic"])
               .filter((F.col("summarizer_r") != F.col("holdout")))
               .join(roles.select("task", "topic", F.col("summarizer").alias("summarizer_s"),
                                  "role"), ["task", "topic", "summarizer_s"])
               .filter((F.col("role") == "peer") | (F.col("summarizer_s") == F.col("holdout")))
               .groupBy("task", "topic", "holdout", "summarizer_s", "role")
               .agg(F.avg("value").alias("v"))
               .groupBy("task", "holdout", "summarizer_s", "role").agg(F.avg("v").alias("score")))
        plain.append(per.select("task", F.lit(metric).alias("measure"), "holdout",
                                F.col("summarizer_s").alias("summarizer"), "role", "score"))
    scores = q_scores
    for frame in plain:
        scores = scores.unionByName(frame)
    held = (scores.filter((F.col("role") == "model") & (F.col("summarizer") == F.col("holdout")))
            .select("task", "measure", "holdout", F.col("score").alias("h_score")))
    best_peer = (scores.filter(F.col("role") == "peer")
                 .groupBy("task", "measure", "holdout").agg(F.max("score").alias("peer_best")))
    return (held.join(best_peer, ["task", "measure", "holdout"])
            .select("task", "measure", F.col("holdout").alias("held_out_model"),
                    (F.col("h_score") > F.col("peer_best")).alias("ranked_first")))
