"""JACK (SPEC §5) and its growth curve (paper 000, Fig. 3).

JACK(X) = mean over topics t of mean over m ∈ M_t of
1[∃ a ≠ a' ∈ A_t: QUEEN(a) > 0 ∧ QUEEN(a') > 0 ∧
  ∀x∈X: x(a, a') ≤ x(a, m) ∧ x(a', a) ≤ x(a', m)]
with QUEEN over the full M_t (topics with ≥ 3 models).

Growth curve: for R seeded random orders of the peer systems, JACK using
only the first k systems, k = 2..|A|, averaged over the orders. A pair
(a, a') that satisfies the condition for (t, m) becomes available once both
systems are in, i.e. at k = max(rank a, rank a'); so for each order and
(t, m) the first such k is one aggregation, and JACK(k) is the share of
(t, m) whose first k is ≤ k. JACK never decreases with k by construction.
"""

from __future__ import annotations

import random
from typing import List, Sequence


def _covered(vecs, queen, summaries, sets):
    """(task, topic, m, metric_set, a, a2) for every ordered peer pair
    satisfying JACK's condition against model m."""
    from pyspark.sql import functions as F

    from qarla_spark.measures.masks import topic_models

    roles = summaries.select("task", "topic", F.col("summarizer").alias("name"), "role")
    peers = roles.filter(F.col("role") == "peer").select("task", "topic", "name")
    models = roles.filter(F.col("role") == "model").select("task", "topic", "name")
    topics = topic_models(summaries).select("task", "topic")
    positive = (queen.filter(F.col("holdout").isNull() & (F.col("queen") > 0))
                .select("task", "topic", "metric_set", F.col("summarizer").alias("name")))
    v = vecs.join(topics, ["task", "topic"])
    pp = (v.join(peers.withColumnRenamed("name", "s"), ["task", "topic", "s"])
           .join(peers.withColumnRenamed("name", "r"), ["task", "topic", "r"])
           .select("task", "topic", F.col("s").alias("a"), F.col("r").alias("a2"),
                   F.col("v").alias("v_aa2"), ))
    pm = (v.join(peers.withColumnRenamed("name", "s"), ["task", "topic", "s"])
           .join(models.withColumnRenamed("name", "r"), ["task", "topic", "r"])
           .select("task", "topic", F.col("s").alias("a"), F.col("r").alias("m"),
                   F.col("v").alias("v_am")))
    pm2 = pm.select("task", "topic", F.col("a").alias("a2"), "m", F.col("v_am").alias("v_a2m"))
    back = pp.select("task", "topic", F.col("a").alias("a2"), F.col("a2").alias("a"),
                     F.col("v_aa2").alias("v_a2a"))
    rows = (pp.join(back, ["task", "topic", "a", "a2"]).join(pm, ["task", "topic", "a"])
              .join(pm2, ["task", "topic", "a2", "m"]))
    cond = F.expr("forall(idx, i -> v_aa2[i] <= v_am[i] AND v_a2a[i] <= v_a2m[i])")
    scored = rows.crossJoin(F.broadcast(sets.select("metric_set", "idx"))).filter(cond)
    both_positive = (scored
                     .join(positive.withColumnRenamed("name", "a"), ["task", "topic", "metric_set", "a"])
                     .join(positive.withColumnRenamed("name", "a2"),
                           ["task", "topic", "metric_set", "a2"]))
    return both_positive.select("task", "topic", "m", "metric_set", "a", "a2")


def _cases(summaries, sets):
    """(task, topic, m, metric_set): every (topic, model) JACK averages over."""
    from pyspark.sql import functions as F

    from qarla_spark.measures.masks import topic_models
    topics = topic_models(summaries).select("task", "topic")
    models = (summaries.filter(F.col("role") == "model").join(topics, ["task", "topic"])
              .select("task", "topic", F.col("summarizer").alias("m")))
    return models.crossJoin(F.broadcast(sets.select("metric_set")))


def jack_table(vecs, queen, summaries, sets):
    """The ``jack/`` table: task, metric_set, jack."""
    from pyspark.sql import functions as F
    hit = _covered(vecs, queen, summaries, sets).select(
        "task", "topic", "m", "metric_set").distinct().withColumn("hit", F.lit(1.0))
    cases = _cases(summaries, sets).join(hit, ["task", "topic", "m", "metric_set"], "left")
    per_topic = (cases.groupBy("task", "topic", "metric_set")
                 .agg(F.avg(F.coalesce("hit", F.lit(0.0))).alias("j")))
    return per_topic.groupBy("task", "metric_set").agg(F.avg("j").alias("jack"))


def peer_orders(systems: Sequence[str], n_orders: int, seed: int) -> List[List[str]]:
    """``n_orders`` random orders of the peer systems (seeded, reproducible)."""
    rng = random.Random(seed)
    base = sorted(systems)
    orders = []
    for _ in range(n_orders):
        order = list(base)
        rng.shuffle(order)
        orders.append(order)
    return orders


def jack_curve_table(vecs, queen, summaries, sets, n_orders: int = 20, seed: int = 13):
    """The ``jack_curve/`` table: task, metric_set, n_peers, jack (mean over
    ``n_orders`` seeded random orders of each task's peer systems)."""
    from pyspark.sql import functions as F

    spark = summaries.sparkSession
    systems = (summaries.filter(F.col("role") == "peer").select("task", "summarizer")
               .distinct().collect())  # one row per (task, system): small
    per_task = {}
    for row in systems:
        per_task.setdefault(row["task"], []).append(row["summarizer"])
    rank_rows = []
    sizes = []
    for task, names in per_task.items():
        sizes += [(task, k) for k in range(2, len(names) + 1)]
        for o, order in enumerate(peer_orders(names, n_orders, seed)):
            rank_rows += [(task, o, name, i + 1) for i, name in enumerate(order)]
    if not sizes:
        return spark.createDataFrame([], "task string, metric_set string, n_peers int, "
                                         "jack double")
    ranks = spark.createDataFrame(rank_rows, "task string, o int, name string, rank int")
    ks = spark.createDataFrame(sizes, "task string, n_peers int")
    covered = _covered(vecs, queen, summaries, sets)
    first = (covered.join(ranks.select("task", "o", F.col("name").alias("a"),
                                       F.col("rank").alias("ra")), ["task", "a"])
             .join(ranks.select("task", "o", F.col("name").alias("a2"),
                                F.col("rank").alias("rb")), ["task", "o", "a2"])
             .groupBy("task", "o", "topic", "m", "metric_set")
             .agg(F.min(F.greatest("ra", "rb")).alias("k_first")))
    cases = (_cases(summaries, sets)
             .crossJoin(F.broadcast(spark.range(n_orders).select(F.col("id").cast("int")
                                                                  .alias("o")))))
    grid = cases.join(F.broadcast(ks), "task")
    joined = grid.join(first, ["task", "o", "topic", "m", "metric_set"], "left")
    hit = (F.col("k_first").isNotNull() & (F.col("k_first") <= F.col("n_peers"))).cast("double")
    per_topic = (joined.groupBy("task", "metric_set", "n_peers", "o", "topic")
                 .agg(F.avg(hit).alias("j")))
    per_order = per_topic.groupBy("task", "metric_set", "n_peers", "o").agg(F.avg("j").alias("j"))
    return per_order.groupBy("task", "metric_set", "n_peers").agg(F.avg("j").alias("jack"))
