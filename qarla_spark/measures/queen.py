"""QUEEN (SPEC §3) for many metric sets at once, full and jackknifed.

Output of :func:`queen_table` (the ``queen/`` table):

    task, topic, summarizer, role, metric_set, holdout, queen

- ``holdout`` null: QUEEN_{X,M}(a) of every peer a with the full model set
  (topics with ≥ 3 models);
- ``holdout`` = h: QUEEN_{X,M∖{h}}(e) for every peer and for h itself
  (topics with ≥ 4 models, so that M∖{h} has the 3 QUEEN needs).

Jackknife counts come from the full ones: the samples of a peer that avoid
h are all its samples minus those whose triple contains h (one
``explode`` of the ≤ 3 distinct models of each triple), so no sample is
expanded once per held-out model.
"""

from __future__ import annotations

from qarla_spark.measures.masks import passes, topic_models


def _scored(samples, sets, n_metrics: int):
    from pyspark.sql import functions as F
    return (samples.crossJoin(F.broadcast(sets.select("metric_set", "words")))
            .withColumn("p", passes("mask", "words", n_metrics).cast("long")))


def queen_table(samples, sets, summaries, n_metrics: int):
    """QUEEN of every summary for every set of ``sets`` (see module doc)."""
    from pyspark.sql import functions as F

    s = _scored(samples, sets, n_metrics)
    keys = ["task", "topic", "e", "metric_set"]
    peer = s.filter(F.col("e_role") == "peer")
    full = peer.groupBy(*keys).agg(F.sum("p").alias("pass_all"),
                                   F.count(F.lit(1)).alias("n_all"))
    full_rows = full.select("task", "topic", F.col("e").alias("summarizer"),
                            F.lit("peer").alias("role"), "metric_set",
                            F.lit(None).cast("string").alias("holdout"),
                            (F.col("pass_all") / F.col("n_all")).alias("queen"))

    king_topics = topic_models(summaries, 4).select("task", "topic")
    members = peer.select(*keys, "p", F.explode(F.array_distinct(F.array("m", "m1", "m2")))
                          .alias("h"))
    with_h = members.groupBy(*keys, "h").agg(F.sum("p").alias("pass_h"),
                                             F.count(F.lit(1)).alias("n_h"))
    peer_jk = (with_h.join(king_topics, ["task", "topic"]).join(full, keys)
               .select("task", "topic", F.col("e").alias("summarizer"),
                       F.lit("peer").alias("role"), "metric_set", F.col("h").alias("holdout"),
                       ((F.col("pass_all") - F.col("pass_h"))
                        / (F.col("n_all") - F.col("n_h"))).alias("queen")))
    model_jk = (s.filter(F.col("e_role") == "model").join(king_topics, ["task", "topic"])
                .groupBy(*keys).agg((F.sum("p") / F.count(F.lit(1))).alias("queen"))
                .select("task", "topic", F.col("e").alias("summarizer"),
                        F.lit("model").alias("role"), "metric_set",
                        F.col("e").alias("holdout"), "queen"))
    return full_rows.unionByName(peer_jk).unionByName(model_jk)


def system_scores(queen):
    """The ``systems/`` table: task, summarizer, role, metric_set, queen, queen_full.

    ``queen`` ranks models and peers together (SPEC §3): a model h scores
    mean_t QUEEN_{M_t∖{h}}(h), a peer a mean_t mean_h QUEEN_{M_t∖{h}}(a).
    ``queen_full`` is a peer's mean over topics of QUEEN with all models
    (null for models)."""
    from pyspark.sql import functions as F

    jk = queen.filter(F.col("holdout").isNotNull())
    per_topic = (jk.groupBy("task", "topic", "summarizer", "role", "metric_set")
                 .agg(F.avg("queen").alias("q")))
    ranked = (per_topic.groupBy("task", "summarizer", "role", "metric_set")
              .agg(F.avg("q").alias("queen")))
    full = (queen.filter(F.col("holdout").isNull())
            .groupBy("task", "summarizer", "metric_set").agg(F.avg("queen").alias("queen_full")))
    return ranked.join(full, ["task", "summarizer", "metric_set"], "full_outer").select(
        "task", "summarizer", F.coalesce("role", F.lit("peer")).alias("role"), "metric_set",
        "queen", "queen_full")
