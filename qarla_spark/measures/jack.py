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
(t, m) whose first k is ≤ k (each topic weighted 1/n_topics, each of its
models 1/|M_t|), cumulated over k. JACK never decreases with k by
construction.
"""

from __future__ import annotations

import random
from typing import Dict, List, Sequence


def _cases(cube, set_names):
    """(task, topic, m, metric_set): every (topic, model) JACK averages over
    (the topics of the cube: ≥ 3 models)."""
    from pyspark.sql import functions as F
    from qarla_spark.measures.masks import cube_members
    models = cube_members(cube).filter(F.col("role") == "model").select(
        "task", "topic", F.col("name").alias("m"))
    return models.crossJoin(F.broadcast(set_names.select("metric_set")))


def jack_table(results, cube, set_names):
    """The ``jack/`` table: task, metric_set, jack, from the ``cover`` rows
    of :func:`~qarla_spark.measures.queen.topic_results` (``set_names``:
    set_id, metric_set of the detailed sets)."""
    from pyspark.sql import functions as F
    hit = (results.filter(F.col("kind") == "cover").join(F.broadcast(set_names), "set_id")
           .select("task", "topic", F.col("holdout").alias("m"), "metric_set")
           .withColumn("hit", F.lit(1.0)))
    cases = _cases(cube, set_names).join(hit, ["task", "topic", "m", "metric_set"], "left")
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


def task_orders(cube, n_orders: int, seed: int) -> Dict[str, List[List[str]]]:
    """Per task, :func:`peer_orders` of its peer systems (those of the
    cube's topics; one row per (task, system) reaches the driver)."""
    from pyspark.sql import functions as F
    from qarla_spark.measures.masks import cube_members
    per_task: Dict[str, List[str]] = {}
    for row in (cube_members(cube).filter(F.col("role") == "peer")
                .select("task", "name").distinct().collect()):
        per_task.setdefault(row["task"], []).append(row["name"])
    return {task: peer_orders(names, n_orders, seed) for task, names in per_task.items()}


def jack_curve_table(results, cube, set_names, orders: Dict[str, List[List[str]]]):
    """The ``jack_curve/`` table: task, metric_set, n_peers, jack (mean over
    the seeded ``orders`` of each task's peer systems, k = 2..|A|), from the
    ``first`` rows of :func:`~qarla_spark.measures.queen.topic_results`
    computed with the same orders."""
    from pyspark.sql import functions as F

    from qarla_spark.measures.masks import cube_members

    spark = cube.sparkSession
    sizes = [(task, k, len(o)) for task, o in orders.items() for k in range(2, len(o[0]) + 1)
             if o]
    if not sizes:
        return spark.createDataFrame([], "task string, metric_set string, n_peers int, "
                                         "jack double")
    ks = spark.createDataFrame(sizes, "task string, n_peers int, n_orders int")
    first = (results.filter(F.col("kind") == "first").join(F.broadcast(set_names), "set_id")
             .select("task", "topic", "metric_set", "o", "k_first"))
    n_models = (cube_members(cube).filter(F.col("role") == "model").groupBy("task", "topic")
                .agg(F.count(F.lit(1)).alias("n_models")))
    n_topics = cube.groupBy("task").agg(F.count(F.lit(1)).alias("n_topics"))
    # JACK(k) of an order = Σ_t (#m with k_first ≤ k) / |M_t| / n_topics: the
    # share each (topic, k_first) contributes, then cumulated over k
    share = (first.groupBy("task", "topic", "metric_set", "k_first")
             .agg(F.count(F.lit(1)).alias("c"))
             .join(n_models, ["task", "topic"]).join(F.broadcast(n_topics), "task")
             .groupBy("task", "metric_set", "k_first")
             .agg(F.sum(F.col("c") / F.col("n_models") / F.col("n_topics")).alias("share")))
    curve = (share.join(F.broadcast(ks), "task").filter(F.col("k_first") <= F.col("n_peers"))
             .groupBy("task", "metric_set", "n_peers").agg(F.sum("share").alias("total")))
    grid = (n_topics.select("task").crossJoin(F.broadcast(set_names.select("metric_set")))
            .join(F.broadcast(ks), "task"))
    return (grid.join(curve, ["task", "metric_set", "n_peers"], "left")
            .select("task", "metric_set", "n_peers",
                    (F.coalesce("total", F.lit(0.0)) / F.col("n_orders")).alias("jack")))
